"""What the Herald locustfiles share: where the platform is, the provisioned app, and the
delivery counter that turns the provider sandbox's counts into Locust request events.

Environment (all optional when the locustfile provisions for itself):

- ``HERALD_DISPATCHERS``: comma-separated dispatcher base URLs; users are spread over them
  round-robin (default: Locust's ``--host``).
- ``HERALD_LOAD_PROVISIONED``: the app, key and devices the runner set up
  (:mod:`herald_load.provisioning`); without it, ``test_start`` provisions through the admin API
  with ``HERALD_ADMIN_TOKEN`` and the sandbox's demo credentials (``HERALD_SANDBOX_URL``).
- ``HERALD_SANDBOX_URL``: the provider sandbox (delivery counts).
- ``HERALD_GATEWAY_METRICS``: comma-separated gateway base URLs; their
  ``herald_gateway_accept_to_provider_seconds`` histograms give the deliveries' latency.
"""

from __future__ import annotations

import itertools
import logging
import os
import re
import threading
import time
from dataclasses import dataclass

import gevent
import requests

from .provisioning import Provisioned, Provisioner, from_env

__all__ = ["DeliveryCounter", "FeedBacklog", "GatewayLatency", "Platform", "feed_topic", "platform",
           "provision_if_needed"]

log = logging.getLogger("herald.load")


def _urls(value: str | None) -> list[str]:
    return [u.strip().rstrip("/") for u in (value or "").split(",") if u.strip()]


@dataclass
class Platform:
    """Where the scenario sends and what it sends with (filled in at ``test_start``)."""

    dispatchers: list[str]
    sandbox: str | None
    gateway_metrics: list[str]
    provisioned: Provisioned | None = None

    def __post_init__(self):
        self._next = itertools.cycle(self.dispatchers) if self.dispatchers else None
        self._lock = threading.Lock()

    def next_dispatcher(self, default: str | None) -> str | None:
        """Round-robin over the dispatchers (each user sticks to the one it got)."""
        if self._next is None:
            return default
        with self._lock:
            return next(self._next)


def platform(environ=os.environ) -> Platform:
    return Platform(_urls(environ.get("HERALD_DISPATCHERS")),
                    (_urls(environ.get("HERALD_SANDBOX_URL")) or [None])[0],
                    _urls(environ.get("HERALD_GATEWAY_METRICS")),
                    from_env(environ))


def provision_if_needed(target: Platform, host: str | None, *, fcm_devices: int, topic: str,
                        mqtt_devices: int = 0, environ=os.environ) -> Provisioned:
    """The runner's app if it gave one, else a fresh app set up through the admin API."""
    if target.provisioned is not None:
        return target.provisioned
    api = target.dispatchers[0] if target.dispatchers else host
    token = environ.get("HERALD_ADMIN_TOKEN")
    if not api or not token:
        raise RuntimeError("no app to send with: set HERALD_LOAD_PROVISIONED (the scale-out "
                           "runner does), or HERALD_ADMIN_TOKEN with --host (or "
                           "HERALD_DISPATCHERS) so the scenario can create one")
    provisioner = Provisioner(api, token, target.sandbox)
    made = provisioner.create_app()
    if fcm_devices:
        provisioner.register_fcm_devices(made, fcm_devices, topic)
    if mqtt_devices:
        provisioner.register_mqtt_devices(made, mqtt_devices, topic)
    log.info("provisioned app %s: %d FCM and %d MQTT devices on topic %s", made.app,
             fcm_devices, mqtt_devices, topic)
    target.provisioned = made
    return made


class GatewayLatency:
    """Mean API-accept-to-provider latency across gateways since the previous call, from the
    ``herald_gateway_accept_to_provider_seconds`` histogram's ``_sum`` and ``_count``."""

    _LINE = re.compile(r"^herald_gateway_accept_to_provider_seconds_(sum|count)(?:\{[^}]*\})?\s+"
                       r"([0-9.eE+-]+)")

    def __init__(self, urls: list[str]):
        self.urls = urls
        self.previous: dict[str, tuple[float, float]] = {}

    def _read(self, url: str) -> tuple[float, float] | None:
        try:
            text = requests.get(f"{url}/actuator/prometheus", timeout=2).text
        except requests.RequestException:
            return None
        totals = {"sum": 0.0, "count": 0.0}
        for line in text.splitlines():
            match = self._LINE.match(line)
            if match:
                totals[match.group(1)] += float(match.group(2))
        return totals["sum"], totals["count"]

    def mean_ms(self) -> float | None:
        seconds = count = 0.0
        for url in self.urls:
            now = self._read(url)
            if now is None:
                continue
            before = self.previous.get(url, (0.0, 0.0))
            self.previous[url] = now
            seconds += now[0] - before[0]
            count += now[1] - before[1]
        return seconds / count * 1000.0 if count > 0 else None


class DeliveryCounter:
    """Provider deliveries since the start, from the sandbox's ``/sandbox/stats``.

    :meth:`poll` returns how many deliveries were accepted and rejected since the previous poll;
    the caller fires one Locust request event per delivery, so Locust's ``Requests/s`` of that
    entry is the providers' delivery rate.
    """

    def __init__(self, sandbox: str):
        self.sandbox = sandbox
        self.accepted = self.rejected = 0
        self.baseline: tuple[int, int] | None = None

    def _stats(self) -> tuple[int, int]:
        stats = requests.get(f"{self.sandbox}/sandbox/stats", timeout=5).json()
        return int(stats["accepted"]), int(sum(stats.get("rejected", {}).values()))

    def start(self) -> None:
        self.baseline = self._stats()

    def poll(self) -> tuple[int, int]:
        if self.baseline is None:
            self.start()
        accepted, rejected = self._stats()
        accepted -= self.baseline[0]
        rejected -= self.baseline[1]
        new = (accepted - self.accepted, rejected - self.rejected)
        self.accepted, self.rejected = accepted, rejected
        return new

    @property
    def delivered(self) -> int:
        return self.accepted + self.rejected


def feed_topic(client, app: Provisioned, topic: str, body: str) -> bool:
    """One topic send of a backlog feeder (the stats' "feed topic send"); True once accepted. A
    refusal is a failure in the stats and half a second's pause: the platform is pushing back."""
    with client.post(f"/v1/apps/{app.app}/messages", name="feed topic send",
                     headers={"Authorization": f"Bearer {app.api_key}"},
                     json={"to": {"topic": topic}, "title": "Load", "body": body,
                           "priority": "normal", "ttl": 600},
                     catch_response=True) as response:
        if response.status_code == 202:
            response.success()
            return True
        response.failure(f"HTTP {response.status_code}")
    gevent.sleep(0.5)
    return False


class FeedBacklog:
    """What a backlog feeder has outstanding (sent, not yet seen arrive), with a write-off: when
    nothing arrived for ``stall_s`` while the backlog is full, what is outstanding is written off
    and the feeder goes on. Without it one lost or stuck push would block the feeder for ever: an
    MQTT run stopped feeding mid-plateau once 940 pushes sat in boxes the devices never drained."""

    def __init__(self, stall_s: float = 10.0, clock=time.monotonic):
        self.stall_s = stall_s
        self.clock = clock
        self.sent = 0
        self.written_off = 0
        self._arrived = 0
        self._progress_at = clock()

    def arrived(self, total: int) -> None:
        """The running total that arrived (a counter that only grows)."""
        if total > self._arrived:
            self._arrived = total
            self._progress_at = self.clock()

    def outstanding(self) -> int:
        return self.sent - self.written_off - self._arrived

    def write_off_if_stalled(self, full_at: int) -> int:
        """Writes off what is outstanding if more than ``full_at`` are (the feeder is waiting) and
        nothing arrived for stall_s; returns how many were written off (0: not stalled)."""
        if self.outstanding() <= full_at or self.clock() - self._progress_at < self.stall_s:
            return 0
        lost = self.outstanding()
        self.written_off += lost
        self._progress_at = self.clock()
        return lost
