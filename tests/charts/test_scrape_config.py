"""The scrape configuration that tests/prometheus.py makes from ServiceMonitors, checked without a
real node:
- made from every ServiceMonitor the charts render (and ones using the selector forms the charts do
  not), it passes `promtool check config`;
- Debian's Prometheus, given the configuration made from the ServiceMonitors in the test control
  plane and discovering through tests/prometheus.py's EndpointsDiscovery, keeps exactly the targets
  their selectors, namespaceSelectors and ports select among Services of kwok pods, with the operator's labels, scrapes them at the endpoint's path, and keeps
  the scraped `service` label only where honorLabels says so. The pods' addresses are kwok's
  (nothing answers there): each ServiceMonitor names a loopback proxy (proxyUrl) that answers every
  scrape and records the URL that Prometheus asked for, so no packet leaves loopback;
- the charts' own ServiceMonitors, as installed (tests/charts/releases.py), make Prometheus scrape
  every pod of their release on port `http` (the same proxy stands in for the kwok pods), exactly
  the pods the API server lists behind the Services their selectors match;
- every dashboard query and every alert rule of the charts is a valid expression once the
  dashboards' variables are substituted (a Prometheus with no targets answers them without error).
"""

from __future__ import annotations

import json

import pytest
import yaml

from dashboards import ask, dashboard_queries, grafana_builtins, rule_queries
from prometheus import (EndpointsDiscovery, LoopbackServer, Prometheus, endpoint_job, prometheus_config, selected_pods,
                        service_monitors, target_pods)
from realnode import wait_for
from releases import NAMESPACE as RELEASES_NAMESPACE, ROOT, attempt
from test_alert_rules import promtool  # noqa: F401 (a fixture)

NAMESPACE = "scrape-config"
OTHER_NAMESPACE = "scrape-config-other"
SCRAPED = 'demo_requests_total{service="from-the-app"} 7\n'


def monitor(name: str, selector: dict, endpoints: list[dict], namespace_selector: dict | None = None,
            **spec) -> dict:
    return {"apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor",
            "metadata": {"name": name, "namespace": NAMESPACE},
            "spec": {"selector": selector, "endpoints": endpoints,
                     **({"namespaceSelector": namespace_selector} if namespace_selector else {}), **spec}}


def monitors(proxy: str = "") -> list[dict]:
    """Two ServiceMonitors with the selector forms there are: `backend` picks Services of app demo
    with tier backend in its own namespace, port http; `not-backend` picks Services that have the
    label app and a tier other than backend, in every namespace, port metrics, job from a label."""
    through = {"proxyUrl": proxy} if proxy else {}
    return [
        monitor("backend", {"matchLabels": {"app.kubernetes.io/name": "demo"},
                            "matchExpressions": [{"key": "tier", "operator": "In", "values": ["backend"]}]},
                [{"port": "http", "path": "/metrics/backend", "interval": "1s", "honorLabels": True, **through}]),
        monitor("not-backend", {"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["backend"]},
                                                     {"key": "app.kubernetes.io/name", "operator": "Exists"},
                                                     {"key": "unmonitored", "operator": "DoesNotExist"}]},
                [{"port": "metrics", "interval": "1s", **through}], {"any": True},
                jobLabel="app.kubernetes.io/name", targetLabels=["tier"], podTargetLabels=["pod-kind"]),
    ]


def workload(name: str, namespace: str, labels: dict, ports: dict[str, int]) -> list[dict]:
    """A Deployment of one kwok pod and its Service (labels on the Service; ports by name)."""
    pod_labels = {"workload": name, "pod-kind": "demo"}
    return [
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": namespace},
         "spec": {"replicas": 1, "selector": {"matchLabels": {"workload": name}},
                  "template": {"metadata": {"labels": pod_labels},
                               "spec": {"containers": [{"name": "app", "image": "docker.io/local/none:1",
                                                        "ports": [{"name": p, "containerPort": n}
                                                                  for p, n in ports.items()]}]}}}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": namespace, "labels": labels},
         "spec": {"selector": {"workload": name},
                  "ports": [{"name": p, "port": n, "targetPort": p} for p, n in ports.items()]}},
    ]


WORKLOADS = [  # (name, namespace, Service labels, ports); the comment says which monitor picks it
    ("backend", NAMESPACE, {"app.kubernetes.io/name": "demo", "tier": "backend"},
     {"http": 8080, "metrics": 9100}),  # backend (http only)
    ("frontend", NAMESPACE, {"app.kubernetes.io/name": "demo", "tier": "frontend"},
     {"http": 8080, "metrics": 9100}),  # not-backend (metrics only)
    ("backend", OTHER_NAMESPACE, {"app.kubernetes.io/name": "demo", "tier": "backend"},
     {"http": 8080, "metrics": 9100}),  # none: backend looks in its own namespace only
    ("edge", OTHER_NAMESPACE, {"app.kubernetes.io/name": "edge", "tier": "edge"},
     {"metrics": 9100}),  # not-backend (any namespace)
    ("unmonitored", NAMESPACE, {"app.kubernetes.io/name": "demo", "tier": "edge", "unmonitored": "yes"},
     {"metrics": 9100}),  # none: DoesNotExist
    ("nameless", NAMESPACE, {"tier": "edge"}, {"metrics": 9100}),  # none: Exists
]


class Recorder(LoopbackServer):
    """A loopback HTTP proxy that answers every request with SCRAPED and records the URLs asked for."""

    def __init__(self):
        self.asked: set[str] = set()
        super().__init__(self.answer)

    def answer(self, path: str) -> tuple[str, bytes]:
        self.asked.add(path)
        return "text/plain; version=0.0.4", SCRAPED.encode()


@pytest.fixture(scope="module")
def recorder():
    with Recorder() as server:
        yield server


@pytest.fixture(scope="module")
def workloads(cluster, recorder) -> dict[tuple[str, str], dict]:
    """The workloads and monitors applied; (namespace, Service) -> its pod, once every Service's
    endpoints list it."""
    kube = cluster.kube
    for namespace in (NAMESPACE, OTHER_NAMESPACE):
        kube.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}])
    kube.apply([obj for spec in WORKLOADS for obj in workload(*spec)] + monitors(recorder.url))

    def pods() -> dict | None:
        found = {}
        for name, namespace, _, _ in WORKLOADS:
            endpoints = kube.get(f"/api/v1/namespaces/{namespace}/endpoints/{name}") or {}
            addresses = [a for subset in endpoints.get("subsets") or [] for a in subset.get("addresses") or []]
            if not addresses:
                return None
            pod = kube.get(f"/api/v1/namespaces/{namespace}/pods/{addresses[0]['targetRef']['name']}")
            found[(namespace, name)] = pod
        return found

    yield wait_for("the kwok pods in their Services' endpoints", pods, timeout=120)
    for namespace in (NAMESPACE, OTHER_NAMESPACE):
        kube.kubectl("delete", "namespace", namespace, "--wait=false")


def test_the_charts_service_monitors_make_a_valid_configuration(rendered, promtool, tmp_path):
    checked_names = set()
    for scenario, manifest in rendered.items():
        charts = [d for d in yaml.safe_load_all(manifest.read_text()) if d and d.get("kind") == "ServiceMonitor"]
        for d in charts:
            d["metadata"].setdefault("namespace", "herald")
            checked_names.add(d["metadata"]["name"])
        config = tmp_path / f"{scenario}.yml"
        config.write_text(yaml.safe_dump(prometheus_config(charts + monitors("http://127.0.0.1:1"), "http://127.0.0.1:2")))
        checked = attempt(promtool, "check", "config", str(config))
        print(f"{scenario}: {len(charts)} ServiceMonitors of the chart; {checked.output.strip()}")
        assert checked.ok, checked.output
    assert any("rabbitmq" in n for n in checked_names) and len(checked_names) >= 4, \
        f"the charts render too few ServiceMonitors: {checked_names}"


def test_a_service_monitor_that_needs_secrets_is_refused():
    secret = {"name": "s", "key": "k"}
    with pytest.raises(ValueError, match="basicAuth"):
        endpoint_job(monitors()[0], 0, {"port": "http", "basicAuth": {"username": secret}}, "http://127.0.0.1:1")


def test_prometheus_keeps_exactly_the_targets_the_service_monitors_select(cluster, workloads, recorder, tmp_path):
    ours = [m for m in service_monitors(cluster.kube) if m["metadata"]["namespace"] == NAMESPACE]
    assert {m["metadata"]["name"] for m in ours} == {"backend", "not-backend"}
    backend, frontend = workloads[(NAMESPACE, "backend")], workloads[(NAMESPACE, "frontend")]
    edge = workloads[(OTHER_NAMESPACE, "edge")]
    expected = [  # (scrape job, the labels of a target)
        (f"serviceMonitor/{NAMESPACE}/backend/0", {
            "job": "backend", "namespace": NAMESPACE, "service": "backend", "pod": backend["metadata"]["name"],
            "container": "app", "endpoint": "http", "instance": f"{backend['status']['podIP']}:8080"}),
        (f"serviceMonitor/{NAMESPACE}/not-backend/0", {
            "job": "demo", "namespace": NAMESPACE, "service": "frontend", "pod": frontend["metadata"]["name"],
            "container": "app", "endpoint": "metrics", "instance": f"{frontend['status']['podIP']}:9100",
            "tier": "frontend", "pod_kind": "demo"}),
        (f"serviceMonitor/{NAMESPACE}/not-backend/0", {
            "job": "edge", "namespace": OTHER_NAMESPACE, "service": "edge", "pod": edge["metadata"]["name"],
            "container": "app", "endpoint": "metrics", "instance": f"{edge['status']['podIP']}:9100",
            "tier": "edge", "pod_kind": "demo"}),
    ]
    with EndpointsDiscovery(cluster.kube) as discovery, \
            Prometheus(tmp_path / "prometheus", prometheus_config(ours, discovery.url)) as prometheus:
        def all_up():
            targets = prometheus.targets()
            return targets if len(targets) >= len(expected) and all(t["health"] == "up" for t in targets) else None

        targets = wait_for("the selected targets scraped", all_up, timeout=60, alive=prometheus.alive)
        found = sorted(((t["scrapePool"], t["labels"]) for t in targets), key=lambda target: json.dumps(target, sort_keys=True))
        assert found == sorted(expected, key=lambda target: json.dumps(target, sort_keys=True)), json.dumps(targets, indent=1)
        assert recorder.asked >= {f"http://{backend['status']['podIP']}:8080/metrics/backend",
                                  f"http://{frontend['status']['podIP']}:9100/metrics",
                                  f"http://{edge['status']['podIP']}:9100/metrics"}, recorder.asked
        # honorLabels keeps the application's own `service` label; without it, the target's wins
        # and the application's becomes exported_service.
        scraped = {s["metric"]["job"]: s["metric"] for s in prometheus.query("demo_requests_total")}
        assert scraped["backend"]["service"] == "from-the-app", scraped
        assert scraped["demo"]["service"] == "frontend" and scraped["demo"]["exported_service"] == "from-the-app", scraped


def test_the_charts_service_monitors_select_every_pod_of_their_release(cluster, installed, recorder, tmp_path):
    monitors = [m for m in service_monitors(cluster.kube) if m["metadata"]["namespace"] == RELEASES_NAMESPACE]
    for m in monitors:  # no packet to kwok's addresses: the scrapes go to the loopback proxy
        for endpoint in m["spec"]["endpoints"]:
            endpoint["proxyUrl"] = recorder.url
    selected = selected_pods(cluster.kube, monitors)
    releases = {pod.rsplit("-", 2)[0] for _, pod, _ in selected}
    assert {"herald-dispatcher", "herald-gateway", "herald-connection-manager"} <= releases, selected
    with EndpointsDiscovery(cluster.kube) as discovery, \
            Prometheus(tmp_path / "prometheus", prometheus_config(monitors, discovery.url)) as prometheus:
        targets = wait_for("a target for every selected pod",
                           lambda: (t := prometheus.targets()) and target_pods(t) >= selected and t,
                           timeout=60, alive=prometheus.alive)
    assert target_pods(targets) == selected, targets
    assert {t["labels"]["endpoint"] for t in targets} == {"http"}
    assert {t["scrapeUrl"].split("/", 3)[3] for t in targets} == {"actuator/prometheus"}


def test_every_dashboard_query_and_alert_rule_is_a_valid_expression(rendered, tmp_path):
    rules = [d for manifest in rendered.values() for d in yaml.safe_load_all(manifest.read_text())
             if d and d.get("kind") == "PrometheusRule"]
    assert rules, "the charts render no PrometheusRule"
    with Prometheus(tmp_path / "prometheus", {"scrape_configs": []}) as prometheus:
        values = {**grafana_builtins(prometheus), "datasource": "prometheus", "namespace": "herald"}
        queries = [q for f in sorted((ROOT / "grafana").glob("*.json")) for q in dashboard_queries(f)]
        assert len(queries) >= 20, f"too few dashboard queries found: {len(queries)}"
        answers = [ask(prometheus, q, values) for q in queries + rule_queries(rules)]
    errors = [f"{a.query.source} / {a.query.name}: {a.error}\n    {a.expr}" for a in answers if a.error]
    print(f"{len(answers)} expressions asked, {len(errors)} errors")
    assert not errors, "\n".join(errors)
