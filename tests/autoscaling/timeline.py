"""The scenario's timeline, one sample a second: the queue (ready, unacknowledged), the external
metric as the HPA reads it through the aggregation layer, the HPA's desired and current replicas,
the Deployment's replicas and the gateway replicas Ready (pods on the real node), the deliveries at
the provider sandbox. Written as CSV and plotted."""

from __future__ import annotations

import csv
import math
import threading
import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Callable


@dataclass
class Sample:
    t: float                  # seconds since the recording started
    ready: int                # messages ready in the gateway queue
    unacked: int              # delivered to a gateway, not yet acknowledged
    depth: int                # ready + unacked (what KEDA's http protocol counts)
    external_metric: float    # the value the external metrics API serves (adapter -> operator -> RabbitMQ)
    desired: int              # HPA status.desiredReplicas
    current: int              # HPA status.currentReplicas
    deployment: int           # Deployment status.replicas (pods)
    ready_pods: int           # gateway replicas Ready (the Deployment's readyReplicas)
    delivered: int            # deliveries the provider sandbox accepted so far


@dataclass
class Recorder:
    probe: Callable[[float], Sample]
    interval: float = 1.0
    samples: list[Sample] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    _halt: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> "Recorder":
        self.t0 = time.monotonic()
        self._thread = threading.Thread(target=self._loop, name="timeline", daemon=True)
        self._thread.start()
        return self

    def now(self) -> float:
        return time.monotonic() - self.t0

    def _loop(self) -> None:
        next_at = time.monotonic()
        while not self._halt.is_set():
            try:
                self.samples.append(self.probe(self.now()))
            except Exception as error:  # noqa: BLE001 - a missed sample is reported, not fatal
                self.errors.append(f"{self.now():.0f}s: {error}")
            next_at += self.interval
            self._halt.wait(max(0.0, next_at - time.monotonic()))

    def stop(self) -> None:
        self._halt.set()
        if self._thread is not None:
            self._thread.join(10)


def write_csv(samples: list[Sample], path: Path) -> None:
    names = [f.name for f in fields(Sample)]
    with open(path, "w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(names)
        for s in samples:
            writer.writerow([f"{getattr(s, n):.1f}" if n in ("t", "external_metric") else getattr(s, n) for n in names])


def plot(samples: list[Sample], path: Path, value: int, minimum: int, maximum: int, title: str,
         marks: list[tuple[float, str]], sigterms: list[float]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = [s.t for s in samples]
    fig, (queue, replicas) = plt.subplots(2, 1, sharex=True, figsize=(11, 7), height_ratios=[3, 2])
    queue.plot(t, [s.depth for s in samples], label="depth = ready + unacked (RabbitMQ)", color="tab:blue", lw=2)
    queue.plot(t, [s.ready for s in samples], label="ready", color="tab:cyan", lw=1)
    queue.plot(t, [s.unacked for s in samples], label="unacked (held by gateways)", color="tab:purple", lw=1)
    queue.plot(t, [s.external_metric for s in samples], label="external metric (HPA's view via KEDA)",
               color="tab:orange", lw=1, ls="--")
    queue.set_ylabel("messages")
    queue.grid(alpha=0.3)
    queue.legend(loc="upper left", fontsize=8)
    queue.set_title(title, fontsize=10)

    replicas.step(t, [s.desired for s in samples], where="post", label="HPA desired", color="tab:red", lw=2)
    replicas.step(t, [s.current for s in samples], where="post", label="HPA current", color="tab:green", lw=1.5)
    replicas.step(t, [s.ready_pods for s in samples], where="post", label="gateway pods Ready", color="black",
                  lw=1, ls=":")
    replicas.plot(t, [min(maximum, max(minimum, math.ceil(s.depth / value))) for s in samples],
                  label=f"clamp(ceil(depth / {value}), {minimum}, {maximum})", color="gray", lw=1, ls="--")
    if sigterms:
        replicas.plot(sigterms, [0.5] * len(sigterms), "v", color="tab:red", ms=6, ls="none",
                      label="a gateway told to stop (SIGTERM, scale-down)")
    replicas.set_ylabel("replicas")
    replicas.set_xlabel("seconds")
    replicas.set_ylim(0, maximum + 1)
    replicas.grid(alpha=0.3)
    replicas.legend(loc="upper left", fontsize=8)
    # Marks within 3 s of each other share one line and one label.
    merged: list[tuple[float, str]] = []
    for at, label in sorted(marks):
        if merged and at - merged[-1][0] < 3:
            merged[-1] = (merged[-1][0], f"{merged[-1][1]}, {label}")
        else:
            merged.append((at, label))
    for at, label in merged:
        for axis in (queue, replicas):
            axis.axvline(at, color="gray", lw=0.8, ls="-.")
        queue.annotate(label, (at, queue.get_ylim()[1]), fontsize=7, rotation=90, va="top", ha="right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
