"""Provider deliveries per second: the gateway's throughput, as Locust stats.

For a gateway scale-out the figure that matters is notifications delivered to the providers
per second, not HTTP accepts. Two users:

- BacklogFeeder keeps the queues fed: topic sends (each reaching every device subscribed to
  the topic) whenever fewer than HERALD_LOAD_BACKLOG notifications are outstanding (sent to the
  API but not yet answered by a provider). So every gateway is always busy (saturation) and the
  backlog stays bounded. Its sends show in the stats as "feed topic send".
- DeliveryMonitor polls the provider sandbox's counters every second and fires one Locust
  request event per delivered notification (entry "provider deliveries", type DELIVERY;
  provider rejections as failures). Its Requests/s in *_stats_history.csv (with
  --csv-full-history) is the delivery rate; its response time is the mean API-accept-to-provider
  latency the gateways measured in that second (HERALD_GATEWAY_METRICS; 0 if not given), which
  under a standing backlog is mostly queueing time.

The scale-out runner names "provider deliveries" as the measured row in each meta.json
(throughput_row), so the capacity model reads deliveries, not the feeder's requests.

    locust -f scenarios/gateway_deliveries.py --headless -u 2 -r 2 -t 3m --csv out/d \
        --csv-full-history --host http://127.0.0.1:PORT
Needs HERALD_SANDBOX_URL; the rest as in herald_load.scenario (HERALD_LOAD_DEVICES, default
1000, devices on the topic when the scenario provisions for itself).
"""

import os
import time

import gevent
from locust import User, constant, events, task
from locust.clients import HttpSession

from herald_load.scenario import (DeliveryCounter, GatewayLatency, feed_topic, platform,
                                  provision_if_needed)

PLATFORM = platform()
TOPIC = os.environ.get("HERALD_LOAD_TOPIC", "load")
BACKLOG = int(os.environ.get("HERALD_LOAD_BACKLOG", "5000"))
DELIVERIES = "provider deliveries"
STATE = {"enqueued": 0, "counter": None}


@events.test_start.add_listener
def provision(environment, **_):
    provision_if_needed(PLATFORM, environment.host,
                        fcm_devices=int(os.environ.get("HERALD_LOAD_DEVICES", "1000")), topic=TOPIC)
    if not PLATFORM.sandbox:
        raise RuntimeError("gateway_deliveries needs HERALD_SANDBOX_URL (it counts deliveries there)")
    STATE["counter"] = DeliveryCounter(PLATFORM.sandbox)
    STATE["counter"].start()


class DeliveryMonitor(User):
    """One request event per notification a provider answered (see the module text)."""

    fixed_count = 1
    wait_time = constant(0)

    def on_start(self):
        self.latency = GatewayLatency(PLATFORM.gateway_metrics)
        self.latency.mean_ms()  # baseline

    @task
    def count(self):
        started = time.monotonic()
        accepted, rejected = STATE["counter"].poll()
        latency = self.latency.mean_ms() or 0.0
        fire = self.environment.events.request.fire
        for _ in range(accepted):
            fire(request_type="DELIVERY", name=DELIVERIES, response_time=latency,
                 response_length=0, exception=None, context={})
        for _ in range(rejected):
            fire(request_type="DELIVERY", name=DELIVERIES, response_time=latency,
                 response_length=0, exception=RuntimeError("rejected by the provider"), context={})
        gevent.sleep(max(0.0, 1.0 - (time.monotonic() - started)))


class BacklogFeeder(User):
    """Topic sends while fewer than HERALD_LOAD_BACKLOG notifications are outstanding."""

    fixed_count = 1
    wait_time = constant(0)

    def __init__(self, environment):
        super().__init__(environment)
        base = PLATFORM.next_dispatcher(environment.host)
        self.client = HttpSession(base_url=base, request_event=environment.events.request,
                                  user=self)

    @task
    def feed(self):
        app = PLATFORM.provisioned
        audience = app.topics.get(TOPIC, 0)
        outstanding = STATE["enqueued"] - STATE["counter"].delivered
        if audience == 0 or outstanding >= BACKLOG:
            gevent.sleep(0.1)
            return
        if feed_topic(self.client, app, TOPIC, "backlog"):
            STATE["enqueued"] += audience
