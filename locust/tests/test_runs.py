"""Run folders, Locust histories and the saturation plateau."""

from __future__ import annotations

import json

import numpy as np
import pytest

from conftest import T0, synthetic_history, write_history, write_run
from herald_capacity import (PlateauError, PlateauSettings, RunFormatError, load_run, plateau,
                             read_history, read_points_csv)


@pytest.fixture
def history_file(tmp_path):
    # 30 s linear ramp, 90 s at 1000 req/s ±2 %, then 3 s of shutdown.
    rows = synthetic_history(1000.0, ramp_s=30, full_s=90)
    return write_history(tmp_path / "run_stats_history.csv", rows)


@pytest.fixture
def overshooting_history_file(tmp_path):
    # The same, but the ramp overshoots to 3x the plateau (e.g. a cold cache being filled).
    rows = synthetic_history(1000.0, ramp_s=30, full_s=90, ramp_overshoot=3.0)
    return write_history(tmp_path / "overshoot_stats_history.csv", rows)


def test_read_history_keeps_only_the_aggregated_rows(history_file):
    rows = read_history(history_file)

    assert len(rows) == 123  # one Aggregated row per second; the endpoint rows are skipped
    assert max(r.requests_per_s for r in rows) < 4000  # endpoint rows carry 7x the rate


def test_plateau_recovers_the_saturation_throughput(history_file):
    rows = read_history(history_file)

    p = plateau(rows)

    assert p.median == pytest.approx(1000, rel=0.01)
    assert p.q1 < p.median < p.q3 and p.relative_spread < 0.05
    assert p.stable
    # The whole-run average (ramp and shutdown included) is far off: never use it.
    assert abs(np.mean([r.requests_per_s for r in rows]) / 1000 - 1) > 0.10


def test_plateau_excludes_the_ramp_warm_up_and_shutdown(overshooting_history_file):
    p = plateau(read_history(overshooting_history_file), PlateauSettings(warmup_s=15, cooldown_s=5))

    ramp_end = T0 + 29  # the ramp reaches 100 users in its last second
    assert p.ramp_end == ramp_end
    assert p.start == ramp_end + 15
    assert p.end == T0 + 119 - 5  # last second at full load, minus the cool-down
    assert p.samples == 71
    assert p.max_users == 100
    # The overshooting ramp (3000 req/s) still weighs on Locust's 10 s moving average for
    # 10 s after it ends; none of that is in the window.
    assert p.q3 < 1050


def test_without_warm_up_the_moving_average_drags_the_ramp_into_the_plateau(tmp_path):
    # Short full-load phase: the 10 s after the ramp, still averaging ramp samples, matter.
    rows = _rows(tmp_path, synthetic_history(1000.0, ramp_s=30, full_s=26, noise=0.0))

    leaky = plateau(rows, PlateauSettings(warmup_s=0, cooldown_s=0))
    clean = plateau(rows, PlateauSettings(warmup_s=10, cooldown_s=0))

    assert leaky.q1 < 990 and leaky.drift > 0.01
    assert clean.q1 == pytest.approx(1000) and clean.drift == pytest.approx(0)


def test_plateau_tail_uses_only_the_last_seconds(history_file):
    p = plateau(read_history(history_file), PlateauSettings(tail_s=20))

    assert p.end - p.start == 20 and p.samples == 21


def test_plateau_flags_throughput_still_rising(tmp_path):
    rows = synthetic_history(1000.0, drift=0.5, noise=0.0)

    p = plateau([r for r in _rows(tmp_path, rows)])

    assert not p.stable and p.drift > 0.1


def test_plateau_reports_failures(tmp_path):
    p = plateau(_rows(tmp_path, synthetic_history(1000.0, failures_per_s=50.0)))

    assert p.failures_per_s == pytest.approx(50.0)
    assert p.failure_ratio == pytest.approx(0.05, rel=0.02)


def test_plateau_refuses_a_run_too_short_for_a_plateau(tmp_path):
    rows = _rows(tmp_path, synthetic_history(1000.0, ramp_s=30, full_s=20))

    with pytest.raises(PlateauError, match="Run each N longer"):
        plateau(rows)


def test_plateau_refuses_an_empty_history():
    with pytest.raises(PlateauError, match="no Aggregated rows"):
        plateau([])


def test_read_history_rejects_a_file_that_is_not_a_locust_history(tmp_path):
    path = tmp_path / "x_stats_history.csv"
    path.write_text("Timestamp,Users,RPS\n1,2,3\n", encoding="utf-8")

    with pytest.raises(RunFormatError, match="missing column"):
        read_history(path)


def _rows(tmp_path, rows):
    return read_history(write_history(tmp_path / "h_stats_history.csv", rows))


# -- run folders ---------------------------------------------------------------------------


def test_load_run_reads_every_n_folder_in_order(tmp_path):
    run_dir = write_run(tmp_path, {4: 3500.0, 1: 1000.0, 2: 1900.0})

    run = load_run(run_dir)

    assert run.run_id == "test-run"
    assert [m.n for m in run.measurements] == [1, 2, 4]
    assert [p.throughput for p in run.points] == pytest.approx([1000, 1900, 3500], rel=0.01)
    assert run.measurements[2].plateau.max_users == 400
    assert run.caveats() == []


def test_load_run_flags_settings_that_differ_between_n(tmp_path):
    run_dir = write_run(tmp_path, {1: 1000.0, 2: 1900.0})
    meta_path = run_dir / "n=2" / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["settings"]["users_per_replica"] = 200
    meta_path.write_text(json.dumps(meta))

    caveats = load_run(run_dir).caveats()

    assert any("load settings differ" in c for c in caveats)


def test_load_run_requires_meta_json_matching_the_folder(tmp_path):
    run_dir = write_run(tmp_path, {1: 1000.0, 2: 1900.0})
    (run_dir / "n=2" / "meta.json").write_text(json.dumps({"n": 3}))

    with pytest.raises(RunFormatError, match="says n = 3 but the folder is n=2"):
        load_run(run_dir)


def test_load_run_requires_a_meta_json(tmp_path):
    run_dir = write_run(tmp_path, {1: 1000.0})
    (run_dir / "n=1" / "meta.json").unlink()

    with pytest.raises(RunFormatError, match="has no meta.json"):
        load_run(run_dir)


def test_load_run_refuses_ambiguous_histories(tmp_path):
    run_dir = write_run(tmp_path, {1: 1000.0})
    write_history(run_dir / "n=1" / "other_stats_history.csv", synthetic_history(5.0))

    with pytest.raises(RunFormatError, match="exactly one Locust"):
        load_run(run_dir)


def test_load_run_refuses_a_folder_without_n_folders(tmp_path):
    with pytest.raises(RunFormatError, match="no n=<N> folders"):
        load_run(tmp_path)


def test_load_run_names_the_n_whose_plateau_is_missing(tmp_path):
    run_dir = write_run(tmp_path, {1: 1000.0, 2: 1900.0}, full_s=10)

    with pytest.raises(PlateauError, match="n=1"):
        load_run(run_dir)


def test_read_points_csv(tmp_path):
    path = tmp_path / "points.csv"
    path.write_text("n,throughput,spread\n1,2700,30\n3,6700,\n\n", encoding="utf-8")

    points = read_points_csv(path)

    assert [(p.n, p.throughput, p.spread) for p in points] == [(1, 2700, 30), (3, 6700, None)]


def test_read_points_csv_reads_the_drift_in_percent(tmp_path):
    path = tmp_path / "points.csv"
    path.write_text("n,throughput,spread,drift_pct,samples,source\n1,686,40,12.5,30,sandbox\n2,1685,50,,30,sandbox\n",
                    encoding="utf-8")

    assert [p.drift for p in read_points_csv(path)] == [0.125, None]


def test_read_points_csv_names_the_missing_columns(tmp_path):
    path = tmp_path / "points.csv"
    path.write_text("replicas,rps\n1,2\n", encoding="utf-8")

    with pytest.raises(RunFormatError, match="n and throughput"):
        read_points_csv(path)


def test_load_run_reads_the_row_meta_json_names_as_throughput(tmp_path):
    run_dir = write_run(tmp_path, {1: 1000.0, 2: 1900.0})
    for n in (1, 2):
        meta_path = run_dir / f"n={n}" / "meta.json"
        meta = json.loads(meta_path.read_text())
        meta["throughput_row"] = "/v1/messages"   # the synthetic entry runs at 7x Aggregated
        meta_path.write_text(json.dumps(meta))

    run = load_run(run_dir)

    assert [p.throughput for p in run.points] == pytest.approx([7000, 13300], rel=0.01)


def test_load_run_names_a_throughput_row_the_history_lacks(tmp_path):
    run_dir = write_run(tmp_path, {1: 1000.0})
    meta_path = run_dir / "n=1" / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["throughput_row"] = "provider deliveries"
    meta_path.write_text(json.dumps(meta))

    with pytest.raises(PlateauError, match="no rows named 'provider deliveries'.*csv-full-history"):
        load_run(run_dir)
