"""HTTP senders against the Dispatcher API (FastHttpUser): unicast, topic and mixed priorities.

    locust -f scenarios/http_senders.py --host http://127.0.0.1:8080 --headless -u 50 -r 10 -t 2m \
        --csv out/senders                       # all three user classes, by weight
    locust -f scenarios/http_senders.py UnicastSender ...   # only one class

Environment: see herald_load.scenario (HERALD_DISPATCHERS, HERALD_LOAD_PROVISIONED or
HERALD_ADMIN_TOKEN + HERALD_SANDBOX_URL), plus HERALD_LOAD_DEVICES (devices provisioned when the
scenario sets up its own app, default 100), HERALD_SEND_PRIORITY_HIGH_SHARE (0.2) and
HERALD_SHAPE (step / ramp, see herald_load.shapes). Each request is one Locust entry named by
what it sends ("send unicast normal", "send topic normal", "send unicast high", ...); a 202 with
a message id is a success, anything else a failure with the problem+json title.
"""

import os
import random

from locust import FastHttpUser, between, events, task

from herald_load.scenario import platform, provision_if_needed
from herald_load.shapes import selected_shape

PLATFORM = platform()
TOPIC = os.environ.get("HERALD_LOAD_TOPIC", "load")
HIGH_SHARE = float(os.environ.get("HERALD_SEND_PRIORITY_HIGH_SHARE", "0.2"))

Shape = selected_shape()  # noqa: N816 (Locust picks the shape class up from this module)


@events.test_start.add_listener
def provision(environment, **_):
    provision_if_needed(PLATFORM, environment.host,
                        fcm_devices=int(os.environ.get("HERALD_LOAD_DEVICES", "100")), topic=TOPIC)


class _Sender(FastHttpUser):
    abstract = True
    wait_time = between(0.0, 0.02)

    def __init__(self, environment):
        self.host = PLATFORM.next_dispatcher(environment.host)
        super().__init__(environment)

    def send(self, to: dict, kind: str, priority: str = "normal") -> None:
        app = PLATFORM.provisioned
        with self.client.post(f"/v1/apps/{app.app}/messages", name=f"send {kind} {priority}",
                              headers={"Authorization": f"Bearer {app.api_key}"},
                              json={"to": to, "title": "Load", "body": f"{kind} {priority}",
                                    "data": {"scenario": "http_senders"}, "priority": priority,
                                    "ttl": 600},
                              catch_response=True) as response:
            if response.status_code == 202 and response.json().get("id"):
                response.success()
            else:
                title = ""
                try:
                    title = response.json().get("title", "")
                except Exception:  # noqa: BLE001 (not JSON: the status says enough)
                    pass
                response.failure(f"HTTP {response.status_code} {title}".strip())

    def random_token(self) -> dict:
        return {"channel": "fcm", "token": random.choice(PLATFORM.provisioned.fcm_tokens)}


class UnicastSender(_Sender):
    """One registered FCM token per send (the transactional push)."""

    weight = 3

    @task
    def unicast(self):
        self.send({"tokens": [self.random_token()]}, "unicast")


class TopicSender(_Sender):
    """Sends to the topic every provisioned device is subscribed to (a campaign)."""

    weight = 1
    wait_time = between(0.5, 1.0)

    @task
    def topic(self):
        self.send({"topic": TOPIC}, "topic")


class MixedPrioritySender(_Sender):
    """Unicast sends, HERALD_SEND_PRIORITY_HIGH_SHARE of them high priority."""

    weight = 2

    @task
    def mixed(self):
        priority = "high" if random.random() < HIGH_SHARE else "normal"
        self.send({"tokens": [self.random_token()]}, "unicast", priority)
