"""What a load run needs before its first request, through Herald's public API: an app with its
API key, the provider sandbox's demo credentials, and registered devices (FCM tokens, or MQTT
devices with their per-device secret).

The one place that creates and provisions apps for Python callers: the locustfiles'
``test_start`` hooks (when the environment names no ready-made app), the scale-out runner, which
provisions once and hands the result to every Locust run through environment variables
(:meth:`Provisioned.to_env`, :func:`from_env`), the local run's demo, the benchmarks and the KEDA
scenario.
"""

from __future__ import annotations

import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field

from .servers import http_json

__all__ = ["Provisioned", "Provisioner", "ProvisioningError", "from_env"]

ENV_VAR = "HERALD_LOAD_PROVISIONED"


class ProvisioningError(RuntimeError):
    """The API refused a set-up step (the message carries its problem+json answer)."""


@dataclass
class Provisioned:
    """An app ready for load: its key, its topics and who is subscribed."""

    app: str
    api_key: str
    topics: dict[str, int] = field(default_factory=dict)     # topic -> subscriber count
    fcm_tokens: list[str] = field(default_factory=list)       # registered FCM tokens
    mqtt_devices: list[dict] = field(default_factory=list)    # {"device", "clientId", ...}

    def to_env(self) -> dict[str, str]:
        """For child processes (Locust runs); the API key travels by environment only."""
        return {ENV_VAR: json.dumps(asdict(self))}


def from_env(environ=os.environ) -> Provisioned | None:
    raw = environ.get(ENV_VAR)
    return Provisioned(**json.loads(raw)) if raw else None


def _check(answer: tuple[int, object], what: str) -> dict:
    status, body = answer
    if status >= 300:
        raise ProvisioningError(f"{what}: HTTP {status} {str(body)[:500]}")
    return body if isinstance(body, dict) else {}


class Provisioner:
    """Set-up calls against one dispatcher (``api``) with the admin token. Standard library only
    (the local run and the KEDA scenario use it without Locust's dependencies)."""

    def __init__(self, api: str, admin_token: str, sandbox: str | None = None):
        self.api = api.rstrip("/")
        self.sandbox = sandbox.rstrip("/") if sandbox else None
        self.admin = {"Authorization": f"Bearer {admin_token}"}

    def _call(self, method: str, path: str, body: object | None = None,
              headers: dict[str, str] | None = None) -> tuple[int, object]:
        return http_json(method, self.api + path, body, headers or self.admin, timeout=30)

    def create_app(self, app: str | None = None, *, name: str | None = None,
                   existing_ok: bool = False) -> Provisioned:
        """A fresh app (unique id per run unless ``app`` names one) with an API key and, given a
        sandbox, its FCM and APNs demo credentials. ``existing_ok``: an app of that id that
        exists already gets a new API key instead (a demo run again)."""
        app = app or f"load-{int(time.time() * 1000)}"
        answer = self._call("POST", "/v1/apps", {"id": app, "name": name or f"Load test {app}"})
        if answer[0] == 409 and existing_ok:
            key = _check(self._call("POST", f"/v1/apps/{app}/keys"), f"issuing a key for app {app}")
            result = Provisioned(app=app, api_key=key.get("key") or key["apiKey"]["key"])
        else:
            result = Provisioned(app=app, api_key=_check(answer, f"creating app {app}")["apiKey"]["key"])
        if self.sandbox:
            demo = _check(http_json("GET", f"{self.sandbox}/sandbox/demo-credentials", timeout=30),
                          "reading the sandbox's demo credentials")
            _check(self._call("PUT", f"/v1/apps/{app}/credentials/fcm",
                              {"serviceAccount": demo["fcm"]["serviceAccount"]}),
                   "storing FCM credentials")
            _check(self._call("PUT", f"/v1/apps/{app}/credentials/apns", demo["apns"]),
                   "storing APNs credentials")
        return result

    def set_limits(self, app: str, **limits: int | None) -> dict:
        """Sets the app's own rate limits (``fcmPerMinute``, ``apnsPerMinute``, ``apiPerSecond``;
        one left out or None is the service's default); the limits as stored."""
        return _check(self._call("PUT", f"/v1/apps/{app}/limits", limits), f"setting the limits of app {app}")

    def register_device(self, target: Provisioned, device: str, registration: dict) -> dict:
        """One device (``registration``: channel, token, topics); the registration's answer."""
        return _check(self._call("PUT", f"/v1/apps/{target.app}/devices/{device}", registration,
                                 {"Authorization": f"Bearer {target.api_key}"}),
                      f"registering device {device}")

    def register_fcm_devices(self, target: Provisioned, count: int, topic: str,
                             prefix: str = "fcm", workers: int = 16) -> None:
        """``count`` FCM devices with distinct tokens, all subscribed to ``topic``."""
        def register(i: int) -> str:
            token = f"{prefix}-token-{target.app}-{i}"
            self.register_device(target, f"{prefix}-{i}",
                                 {"channel": "fcm", "token": token, "topics": [topic]})
            return token

        with ThreadPoolExecutor(workers) as pool:
            target.fcm_tokens.extend(pool.map(register, range(count)))
        target.topics[topic] = target.topics.get(topic, 0) + count

    def register_mqtt_device(self, target: Provisioned, device: str, topics: list[str]) -> dict:
        """An MQTT device; returns (and keeps) its connect data, whose per-device secret is only
        in the registration answer."""
        mqtt = self.register_device(target, device, {"channel": "mqtt", "topics": topics}).get("mqtt")
        if not mqtt or "password" not in mqtt:
            raise ProvisioningError(
                f"registering MQTT device {device}: the answer carries no 'mqtt' connect data "
                f"(is the connection manager's API in this dispatcher?): {mqtt}")
        target.mqtt_devices.append({"device": device, **mqtt})
        return mqtt

    def register_mqtt_devices(self, target: Provisioned, count: int, topic: str,
                              prefix: str = "mqtt") -> None:
        """``count`` MQTT devices subscribed to ``topic``."""
        for i in range(count):
            self.register_mqtt_device(target, f"{prefix}-{i}", [topic])
        target.topics[topic] = target.topics.get(topic, 0) + count
