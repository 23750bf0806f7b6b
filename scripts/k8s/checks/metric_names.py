#!/usr/bin/env python3
"""Checks that every metric a Grafana dashboard or a Prometheus alert rule uses is one that the
code really exports, by comparing with Prometheus scrapes that the services' own tests saved while
the services ran and handled pushes (services/<module>/target/metrics-scrape/<name>.prom).

Usage: metric_names.py --services DIR --dashboards DIR [--rules FILE.json ...]
  --rules: `kubectl get prometheusrules -o json` output (what the API server stored).

A name's owner is found by its prefix: herald_dispatcher_ -> dispatcher, herald_gateway_ -> gateway,
herald_cm_ -> connection-manager, herald_sandbox_ -> provider-sandbox, rabbitmq_ -> rabbitmq (the
test RabbitMQ with the charts' per-object metrics setting); other names (JVM, HTTP server, process)
must be in the scrape of a Herald service. A name owned by a module that does not exist (yet) in
services/ is reported as skipped; a module that exists but left no scrape is an error.
`up` is written by Prometheus itself for every target and is always accepted.
"""
import argparse
import json
import pathlib
import re
import sys

OWNERS = [  # prefix, scrape name, module folder under services/ (None: not a Herald module)
    ("herald_dispatcher_", "dispatcher", "dispatcher"),
    ("herald_gateway_", "gateway", "gateway"),
    ("herald_cm_", "connection-manager", "connection-manager"),
    ("herald_sandbox_", "provider-sandbox", "provider-sandbox"),
    ("rabbitmq_", "rabbitmq", None),
]
PROMETHEUS_OWN = {"up"}
KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or",
            "unless", "offset", "inf", "nan", "le"}


def metric_names(expr):
    """Metric names in a PromQL expression (label matchers, label lists, strings and ranges removed)."""
    e = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)          # strings
    e = re.sub(r"\{[^}]*\}", " ", e)                        # label matchers
    e = re.sub(r"\[[^\]]*\]", " ", e)                       # ranges, subqueries
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", e)
    e = re.sub(r"\$\{?\w+\}?", " ", e)                      # Grafana variables
    names = set()
    for m in re.finditer(r"(?<![\w.])([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?", e):
        name, call = m.group(1), m.group(2)
        if call or name.lower() in KEYWORDS:
            continue
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


def scraped_names(path):
    names = set()
    for line in path.read_text().splitlines():
        if line and not line.startswith("#"):
            names.add(re.split(r"[{\s]", line, maxsplit=1)[0])
    return names


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--services", required=True, type=pathlib.Path)
    ap.add_argument("--dashboards", required=True, type=pathlib.Path)
    ap.add_argument("--rules", nargs="*", default=[], type=pathlib.Path)
    args = ap.parse_args()

    scrapes = {}
    for f in sorted(args.services.glob("*/*/target/metrics-scrape/*.prom")):
        scrapes.setdefault(f.stem, set()).update(scraped_names(f))
    service_names = set().union(*(v for k, v in scrapes.items() if k != "rabbitmq")) if scrapes else set()

    used = {}  # name -> where
    for f in sorted(args.dashboards.glob("*.json")):
        for expr in exprs_in(json.loads(f.read_text())):
            for n in metric_names(expr):
                used.setdefault(n, set()).add(f"dashboard {f.name}")
    for f in args.rules:
        for item in json.loads(f.read_text()).get("items", []):
            for group in item["spec"].get("groups", []):
                for rule in group.get("rules", []):
                    for n in metric_names(rule.get("expr", "")):
                        used.setdefault(n, set()).add(f"rule {item['metadata']['name']}/{rule.get('alert') or rule.get('record')}")
    if not used:
        print("no metric names found in dashboards or rules", file=sys.stderr)
        return 1

    errors, skipped, checked = [], [], 0
    for name in sorted(used):
        where = ", ".join(sorted(used[name]))
        if name in PROMETHEUS_OWN:
            continue
        owner = next(((scrape, module) for prefix, scrape, module in OWNERS if name.startswith(prefix)), None)
        if owner:
            scrape, module = owner
            if scrape not in scrapes:
                if module and not (args.services / module).is_dir():
                    skipped.append(f"{name} (services/{module} not present yet; used in {where})")
                else:
                    errors.append(f"{name}: no scrape '{scrape}' was saved (used in {where})")
                continue
            known = scrapes[scrape]
        else:
            known = service_names
        checked += 1
        if name not in known:
            errors.append(f"{name}: not exported (used in {where})")
    for s in skipped:
        print(f"skipped: {s}")
    print(f"metric names: {checked} checked against scrapes {sorted(scrapes)}, {len(skipped)} skipped, {len(errors)} unknown")
    for e in errors:
        print(f"ERROR: {e}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
