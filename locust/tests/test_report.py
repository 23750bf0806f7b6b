"""The HTML report, its JSON summary and the command line."""

from __future__ import annotations

import json

import pytest

from conftest import GOLDEN_N, GOLDEN_X, write_run
from herald_capacity import CapacityError, Point, analyse, build_report, plots
from herald_capacity.cli import main

GOLDEN_POINTS = [Point(n, x) for n, x in zip(GOLDEN_N, GOLDEN_X, strict=True)]


@pytest.fixture(scope="module")
def golden_report():
    return build_report(GOLDEN_POINTS, targets=[12_000, 13_000], predict_at=[40],
                        bootstrap_resamples=100)


@pytest.fixture(scope="module")
def golden_html(golden_report):
    return golden_report.html(with_plots=False)


def test_report_shows_the_fitted_usl_values(golden_html):
    for text in ("995.649", "0.0267159", "0.000769094", "29 dof"):
        assert text in golden_html


def test_report_says_which_ceiling_it_quotes(golden_html):
    assert "Ceiling quoted: X at N = 35 (floor of N*)" in golden_html
    assert "12,341.7" in golden_html
    assert "Ceiling quoted: asymptote λ/σ (never reached)" in golden_html  # Amdahl


def test_report_answers_the_targets(golden_html):
    assert "12,000.0 requests/s needs 27 replicas by USL" in golden_html
    assert "out of reach" in golden_html and "above the peak" in golden_html


def test_report_lists_the_measured_points_with_efficiency(golden_html):
    assert "<td>12,074.4</td>" in golden_html
    assert "<td>0.984</td>" in golden_html  # 1878.91 / (2 · 955.16)


def test_json_summary_carries_the_fit(golden_report):
    summary = json.loads(golden_report.to_json())

    usl = summary["models"]["usl"]
    assert usl["status"] == "fitted"
    assert usl["parameters"]["sigma"]["value"] == pytest.approx(0.02671591, rel=2e-4)
    assert usl["parameters"]["kappa"]["low"] < 7.690945e-4 < usl["parameters"]["kappa"]["high"]
    assert usl["ceiling"]["kind"] == "peak" and usl["ceiling"]["at_n"] == 35
    assert [r["reachable"] for r in usl["replicas"]] == [True, False]
    assert usl["replicas"][1]["unreachable"] == "above_peak"
    assert summary["models"]["amdahl"]["ceiling"]["kind"] == "asymptote"
    assert len(summary["points"]) == 32


def test_report_embeds_figures_when_matplotlib_is_installed(golden_report):
    pytest.importorskip("matplotlib")

    html = golden_report.html()

    assert html.count('src="data:image/png;base64,') == 2


def test_report_without_matplotlib_says_how_to_get_figures(golden_report, monkeypatch):
    monkeypatch.setattr(plots, "available", lambda: False)

    html = golden_report.html()

    assert "data:image/png" not in html and "herald-capacity[report]" in html


def test_two_point_report_refuses_the_usl_and_gives_amdahl_without_error_bar():
    report = build_report([Point(1, 2700), Point(3, 6700)], targets=[25_000],
                          predict_at=[10, 30])
    html = report.html(with_plots=False)
    summary = report.summary()

    assert "USL fit refused" in html and "at least 4 measured points" in html
    assert "no error bar" in html
    assert "25,000.0 requests/s needs 255 replicas by Amdahl (N = 254.24" in html
    assert "13,915.4 (no error bar)" in html
    amdahl = summary["models"]["amdahl"]
    assert summary["models"]["usl"]["status"] == "refused"
    assert amdahl["status"] == "exact"
    assert amdahl["parameters"]["sigma"]["low"] is None
    assert any("85× the largest measured N" in c for c in summary["caveats"])


def test_single_point_report_refuses_both_models():
    report = build_report([Point(1, 2700)], targets=[5000], bootstrap_resamples=0)
    html = report.html(with_plots=False)

    assert report.analysis.usl.status == report.analysis.amdahl.status == "refused"
    assert "Amdahl fit refused" in html and "USL fit refused" in html


def test_report_caveats_superlinear_points_and_few_points():
    analysis = analyse([Point(1, 1000), Point(2, 2100), Point(3, 2900), Point(4, 3700)],
                       bootstrap_resamples=0)

    caveats = " ".join(analysis.caveats)
    assert "Efficiency above 1 at N = 2 (1.050)" in caveats
    assert "Only 4 measured points" in caveats


def test_report_caveats_points_not_steady_within_their_plateau():
    analysis = analyse([Point(1, 1000, drift=0.02), Point(2, 1900, drift=-0.09), Point(3, 2700, drift=0.25),
                        Point(4, 3400, drift=-0.12), Point(5, 4000)], bootstrap_resamples=0)

    [caveat] = [c for c in analysis.caveats if "Not steady" in c]
    assert "at N = 3 (+25%), N = 4 (-12%)" in caveat      # beyond ±10 %; N = 2 and N = 5 not named


def test_steady_points_raise_no_drift_caveat():
    analysis = analyse([Point(1, 1000, drift=0.0), Point(2, 1900, drift=0.1)], bootstrap_resamples=0)

    assert not any("Not steady" in c for c in analysis.caveats)


def test_analyse_refuses_no_points():
    with pytest.raises(CapacityError, match="no measured points"):
        analyse([])


def test_report_from_a_run_folder_shows_plateaus_and_metadata(tmp_path):
    run_dir = write_run(tmp_path, {1: 1000.0, 2: 1900.0, 4: 3400.0, 8: 5600.0})

    report = build_report(run_dir, targets=[6000], bootstrap_resamples=50)
    html = report.html(with_plots=False)

    assert "Herald scale-out report: test-run" in html
    assert "0123abc" in html and "direct-send" in html
    assert "Window (s)" in html and "<td>800</td>" in html  # users at N = 8
    summary = report.summary()
    assert summary["run"]["measurements"][3]["plateau"]["max_users"] == 800
    assert summary["points"][0]["throughput"] == pytest.approx(1000, rel=0.01)


# -- command line --------------------------------------------------------------------------


def test_cli_writes_report_and_json_for_a_points_csv(tmp_path, capsys):
    points = tmp_path / "points.csv"
    rows = "".join(f"{n},{x}\n" for n, x in zip(GOLDEN_N, GOLDEN_X, strict=True))
    points.write_text("n,throughput\n" + rows, encoding="utf-8")
    out = tmp_path / "report.html"

    code = main(["report", str(points), "--target", "12000", "--out", str(out),
                 "--bootstrap", "20", "--no-plots"])

    assert code == 0
    assert "0.0267159" in out.read_text(encoding="utf-8")
    summary = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert summary["models"]["usl"]["replicas"][0]["replicas"] == 27
    assert "12,000.0 requests/s needs 27 replicas by USL" in capsys.readouterr().out


def test_cli_reports_two_points_gracefully(tmp_path, capsys):
    points = tmp_path / "points.csv"
    points.write_text("n,throughput\n1,2700\n3,6700\n", encoding="utf-8")

    code = main(["report", str(points), "--target", "25000", "--out",
                 str(tmp_path / "r.html"), "--no-plots"])

    assert code == 0
    out = capsys.readouterr().out
    assert "USL fit refused" in out and "Amdahl (exact, no error bar)" in out


def test_cli_exits_2_with_a_message_on_unusable_input(tmp_path, capsys):
    code = main(["report", str(tmp_path / "missing"), "--out", str(tmp_path / "r.html")])

    assert code == 2
    assert "error:" in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists()


def test_cli_points_prints_each_plateau(tmp_path, capsys):
    run_dir = write_run(tmp_path, {1: 1000.0, 2: 1900.0})

    assert main(["points", str(run_dir)]) == 0

    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "n,throughput,spread,samples"
    assert [line.split(",")[0] for line in lines[1:]] == ["1", "2"]
