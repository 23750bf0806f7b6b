"""The Grafana dashboards' queries (grafana/*.json, shipped by charts/push-platform) and the alert
rules' expressions (PrometheusRule objects) asked of a running Prometheus (tests/prometheus.py), with
one result per panel target or rule: how many series it returned, or the error.

A dashboard's template variables get the values Grafana would offer first: a `query` variable
(label_values(...)) the first value Prometheus has, `custom` its first option, `constant` its value;
the datasource variable is this Prometheus. Grafana's built-in $__rate_interval is
max($__interval + scrape interval, 4 x scrape interval), with the longest scrape interval of the
configuration standing in for the datasource's, and $__interval for the scrape interval itself.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from prometheus import Prometheus, QueryError, longest_scrape_interval

LABEL_VALUES = re.compile(r"^\s*label_values\(\s*(?:(?P<match>.+?)\s*,\s*)?(?P<label>[a-zA-Z_][a-zA-Z0-9_]*)\s*\)\s*$")
VARIABLE = re.compile(r"\$\{(\w+)(?::\w+)?\}|\[\[(\w+)\]\]|\$(\w+)")


@dataclass(frozen=True)
class Query:
    """One expression to ask: a dashboard panel's target, or an alert or recording rule."""
    source: str  # the dashboard's file and title, or the PrometheusRule's namespace/name
    name: str  # the panel's title and the target's refId, or the rule's name
    expr: str


@dataclass(frozen=True)
class Answer:
    query: Query
    expr: str  # as asked, variables substituted
    series: int
    error: str | None = None

    @property
    def has_data(self) -> bool:
        return self.error is None and self.series > 0


def panels(items: list[dict]):
    for panel in items:
        yield panel
        yield from panels(panel.get("panels") or [])


def dashboard_queries(dashboard_file: Path) -> list[Query]:
    dashboard = json.loads(dashboard_file.read_text())
    source = f"{dashboard_file.name} ({dashboard.get('title', '')})"
    return [Query(source, f"{panel.get('title', '(untitled)')} [{target.get('refId', '?')}]", target["expr"])
            for panel in panels(dashboard.get("panels") or [])
            for target in panel.get("targets") or [] if target.get("expr") and not target.get("hide")]


def rule_queries(rules: list[dict]) -> list[Query]:
    return [Query(f"PrometheusRule {item['metadata'].get('namespace', '')}/{item['metadata']['name']}",
                  rule.get("alert") or rule.get("record"), rule["expr"])
            for item in rules for group in item["spec"].get("groups") or [] for rule in group.get("rules") or []]


def substitute(expr: str, values: dict[str, str]) -> str:
    """Grafana's variable forms ($name, ${name}, ${name:format}, [[name]]) replaced by their values;
    an unknown variable is an error."""
    def value(match: re.Match) -> str:
        name = next(group for group in match.groups() if group)
        if name not in values:
            raise KeyError(f"no value for the variable ${name}")
        return values[name]

    return VARIABLE.sub(value, expr)


def variable_values(dashboard: dict, prometheus: Prometheus, builtins: dict[str, str]) -> dict[str, str]:
    """The dashboard's template variables, in their order (later ones may use earlier ones)."""
    values = dict(builtins)
    for variable in (dashboard.get("templating") or {}).get("list") or []:
        name, kind = variable["name"], variable.get("type")
        if kind == "datasource":
            values[name] = "prometheus"
        elif kind == "constant":
            values[name] = str(variable.get("query", ""))
        elif kind == "custom":
            options = [o.strip() for o in str(variable.get("query", "")).split(",") if o.strip()]
            values[name] = options[0] if options else ""
        elif kind == "query":
            query = variable.get("query")
            query = query.get("query", "") if isinstance(query, dict) else str(query or "")
            found = LABEL_VALUES.match(substitute(query, values))
            if not found:
                raise ValueError(f"variable ${name}: only label_values(...) queries are understood, not {query!r}")
            options = prometheus.label_values(found["label"], found["match"])
            if not options:
                raise RuntimeError(f"variable ${name}: {query} has no values in this Prometheus")
            values[name] = options[0]
        else:
            raise ValueError(f"variable ${name}: type {kind!r} not understood")
    return values


def grafana_builtins(prometheus: Prometheus) -> dict[str, str]:
    scrape = int(longest_scrape_interval(prometheus.config))
    interval = scrape  # $__interval: a short time range on a wide panel gives no coarser step
    return {"__rate_interval": f"{max(interval + scrape, 4 * scrape)}s", "__interval": f"{interval}s",
            "__range": "1h"}


def ask(prometheus: Prometheus, query: Query, values: dict[str, str]) -> Answer:
    try:
        expr = substitute(query.expr, values)
    except KeyError as error:
        return Answer(query, query.expr, 0, str(error))
    try:
        return Answer(query, expr, len(prometheus.query(expr)))
    except QueryError as error:
        return Answer(query, expr, 0, str(error))


def check_dashboards(prometheus: Prometheus, folder: Path) -> list[Answer]:
    """Every panel target of every dashboard in `folder`, asked now."""
    answers = []
    for dashboard_file in sorted(folder.glob("*.json")):
        values = variable_values(json.loads(dashboard_file.read_text()), prometheus, grafana_builtins(prometheus))
        answers += [ask(prometheus, query, values) for query in dashboard_queries(dashboard_file)]
    return answers


def check_rules(prometheus: Prometheus, rules: list[dict]) -> list[Answer]:
    """Every rule's expression, asked now (an alert that is quiet returns nothing, which is fine)."""
    return [ask(prometheus, query, {}) for query in rule_queries(rules)]


def report(answers: list[Answer]) -> str:
    lines = []
    for answer in answers:
        outcome = f"ERROR {answer.error}" if answer.error else f"{answer.series} series"
        lines.append(f"{answer.query.source} / {answer.query.name}: {outcome}\n    {answer.expr}")
    return "\n".join(lines)
