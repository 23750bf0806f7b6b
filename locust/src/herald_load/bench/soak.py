"""Soak benchmark: ``python -m herald_load bench soak`` (``scripts/bench.sh soak``).

Starts its own local platform on free ports (RabbitMQ, Redis, provider sandbox, one dispatcher,
gateway and connection manager; nothing on the local run's fixed ports), then offers a steady mix
for ``SOAK_MINUTES`` (30) minutes, open loop:

- unicast: ``SOAK_UNICAST_RATE`` (20) sends/s, each to one new token, FCM and APNs in turn;
- topic: every ``SOAK_TOPIC_EVERY`` (10) s one send to a topic of ``SOAK_TOPIC_DEVICES`` (200)
  FCM devices;
- MQTT: ``SOAK_MQTT_RATE`` (10) sends/s to ``SOAK_MQTT_DEVICES`` (50) devices connected to the
  connection manager, one device each.

Every ``SOAK_SAMPLE_SECONDS`` (60) it prints, per process, the heap after a full GC (jcmd), RSS,
open files and threads, and the gateway's in-flight permits (and waiters), with the load's counts.
At the end it waits for every accepted send to arrive (sandbox, devices), checks that the gateway
holds no permit at rest, and runs a trend test over the samples after the warm-up
(:func:`unbounded_growth`): any of them growing without bound, a send lost or a permit held fails
the run loudly (exit status 1). Everything it started is stopped at the end.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import statistics
import sys
import tempfile
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

from . import mqtt
from ..local import LocalPlatform
from ..localrun import build
from ..processes import PlatformError, repository_root
from ..provisioning import Provisioner
from ..servers import http_json


def _knob(name: str, default: float) -> float:
    return float(os.environ.get(name, default))


@dataclass(frozen=True)
class Tolerance:
    """How much a series may rise between the first and last third of the samples after the
    warm-up before it counts as growing without bound: the larger of ``absolute`` and
    ``relative`` times its level."""

    absolute: float
    relative: float


# Heap after a full GC is the live set: steady load keeps it flat. RSS settles once the heap has
# grown to what the load needs; threads and descriptors are pools. In-flight permits are bounded by
# max-in-flight anyway; a leak shows at rest (checked apart).
TOLERANCES = {
    "heap_mib": Tolerance(16, 0.20),
    "rss_mib": Tolerance(48, 0.15),
    "open_files": Tolerance(16, 0.20),
    "threads": Tolerance(8, 0.20),
    "in_flight": Tolerance(50, 0.50),
}

# The Herald services are judged. The others are printed only: Redis keeps every message's status
# for herald.status-ttl (7 days), the sandbox (a test double) remembers every delivery to count
# duplicates, so both grow for as long as a soak can last; RabbitMQ's queues stay near empty.
JUDGED = ("dispatcher", "gateway", "connection-manager")
NOT_JUDGED = {"redis": "keeps statuses for herald.status-ttl",
              "provider-sandbox": "test double, remembers every delivery",
              "rabbitmq": "broker, printed for reference"}


def _slope(values: list[float]) -> float:
    """Least-squares slope per sample."""
    n = len(values)
    mean_x, mean_y = (n - 1) / 2, statistics.fmean(values)
    spread = sum((x - mean_x) ** 2 for x in range(n))
    return sum((x - mean_x) * (y - mean_y) for x, y in enumerate(values)) / spread


def unbounded_growth(values: list[float], tolerance: Tolerance, warmup: int) -> str | None:
    """Why ``values`` (one per sample) grow without bound, or None if they do not.

    After the first ``warmup`` samples, the series grows if both its last third's median exceeds
    its first third's by more than the tolerance, and the least-squares line over those samples
    rises by more than the tolerance: a step (a pool filling once) or noise passes, a steady
    climb fails. Fewer than 6 samples after the warm-up are too few to judge (None)."""
    steady = values[warmup:]
    if len(steady) < 6:
        return None
    third = len(steady) // 3
    first, last = statistics.median(steady[:third]), statistics.median(steady[-third:])
    allowed = max(tolerance.absolute, tolerance.relative * abs(first))
    rise = _slope(steady) * (len(steady) - 1)
    if last - first > allowed and rise > allowed:
        return (f"rose from {first:.1f} to {last:.1f} (line over the run +{rise:.1f}; "
                f"allowed +{allowed:.1f})")
    return None


# ---------------------------------------------------------------------------- process figures

def _status_field(pid: int, name: str) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(name + ":"):
                return int(line.split()[1])
    return 0


def _prometheus_value(url: str, metric: str) -> float | None:
    status, text = http_json("GET", f"{url}/actuator/prometheus", timeout=10)
    if status != 200 or not isinstance(text, str):
        return None
    for line in text.splitlines():
        if line.startswith(metric + " ") or line.startswith(metric + "{"):
            return float(line.rsplit(" ", 1)[1])
    return None


def sample_process(pid: int, jvm: bool, actuator: str | None) -> dict[str, float | None]:
    figures: dict[str, float | None] = {
        "heap_mib": mqtt.heap_used_bytes(pid) / 2**20 if jvm else None,
        "rss_mib": _status_field(pid, "VmRSS") / 1024,
        "open_files": len(os.listdir(f"/proc/{pid}/fd")),
        "threads": _status_field(pid, "Threads"),
        "in_flight": None,
        "waiting": None,
    }
    if actuator:
        figures["in_flight"] = _prometheus_value(actuator, "herald_gateway_in_flight")
        figures["waiting"] = _prometheus_value(actuator, "herald_gateway_waiting")
    return figures


# ---------------------------------------------------------------------------- load

@dataclass
class Counts:
    accepted: int = 0
    errors: int = 0
    last_error: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, status: int, body: object) -> None:
        with self.lock:
            if status == 202:
                self.accepted += 1
            else:
                self.errors += 1
                self.last_error = f"{status} {str(body)[:200]}"


class Sender:
    """POSTs sends on one kept-alive connection."""

    def __init__(self, api: str, app: str, key: str):
        parsed = urllib.parse.urlsplit(api)
        self.host, self.port = parsed.hostname, parsed.port
        self.path = f"/v1/apps/{app}/messages"
        self.headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
        self.connection: http.client.HTTPConnection | None = None

    def send(self, body: dict) -> tuple[int, object]:
        for attempt in range(2):
            if self.connection is None:
                self.connection = http.client.HTTPConnection(self.host, self.port, timeout=30)
            try:
                self.connection.request("POST", self.path, json.dumps(body), self.headers)
                response = self.connection.getresponse()
                raw = response.read()
                return response.status, json.loads(raw) if raw else None
            except (http.client.HTTPException, OSError) as error:
                self.connection.close()
                self.connection = None
                if attempt == 1:
                    return 0, repr(error)
        raise AssertionError("unreachable")


def paced(rate: float, until: float, stop: threading.Event, each) -> None:
    """Calls ``each(n)`` ``rate`` times a second until ``until`` (monotonic), open loop: call n is
    due at start + n / rate however long the earlier ones took."""
    start, n = time.monotonic(), 0
    while not stop.is_set():
        due = start + n / rate
        if due >= until:
            return
        delay = due - time.monotonic()
        if delay > 0:
            stop.wait(delay)   # pacing the offered load
        each(n)
        n += 1


@dataclass
class Mix:
    unicast: Counts = field(default_factory=Counts)
    topic: Counts = field(default_factory=Counts)
    mqtt: Counts = field(default_factory=Counts)
    mqtt_received: set = field(default_factory=set)


def _mqtt_devices(loop: asyncio.AbstractEventLoop, port: int, app: str, devices: list[dict],
                  received: set) -> list:
    def on_message(payload: bytes, _received_ms: float) -> None:
        received.add(json.loads(payload)["id"])

    ids = [d["device"] for d in devices]
    passwords = [d["password"] for d in devices]
    return asyncio.run_coroutine_threadsafe(
        mqtt.open_devices("127.0.0.1", port, app, ids, passwords, ["127.0.0.1"], 50, on_message),
        loop).result(120)


# ---------------------------------------------------------------------------- the run

def _print_sample(minute: float, samples: dict[str, dict], mix: Mix, sandbox: dict) -> None:
    print(f"--- minute {minute:5.1f}: unicast {mix.unicast.accepted} accepted/{mix.unicast.errors} errors, "
          f"topic {mix.topic.accepted}/{mix.topic.errors}, mqtt {mix.mqtt.accepted}/{mix.mqtt.errors} "
          f"({len(mix.mqtt_received)} received); sandbox accepted {sandbox.get('accepted')}, "
          f"duplicates {sandbox.get('duplicates')}", flush=True)
    for name, figures in samples.items():
        heap, in_flight, waiting = figures["heap_mib"], figures["in_flight"], figures["waiting"]
        heap_text = "-" if heap is None else f"{heap:7.1f} MiB"
        permits = "-" if in_flight is None else f"{in_flight:.0f} (waiting {waiting or 0:.0f})"
        print(f"    {name:<22} heap after GC {heap_text}  RSS {figures['rss_mib']:7.1f} MiB  "
              f"open files {figures['open_files']:5.0f}  threads {figures['threads']:4.0f}  "
              f"in-flight permits {permits}", flush=True)


def run(platform: LocalPlatform, minutes: float) -> list[str]:
    """The soak on a started platform; returns the failures (empty: passed)."""
    rate_unicast = _knob("SOAK_UNICAST_RATE", 20)
    topic_every = _knob("SOAK_TOPIC_EVERY", 10)
    topic_devices = int(_knob("SOAK_TOPIC_DEVICES", 200))
    rate_mqtt = _knob("SOAK_MQTT_RATE", 10)
    mqtt_devices = int(_knob("SOAK_MQTT_DEVICES", 50))
    sample_every = _knob("SOAK_SAMPLE_SECONDS", 60)

    api = platform.dispatcher_urls[0]
    provisioner = Provisioner(api, platform.admin_token, platform.sandbox_url)
    app = provisioner.create_app(f"soak-{int(time.time())}", name="Soak")
    provisioner.register_fcm_devices(app, topic_devices, "soak", prefix="soak-topic")
    provisioner.register_mqtt_devices(app, mqtt_devices, "soak-mqtt", prefix="soak-mqtt")
    platform.reset_sandbox_counts()

    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, name="mqtt-devices", daemon=True).start()
    mix = Mix()
    devices = _mqtt_devices(loop, platform.connection_managers[0].extra["mqtt_port"], app.app,
                            app.mqtt_devices, mix.mqtt_received)
    print(f"soak: {minutes:g} min; unicast {rate_unicast:g}/s (FCM and APNs in turn), a topic send to "
          f"{topic_devices} devices every {topic_every:g} s, MQTT {rate_mqtt:g}/s to {len(devices)} "
          f"connected devices; a sample every {sample_every:g} s", flush=True)

    def unicast(n: int, sender=Sender(api, app.app, app.api_key)) -> None:
        target = ({"channel": "fcm", "token": f"soak-unicast-{n}"} if n % 2 == 0
                  else {"channel": "apns", "token": f"{n:064x}"})
        mix.unicast.add(*sender.send({"to": {"tokens": [target]}, "title": f"unicast {n}", "ttl": 3600}))

    def topic(n: int, sender=Sender(api, app.app, app.api_key)) -> None:
        mix.topic.add(*sender.send({"to": {"topic": "soak"}, "title": f"topic {n}", "ttl": 3600}))

    def to_device(n: int, sender=Sender(api, app.app, app.api_key)) -> None:
        device = app.mqtt_devices[n % len(app.mqtt_devices)]["device"]
        mix.mqtt.add(*sender.send({"to": {"devices": [device]}, "title": f"mqtt {n}", "ttl": 3600}))

    stop = threading.Event()
    until = time.monotonic() + minutes * 60
    load = [threading.Thread(target=paced, args=(rate, until, stop, each), name=name, daemon=True)
            for name, rate, each in (("unicast", rate_unicast, unicast), ("topic", 1 / topic_every, topic),
                                     ("mqtt", rate_mqtt, to_device))]
    for thread in load:
        thread.start()

    pids = platform.pids()
    pids["rabbitmq"] = platform.rabbit.vm_pid()   # the Erlang VM, not its start script
    actuators = {f"gateway-{i}": url for i, url in enumerate(platform.gateway_urls, start=1)}
    jvms = {name for name in pids if name not in ("rabbitmq", "redis")}
    history: dict[str, dict[str, list[float]]] = {name: {} for name in pids}
    started = time.monotonic()
    failures: list[str] = []
    next_sample = started
    try:
        while True:
            stop.wait(max(0.0, next_sample - time.monotonic()))   # the sampling period
            samples = {name: sample_process(pid, name in jvms, actuators.get(name))
                       for name, pid in pids.items()}
            for name, figures in samples.items():
                for metric, value in figures.items():
                    if value is not None:
                        history[name].setdefault(metric, []).append(value)
            _print_sample((time.monotonic() - started) / 60, samples, mix, platform.sandbox_stats())
            if time.monotonic() >= until:
                break
            next_sample += sample_every
    finally:
        stop.set()
        for thread in load:
            thread.join()

    failures += _drain(platform, mix, topic_devices, actuators)
    warmup = max(2, len(next(iter(history.values()))["rss_mib"]) // 6)
    print(f"trend test over the samples after a warm-up of {warmup}:")
    for name, metrics in history.items():
        judged = name.rsplit("-", 1)[0] in JUDGED
        for metric, values in metrics.items():
            if metric not in TOLERANCES:
                continue
            why = unbounded_growth(values, TOLERANCES[metric], warmup)
            steady = values[warmup:]
            verdict = ("GROWS: " + why if why else "bounded") if judged else f"not judged ({NOT_JUDGED[name]})"
            print(f"    {name:<22} {metric:<10} min {min(steady, default=0):8.1f} max {max(steady, default=0):8.1f} "
                  f"last {values[-1]:8.1f}  {verdict}")
            if why and judged:
                failures.append(f"{name} {metric} grows without bound: {why}")
    for device in devices:
        loop.call_soon_threadsafe(device.transport.close)
    loop.call_soon_threadsafe(loop.stop)
    return failures


def _drain(platform: LocalPlatform, mix: Mix, topic_devices: int, actuators: dict[str, str]) -> list[str]:
    """Waits (up to 3 min) for every accepted send to arrive; then the gateway must hold no permit."""
    expected = mix.unicast.accepted + mix.topic.accepted * topic_devices
    deadline = time.monotonic() + 180
    stats = platform.sandbox_stats()
    while time.monotonic() < deadline and (stats["accepted"] < expected
                                           or len(mix.mqtt_received) < mix.mqtt.accepted):
        time.sleep(1)   # polling the observers, with a deadline
        stats = platform.sandbox_stats()
    print(f"delivered: sandbox accepted {stats['accepted']} of {expected} expected "
          f"(duplicates {stats['duplicates']}, rejected {stats.get('rejected')}); MQTT devices received "
          f"{len(mix.mqtt_received)} of {mix.mqtt.accepted}; send errors: unicast {mix.unicast.errors}, "
          f"topic {mix.topic.errors}, mqtt {mix.mqtt.errors} {mix.unicast.last_error or mix.topic.last_error or mix.mqtt.last_error}")
    failures = []
    if stats["accepted"] < expected:
        failures.append(f"sandbox received {stats['accepted']} of {expected} accepted notifications")
    if len(mix.mqtt_received) < mix.mqtt.accepted:
        failures.append(f"MQTT devices received {len(mix.mqtt_received)} of {mix.mqtt.accepted} accepted sends")
    errors = mix.unicast.errors + mix.topic.errors + mix.mqtt.errors
    if errors:
        failures.append(f"{errors} sends refused or failed")
    for name, url in actuators.items():
        in_flight = _prometheus_value(url, "herald_gateway_in_flight")
        waiting = _prometheus_value(url, "herald_gateway_waiting")
        print(f"at rest: {name} in-flight permits {in_flight}, waiting {waiting}")
        if in_flight or waiting:
            failures.append(f"{name} holds {in_flight} permits ({waiting} waiting) at rest")
    return failures


def main() -> int:
    minutes = _knob("SOAK_MINUTES", 30)
    root = repository_root()
    build(root)
    workdir = Path(tempfile.mkdtemp(prefix="herald-soak-"))
    print(f"==> soak benchmark: {minutes:g} minutes of mixed load (work folder {workdir})", flush=True)
    try:
        with LocalPlatform(workdir, root=root) as platform:
            platform.start_infrastructure()
            platform.start_gateways(1)
            platform.start_connection_managers(1)
            platform.start_dispatchers(1)
            failures = run(platform, minutes)
    except PlatformError as error:
        print(f"ERROR: {error}", file=sys.stderr)
        return 1
    if failures:
        print("SOAK FAILED:\n  " + "\n  ".join(failures), file=sys.stderr, flush=True)
        return 1
    print("soak passed: nothing grew without bound, every accepted send arrived, no permit held at rest")
    return 0
