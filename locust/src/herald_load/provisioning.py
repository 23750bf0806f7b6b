"""What a load run needs before its first request, through Herald's public API: an app with its
API key, the provider sandbox's demo credentials, and registered devices (FCM tokens, or MQTT
devices with their per-device secret).

Used by the locustfiles' ``test_start`` hooks (when the environment names no ready-made app)
and by the scale-out runner, which provisions once and hands the result to every Locust run
through environment variables (:meth:`Provisioned.to_env`, :func:`from_env`).
"""

from __future__ import annotations

import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field

import requests

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


def _check(response: requests.Response, what: str) -> dict:
    if response.status_code >= 300:
        raise ProvisioningError(f"{what}: HTTP {response.status_code} {response.text[:500]}")
    return response.json() if response.content else {}


class Provisioner:
    """Set-up calls against one dispatcher (``api``) with the admin token."""

    def __init__(self, api: str, admin_token: str, sandbox: str | None = None):
        self.api = api.rstrip("/")
        self.sandbox = sandbox.rstrip("/") if sandbox else None
        self.session = requests.Session()
        self.admin = {"Authorization": f"Bearer {admin_token}"}

    def create_app(self, app: str | None = None) -> Provisioned:
        """A fresh app (unique id per run) with an API key and, given a sandbox, its FCM and APNs
        demo credentials."""
        app = app or f"load-{int(time.time() * 1000)}"
        answer = _check(self.session.post(f"{self.api}/v1/apps", headers=self.admin,
                                          json={"id": app, "name": f"Load test {app}"}, timeout=30),
                        f"creating app {app}")
        result = Provisioned(app=app, api_key=answer["apiKey"]["key"])
        if self.sandbox:
            demo = _check(self.session.get(f"{self.sandbox}/sandbox/demo-credentials", timeout=30),
                          "reading the sandbox's demo credentials")
            _check(self.session.put(f"{self.api}/v1/apps/{app}/credentials/fcm", headers=self.admin,
                                    json={"serviceAccount": demo["fcm"]["serviceAccount"]},
                                    timeout=30), "storing FCM credentials")
            _check(self.session.put(f"{self.api}/v1/apps/{app}/credentials/apns",
                                    headers=self.admin, json=demo["apns"], timeout=30),
                   "storing APNs credentials")
        return result

    def _key(self, target: Provisioned) -> dict:
        return {"Authorization": f"Bearer {target.api_key}"}

    def register_fcm_devices(self, target: Provisioned, count: int, topic: str,
                             prefix: str = "fcm", workers: int = 16) -> None:
        """``count`` FCM devices with distinct tokens, all subscribed to ``topic``."""
        def register(i: int) -> str:
            token = f"{prefix}-token-{target.app}-{i}"
            _check(self.session.put(f"{self.api}/v1/apps/{target.app}/devices/{prefix}-{i}",
                                    headers=self._key(target), timeout=30,
                                    json={"channel": "fcm", "token": token, "topics": [topic]}),
                   f"registering device {prefix}-{i}")
            return token

        with ThreadPoolExecutor(workers) as pool:
            target.fcm_tokens.extend(pool.map(register, range(count)))
        target.topics[topic] = target.topics.get(topic, 0) + count

    def register_mqtt_devices(self, target: Provisioned, count: int, topic: str,
                              prefix: str = "mqtt") -> None:
        """``count`` MQTT devices subscribed to ``topic``; keeps each one's connect data (the
        per-device secret is only in the registration answer)."""
        for i in range(count):
            device = f"{prefix}-{i}"
            answer = _check(self.session.put(
                f"{self.api}/v1/apps/{target.app}/devices/{device}", headers=self._key(target),
                json={"channel": "mqtt", "topics": [topic]}, timeout=30),
                f"registering MQTT device {device}")
            mqtt = answer.get("mqtt")
            if not mqtt or "password" not in mqtt:
                raise ProvisioningError(
                    f"registering MQTT device {device}: the answer carries no 'mqtt' connect "
                    f"data (is the connection manager's API in this dispatcher?): {answer}")
            target.mqtt_devices.append({"device": device, **mqtt})
        target.topics[topic] = target.topics.get(topic, 0) + count
