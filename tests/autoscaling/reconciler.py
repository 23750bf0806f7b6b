"""Pods under kwok do not run, so this stands in for the kubelet of the gateway's Deployment: it
keeps one real gateway host process per replica the Deployment has, starting one when the
Deployment grows and stopping one (SIGTERM, the gateway drains what it holds) when it shrinks."""

from __future__ import annotations

import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from herald_load.processes import ChildProcess, free_port


@dataclass
class Replica:
    name: str
    proc: ChildProcess
    started: float
    stopping_since: float | None = None
    exit_status: int | None = None
    stopped: float | None = None


@dataclass
class GatewayReconciler:
    replicas_wanted: Callable[[], int]
    command: Callable[[int], list[str]]
    env: dict[str, str]
    logs: Path
    interval: float = 0.5
    running: list[Replica] = field(default_factory=list)
    stopping: list[Replica] = field(default_factory=list)
    finished: list[Replica] = field(default_factory=list)
    events: list[tuple[float, str, str]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    _count: int = 0
    _halt: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> "GatewayReconciler":
        self._thread = threading.Thread(target=self._loop, name="gateway-reconciler", daemon=True)
        self._thread.start()
        return self

    def processes(self) -> int:
        with self._lock:
            return len(self.running)

    def _loop(self) -> None:
        while not self._halt.is_set():
            try:
                self.reconcile(self.replicas_wanted())
            except Exception as error:  # noqa: BLE001 - an API hiccup: try again next round, but say so
                self.errors.append(f"{time.time():.0f}: {error}")
            self._halt.wait(self.interval)

    def reconcile(self, wanted: int) -> None:
        with self._lock:
            for replica in list(self.running):
                if not replica.proc.alive():  # a gateway must not die by itself
                    self.running.remove(replica)
                    replica.exit_status = replica.proc.returncode
                    self.finished.append(replica)
                    self.errors.append(f"{replica.name} exited by itself with {replica.exit_status}: {replica.proc.tail(10)}")
            while len(self.running) < wanted:
                self._count += 1
                name = f"gateway-{self._count}"
                port = free_port()
                proc = ChildProcess(name, self.command(port), self.logs / f"{name}.log", env=self.env, port=port)
                self.running.append(Replica(name, proc, time.time()))
                self.events.append((time.monotonic(), "start", name))
            while len(self.running) > wanted:
                replica = self.running.pop()  # the newest goes first, as a ReplicaSet prefers
                replica.proc.signal(signal.SIGTERM)
                replica.stopping_since = time.time()
                self.stopping.append(replica)
                self.events.append((time.monotonic(), "sigterm", replica.name))
            for replica in list(self.stopping):
                if not replica.proc.alive():
                    replica.exit_status = replica.proc.returncode
                    replica.stopped = time.time()
                    self.stopping.remove(replica)
                    self.finished.append(replica)
                    self.events.append((time.monotonic(), f"exited {replica.exit_status}", replica.name))

    def stop(self) -> None:
        self._halt.set()
        if self._thread is not None:
            self._thread.join(10)
        with self._lock:
            for replica in self.running + self.stopping:
                replica.exit_status = replica.proc.stop(40)
                self.finished.append(replica)
            self.running.clear()
            self.stopping.clear()
