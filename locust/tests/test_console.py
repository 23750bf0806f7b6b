"""The console's browser tests: headless Chromium (Debian's ``chromium``, driven by Playwright's
``playwright-core``, services/dispatcher/console/e2e/) against the real platform on free ports:
RabbitMQ, Redis, the provider sandbox, gateway, connection manager and dispatcher.

Marked ``console``: they need the jars (with the console built in) and Chromium, so the plain
``pytest`` run leaves them out and ``scripts/test.sh`` runs ``pytest -m console`` after Maven. The
demo (:mod:`herald_load.demo`) seeds the platform as ``scripts/run-local.sh`` does; an MQTT device
of the demo app is connected with ``mosquitto_sub`` so a push sent from the console reaches
``delivered``. Screenshots of every page land in services/dispatcher/target/console-e2e/.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from herald_load.demo import DemoTarget, run_demo
from herald_load.local import LocalPlatform
from herald_load.processes import repository_root, service_jar
from herald_load.provisioning import Provisioned, Provisioner
from herald_load.servers import http_json

pytestmark = pytest.mark.console

CONSOLE = repository_root() / "services" / "dispatcher" / "console"
SCREENSHOTS = repository_root() / "services" / "dispatcher" / "target" / "console-e2e"
CHROMIUM = "/usr/bin/chromium"


@pytest.fixture(scope="module")
def platform(tmp_path_factory):
    for service in ("provider-sandbox", "dispatcher", "gateway", "connection-manager"):
        service_jar(service)   # a clear error, not a time-out, when the build did not run
    with LocalPlatform(tmp_path_factory.mktemp("platform"), sandbox_latency_ms=20,
                       log=lambda _line: None) as running:
        running.start_infrastructure()
        running.start_gateways(1)
        running.start_connection_managers(1)
        running.start_dispatchers(1)
        yield running


def test_console_in_a_real_browser(platform, tmp_path):
    assert Path(CHROMIUM).exists(), "Debian's chromium is missing (scripts/install-deps.sh installs it)"
    dispatcher = platform.dispatcher_urls[0]
    mqtt_port = platform.connection_managers[0].extra["mqtt_port"]
    run_demo(DemoTarget(dispatcher, platform.sandbox_url, "127.0.0.1", mqtt_port),
             platform.admin_token, tmp_path, say=lambda _line: None)
    demo_key = (tmp_path / "demo-api-key").read_text().strip()

    # The credentials the admin uploads through the console: the sandbox's, as files on disk.
    status, credentials = http_json("GET", f"{platform.sandbox_url}/sandbox/demo-credentials", timeout=30)
    assert status == 200, credentials
    (tmp_path / "service-account.json").write_text(json.dumps(credentials["fcm"]["serviceAccount"]))
    (tmp_path / "AuthKey.p8").write_text(credentials["apns"]["p8"])

    # An MQTT device of the demo app, online for the push the browser sends it.
    mqtt = Provisioner(dispatcher, platform.admin_token).register_mqtt_device(
        Provisioned(app="demo", api_key=demo_key), "console-sensor", ["news"])
    subscriber = subprocess.Popen(
        ["mosquitto_sub", "-V", "mqttv5", "-q", "1", "-C", "1", "-W", "240", "-h", "127.0.0.1",
         "-p", str(mqtt_port), "-i", mqtt["clientId"], "-u", mqtt["username"], "-P", mqtt["password"],
         "-t", mqtt["topic"]], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        if SCREENSHOTS.exists():
            shutil.rmtree(SCREENSHOTS)
        env = {**os.environ, "HERALD_URL": dispatcher, "HERALD_ADMIN_TOKEN": platform.admin_token,
               "HERALD_DEMO_KEY": demo_key, "HERALD_MQTT_DEVICE": "console-sensor",
               "HERALD_FCM_FILE": str(tmp_path / "service-account.json"),
               "HERALD_APNS_FILE": str(tmp_path / "AuthKey.p8"),
               "HERALD_APNS_FIELDS": json.dumps({k: v for k, v in credentials["apns"].items() if k != "p8"}),
               "HERALD_SCREENSHOTS": str(SCREENSHOTS), "HERALD_CHROMIUM": CHROMIUM}
        result = subprocess.run(["bash", str(CONSOLE / "build.sh"), "e2e"], env=env, capture_output=True,
                                text=True, timeout=600)
        assert result.returncode == 0, f"browser tests failed:\n{result.stdout[-8000:]}\n{result.stderr[-4000:]}"
        received, _ = subscriber.communicate(timeout=30)
        assert subscriber.returncode == 0, f"the MQTT device received nothing: {received}"
    finally:
        if subscriber.poll() is None:
            subscriber.kill()
            subscriber.wait()
    for page in ("sign-in", "apps", "overview", "messages", "message-delivered", "devices", "send",
                 "campaigns", "platform", "audit", "overview-phone", "send-preview", "platform-replicas",
                 "devices-mqtt"):
        assert (SCREENSHOTS / f"{page}.png").stat().st_size > 0, page



def _await_mqtt(read, connected: bool, seconds: float = 30.0) -> dict:
    """The device's ``mqtt`` answer once it says ``connected`` (the connection manager writes the
    session as the CONNECT is accepted, and drops it as it sees the connection close), polled with
    a deadline."""
    deadline = time.monotonic() + seconds
    while (mqtt := read())["connected"] is not connected:
        assert time.monotonic() < deadline, f"the device API did not report connected={connected}: {mqtt}"
        time.sleep(0.2)
    return mqtt


def test_the_api_lists_live_replicas_and_an_mqtt_devices_last_connect(platform):
    dispatcher = platform.dispatcher_urls[0]
    admin = {"Authorization": f"Bearer {platform.admin_token}"}
    status, view = http_json("GET", f"{dispatcher}/v1/platform", headers=admin, timeout=30)
    assert status == 200, view
    # One of each runs here (the fixture): counted from their leases in Redis, not from AMQP consumers.
    assert [len(view["gateways"]), len(view["connectionManagers"])] == [1, 1], view
    assert {"inFlight", "deliveriesPerSecond"} <= set(view["gateways"][0]["figures"]), view
    assert "connections" in view["connectionManagers"][0]["figures"], view

    provisioner = Provisioner(dispatcher, platform.admin_token)
    app = provisioner.create_app()
    mqtt = provisioner.register_mqtt_device(app, "presence-1", [])
    key = {"Authorization": f"Bearer {app.api_key}"}

    def read() -> dict:
        status, device = http_json("GET", f"{dispatcher}/v1/apps/{app.app}/devices/presence-1", headers=key,
                                   timeout=30)
        assert status == 200, device
        return device["mqtt"]

    assert "lastConnectAt" not in _await_mqtt(read, False, seconds=0)
    subscriber = subprocess.Popen(
        ["mosquitto_sub", "-V", "mqttv5", "-q", "1", "-C", "1", "-W", "60", "-h", "127.0.0.1",
         "-p", str(platform.connection_managers[0].extra["mqtt_port"]), "-i", mqtt["clientId"],
         "-u", mqtt["username"], "-P", mqtt["password"], "-t", mqtt["topic"]],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        online = _await_mqtt(read, True)
        assert online["lastConnectAt"], online
    finally:
        subscriber.kill()
        subscriber.wait()
    assert _await_mqtt(read, False)["lastConnectAt"] == online["lastConnectAt"]
