"""The end-to-end demo of the local platform (``scripts/run-local.sh`` runs it after start-up).

Creates app "demo" with the provider sandbox's FCM and APNs credentials, registers device
"phone-1", sends it a push, waits until the message is "sent" and shows that the sandbox (standing
in for FCM) received it. Then registers an MQTT device "sensor-1", connects it with
``mosquitto_sub`` to the connection manager, sends it a push and shows it received and the message
"delivered" (the device's PUBACK is the receipt). Run again, it issues a new API key for the
existing app. Standard library only.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .provisioning import Provisioned, Provisioner
from .servers import http_json

__all__ = ["DemoError", "DemoTarget", "run_demo"]

APP, DEVICE, TOKEN, TOPIC, MQTT_DEVICE = "demo", "phone-1", "demo-token-1", "news", "sensor-1"


class DemoError(RuntimeError):
    """A step of the demo did not give what it should (the message says which and what came)."""


@dataclass(frozen=True)
class DemoTarget:
    """Where the platform answers (the local run's fixed ports by default)."""

    dispatcher: str = "http://127.0.0.1:8080"
    sandbox: str = "http://127.0.0.1:9090"
    mqtt_host: str = "127.0.0.1"
    mqtt_port: int = 1883


def _show(body: object) -> str:
    return "\n".join("    " + line for line in json.dumps(body, indent=4).splitlines())


class _Demo:
    def __init__(self, target: DemoTarget, admin_token: str, say: Callable[[str], None]):
        self.target = target
        self.say = say
        self.provisioner = Provisioner(target.dispatcher, admin_token, target.sandbox)
        self.app: Provisioned | None = None

    def call(self, method: str, path: str, body: object | None = None) -> dict:
        status, answer = http_json(method, f"{self.target.dispatcher}/v1/apps/{APP}{path}", body,
                                   {"Authorization": f"Bearer {self.app.api_key}"})
        if status >= 300:
            raise DemoError(f"{method} /v1/apps/{APP}{path}: HTTP {status} {answer}")
        return answer

    def send(self, device: str, title: str, body: str) -> str:
        answer = self.call("POST", "/messages", {"to": {"devices": [device]}, "title": title,
                                                 "body": body, "data": {"source": "demo"}})
        self.say(_show(answer))
        return answer["id"]

    def await_state(self, message_id: str, wanted: str, timeout: float = 30) -> None:
        self.say(f"==> waiting for message {message_id} to be {wanted} (at most {timeout:g} s)")
        deadline = time.monotonic() + timeout
        while True:
            message = self.call("GET", f"/messages/{message_id}")
            if message["state"] == wanted:
                self.say(_show(message))
                return
            if message["state"] in ("failed", "expired"):
                raise DemoError(f"message {message_id} ended in state '{message['state']}':\n"
                                f"{_show(message)}")
            if time.monotonic() > deadline:
                raise DemoError(f"message {message_id} still '{message['state']}' after "
                                f"{timeout:g} s:\n{_show(message)}")
            time.sleep(0.5)

    def received_fcm(self) -> int:
        status, body = http_json("GET", f"{self.target.sandbox}/sandbox/received?token={TOKEN}")
        if status != 200:
            raise DemoError(f"GET {self.target.sandbox}/sandbox/received: HTTP {status} {body}")
        return int(body["fcm"])


def run_demo(target: DemoTarget, admin_token: str, run_dir: Path | None = None,
             say: Callable[[str], None] = print) -> None:
    """Runs the demo against a running platform; ``DemoError`` if a step fails. The app's API key
    is written to ``run_dir/demo-api-key``."""
    status, _ = http_json("GET", f"{target.dispatcher}/actuator/health/readiness")
    if status != 200:
        raise DemoError(f"dispatcher readiness at {target.dispatcher}: HTTP {status} "
                        "(is Herald running? scripts/run-local.sh)")
    demo = _Demo(target, admin_token, say)
    say(f"==> creating app '{APP}' with the provider sandbox's FCM and APNs credentials")
    demo.app = demo.provisioner.create_app(APP, name="Demo app", existing_ok=True)
    if run_dir and run_dir.is_dir():
        key_file = run_dir / "demo-api-key"
        key_file.touch(mode=0o600)
        key_file.write_text(demo.app.api_key + "\n")

    say(f"==> registering device '{DEVICE}' (fcm, token {TOKEN}, topic {TOPIC})")
    say(_show(demo.provisioner.register_device(
        demo.app, DEVICE, {"channel": "fcm", "token": TOKEN, "topics": [TOPIC]})))
    before = demo.received_fcm()   # the demo may run repeatedly
    say(f"==> sending a push to device '{DEVICE}'")
    message_id = demo.send(DEVICE, "Hello from Herald",
                           "Your first push, delivered through the provider sandbox")
    demo.await_state(message_id, "sent")
    after = demo.received_fcm()
    say(f"==> the provider sandbox received it: FCM count for {TOKEN} {before} -> {after}")
    if after <= before:
        raise DemoError(f"sandbox FCM count for {TOKEN} did not grow (before {before}, after {after})")

    say(f"==> registering MQTT device '{MQTT_DEVICE}' (no provider token: it connects to Herald)")
    mqtt = demo.provisioner.register_mqtt_device(demo.app, MQTT_DEVICE, [TOPIC])
    say(_show({"mqtt": {**mqtt, "password": "(secret)"}}))
    say("==> connecting it with mosquitto_sub (MQTT 5, QoS 1) and sending it a push")
    # The password goes on mosquitto_sub's command line: fine for this local demo device only.
    subscriber = subprocess.Popen(
        ["mosquitto_sub", "-V", "mqttv5", "-q", "1", "-C", "1", "-W", "30",
         "-h", target.mqtt_host, "-p", str(target.mqtt_port), "-i", mqtt["clientId"],
         "-u", mqtt["username"], "-P", mqtt["password"], "-t", mqtt["topic"]],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    mqtt_message_id = demo.send(MQTT_DEVICE, "Hello over MQTT", "Confirmed by the device itself")
    received, _ = subscriber.communicate(timeout=60)
    if subscriber.returncode != 0:
        raise DemoError(f"mosquitto_sub received nothing: {received}")
    say("==> the device received:\n" + "\n".join("    " + line for line in received.splitlines()))
    demo.await_state(mqtt_message_id, "delivered")

    say(f"""
Demo OK: message {message_id} reached the sandbox's FCM endpoint (token {TOKEN}: {before} -> {after}),
and message {mqtt_message_id} was delivered to MQTT device {MQTT_DEVICE} (PUBACK received).
The app's API key is in .run/demo-api-key, e.g.:
  curl -H "Authorization: Bearer $(cat .run/demo-api-key)" {target.dispatcher}/v1/apps/{APP}/stats""")


def main() -> int:
    """``python -m herald_load.demo``: the demo against a running local platform (admin token
    from ``ADMIN_TOKEN`` or ``.run/admin-token``; ``HERALD_DISPATCHER_URL``,
    ``HERALD_SANDBOX_URL``, ``HERALD_MQTT_HOST``/``_PORT`` override where it runs)."""
    from .processes import repository_root
    run_dir = repository_root() / ".run"
    token = os.environ.get("ADMIN_TOKEN") or (
        (run_dir / "admin-token").read_text().strip() if (run_dir / "admin-token").exists() else "")
    if not token:
        print("ERROR: no admin token: set ADMIN_TOKEN or start Herald with scripts/run-local.sh")
        return 1
    defaults = DemoTarget()
    target = DemoTarget(os.environ.get("HERALD_DISPATCHER_URL", defaults.dispatcher),
                        os.environ.get("HERALD_SANDBOX_URL", defaults.sandbox),
                        os.environ.get("HERALD_MQTT_HOST", defaults.mqtt_host),
                        int(os.environ.get("HERALD_MQTT_PORT", defaults.mqtt_port)))
    try:
        run_demo(target, token, run_dir)
    except DemoError as error:
        print(f"ERROR: {error}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
