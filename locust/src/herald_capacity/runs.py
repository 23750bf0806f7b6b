"""Run folders of a scale-out measurement, Locust histories and their saturation plateau.

Layout (raw measurement data: read, never written here)::

    runs/<run-id>/
      n=1/  meta.json  <prefix>_stats_history.csv  (+ whatever else Locust wrote)
      n=2/  ...
      n=4/  ...

``meta.json`` (one per N, written by the scale-out runner)::

    {
      "n": 4,                          # replicas under test; must match the folder name
      "run_id": "2025-06-01-direct-send",
      "scenario": "direct-send",
      "users": 800,                    # Locust users at this N (scales with N)
      "settings": {...},               # what must be the same at every N: users per replica,
                                       # spawn rate, duration, payload, ... (compared across N)
      "git_revision": "0123abc",
      "machine": {...},                # free form: host, CPUs, cluster, node type
      "started_at": "2025-06-01T10:00:00Z",
      "ended_at": "2025-06-01T10:03:00Z"
    }

Only ``n`` is required; ``throughput_row`` (optional) names the Locust stats entry whose
``Requests/s`` is the throughput (default ``Aggregated``; the gateway scenario names its
``provider deliveries`` entry, recorded with ``--csv-full-history``, so the HTTP requests that
feed the queues do not count). The rest is reported, and differences between N in ``settings`` or
``git_revision`` become caveats (each N must see the same load per replica and the same code).

The throughput of one N is the *saturation plateau* of Locust's ``Requests/s`` on the
``Aggregated`` rows of ``*_stats_history.csv``: the rows once the user count has reached its
maximum, after a warm-up (Locust's Requests/s is a moving average over about 10 s, so the first
seconds after the ramp still carry ramp samples) and before a short cool-down at the end; their
median and interquartile range. Never the whole-run average, which includes the ramp.
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .errors import PlateauError, RunFormatError
from .measurements import Point

__all__ = [
    "HistoryRow",
    "Measurement",
    "Plateau",
    "PlateauSettings",
    "Run",
    "load_run",
    "plateau",
    "read_history",
    "read_points_csv",
]

HISTORY_GLOB = "*_stats_history.csv"
META_FILE = "meta.json"
AGGREGATED = "Aggregated"
_N_DIR = re.compile(r"^n=(\d+)$")
_REQUIRED_COLUMNS = ("Timestamp", "User Count", "Name", "Requests/s")


@dataclass(frozen=True)
class HistoryRow:
    """One row of a Locust ``*_stats_history.csv`` (the columns the plateau needs)."""

    timestamp: float
    user_count: int
    requests_per_s: float
    failures_per_s: float


def _number(value: str, column: str, path: Path, line: int) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        raise RunFormatError(
            f"{path}:{line}: column {column!r} is not a number: {value!r}") from None


def read_history(path: str | Path, name: str = AGGREGATED) -> list[HistoryRow]:
    """The rows named ``name`` (default the ``Aggregated`` summary) of a Locust history CSV."""
    path = Path(path)
    try:
        handle = path.open(newline="", encoding="utf-8")
    except OSError as error:
        raise RunFormatError(f"cannot read Locust history {path}: {error}") from None
    with handle:
        reader = csv.DictReader(handle)
        missing = [c for c in _REQUIRED_COLUMNS if c not in (reader.fieldnames or ())]
        if missing:
            raise RunFormatError(
                f"{path} is not a Locust stats history: missing column(s) {missing} "
                f"(found {reader.fieldnames}); expected the file Locust writes with --csv")
        rows = []
        for line, record in enumerate(reader, start=2):
            if record["Name"] != name:
                continue
            failures = record.get("Failures/s")
            rows.append(HistoryRow(
                timestamp=_number(record["Timestamp"], "Timestamp", path, line),
                user_count=int(_number(record["User Count"], "User Count", path, line)),
                requests_per_s=_number(record["Requests/s"], "Requests/s", path, line),
                failures_per_s=(_number(failures, "Failures/s", path, line)
                                if failures not in (None, "", "N/A") else 0.0)))
    rows.sort(key=lambda r: r.timestamp)
    return rows


@dataclass(frozen=True)
class PlateauSettings:
    """How the plateau is cut out of a history.

    ``warmup_s``: seconds skipped after the user count first reaches its maximum.
    ``cooldown_s``: seconds dropped before the last row at maximum users (shutdown).
    ``tail_s``: if set, only the last ``tail_s`` seconds of what remains are used.
    ``min_samples``: fewer rows than this left is an error (run each N longer).
    ``max_drift``: relative change between the medians of the window's two halves above which
    the plateau is reported as not stable (throughput still rising or falling).
    """

    warmup_s: float = 15.0
    cooldown_s: float = 5.0
    tail_s: float | None = None
    min_samples: int = 5
    max_drift: float = 0.10


@dataclass(frozen=True)
class Plateau:
    """Saturation throughput of one run: median and spread of Requests/s in the window."""

    median: float
    q1: float
    q3: float
    samples: int
    start: float
    end: float
    max_users: int
    ramp_end: float
    failures_per_s: float
    drift: float
    stable: bool

    @property
    def iqr(self) -> float:
        return self.q3 - self.q1

    @property
    def relative_spread(self) -> float:
        """Interquartile range over the median."""
        return self.iqr / self.median

    @property
    def failure_ratio(self) -> float:
        return self.failures_per_s / self.median


def plateau(rows: Sequence[HistoryRow], settings: PlateauSettings | None = None) -> Plateau:
    """The saturation plateau of a Locust history (rows as :func:`read_history` returns them)."""
    settings = settings or PlateauSettings()
    if not rows:
        raise PlateauError("the Locust history has no Aggregated rows: nothing was measured")
    rows = sorted(rows, key=lambda r: r.timestamp)
    max_users = max(r.user_count for r in rows)
    if max_users <= 0:
        raise PlateauError("the Locust history never had a user running: nothing was measured")
    full = [r for r in rows if r.user_count == max_users]
    ramp_end = full[0].timestamp
    start = ramp_end + settings.warmup_s
    end = full[-1].timestamp - settings.cooldown_s
    if settings.tail_s is not None:
        start = max(start, end - settings.tail_s)
    window = [r for r in full if start <= r.timestamp <= end]
    if len(window) < settings.min_samples:
        raise PlateauError(
            f"no saturation plateau: only {len(window)} sample(s) at the full {max_users} users "
            f"once the {settings.warmup_s:g} s warm-up and {settings.cooldown_s:g} s cool-down are "
            f"dropped (full load lasted {full[-1].timestamp - ramp_end:g} s); at least "
            f"{settings.min_samples} are needed. Run each N longer at full load.")
    t = np.array([r.timestamp for r in window])
    rps = np.array([r.requests_per_s for r in window])
    q1, median, q3 = (float(v) for v in np.percentile(rps, [25, 50, 75]))
    if median <= 0:
        raise PlateauError(f"the plateau at {max_users} users has a median of 0 requests/s: "
                           f"nothing got through")
    middle = (t[0] + t[-1]) / 2.0
    first, second = rps[t <= middle], rps[t > middle]
    drift = (float(np.median(second)) - float(np.median(first))) / median if second.size else 0.0
    failures = float(np.median([r.failures_per_s for r in window]))
    return Plateau(median, q1, q3, len(window), float(t[0]), float(t[-1]), max_users, ramp_end,
                   failures, drift, abs(drift) <= settings.max_drift)


@dataclass(frozen=True)
class Measurement:
    """One replica count of a run: its folder, metadata, history file and plateau."""

    n: int
    path: Path
    meta: dict[str, Any]
    history: Path
    plateau: Plateau

    @property
    def point(self) -> Point:
        return Point(self.n, self.plateau.median, self.plateau.iqr, self.plateau.samples,
                     str(self.path))


@dataclass(frozen=True)
class Run:
    """A scale-out run: one :class:`Measurement` per replica count, sorted by N."""

    run_id: str
    path: Path
    measurements: tuple[Measurement, ...]
    settings: PlateauSettings = field(default_factory=PlateauSettings)

    @property
    def points(self) -> list[Point]:
        return [m.point for m in self.measurements]

    def caveats(self) -> list[str]:
        """Doubts about the run itself: unstable plateaus, failures, inconsistent settings."""
        notes = []
        for m in self.measurements:
            p = m.plateau
            if not p.stable:
                notes.append(
                    f"N = {m.n}: throughput was still {'rising' if p.drift > 0 else 'falling'} "
                    f"during the plateau ({p.drift:+.0%} between its halves): not at steady "
                    f"saturation, run longer.")
            if p.relative_spread > 0.10:
                notes.append(f"N = {m.n}: the plateau is noisy (interquartile range "
                             f"{p.relative_spread:.0%} of the median).")
            if p.failure_ratio > 0.01:
                notes.append(f"N = {m.n}: {p.failure_ratio:.1%} of requests failed during the "
                             f"plateau; Requests/s counts failures too.")
        for key, what in (("settings", "load settings"), ("git_revision", "git revision")):
            values = {json.dumps(m.meta.get(key), sort_keys=True) for m in self.measurements}
            if len(values) > 1:
                notes.append(f"The {what} differ between replica counts ({key} in meta.json): "
                             f"the model assumes the same code and the same load per replica.")
        return notes


def _load_meta(folder: Path, n: int) -> dict[str, Any]:
    path = folder / META_FILE
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RunFormatError(f"{folder} has no {META_FILE} (N, settings, git revision, machine, "
                             f"start/end): the scale-out runner writes one per N") from None
    except (OSError, ValueError) as error:
        raise RunFormatError(f"cannot read {path}: {error}") from None
    if not isinstance(meta, dict):
        raise RunFormatError(f"{path} must hold a JSON object")
    if meta.get("n") != n:
        raise RunFormatError(f"{path} says n = {meta.get('n')!r} but the folder is n={n}")
    return meta


def load_run(path: str | Path, settings: PlateauSettings | None = None) -> Run:
    """Read ``runs/<run-id>/`` (folders ``n=<N>``) and compute each N's plateau."""
    settings = settings or PlateauSettings()
    path = Path(path)
    if not path.is_dir():
        raise RunFormatError(f"run folder {path} does not exist")
    folders = sorted(((int(m.group(1)), p) for p in path.iterdir()
                      if p.is_dir() and (m := _N_DIR.match(p.name))), key=lambda item: item[0])
    if not folders:
        raise RunFormatError(f"{path} has no n=<N> folders: expected runs/<run-id>/n=1/, n=2/, ...")
    measurements = []
    for n, folder in folders:
        if n < 1:
            raise RunFormatError(f"{folder}: replica counts start at 1")
        meta = _load_meta(folder, n)
        histories = sorted(folder.glob(HISTORY_GLOB))
        if len(histories) != 1:
            raise RunFormatError(
                f"{folder} must hold exactly one Locust {HISTORY_GLOB}, found "
                f"{[h.name for h in histories] or 'none'}")
        row = meta.get("throughput_row", AGGREGATED)
        try:
            rows = read_history(histories[0], row)
            if not rows and row != AGGREGATED:
                raise PlateauError(f"{histories[0].name} has no rows named {row!r} (meta.json's "
                                   f"throughput_row); was Locust run with --csv-full-history?")
            p = plateau(rows, settings)
        except PlateauError as error:
            raise PlateauError(f"{folder}: {error}") from None
        measurements.append(Measurement(n, folder, meta, histories[0], p))
    run_ids = {m.meta.get("run_id") for m in measurements} - {None}
    run_id = run_ids.pop() if len(run_ids) == 1 else path.name
    return Run(run_id, path, tuple(measurements), settings)


def read_points_csv(path: str | Path) -> list[Point]:
    """Points from a CSV with columns ``n`` and ``throughput`` (optionally ``spread`` and
    ``drift_pct``, as ``python -m herald_load counted`` writes them)."""
    path = Path(path)
    try:
        handle = path.open(newline="", encoding="utf-8")
    except OSError as error:
        raise RunFormatError(f"cannot read points file {path}: {error}") from None
    with handle:
        reader = csv.DictReader(handle)
        fields = [f.strip().lower() for f in reader.fieldnames or ()]
        if "n" not in fields or "throughput" not in fields:
            raise RunFormatError(f"{path}: a points CSV needs the columns n and throughput "
                                 f"(optionally spread), found {reader.fieldnames}")
        points = []
        for line, record in enumerate(reader, start=2):
            record = {k.strip().lower(): (v or "").strip() for k, v in record.items() if k}
            if not any(record.values()):
                continue
            n = _number(record["n"], "n", path, line)
            x = _number(record["throughput"], "throughput", path, line)
            spread, drift = record.get("spread"), record.get("drift_pct")
            points.append(Point(n, x, _number(spread, "spread", path, line) if spread else None,
                                None, f"{path}:{line}",
                                _number(drift, "drift_pct", path, line) / 100 if drift else None))
    if not points:
        raise RunFormatError(f"{path} holds no points")
    return points
