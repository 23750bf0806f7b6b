"""MQTT devices: connect to the connection manager, receive pushes, acknowledge them, and report
the end-to-end delivery latency (API accept to device receipt) as Locust stats.

Each MqttDevice user is one registered device (the device contract in the project brief):
MQTT CONNECT with client id = device id, username = app id, password = the per-device secret
from the registration answer; SUBSCRIBE QoS 1 to apps/<app>/devices/<device>. paho-mqtt sends
the PUBACK when the message callback returns (that is the device's receipt). For every push the
device fires a request event, type MQTT, name "delivery (accept to device)", with response time
= now - acceptedAt (epoch millis the dispatcher put in the payload). Connect and subscribe are
entries of their own ("connect", "subscribe"), so refused connections show as failures; a first
connect refused as "Server unavailable" (or unanswered) is tried again, up to
HERALD_MQTT_CONNECT_ATTEMPTS times (default 5), with a jittered back-off of 1, 2, 4, 8 s. A
connection that drops is a failed "disconnect" (with paho's reason); paho reconnects on its own and
the device subscribes again (a clean session keeps no subscription), as "reconnect". Only
subscribed devices count towards the feeder's backlog.

Two ways to push, one user class each (name the one wanted on Locust's command line):
- PushToDevices (FastHttpUser) sends unicast pushes to random devices (HERALD_MQTT_SEND_WAIT
  seconds between sends per user, default 0.5), so the scenario runs on its own.
- TopicFeeder (one user) sends topic pushes that reach every provisioned device, whenever fewer
  than min(HERALD_LOAD_BACKLOG, HERALD_MQTT_BACKLOG_PER_DEVICE x connected devices) pushes are
  outstanding (sent, not yet received). That keeps the connection managers busy with a bounded
  backlog, and costs the dispatcher one accept per audience rather than per device: the
  connection manager's scale-out measures the connection managers, not the unicast accept path
  ahead of them. Per device the backlog stays below the per-device box (100 by default), so no
  push is evicted. Its sends show as "feed topic send". Pushes that do not arrive are written
  off when nothing arrived for HERALD_MQTT_STALL_S seconds (default 10) while the backlog was full:
  the entry "pushes written off" counts each write-off as a failure (its size in bytes = pushes).

    locust -f scenarios/mqtt_devices.py --headless -u 20 -r 10 -t 1m --host http://DISPATCHER
Environment: HERALD_MQTT_HOST / HERALD_MQTT_PORT (the CM's MQTT listener, default 127.0.0.1:1883;
several hosts, comma-separated, take the devices in turn: the scale-out runner names each connection
manager pod so that every pod holds as many devices as the next),
HERALD_MQTT_DEVICES (devices registered when the scenario provisions for itself, default 20),
plus herald_load.scenario's. Latency needs the load generator's clock to agree with the
dispatcher's (same machine, or NTP).
"""

import json
import os
import random
import threading
import time

import gevent
from gevent.event import Event
import paho.mqtt.client as mqtt
from locust import FastHttpUser, User, constant, events, task
from locust.clients import HttpSession

from herald_load.scenario import FeedBacklog, feed_topic, platform, provision_if_needed

PLATFORM = platform()
TOPIC = os.environ.get("HERALD_LOAD_TOPIC", "devices")
MQTT_HOSTS = [host.strip() for host in os.environ.get("HERALD_MQTT_HOST", "127.0.0.1").split(",")
              if host.strip()]
MQTT_PORT = int(os.environ.get("HERALD_MQTT_PORT", "1883"))
SEND_WAIT = float(os.environ.get("HERALD_MQTT_SEND_WAIT", "0.5"))
BACKLOG = int(os.environ.get("HERALD_LOAD_BACKLOG", "5000"))
BACKLOG_PER_DEVICE = int(os.environ.get("HERALD_MQTT_BACKLOG_PER_DEVICE", "20"))
STALL_S = float(os.environ.get("HERALD_MQTT_STALL_S", "10"))
CONNECT_ATTEMPTS = int(os.environ.get("HERALD_MQTT_CONNECT_ATTEMPTS", "5"))
# The CONNACK codes of a server that may take the device a moment later (MQTT 3.1.1 code 3).
_BUSY = ("Server unavailable",)
DELIVERY = "delivery (accept to device)"
_devices = {"next": None, "lock": threading.Lock()}
# Devices subscribed now, and pushes received by them: the topic feeder's view of its backlog.
_fleet = {"subscribed": 0, "received": 0}


@events.test_start.add_listener
def provision(environment, **_):
    made = provision_if_needed(PLATFORM, environment.host, fcm_devices=0, topic=TOPIC,
                               mqtt_devices=int(os.environ.get("HERALD_MQTT_DEVICES", "20")))
    _devices["next"] = iter(enumerate(made.mqtt_devices))


def _take_device():
    """The next provisioned device and the MQTT host it connects to (the hosts in turn)."""
    with _devices["lock"]:
        index, device = next(_devices["next"], (None, None))
    return device, (MQTT_HOSTS[index % len(MQTT_HOSTS)] if device is not None else None)


class MqttDevice(User):
    """One device holding one MQTT connection (weight so it outnumbers the senders)."""

    weight = 4
    wait_time = constant(1)

    def on_start(self):
        self.device, self.mqtt_host = _take_device()
        if self.device is None:
            raise RuntimeError("more MqttDevice users than provisioned MQTT devices: raise "
                               "HERALD_MQTT_DEVICES or lower -u")
        fire = self.environment.events.request.fire
        # live: None until on_start is through, then whether the device is subscribed and counted
        # in the feeder's fleet (it drops out on a disconnect and back in on a resubscribe).
        self.live, self.stopping = None, False
        client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=self.device["clientId"],
                             clean_session=True, protocol=mqtt.MQTTv311)
        client.username_pw_set(self.device["username"], self.device["password"])
        connected, subscribed = Event(), Event()
        outcome = {}

        def on_subscribe(_client, _userdata, _mid, reason_codes, _properties):
            outcome["granted"] = reason_codes
            subscribed.set()
            if self.live is not None and not any(code.is_failure for code in reason_codes):
                self._set_live(True)        # subscribed again after a reconnect

        def on_connect(_client, _userdata, _flags, reason, _properties):
            outcome["reason"] = reason
            connected.set()
            if self.live is None:           # the first connect: on_start goes on from here
                return
            fire(request_type="MQTT", name="reconnect", response_time=0, response_length=0,
                 exception=ConnectionRefusedError(f"CONNACK {reason}") if reason.is_failure else None,
                 context={})
            if not reason.is_failure:
                # paho reconnects on its own after a drop, but a clean session holds no
                # subscription: a device must subscribe again, or its pushes wait in its box.
                _client.subscribe(self.device["topic"], qos=1)

        def on_disconnect(_client, _userdata, _flags, reason, _properties):
            if self.stopping or self.live is None:
                return
            self._set_live(False)
            fire(request_type="MQTT", name="disconnect", response_time=0, response_length=0,
                 exception=ConnectionError(f"dropped by the server or the network: {reason}"),
                 context={})

        def on_message(_client, _userdata, message):
            received = time.time() * 1000.0
            _fleet["received"] += 1
            try:
                payload = json.loads(message.payload)
                latency = received - float(payload["acceptedAt"])
                error = None
            except (ValueError, KeyError, TypeError) as problem:
                latency, error = 0.0, problem
            fire(request_type="MQTT", name=DELIVERY, response_time=max(latency, 0.0),
                 response_length=len(message.payload), exception=error, context={})

        client.on_connect = on_connect
        client.on_subscribe = on_subscribe
        client.on_message = on_message
        client.on_disconnect = on_disconnect
        self._connect_first(client, connected, outcome)
        started = time.perf_counter()
        result, _mid = client.subscribe(self.device["topic"], qos=1)
        error = None if result == mqtt.MQTT_ERR_SUCCESS else RuntimeError(mqtt.error_string(result))
        if error is None and not subscribed.wait(10):
            error = TimeoutError("no SUBACK within 10 s")
        elif error is None and any(code.is_failure for code in outcome["granted"]):
            error = PermissionError(f"SUBACK refused: {outcome['granted']}")
        fire(request_type="MQTT", name="subscribe", response_time=(time.perf_counter() - started) * 1000,
             response_length=0, exception=error, context={})
        self.client = client
        self.live = False
        self._set_live(error is None)

    def _connect_first(self, client, connected, outcome):
        """The first CONNECT, tried again after a refusal that a busy server gives ("Server
        unavailable", no CONNACK in time, a refused socket): a connection manager answers so when its
        session store is slow, as under a small CPU limit while many devices connect at once. Each
        try is a "connect" entry; a refusal for bad credentials or the last try's failure ends it."""
        fire = self.environment.events.request.fire
        for attempt in range(1, CONNECT_ATTEMPTS + 1):
            connected.clear()
            started, refused = time.perf_counter(), None
            try:
                client.connect(self.mqtt_host, MQTT_PORT, keepalive=60)
                client.loop_start()
                if not connected.wait(10):
                    raise TimeoutError("no CONNACK within 10 s")
                if outcome["reason"].is_failure:
                    refused = outcome["reason"]
                    raise ConnectionRefusedError(f"CONNACK {refused}")
            except Exception as error:  # noqa: BLE001 (reported as a failed connect)
                fire(request_type="MQTT", name="connect", response_time=(time.perf_counter() - started) * 1000,
                     response_length=0, exception=error, context={})
                client.loop_stop()
                busy = refused is None or any(refused == name for name in _BUSY)
                if attempt == CONNECT_ATTEMPTS or not busy:
                    raise
                # Jittered back-off, so that the devices refused together do not all come back together.
                gevent.sleep(min(2 ** (attempt - 1), 16) * random.uniform(0.5, 1.0))
                continue
            fire(request_type="MQTT", name="connect", response_time=(time.perf_counter() - started) * 1000,
                 response_length=0, exception=None, context={})
            return

    def _set_live(self, live):
        """Counts the device in the feeder's fleet while it is subscribed, once."""
        if live != self.live:
            _fleet["subscribed"] += 1 if live else -1
            self.live = live

    @task
    def stay_connected(self):
        """Messages arrive on paho's network loop; the task only keeps the user alive."""

    def on_stop(self):
        self.stopping = True
        if getattr(self, "live", None):
            self._set_live(False)
        client = getattr(self, "client", None)
        if client is not None:
            client.disconnect()
            client.loop_stop()


class PushToDevices(FastHttpUser):
    """Unicast pushes to random provisioned MQTT devices."""

    weight = 1

    def __init__(self, environment):
        self.host = PLATFORM.next_dispatcher(environment.host)
        super().__init__(environment)

    def wait_time(self):
        return SEND_WAIT

    @task
    def push(self):
        app = PLATFORM.provisioned
        device = random.choice(app.mqtt_devices)["device"]
        with self.client.post(f"/v1/apps/{app.app}/messages", name="send to mqtt device",
                              headers={"Authorization": f"Bearer {app.api_key}"},
                              json={"to": {"devices": [device]}, "title": "Load",
                                    "body": "mqtt", "data": {"scenario": "mqtt_devices"}},
                              catch_response=True) as response:
            if response.status_code == 202:
                response.success()
            else:
                response.failure(f"HTTP {response.status_code}")


class TopicFeeder(User):
    """Topic pushes to every provisioned device while the backlog allows (see the module text)."""

    fixed_count = 1
    wait_time = constant(0)

    def __init__(self, environment):
        super().__init__(environment)
        self.client = HttpSession(base_url=PLATFORM.next_dispatcher(environment.host),
                                  request_event=environment.events.request, user=self)
        self.backlog = FeedBacklog(STALL_S)

    @task
    def feed(self):
        subscribed = _fleet["subscribed"]
        self.backlog.arrived(_fleet["received"])
        # Counted over the devices subscribed now, so that one provisioned but never connected
        # does not hold the feeder back.
        full_at = min(BACKLOG, BACKLOG_PER_DEVICE * subscribed) - subscribed
        if subscribed == 0 or self.backlog.outstanding() > full_at:
            lost = self.backlog.write_off_if_stalled(full_at)
            if lost:
                self.environment.events.request.fire(
                    request_type="FEED", name="pushes written off", response_time=0, response_length=lost,
                    exception=RuntimeError(f"{lost} pushes not received within {STALL_S:g} s"), context={})
            gevent.sleep(0.05)
            return
        # Devices provisioned but not subscribed get the push into their box, not now: only the
        # subscribed ones count towards what should come back.
        if feed_topic(self.client, PLATFORM.provisioned, TOPIC, "mqtt"):
            self.backlog.sent += subscribed
