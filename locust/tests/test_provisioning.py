"""The one app provisioning of the Python tools, against a stand-in of the dispatcher's admin API
and the sandbox's demo credentials (a real HTTP server on loopback; what it records is what the
Provisioner sent)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from herald_load.provisioning import Provisioner, ProvisioningError


class _Api(BaseHTTPRequestHandler):
    apps: set[str] = set()
    calls: list[tuple[str, str, str, object]] = []

    def _answer(self, status: int, body: object | None = None) -> None:
        data = json.dumps(body).encode() if body is not None else b""
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _handle(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else None
        self.calls.append((self.command, self.path, self.headers.get("Authorization"), body))
        if (self.command, self.path) == ("GET", "/sandbox/demo-credentials"):
            self._answer(200, {"fcm": {"serviceAccount": {"project_id": "p"}}, "apns": {"keyId": "k"}})
        elif (self.command, self.path) == ("POST", "/v1/apps"):
            if body["id"] in self.apps:
                self._answer(409, {"title": "exists"})
            else:
                self.apps.add(body["id"])
                self._answer(201, {"apiKey": {"key": "hk_first"}})
        elif self.command == "POST" and self.path.endswith("/keys"):
            self._answer(201, {"key": "hk_again"})
        elif self.command == "PUT" and "/devices/" in self.path:
            mqtt = {"clientId": self.path.rsplit("/", 1)[1], "password": "secret"}
            self._answer(200, {"mqtt": mqtt} if body["channel"] == "mqtt" else body)
        elif self.command == "PUT" and "/credentials/" in self.path:
            self._answer(204)
        elif self.command == "PUT" and self.path.endswith("/limits"):
            self._answer(200, body) if body.get("fcmPerMinute", 1) <= 6_000_000 else self._answer(400, {"title": "too high"})
        else:
            self._answer(404, {"title": "no such thing"})

    do_GET = do_POST = do_PUT = _handle

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def api():
    _Api.apps, _Api.calls = set(), []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Api)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_an_app_gets_its_key_and_the_sandbox_credentials_with_the_admin_token(api):
    app = Provisioner(api, "admin-token", sandbox=api).create_app("shop", name="Shop")

    assert app.api_key == "hk_first"
    stored = {path: (auth, body) for method, path, auth, body in _Api.calls if method == "PUT"}
    assert stored["/v1/apps/shop/credentials/fcm"] == ("Bearer admin-token",
                                                       {"serviceAccount": {"project_id": "p"}})
    assert stored["/v1/apps/shop/credentials/apns"] == ("Bearer admin-token", {"keyId": "k"})


def test_limits_are_set_with_the_admin_token_and_a_refusal_is_an_error(api):
    provisioner = Provisioner(api, "admin-token")

    assert provisioner.set_limits("shop", fcmPerMinute=6_000_000) == {"fcmPerMinute": 6_000_000}
    assert _Api.calls[-1] == ("PUT", "/v1/apps/shop/limits", "Bearer admin-token", {"fcmPerMinute": 6_000_000})
    with pytest.raises(ProvisioningError, match="limits of app shop: HTTP 400"):
        provisioner.set_limits("shop", fcmPerMinute=7_000_000)


def test_the_benchmark_app_gets_the_raised_quota_or_a_clear_error_for_a_bad_setting(api, monkeypatch):
    from herald_load.bench.run import RAISED_FCM_PER_MINUTE, _app_limits
    from herald_load.processes import PlatformError

    provisioner = Provisioner(api, "admin-token")
    monkeypatch.delenv("BENCH_FCM_PER_MINUTE", raising=False)
    _app_limits(provisioner, "bench")
    assert _Api.calls[-1][1:] == ("/v1/apps/bench/limits", "Bearer admin-token", {"fcmPerMinute": RAISED_FCM_PER_MINUTE})

    monkeypatch.setenv("BENCH_FCM_PER_MINUTE", "default")   # the gateway's own: nothing is set
    calls = len(_Api.calls)
    _app_limits(provisioner, "bench")
    assert len(_Api.calls) == calls
    monkeypatch.setenv("BENCH_FCM_PER_MINUTE", "lots")
    with pytest.raises(PlatformError, match="give messages a minute"):
        _app_limits(provisioner, "bench")
    monkeypatch.setenv("BENCH_FCM_PER_MINUTE", "7000000")     # refused by the API: its answer, as a platform error
    with pytest.raises(PlatformError, match="BENCH_FCM_PER_MINUTE=7000000: .*HTTP 400"):
        _app_limits(provisioner, "bench")


def test_an_existing_app_gets_a_new_key_only_when_asked(api):
    provisioner = Provisioner(api, "admin-token")
    provisioner.create_app("demo")

    assert provisioner.create_app("demo", existing_ok=True).api_key == "hk_again"
    with pytest.raises(ProvisioningError, match="HTTP 409"):
        provisioner.create_app("demo")


def test_devices_are_registered_with_the_apps_key_and_mqtt_connect_data_is_kept(api):
    provisioner = Provisioner(api, "admin-token")
    app = provisioner.create_app("shop")

    provisioner.register_fcm_devices(app, 3, "news", workers=2)
    provisioner.register_mqtt_devices(app, 2, "news")

    assert sorted(app.fcm_tokens) == [f"fcm-token-shop-{i}" for i in range(3)]
    assert [d["device"] for d in app.mqtt_devices] == ["mqtt-0", "mqtt-1"]
    assert app.topics == {"news": 5}
    assert {auth for method, path, auth, _ in _Api.calls if "/devices/" in path} == {"Bearer hk_first"}
