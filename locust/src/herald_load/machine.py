"""The machine a measurement ran on, and how busy it was meanwhile (load average, CPU per process).

The scale-out runner samples both every few seconds into ``load.csv`` beside Locust's CSVs and
summarises them in ``meta.json``, so a report can say whether the machine itself (not the
replicas under test) was the bottleneck, or whether other work on it disturbed the run.
"""

from __future__ import annotations

import csv
import os
import platform as _platform
import socket
import subprocess
import threading
import time
from pathlib import Path

__all__ = ["LoadSampler", "describe_machine", "git_revision", "process_cpu_seconds",
           "services_revision"]

_TICKS = os.sysconf("SC_CLK_TCK")


def describe_machine() -> dict:
    cpu_model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory_gib = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory_gib = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return {"host": socket.gethostname(), "cpus": os.cpu_count(), "cpu_model": cpu_model,
            "memory_gib": memory_gib, "kernel": _platform.release(),
            "python": _platform.python_version()}


def git_revision(root: Path) -> str | None:
    try:
        revision = subprocess.run(["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"],
                                  capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--",
                                "pom.xml", "libs", "services", "testing", "locust/src", "locust/scenarios"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return None
    return f"{revision}{'-dirty' if dirty else ''}" if revision else None


def _stat_fields(pid: int | str) -> list[str] | None:
    try:
        # After the command name in parentheses: fields[0] is the state (field 3 of stat(5)).
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def services_revision(root: Path) -> str | None:
    """The last commit that changed the Java code (the code under test, unlike the runner's)."""
    try:
        revision = subprocess.run(["git", "-C", str(root), "log", "-1", "--format=%h", "--abbrev=12",
                                   "--", "pom.xml", "libs", "services", "testing"], capture_output=True, text=True,
                                  timeout=10).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return None
    return revision or None


def process_cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of every live process in the process group ``pid`` leads
    (each server we start leads its own group: RabbitMQ's Erlang VM is a child of its start
    script), plus what their exited children used (from /proc)."""
    own = _stat_fields(pid)
    if own is None:
        return None
    if own[2] != str(pid):     # not a group leader: this process alone
        return sum(int(v) for v in own[11:15]) / _TICKS
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        fields = _stat_fields(entry.name)
        # pgrp is field 5; utime, stime, cutime, cstime are fields 14-17.
        if fields is not None and fields[2] == str(pid):
            total += sum(int(v) for v in fields[11:15])
    return total / _TICKS


def _loadavg() -> tuple[float, float, float]:
    one, five, fifteen = Path("/proc/loadavg").read_text().split()[:3]
    return float(one), float(five), float(fifteen)


def _machine_busy() -> tuple[float, float]:
    """(busy, total) jiffies of all CPUs since boot."""
    values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = values[3] + (values[4] if len(values) > 4 else 0)
    return sum(values) - idle, sum(values)


class LoadSampler:
    """Samples load average, machine CPU use and each named process's CPU every ``interval_s``."""

    def __init__(self, path: Path, pids: dict[str, int], interval_s: float = 5.0):
        self.path = Path(path)
        self.pids = dict(pids)
        self.interval_s = interval_s
        self.rows: list[dict] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="load-sampler", daemon=True)

    def __enter__(self) -> "LoadSampler":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(10)
        self._write()

    def _run(self) -> None:
        previous_cpu = {name: process_cpu_seconds(pid) for name, pid in self.pids.items()}
        previous_busy = _machine_busy()
        previous_t = time.monotonic()
        while not self._stop.wait(self.interval_s):
            now = time.monotonic()
            elapsed = now - previous_t
            busy = _machine_busy()
            row = {"timestamp": round(time.time(), 1)}
            row["load1"], row["load5"], row["load15"] = _loadavg()
            cpus = os.cpu_count() or 1
            row["machine_cpu_pct"] = round(100.0 * (busy[0] - previous_busy[0]) /
                                           max(1, busy[1] - previous_busy[1]), 1)
            for name, pid in self.pids.items():
                cpu = process_cpu_seconds(pid)
                before = previous_cpu.get(name)
                row[f"cpu_{name}"] = (round((cpu - before) / elapsed, 3)
                                      if cpu is not None and before is not None else "")
                previous_cpu[name] = cpu
            row["cpus"] = cpus
            self.rows.append(row)
            previous_busy, previous_t = busy, now

    def _write(self) -> None:
        if not self.rows:
            return
        columns = list(dict.fromkeys(k for row in self.rows for k in row))
        with self.path.open("w", newline="") as out:
            writer = csv.DictWriter(out, columns)
            writer.writeheader()
            writer.writerows(self.rows)

    def summary(self, skip_first_s: float = 0.0) -> dict:
        """Load average and CPU (cores) over the samples after ``skip_first_s``."""
        if not self.rows:
            return {}
        start = self.rows[0]["timestamp"] + skip_first_s
        rows = [r for r in self.rows if r["timestamp"] >= start] or self.rows

        def stats(key: str) -> dict:
            values = [r[key] for r in rows if r.get(key) not in ("", None)]
            if not values:
                return {}
            return {"min": min(values), "mean": round(sum(values) / len(values), 2),
                    "max": max(values)}

        return {
            "samples": len(rows),
            "load1": stats("load1"),
            "machine_cpu_pct": stats("machine_cpu_pct"),
            "cpu_cores_by_process": {name: stats(f"cpu_{name}").get("mean")
                                     for name in self.pids},
        }
