"""Every metric a Grafana dashboard (grafana/) or a Prometheus alert rule (as the API server stored
the PrometheusRules) uses is one the code really exports: compared with the Prometheus scrapes that
the services' own tests saved while the services ran and handled pushes
(<module folder>/target/metrics-scrape/<name>.prom, left by mvn verify).

A name's owner is found by its prefix; other names (JVM, HTTP server, process) must be in the scrape
of a Herald service. A name owned by a module that does not exist (yet) is reported as skipped; a
module that exists but left no scrape is an error. `up` is written by Prometheus itself for every
target and is always accepted."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from herald_load.processes import module_dir
from releases import ROOT

OWNERS = [  # prefix, scrape name, Maven module (None: not a Herald module)
    ("herald_dispatcher_", "dispatcher", "dispatcher"),
    ("herald_gateway_", "gateway", "gateway"),
    ("herald_cm_", "connection-manager", "connection-manager"),
    ("herald_sandbox_", "provider-sandbox", "provider-sandbox"),
    ("rabbitmq_", "rabbitmq", None),  # the test RabbitMQ with the charts' per-object metrics setting
]
PROMETHEUS_OWN = {"up"}
KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or",
            "unless", "offset", "inf", "nan", "le"}


def metric_names(expr: str) -> set[str]:
    """Metric names in a PromQL expression (label matchers, label lists, strings and ranges removed)."""
    e = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)          # strings
    e = re.sub(r"\{[^}]*\}", " ", e)                        # label matchers
    e = re.sub(r"\[[^\]]*\]", " ", e)                       # ranges, subqueries
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", e)
    e = re.sub(r"\$\{?\w+\}?", " ", e)                      # Grafana variables
    names = set()
    for m in re.finditer(r"(?<![\w.])([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?", e):
        name, call = m.group(1), m.group(2)
        if not call and name.lower() not in KEYWORDS:
            names.add(name)
    return names


def exprs_in(node):
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "expr" and isinstance(v, str):
                yield v
            else:
                yield from exprs_in(v)
    elif isinstance(node, list):
        for v in node:
            yield from exprs_in(v)


def scraped_names(path: Path) -> set[str]:
    return {re.split(r"[{\s]", line, maxsplit=1)[0]
            for line in path.read_text().splitlines() if line and not line.startswith("#")}


@pytest.fixture(scope="module")
def scrapes(pytestconfig) -> dict[str, set[str]]:
    """Scrape name -> the metric names in it."""
    found: dict[str, set[str]] = {}
    for f in sorted(pytestconfig.getoption("scrapes_from").glob("*/*/target/metrics-scrape/*.prom")):
        found.setdefault(f.stem, set()).update(scraped_names(f))
    return found


def used_names(rules: list[dict]) -> dict[str, set[str]]:
    """Metric name -> where it is used (dashboards, alert and recording rules)."""
    used: dict[str, set[str]] = {}
    for f in sorted((ROOT / "grafana").glob("*.json")):
        for expr in exprs_in(json.loads(f.read_text())):
            for n in metric_names(expr):
                used.setdefault(n, set()).add(f"dashboard {f.name}")
    for item in rules:
        for group in item["spec"].get("groups", []):
            for rule in group.get("rules", []):
                for n in metric_names(rule.get("expr", "")):
                    used.setdefault(n, set()).add(f"rule {item['metadata']['name']}/{rule.get('alert') or rule.get('record')}")
    return used


def unknown_names(used: dict[str, set[str]], scrapes: dict[str, set[str]]) -> tuple[list[str], list[str], int]:
    """(errors, skipped, how many names were checked)."""
    service_names = set().union(*(names for scrape, names in scrapes.items() if scrape != "rabbitmq"))
    errors, skipped, checked = [], [], 0
    for name in sorted(used.keys() - PROMETHEUS_OWN):
        where = ", ".join(sorted(used[name]))
        owner = next(((scrape, module) for prefix, scrape, module in OWNERS if name.startswith(prefix)), None)
        if owner:
            scrape, module = owner
            if scrape not in scrapes:
                if module and not module_dir(module, ROOT).is_dir():
                    skipped.append(f"{name} ({module} not present yet; used in {where})")
                else:
                    errors.append(f"{name}: no scrape '{scrape}' was saved (used in {where})")
                continue
            known = scrapes[scrape]
        else:
            known = service_names
        checked += 1
        if name not in known:
            errors.append(f"{name}: not exported (used in {where})")
    return errors, skipped, checked


def test_dashboard_and_alert_metric_names_are_exported(scrapes, installed):
    used = used_names(installed.objects["prometheusrules.monitoring.coreos.com"])
    assert used, "no metric names found in dashboards or rules"
    errors, skipped, checked = unknown_names(used, scrapes)
    print("".join(f"\nskipped: {s}" for s in skipped))
    print(f"metric names: {checked} checked against scrapes {sorted(scrapes)}, {len(skipped)} skipped, {len(errors)} unknown")
    assert not errors, "\n".join(errors)
