"""Traffic that makes every event a dashboard panel shows happen once, so that each panel's query has
data: after the demo (an FCM push sent, an MQTT push delivered), sends that the provider sandbox's
token prefixes (testing/provider-sandbox, TokenPrefix) answer with each kind of failure,
two Web Push browsers (one sent, one whose subscription is gone), a send held
back by its campaign throttle, one that expires there, and a scheduled send that fires.

Used by tests/node/test_observability.py on the real node; `python tests/metrics_traffic.py` runs it
against scripts/run-local.sh's platform. Standard library and herald_load only, like the rest of tests/.
"""

from __future__ import annotations

import datetime
import time
from dataclasses import dataclass

from herald_load.demo import APP, DemoTarget, run_demo
from herald_load.provisioning import Provisioned, Provisioner
from herald_load.servers import http_json

TOPIC = "metrics-traffic"
# device id -> FCM token; the prefix is what the sandbox does with it (TokenPrefix).
DEVICES = {
    "mt-unregistered": "unregistered-mt",   # 404 UNREGISTERED: failed, and the token removed
    "mt-bad": "bad-mt",                     # 400 INVALID_ARGUMENT: failed
    "mt-flaky": "flaky1-mt",                # 503 once: one retry, then sent
    "mt-dead": "flaky99-mt",                # 503 every time: retried, then dead-lettered
    "mt-throttled": "throttled1-mt",        # 429 once: the app paused on FCM, then sent
}
THROTTLED = [f"mt-paced-{i}" for i in range(3)]  # a topic send paced to one per 10 s
# device id -> the name of a browser subscription the sandbox's Web Push service issues (same prefixes).
BROWSERS = {"mt-browser": "mt-browser", "mt-browser-gone": "unregistered-mt-browser"}  # sent; 410, removed
FINAL = {"sent", "delivered", "failed", "expired", "cancelled"}


@dataclass(frozen=True)
class Sent:
    what: str
    message_id: str


class MetricsTraffic:
    def __init__(self, target: DemoTarget, admin_token: str):
        self.target = target
        self.admin_token = admin_token
        self.provisioner = Provisioner(target.dispatcher, admin_token, target.sandbox)
        self.app: Provisioned | None = None

    def _send(self, body: dict) -> str:
        status, answer = http_json("POST", f"{self.target.dispatcher}/v1/apps/{APP}/messages", body,
                                   {"Authorization": f"Bearer {self.app.api_key}"})
        if status != 202:
            raise RuntimeError(f"send {body}: HTTP {status} {answer}")
        return answer["id"]

    def _message(self, message_id: str) -> dict:
        status, answer = http_json("GET", f"{self.target.dispatcher}/v1/apps/{APP}/messages/{message_id}",
                                   headers={"Authorization": f"Bearer {self.app.api_key}"})
        if status != 200:
            raise RuntimeError(f"message {message_id}: HTTP {status} {answer}")
        return answer

    def _browser_subscriptions(self) -> dict[str, dict]:
        """Browsers subscribed at the sandbox's Web Push service for the app's VAPID key."""
        status, key = http_json("GET", f"{self.target.dispatcher}/v1/apps/{APP}/webpush/vapid-public-key",
                                headers={"Authorization": f"Bearer {self.app.api_key}"})
        if status != 200:
            raise RuntimeError(f"the app's VAPID public key: HTTP {status} {key}")
        status, issued = http_json("POST", f"{self.target.sandbox}/sandbox/webpush/subscriptions",
                                   {"names": list(BROWSERS.values()), "applicationServerKey": key["publicKey"]})
        if status != 200:
            raise RuntimeError(f"sandbox subscriptions: HTTP {status} {issued}")
        return {device: {"endpoint": s["endpoint"], "keys": s["keys"]} for device, s in zip(BROWSERS, issued)}

    def run(self, timeout: float = 120) -> dict[str, dict]:
        """Sends the traffic and waits until every message is final; returns each one's status."""
        run_demo(self.target, self.admin_token, say=lambda line: None)
        self.app = self.provisioner.create_app(APP, name="Demo app", existing_ok=True)
        for device, token in DEVICES.items():
            self.provisioner.register_device(self.app, device, {"channel": "fcm", "token": token})
        for device, subscription in self._browser_subscriptions().items():
            self.provisioner.register_device(self.app, device, {"channel": "webpush", "subscription": subscription})
        for device in THROTTLED:
            self.provisioner.register_device(self.app, device, {"channel": "fcm", "token": f"{device}-token",
                                                                "topics": [TOPIC]})
        sent = [Sent(f"to {device}", self._send({"to": {"devices": [device]}, "title": "metrics traffic"}))
                for device in [*DEVICES, *BROWSERS]]
        # Paced at one per 10 s with an 8 s TTL: the first goes, the others wait (throttled) and
        # expire while they wait (the TTL leaves the gateway 8 s to see the message on a busy machine).
        sent.append(Sent("paced topic send", self._send({"to": {"topic": TOPIC}, "title": "paced", "ttl": 8,
                                                         "throttle": {"perMinute": 6}})))
        due = datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=3)
        sent.append(Sent("scheduled send", self._send({"to": {"devices": [THROTTLED[0]]}, "title": "scheduled",
                                                       "sendAt": due.isoformat(timespec="milliseconds")})))
        deadline = time.monotonic() + timeout
        states: dict[str, dict] = {}
        while True:
            states = {s.what: self._message(s.message_id) for s in sent}
            if all(m["state"] in FINAL for m in states.values()):
                return states
            if time.monotonic() > deadline:
                raise TimeoutError(f"messages not final after {timeout:.0f} s: "
                                   f"{ {w: m['state'] for w, m in states.items()} }")
            time.sleep(0.5)


def main() -> int:
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    token = (root / ".run" / "admin-token").read_text().strip()
    states = MetricsTraffic(DemoTarget(), token).run()
    for what, message in states.items():
        print(f"{what}: {message['state']} {message.get('targets')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
