"""The service charts' alert rules (their PrometheusRule, rendered with the chart's defaults) pass
`promtool check rules`, and promtool's unit tests in tests/charts/alerts/<chart>.test.yaml show each
alert firing on the series that should trigger it and staying quiet just under its threshold (or when
healthy) at the same evaluation time. Every alert must have both kinds of case, so a new alert
without tests fails here; the tests' input series must be metrics the services really export.

promtool comes from Debian's `prometheus` package (scripts/install-deps.sh); no Prometheus server is
started: promtool evaluates the rules on the test files' series by itself."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from releases import CHARTS, CHARTS_DIR, attempt
from test_metric_names import scrapes, unknown_names  # noqa: F401 (scrapes is a fixture)

ALERT_TESTS = Path(__file__).resolve().parent / "alerts"
ALERTING_CHARTS = [c for c in CHARTS if (CHARTS_DIR / c / "templates" / "prometheusrule.yaml").is_file()]


@pytest.fixture(scope="module")
def promtool() -> str:
    path = shutil.which("promtool")
    assert path, "no promtool on PATH: scripts/install-deps.sh installs Debian's prometheus package"
    return path


@pytest.fixture(scope="module")
def rule_folder(rendered, tmp_path_factory) -> Path:
    """<chart>.rules.yaml (the rule groups of the chart's PrometheusRule with default values) and a
    copy of <chart>.test.yaml beside it, where the test file's rule_files expects them."""
    folder = tmp_path_factory.mktemp("alert-rules")
    for chart in ALERTING_CHARTS:
        rules = [d for d in yaml.safe_load_all(rendered[f"{chart}-default"].read_text())
                 if d and d.get("kind") == "PrometheusRule"]
        assert len(rules) == 1, f"{chart}: expected one PrometheusRule with default values, found {len(rules)}"
        (folder / f"{chart}.rules.yaml").write_text(yaml.safe_dump({"groups": rules[0]["spec"]["groups"]}, sort_keys=False))
        if (ALERT_TESTS / f"{chart}.test.yaml").is_file():
            shutil.copy(ALERT_TESTS / f"{chart}.test.yaml", folder)
    return folder


def alert_names(rule_file: Path) -> set[str]:
    return {rule["alert"] for group in yaml.safe_load(rule_file.read_text())["groups"]
            for rule in group["rules"] if "alert" in rule}


def unit_tests(chart: str) -> dict:
    path = ALERT_TESTS / f"{chart}.test.yaml"
    assert path.is_file(), f"{chart} renders alert rules but has no promtool unit tests ({path})"
    return yaml.safe_load(path.read_text())


@pytest.mark.parametrize("chart", ALERTING_CHARTS)
def test_rules_pass_promtool_check(chart, promtool, rule_folder):
    checked = attempt(promtool, "check", "rules", f"{chart}.rules.yaml", cwd=rule_folder)
    print(checked.output)
    assert checked.ok, checked.output


@pytest.mark.parametrize("chart", ALERTING_CHARTS)
def test_alerts_pass_their_unit_tests(chart, promtool, rule_folder):
    unit_tests(chart)
    tested = attempt(promtool, "test", "rules", f"{chart}.test.yaml", cwd=rule_folder)
    print(tested.output)
    assert tested.ok, tested.output


@pytest.mark.parametrize("chart", ALERTING_CHARTS)
def test_every_alert_fires_and_stays_quiet_in_a_unit_test(chart, rule_folder):
    alerts = alert_names(rule_folder / f"{chart}.rules.yaml")
    assert alerts, f"{chart}: no alert rules rendered"
    firing: dict[str, set[str]] = {}
    quiet: dict[str, set[str]] = {}
    for case in unit_tests(chart)["tests"]:
        for check in case.get("alert_rule_test", []):
            cases = firing if check.get("exp_alerts") else quiet
            cases.setdefault(check["alertname"], set()).add(check["eval_time"])
    missing = [f"{a}: no case where it fires" for a in sorted(alerts - firing.keys())]
    missing += [f"{a}: no case where it stays quiet" for a in sorted(alerts - quiet.keys())]
    missing += [f"{a}: it fires at {sorted(firing[a])} but is quiet only at {sorted(quiet[a])}"
                for a in sorted(alerts & firing.keys() & quiet.keys()) if not firing[a] & quiet[a]]
    missing += [f"{a}: tested, but the chart has no such alert" for a in sorted((firing.keys() | quiet.keys()) - alerts)]
    assert not missing, "\n".join(missing)


def test_unit_tests_feed_metrics_the_services_export(scrapes):  # noqa: F811
    used: dict[str, set[str]] = {}
    for chart in ALERTING_CHARTS:
        for case in unit_tests(chart)["tests"]:
            for series in case.get("input_series", []):
                name = re.split(r"[{\s]", series["series"].strip(), maxsplit=1)[0]
                used.setdefault(name, set()).add(f"alert test {chart}/{case['name']}")
    errors, skipped, checked = unknown_names(used, scrapes)
    print(f"alert test series: {checked} names checked against scrapes {sorted(scrapes)}, {len(skipped)} skipped")
    assert not errors, "\n".join(errors)
