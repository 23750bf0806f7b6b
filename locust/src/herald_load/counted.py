"""Each N's throughput from the service's own counter (Kubernetes mode), as a points CSV the
capacity model reads (``python -m herald_capacity report POINTS.csv``).

Why not Locust's plateau: Locust's figure is the load generator's view. For the gateway it is
the provider sandbox's counter re-fired as one burst of events per second, and the per-second
median of those bursts ran 20-50 % above the counter itself over the same window. The counters
the runner samples (``resources.csv``: the sandbox's deliveries for the gateway, the measured
pods' ``Scenario.counter`` for the others) are the figures nearest to "delivered", so the
report reads those: the rate between the first and last sample of the plateau window
(``meta.json``'s ``resources.window_s``), the spread the interquartile range of the rates
between consecutive samples, and the drift the change of the rate from the window's first half
to its second, in percent of the whole (a JVM still compiling under a small CPU limit shows as a
large positive drift; the capacity report names such N, and so does this command on stderr).

The measured pods' cores over the same window, and their CPU per unit of throughput (µs per
delivery, accept or push), are columns of their own: a service whose CPU per unit changes with N
shows where the curve bends. ``--from SECONDS`` starts every N's window later than the run's own
warm-up did (a ramp that outlasted it shows as a large drift); ``--until SECONDS`` ends it earlier
(the runner ended each window when it saw the Job complete until 2026-11-25, so a window could take
in the seconds after Locust stopped sending).

``jit_pct`` is the share of the window the measured pods' JIT compilers spent compiling (wall time
of the compiler threads, mean per pod, from ``jvm_compilation_time_ms_total``). Above 10 % the
pods were still warming up: under a 50m limit gateways still compiled about 200 methods a minute
after more than 30 minutes, and their CPU per delivery was still falling. The command warns of such N.

    python -m herald_load counted runs/<run-id> [--from SECONDS] [--until SECONDS] [--out points.csv]
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import numpy as np

from herald_capacity.analysis import UNSTEADY_DRIFT

from .kube import JIT_BUSY_PCT, cpu_cores, jit_pct
from .scaleout import SCENARIOS

__all__ = ["counted_point", "counted_points", "main"]

Row = tuple[float, str, str, float]          # resources.csv: t_s, kind, name, value


def _window(resources_csv: Path, start: float, end: float) -> list[Row]:
    """The sampled rows of ``resources.csv`` in [start, end], read once for every column of a point."""
    with resources_csv.open(newline="") as handle:
        return [(float(r["t_s"]), r["kind"], r["name"], float(r["value"])) for r in csv.DictReader(handle)
                if start <= float(r["t_s"]) <= end]


def _series(rows: list[Row], kind: str) -> list[tuple[float, float]]:
    """(t, value) of ``kind``, summed over every name sampled at the same t."""
    totals: dict[float, float] = {}
    for t, k, _name, value in rows:
        if k == kind:
            totals[t] = totals.get(t, 0.0) + value
    return sorted(totals.items())


def _of_pods(rows: list[Row], pods: list[str]) -> list[Row]:
    return [r for r in rows if r[2].startswith("pod/") and r[2][4:] in pods]


def _pods_cores(rows: list[Row], pods: list[str]) -> float | None:
    """Cores the measured pods used in the window (each pod's own first and last sample in it)."""
    rates = cpu_cores(_of_pods(rows, pods))
    return sum(rates.values()) if rates else None


def counted_point(folder: Path, start_s: float | None = None, end_s: float | None = None) -> dict:
    """One N: n, throughput (per second), spread (IQR of per-interval rates), drift, samples,
    source, and the measured pods' cores and CPU per unit over the same window. ``start_s``
    starts the window that many seconds into the Job instead of the run's own warm-up."""
    meta = json.loads((folder / "meta.json").read_text())
    scenario = SCENARIOS[meta["service"]]
    kind, source = ("counter", scenario.counter) if scenario.counter \
        else ("sandbox_accepted", "provider sandbox accepted")
    start, end = meta["resources"]["window_s"]
    if end_s is not None:
        end = min(end, end_s)
    if start_s is not None:
        start = start_s
    if not start < end:
        raise ValueError(f"{folder}: the window cannot start at {start} s, the plateau ended at {end} s")
    rows = _window(folder / "resources.csv", start, end)
    series = _series(rows, kind)
    if len(series) < 3:
        raise ValueError(f"{folder}: {len(series)} samples of {source} in the plateau window "
                         f"{start}-{end} s; at least 3 are needed")
    t = np.array([s[0] for s in series])
    v = np.array([s[1] for s in series])
    rates = np.diff(v) / np.diff(t)
    q1, q3 = np.percentile(rates, [25, 75])
    whole = (v[-1] - v[0]) / (t[-1] - t[0])
    middle = len(series) // 2
    first = (v[middle] - v[0]) / (t[middle] - t[0])
    second = (v[-1] - v[middle]) / (t[-1] - t[middle])
    cores = _pods_cores(rows, meta.get("pods", []))
    jit = jit_pct(rows, meta.get("pods", []))
    return {"n": meta["n"], "throughput": round(float(whole), 1), "spread": round(float(q3 - q1), 1),
            "drift_pct": round(float((second - first) / whole * 100), 1) if whole else None,
            "samples": len(series), "source": source,
            "window_s": f"{start:g}-{end:g}",
            "service_cores": round(cores, 3) if cores is not None else None,
            "cpu_us_per_unit": round(cores / whole * 1e6, 1) if cores is not None and whole else None,
            "jit_pct": round(jit, 1) if jit is not None else None,
            "alarm_s": meta["resources"].get("rabbitmq_memory_alarm_s")}


def counted_points(run_dir: Path, start_s: float | None = None, end_s: float | None = None) -> list[dict]:
    folders = sorted((f for f in Path(run_dir).glob("n=*") if (f / "meta.json").exists()),
                     key=lambda f: int(f.name[2:]))
    return [counted_point(folder, start_s, end_s) for folder in folders]


def main(argv: list[str]) -> int:
    import argparse
    parser = argparse.ArgumentParser(prog="python -m herald_load counted")
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--out", type=Path, default=None, help="CSV to write (default: stdout)")
    parser.add_argument("--from", dest="start_s", type=float, default=None, metavar="SECONDS",
                        help="start every N's window this many seconds into its Job (default: the "
                             "run's own --warmup), for a ramp longer than the run allowed for")
    parser.add_argument("--until", dest="end_s", type=float, default=None, metavar="SECONDS",
                        help="end every N's window this many seconds into its Job, before the load "
                             "stopped (runs before 2026-11-25 ended it at the Job's end)")
    args = parser.parse_args(argv)
    points = counted_points(args.run_dir, args.start_s, args.end_s)
    for point in points:
        if point["drift_pct"] is not None and abs(point["drift_pct"]) > UNSTEADY_DRIFT * 100:
            print(f"N = {point['n']}: the rate changed {point['drift_pct']:+.1f} % from the plateau's first "
                  f"half to its second: not steady", file=sys.stderr)
        if point["jit_pct"] is not None and point["jit_pct"] > JIT_BUSY_PCT:
            print(f"N = {point['n']}: the pods' JIT was compiling {point['jit_pct']:.0f} % of the window: "
                  f"not warm yet, their CPU per unit is still falling", file=sys.stderr)
        if point["alarm_s"]:
            print(f"N = {point['n']}: RabbitMQ's memory alarm blocked publishing for about "
                  f"{point['alarm_s']:.0f} s of the plateau: the broker's memory, not the service, "
                  f"limited it", file=sys.stderr)
    out = args.out.open("w", newline="") if args.out else sys.stdout
    writer = csv.DictWriter(out, fieldnames=["n", "throughput", "spread", "drift_pct", "samples", "source",
                                             "window_s", "service_cores", "cpu_us_per_unit", "jit_pct"],
                            extrasaction="ignore")
    writer.writeheader()
    writer.writerows(points)
    if args.out:
        out.close()
    return 0
