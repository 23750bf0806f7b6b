"""The charts' ci/node-values.yaml, as `helm template` renders them: the pods they make, `helm test`'s
included, run on the shared cluster's real node only (they tolerate its taint and select its label,
tests/sharedcluster.py; a test pod on a kwok node would "pass" without running),
from the images scripts/k8s/images.sh imported there (never pulled), and the CPU they request together
leaves room on the node's two cores for RabbitMQ, Redis and the operators."""

from __future__ import annotations

import pytest
import yaml

from releases import CHARTS_DIR
from sharedcluster import REAL_NODE_LABEL, REAL_NODE_TAINT

NODE_CHARTS = ["dispatcher", "gateway", "connection-manager", "provider-sandbox"]
# Of the node's 2 cores: what the Herald pods may request together (the rest is RabbitMQ's, Redis's,
# the operators' and the helm test pods').
HERALD_CPU_BUDGET_MILLICORES = 1000


def millicores(quantity: str) -> int:
    return int(quantity[:-1]) if quantity.endswith("m") else int(float(quantity) * 1000)


def deployments(rendered, chart: str) -> list[dict]:
    """The chart's Deployments under ci/node-values.yaml."""
    documents = yaml.safe_load_all(rendered[f"{chart}-node"].read_text())
    return [d for d in documents if d and d.get("kind") == "Deployment"]


def pod_specs(rendered, chart: str) -> list[dict]:
    """The pods the chart makes under ci/node-values.yaml: its Deployments' and its `helm test` pod."""
    documents = list(yaml.safe_load_all(rendered[f"{chart}-node"].read_text()))
    test_pods = [d["spec"] for d in documents if d and d.get("kind") == "Pod"
                 and d["metadata"].get("annotations", {}).get("helm.sh/hook") == "test"]
    assert test_pods, f"no helm test pod in {chart}'s node scenario"
    return [d["spec"]["template"]["spec"] for d in deployments(rendered, chart)] + test_pods


def test_every_chart_but_the_platform_has_node_values():
    present = sorted(p.parent.parent.name for p in CHARTS_DIR.glob("*/ci/node-values.yaml"))
    assert set(NODE_CHARTS) <= set(present), present


@pytest.mark.parametrize("chart", NODE_CHARTS)
def test_pods_go_to_the_real_node_only(rendered, chart):
    key, rest = REAL_NODE_TAINT.split("=")
    value, effect = rest.split(":")
    specs = pod_specs(rendered, chart)
    assert specs, f"no Deployment in {chart}'s node scenario"
    for spec in specs:
        assert spec.get("nodeSelector", {}).get(REAL_NODE_LABEL) == "true", spec.get("nodeSelector")
        assert {"key": key, "operator": "Equal", "value": value, "effect": effect} in spec.get("tolerations", [])


@pytest.mark.parametrize("chart", NODE_CHARTS)
def test_images_are_the_ones_built_here_and_never_pulled(rendered, chart):
    for spec in (d["spec"]["template"]["spec"] for d in deployments(rendered, chart)):
        for container in spec["containers"]:
            assert container["image"] == f"docker.io/local/herald-{chart}:0.1.0-SNAPSHOT"
            assert container["imagePullPolicy"] == "Never"


def test_the_herald_pods_fit_the_cpu_budget(rendered):
    requested = {chart: sum(d["spec"]["replicas"] * millicores(c["resources"]["requests"]["cpu"])
                            for d in deployments(rendered, chart) for c in d["spec"]["template"]["spec"]["containers"])
                 for chart in NODE_CHARTS}
    print(f"CPU requested on the real node (millicores): {requested}")
    assert sum(requested.values()) <= HERALD_CPU_BUDGET_MILLICORES, requested
