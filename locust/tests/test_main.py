"""``python -m herald_load capacity`` (scripts/scale-out.sh): which options go to the runner and
which to the report, without running either."""

from __future__ import annotations

import herald_load.__main__ as cli
import herald_load.processes as processes


def test_capacity_measures_into_locust_runs_then_reports_with_the_report_options(monkeypatch, tmp_path):
    calls, built = [], []
    monkeypatch.setenv("HERALD_ROOT", str(tmp_path))
    monkeypatch.setattr(processes, "build_jars_if_missing", lambda services: built.extend(services))
    real_main = cli.main
    monkeypatch.setattr(cli, "main", lambda argv: calls.append(argv) or 0)

    assert cli.capacity(["gateway", "--max-n", "4", "--target", "1500", "--run-id", "r1",
                         "--duration", "60", "--fit-max-n", "3"]) == 0

    run_dir = str(tmp_path / "locust" / "runs" / "r1")
    assert calls == [["scale-out", run_dir, "--service", "gateway", "--max-n", "4", "--duration", "60"],
                     ["report", run_dir, "--target", "1500", "--fit-max-n", "3"]]
    assert built == ["provider-sandbox", "dispatcher", "gateway"]
    assert real_main(["capacity", "nonsense"]) == 2
