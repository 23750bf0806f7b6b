"""Traffic for the fault tests on the real node (test_herald_faults.py): the releases' pods,
a sender that keeps POSTing sends and records every answer, the provider sandbox's counts, and MQTT
devices that stay connected through the Service and record what they received.

Standard library and herald_load (the toolkit test-venv.sh installs), like the rest of tests/.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
import urllib.request
from collections import Counter
from dataclasses import dataclass, field

from herald_load.bench.mqtt import Device
from herald_load.servers import http_json

from heraldnode import Herald

FINAL_STATES = {"sent", "delivered", "failed", "expired"}


def wait_for(what: str, condition, timeout: float, interval: float = 0.5):
    """Polls `condition()` until it returns something truthy (returned) or `timeout` passes."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not within {timeout:.0f} s")
        time.sleep(interval)


# ------------------------------------------------------------------ pods

def pods_of(platform: Herald, release: str) -> list[dict]:
    return [pod for pod in platform.pods()
            if pod["metadata"].get("labels", {}).get("app.kubernetes.io/instance") == release]


def ready(pod: dict) -> bool:
    return (pod["metadata"].get("deletionTimestamp") is None
            and any(c["type"] == "Ready" and c["status"] == "True" for c in pod["status"].get("conditions", [])))


def wait_until_replaced(platform: Herald, release: str, gone: set[str], timeout: float = 420) -> list[dict]:
    """Every pod in `gone` has left and the release has as many Ready pods as its Deployment wants."""
    deployment = json.loads(platform.kube.kubectl("get", "deployment", release, "-n", platform.namespace, "-o", "json"))
    wanted = deployment["spec"]["replicas"]

    def replaced():
        pods = pods_of(platform, release)
        fresh = [p for p in pods if ready(p) and p["metadata"]["name"] not in gone]
        left = [p for p in pods if p["metadata"]["name"] in gone]
        return fresh if len(fresh) >= wanted and not left else None

    return wait_for(f"{release}: {sorted(gone)} replaced by {wanted} Ready pod(s)", replaced, timeout, 2)


# ------------------------------------------------------------------ the provider sandbox

class Sandbox:
    """The sandbox pod's control API (testing/provider-sandbox/README.md): counts per token and of
    duplicates by message id, and its fault settings."""

    def __init__(self, url: str):
        self.url = url

    def _call(self, method: str, path: str, body: object | None = None) -> object:
        status, answer = http_json(method, self.url + path, body, timeout=30)
        if status >= 300:
            raise RuntimeError(f"sandbox {method} {path}: HTTP {status} {answer}")
        return answer

    def reset(self) -> None:
        self._call("POST", "/sandbox/reset")

    def stats(self) -> dict:
        return self._call("GET", "/sandbox/stats")

    def received(self, token: str) -> int:
        """Accepted FCM deliveries to `token`."""
        return self._call("GET", f"/sandbox/received?token={token}")["fcm"]

    def settings(self) -> dict:
        """The fault settings in force."""
        return self._call("GET", "/sandbox/faults")

    def faults(self, **update) -> dict:
        return self._call("PUT", "/sandbox/faults", update)


# ------------------------------------------------------------------ sends

@dataclass
class Send:
    """One send as its client saw it: every attempt's outcome (an HTTP status, or the connection
    error), and the message id of its 202."""

    token: str
    key: str
    attempts: list[str] = field(default_factory=list)
    status: int | None = None
    message_id: str | None = None


class Sender(threading.Thread):
    """Keeps POSTing sends, one FCM token each (`<prefix>-<n>`), with an Idempotency-Key so that a
    retry after an answer it did not get is safe (the dispatcher answers the first request's id).
    A connection error, a 5xx or a 409 (the same key still in progress) is retried with the same key
    until `retry_for` seconds have passed; every attempt is recorded, so the test can insist there
    was none to retry."""

    def __init__(self, api: str, app: str, api_key: str, prefix: str, interval: float = 0.1,
                 retry_for: float = 60):
        super().__init__(name=f"sender-{prefix}", daemon=True)
        self.url = f"{api}/v1/apps/{app}/messages"
        self.api_key, self.prefix, self.interval, self.retry_for = api_key, prefix, interval, retry_for
        self.sends: list[Send] = []
        self.halt = threading.Event()

    def run(self) -> None:
        n = 0
        while not self.halt.is_set():
            n += 1
            send = Send(token=f"{self.prefix}-{n}", key=f"{self.prefix}-{n}")
            self.sends.append(send)
            self._send(send)
            self.halt.wait(self.interval)

    def _send(self, send: Send) -> None:
        body = {"to": {"tokens": [{"channel": "fcm", "token": send.token}]},
                "title": "fault test", "body": send.token}
        headers = {"Authorization": f"Bearer {self.api_key}", "Idempotency-Key": send.key}
        deadline = time.monotonic() + self.retry_for
        while True:
            try:
                status, answer = http_json("POST", self.url, body, headers, timeout=30)
            except OSError as error:  # refused, reset, timed out: the client cannot tell what happened
                send.attempts.append(f"{type(error).__name__}: {error}")
            else:
                send.attempts.append(str(status))
                if status == 202:
                    send.status, send.message_id = status, answer["id"]
                    return
                if status < 500 and status != 409:
                    send.status = status
                    return
            if time.monotonic() > deadline:
                return
            time.sleep(0.5)

    def stop(self) -> list[Send]:
        self.halt.set()
        self.join(timeout=self.retry_for + 60)
        return self.sends

    def __enter__(self) -> Sender:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def trouble(sends: list[Send]) -> list[str]:
    """Every attempt that was not a clean answer: a 5xx, a 409 or a connection error."""
    return [f"{s.token}: {a}" for s in sends for a in s.attempts
            if not a.isdigit() or int(a) >= 500 or int(a) == 409]


def message_states(api: str, app: str, api_key: str, ids: list[str]) -> dict[str, dict]:
    headers = {"Authorization": f"Bearer {api_key}"}
    states = {}
    for message_id in ids:
        status, answer = http_json("GET", f"{api}/v1/apps/{app}/messages/{message_id}", None, headers, timeout=30)
        states[message_id] = answer if status == 200 else {"state": f"HTTP {status}", "answer": answer}
    return states


def wait_for_final_states(api: str, app: str, api_key: str, ids: list[str], timeout: float = 300) -> dict[str, dict]:
    """Every message in a final state (sent, delivered, failed, expired); their statuses."""
    pending = list(ids)
    finished: dict[str, dict] = {}

    def done():
        states = message_states(api, app, api_key, pending)
        finished.update({i: s for i, s in states.items() if s["state"] in FINAL_STATES})
        pending[:] = [i for i in pending if i not in finished]
        return not pending

    try:
        wait_for(f"{len(ids)} messages in a final state", done, timeout, 2)
    except TimeoutError:
        sample = message_states(api, app, api_key, pending[:5])
        raise AssertionError(f"{len(pending)} of {len(ids)} messages not final after {timeout:.0f} s, e.g. {sample}") from None
    return finished


# ------------------------------------------------------------------ MQTT devices

class _Connection(Device):
    """herald_load's MQTT 5 device (CONNECT, SUBSCRIBE QoS 1 to its own topic, PUBACK for every
    PUBLISH), telling its owner when the connection ends."""

    def __init__(self, client_id, app, password, connected, on_message, lost):
        super().__init__(client_id, app, password, connected, on_message)
        self.lost = lost

    def connection_lost(self, exc):
        super().connection_lost(exc)
        if not self.lost.done():
            self.lost.set_result(exc)


class MqttDevices:
    """MQTT devices (the registration answers' `mqtt` connect data) that keep connecting to
    `host:port` whenever they are not connected, and record the id of every push they receive, in
    order. A new connection starts clean: Herald keeps what is pending in the device's box and sends
    it on SUBSCRIBE (services/connection-manager/README.md), so no session state is needed on either
    side. `away()` keeps disconnected devices from reconnecting (the test sends what must wait in the
    boxes) until `back()`."""

    def __init__(self, host: str, port: int, app: str, devices: list[dict]):
        self.host, self.port, self.app = host, port, app
        self.passwords = {d["clientId"]: d["password"] for d in devices}
        self.received: dict[str, list[str]] = {d: [] for d in self.passwords}
        self.connections: Counter[str] = Counter()   # connections made per device
        self.online: set[str] = set()
        self.lock = threading.Lock()
        self.returning = threading.Event()
        self.returning.set()
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="mqtt-devices", daemon=True)
        self.devices = None   # the devices' tasks, gathered
        self.transports = set()

    def __enter__(self) -> MqttDevices:
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self._run(), self.loop)
        return self

    def __exit__(self, *exc) -> None:
        asyncio.run_coroutine_threadsafe(self._close(), self.loop).result(timeout=30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        self.loop.close()

    async def _run(self) -> None:
        self.devices = asyncio.gather(*(self._keep_connected(d) for d in self.passwords))
        await self.devices

    async def _close(self) -> None:
        if self.devices:
            self.devices.cancel()
            await asyncio.gather(self.devices, return_exceptions=True)
        for transport in self.transports:
            transport.close()

    def away(self) -> None:
        self.returning.clear()

    def back(self) -> None:
        self.returning.set()

    def snapshot(self) -> tuple[set[str], dict[str, list[str]]]:
        with self.lock:
            return set(self.online), {d: list(ids) for d, ids in self.received.items()}

    async def _keep_connected(self, device: str) -> None:
        while True:
            while not self.returning.is_set():
                await asyncio.sleep(0.1)
            connected, lost = self.loop.create_future(), self.loop.create_future()

            def on_message(payload: bytes, _received_ms: float, device=device) -> None:
                with self.lock:
                    self.received[device].append(json.loads(payload)["id"])

            try:
                transport, _ = await self.loop.create_connection(
                    lambda: _Connection(device, self.app, self.passwords[device], connected, on_message, lost),
                    self.host, self.port)
            except OSError:
                await asyncio.sleep(0.5)
                continue
            try:
                await asyncio.wait_for(connected, 30)
            except (RuntimeError, asyncio.TimeoutError):  # refused, or no SUBACK: start over
                transport.close()
                await asyncio.sleep(0.5)
                continue
            self.transports.add(transport)
            with self.lock:
                self.online.add(device)
                self.connections[device] += 1
            await lost
            self.transports.discard(transport)
            with self.lock:
                self.online.discard(device)


def metric(url: str, name: str) -> float:
    """The sum of a metric's samples in a Prometheus text page."""
    with urllib.request.urlopen(url, timeout=10) as response:
        lines = response.read().decode().splitlines()
    return sum(float(line.rsplit(" ", 1)[1]) for line in lines
               if line.startswith(name) and line[len(name):len(name) + 1] in (" ", "{"))
