"""Prometheus (Debian's, tests/prometheus.py) on the host scrapes real pods on the real node at their
pod addresses, the targets found the way the cluster's ServiceMonitors select them:
- a busybox pod serving a static /metrics, behind a Service that a ServiceMonitor selects (and one
  that it does not), is one `up` target with the operator's labels, scraped over the node's bridge;
- with Herald installed on the node (the `platform` fixture of tests/node/conftest.py) and demo pushes
  sent, every pod that a ServiceMonitor selects (worked out from the API server: Services by the
  monitor's selector and namespaces, their Endpoints' addresses on the monitor's port) is an `up`
  target, RabbitMQ's pod among them; after traffic that makes every event a panel shows happen
  (tests/metrics_traffic.py), every Grafana dashboard query (grafana/*.json) returns data and every
  alert rule of the PrometheusRules evaluates without error. Skipped while there is no `platform` fixture.
"""

from __future__ import annotations

import ipaddress
import subprocess

import pytest

from dashboards import check_dashboards, check_rules, report
from metrics_traffic import MetricsTraffic
from prometheus import (EndpointsDiscovery, Prometheus, prometheus_config, prometheus_rules, selected_pods,
                        service_monitors, target_pods)
from realnode import BRIDGE, POD_CIDR, wait_for
from sharedcluster import ROOT

NAMESPACE = "observed"
EXPOSED = 'herald_observed_info{service="from-the-pod"} 1'
# The node values scrape every 5 s ($__rate_interval 20 s): ample for two scrapes of the last counter.
DATA_TIMEOUT = 90


def observed_objects(image: str, node_name: str) -> list[dict]:
    """A non-root, read-only pod serving EXPOSED at /metrics; Service `observed` (port `metrics`
    selected, port `other` not) and Service `ignored` (not selected) in front of it; the ServiceMonitor."""
    labels = {"app": "observed"}
    ports = [{"name": "metrics", "port": 80, "targetPort": 8080}, {"name": "other", "port": 81, "targetPort": 8080}]
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "exporter", "namespace": NAMESPACE, "labels": labels},
         "spec": {
             "nodeName": node_name,
             "securityContext": {"runAsUser": 65532, "runAsGroup": 65532, "runAsNonRoot": True},
             "containers": [{
                 "name": "exporter", "image": image, "imagePullPolicy": "Never",
                 "command": ["/bin/sh", "-c", f"echo '{EXPOSED}' > /data/metrics && exec httpd -f -p 8080 -h /data"],
                 "ports": [{"name": "web", "containerPort": 8080}],
                 "securityContext": {"readOnlyRootFilesystem": True, "allowPrivilegeEscalation": False,
                                     "capabilities": {"drop": ["ALL"]}},
                 "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                 "readinessProbe": {"tcpSocket": {"port": 8080}, "periodSeconds": 1}}],
             "volumes": [{"name": "data", "emptyDir": {}}]}},
        *({"apiVersion": "v1", "kind": "Service",
           "metadata": {"name": name, "namespace": NAMESPACE, "labels": {"app.kubernetes.io/name": name}},
           "spec": {"selector": labels, "ports": ports}} for name in ("observed", "ignored")),
        {"apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor",
         "metadata": {"name": "observed", "namespace": NAMESPACE},
         "spec": {"selector": {"matchLabels": {"app.kubernetes.io/name": "observed"}},
                  "endpoints": [{"port": "metrics", "path": "/metrics", "interval": "1s", "honorLabels": True}]}},
    ]


def up_targets(prometheus: Prometheus) -> list[dict]:
    return [t for t in prometheus.targets() if t["health"] == "up"]


def test_a_service_monitor_selected_pod_is_scraped_at_its_pod_address(node, busybox_image, tmp_path):
    node.kube.apply(observed_objects(busybox_image, node.name))
    node.kube.kubectl("wait", "-n", NAMESPACE, "--for=condition=Ready", "pod/exporter", "--timeout=120s")
    pod = node.kube.get(f"/api/v1/namespaces/{NAMESPACE}/pods/exporter")
    address = pod["status"]["podIP"]
    assert ipaddress.ip_address(address) in ipaddress.ip_network(POD_CIDR), pod["status"]
    # The host reaches the pod straight over the node's bridge (no NAT, no proxy).
    route = subprocess.run(["ip", "route", "get", address], capture_output=True, text=True).stdout
    assert f"dev {BRIDGE}" in route, route
    monitors = [m for m in service_monitors(node.kube) if m["metadata"]["namespace"] == NAMESPACE]
    with EndpointsDiscovery(node.kube) as discovery, \
            Prometheus(tmp_path / "prometheus", prometheus_config(monitors, discovery.url)) as prometheus:
        targets = wait_for("the exporter pod an up target", lambda: up_targets(prometheus), timeout=60,
                           alive=prometheus.alive)
        assert [t["labels"] for t in prometheus.targets()] == [{
            "job": "observed", "namespace": NAMESPACE, "service": "observed", "pod": "exporter",
            "container": "exporter", "endpoint": "metrics", "instance": f"{address}:8080"}], targets
        assert targets[0]["scrapeUrl"] == f"http://{address}:8080/metrics"
        series = prometheus.query("herald_observed_info")
        assert [s["metric"] for s in series] == [{
            "__name__": "herald_observed_info", "service": "from-the-pod", "job": "observed", "namespace": NAMESPACE,
            "pod": "exporter", "container": "exporter", "endpoint": "metrics", "instance": f"{address}:8080"}], series
    node.kube.kubectl("delete", "namespace", NAMESPACE, "--wait=false")


@pytest.fixture(scope="module")
def installed_platform(request):
    """The `platform` fixture of tests/node/conftest.py (Herald installed on the real node, a
    tests/heraldnode.py Herald): kube, namespace, send_demo_traffic()."""
    try:
        return request.getfixturevalue("platform")
    except pytest.FixtureLookupError:
        pytest.skip("no `platform` fixture in tests/node/conftest.py yet (Herald installed on the real node)")


def test_prometheus_scrapes_every_selected_pod_and_every_dashboard_query_has_data(installed_platform, tmp_path):
    kube, namespace = installed_platform.kube, installed_platform.namespace
    monitors = [m for m in service_monitors(kube) if m["metadata"]["namespace"] == namespace]
    rules = [r for r in prometheus_rules(kube) if r["metadata"]["namespace"] == namespace]
    assert monitors and rules, f"no ServiceMonitors or PrometheusRules in {namespace}"
    selected = selected_pods(kube, monitors)
    assert selected, "the ServiceMonitors select no pod"
    # RabbitMQ's pod is among them (push-platform's ServiceMonitor): the queue panels read it.
    assert any(pod.startswith("herald-rabbitmq-server") for _, pod, _ in selected), selected
    with EndpointsDiscovery(kube) as discovery, \
            Prometheus(tmp_path / "prometheus", prometheus_config(monitors, discovery.url)) as prometheus:

        def missing() -> set:
            return selected - target_pods(up_targets(prometheus))

        try:
            wait_for("every selected pod an up target", lambda: not missing(), timeout=120, alive=prometheus.alive)
        except TimeoutError:
            pytest.fail(f"not up targets: {sorted(missing())}\nall targets: {prometheus.targets()}")
        # Every event a panel shows, once (tests/metrics_traffic.py): failures of each kind, a retry,
        # a dead letter, a provider 429, a throttled and an expired target, a scheduled send.
        states = MetricsTraffic(installed_platform.demo_target(), installed_platform.admin_token).run()
        print({what: message["state"] for what, message in states.items()})

        answers: list = []

        def every_query_has_data() -> bool:
            nonlocal answers
            answers = check_dashboards(prometheus, ROOT / "grafana")
            return all(a.has_data or a.error for a in answers)

        try:
            # A counter made by the traffic's last event needs two scrapes inside $__rate_interval.
            wait_for("every dashboard query returning data", every_query_has_data, timeout=DATA_TIMEOUT,
                     alive=prometheus.alive)
        except TimeoutError:
            pass  # reported below, query by query
        print("\n" + report(answers))
        rule_answers = check_rules(prometheus, rules)
        print(report(rule_answers))
    broken = [f"{a.query.source} / {a.query.name}: {a.error}" for a in answers if a.error]
    failing = [f"{a.query.source} / {a.query.name}: {a.error}" for a in rule_answers if a.error]
    empty = [f"{a.query.source} / {a.query.name}: {a.expr}" for a in answers if not a.error and not a.has_data]
    assert not broken and not failing and not empty, (
        "dashboard queries Prometheus refuses:\n" + "\n".join(broken)
        + "\nalert rules that do not evaluate:\n" + "\n".join(failing)
        + "\ndashboard queries without data:\n" + "\n".join(empty))
