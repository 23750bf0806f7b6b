"""Shared test data: the published golden data set and synthetic Locust run folders."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

# Throughput at N = 1..32 (Baron Schwartz's e-book; usl4j's and Go usl's test data).
GOLDEN_X = [
    955.16, 1878.91, 2688.01, 3548.68, 4315.54, 5130.43, 5931.37, 6531.08, 7219.8, 7867.61,
    8278.71, 8646.7, 9047.84, 9426.55, 9645.37, 9897.24, 10097.6, 10240.5, 10532.39, 10798.52,
    11151.43, 11518.63, 11806, 12089.37, 12075.41, 12177.29, 12211.41, 12158.93, 12155.27,
    12118.04, 12140.4, 12074.39,
]
GOLDEN_N = list(range(1, 33))

# The columns Locust writes to PREFIX_stats_history.csv.
HISTORY_COLUMNS = [
    "Timestamp", "User Count", "Type", "Name", "Requests/s", "Failures/s", "50%", "66%", "75%",
    "80%", "90%", "95%", "98%", "99%", "99.9%", "99.99%", "100%", "Total Request Count",
    "Total Failure Count", "Total Median Response Time", "Total Average Response Time",
    "Total Min Response Time", "Total Max Response Time", "Total Average Content Size",
]
T0 = 1_717_200_000


def synthetic_history(plateau_rps: float, *, users: int = 100, ramp_s: int = 30,
                      full_s: int = 90, stop_s: int = 3, noise: float = 0.02,
                      ramp_overshoot: float = 1.0, lag_s: int = 10, drift: float = 0.0,
                      failures_per_s: float = 0.0, seed: int = 0) -> list[dict[str, str]]:
    """Rows as Locust writes them, one per second: a linear ramp to ``users``, ``full_s``
    seconds at full load, then ``stop_s`` seconds of shutdown at 0 users.

    The instantaneous rate follows the users (times ``ramp_overshoot`` while ramping) and then
    the plateau with Gaussian ``noise`` (relative) and a linear relative ``drift`` over the full
    load; Requests/s is its trailing mean over ``lag_s`` seconds, as Locust's moving window.
    Per-endpoint rows with other values are interleaved to check that only Aggregated is read.
    """
    rng = np.random.default_rng(seed)
    total = ramp_s + full_s + stop_s
    instant, user_count = [], []
    for t in range(total):
        if t < ramp_s:
            u = int(users * (t + 1) / ramp_s)
            rate = plateau_rps * u / users * ramp_overshoot
        elif t < ramp_s + full_s:
            u = users
            rate = plateau_rps * (1 + drift * (t - ramp_s) / full_s)
        else:
            u, rate = 0, 0.0
        instant.append(max(rate * (1 + noise * rng.standard_normal()), 0.0) if u else 0.0)
        user_count.append(u)
    rows, total_requests = [], 0.0
    for t in range(total):
        window = instant[max(0, t - lag_s + 1): t + 1]
        rps = float(np.mean(window))
        total_requests += instant[t]
        pct = "N/A" if t == 0 else "12"
        base = {c: pct for c in HISTORY_COLUMNS[6:17]}
        rows.append({"Timestamp": str(T0 + t), "User Count": str(user_count[t]), "Type": "POST",
                     "Name": "/v1/messages", "Requests/s": f"{rps * 7:.6f}",
                     "Failures/s": "0.000000", **base, "Total Request Count": "0",
                     "Total Failure Count": "0", "Total Median Response Time": "12",
                     "Total Average Response Time": "13.1", "Total Min Response Time": "2",
                     "Total Max Response Time": "250", "Total Average Content Size": "40"})
        rows.append({"Timestamp": str(T0 + t), "User Count": str(user_count[t]), "Type": "",
                     "Name": "Aggregated", "Requests/s": f"{rps:.6f}",
                     "Failures/s": f"{failures_per_s if user_count[t] else 0.0:.6f}", **base,
                     "Total Request Count": str(int(total_requests)),
                     "Total Failure Count": "0", "Total Median Response Time": "12",
                     "Total Average Response Time": "13.1", "Total Min Response Time": "2",
                     "Total Max Response Time": "250", "Total Average Content Size": "40"})
    return rows


def write_history(path: Path, rows: list[dict[str, str]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=HISTORY_COLUMNS, quoting=csv.QUOTE_ALL)
        writer.writeheader()
        writer.writerows(rows)
    return path


def write_run(root: Path, throughputs: dict[int, float], *, run_id: str = "test-run",
              settings: dict | None = None, seed: int = 0, **history) -> Path:
    """runs/<run_id>/n=<N>/ with meta.json and a synthetic history per N."""
    run = root / run_id
    for i, (n, x) in enumerate(sorted(throughputs.items())):
        folder = run / f"n={n}"
        write_history(folder / f"herald_n{n}_stats_history.csv",
                      synthetic_history(x, users=100 * n, seed=seed + i, **history))
        meta = {"n": n, "run_id": run_id, "scenario": "direct-send", "users": 100 * n,
                "settings": settings if settings is not None else
                {"users_per_replica": 100, "spawn_rate": 10, "duration_s": 120},
                "git_revision": "0123abc", "machine": {"host": "test", "cpus": 2},
                "started_at": f"2025-06-01T10:0{i}:00Z", "ended_at": f"2025-06-01T10:0{i}:59Z"}
        (folder / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    return run


@pytest.fixture
def golden():
    return GOLDEN_N, GOLDEN_X
