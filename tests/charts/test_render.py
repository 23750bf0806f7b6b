"""Static checks of the charts (no control plane): `helm lint --strict` with values.schema.json
under every CI scenario, the values the schemas must refuse, and keda/ as the gateway chart renders it."""

from __future__ import annotations

import difflib

import pytest
import yaml

from releases import KUBE_VERSION, NAMESPACE, ROOT, ci_scenarios, scenario_id
from testbed import run

SCENARIOS = ci_scenarios()


@pytest.mark.parametrize("chart, values", SCENARIOS, ids=[scenario_id(c, v) for c, v in SCENARIOS])
def test_lint(lint, chart, values):
    linted = lint(chart, "-f", str(values))
    assert linted.ok, linted


# What would make a deployment unsafe or broken: each must fail the lint.
REFUSED = [
    ("dispatcher", "securityContext.readOnlyRootFilesystem=false"),
    ("dispatcher", "podSecurityContext.runAsNonRoot=false"),
    ("dispatcher", "replicaCount=-1"),
    ("dispatcher", "service.type=Internal"),
    ("dispatcher", "config.lower_case=1"),
    ("dispatcher", "unknownKey=1"),
    ("gateway", "keda.queues=null"),
    ("gateway", "keda.messagesPerReplica=0"),
    ("connection-manager", "mqttService.type=External"),
    ("connection-manager", "mqtt.tls.enabled=true"),  # without the Secret's name
    ("connection-manager", "mqtt.plain=false"),  # without TLS: no listener left
    ("push-platform", "herald.cryptoKey=short"),
    ("push-platform", "herald.adminToken=short"),
    ("push-platform", "rabbitmq.terminationGracePeriodSeconds=-1"),
]


@pytest.mark.parametrize("chart, setting", REFUSED, ids=[f"{c}:{s}" for c, s in REFUSED])
def test_schema_refuses(lint, chart, setting):
    assert not lint(chart, "--set", setting).ok, f"the schema of {chart} accepts --set {setting}"


def test_keda_folder_is_what_the_gateway_chart_renders(helm_charts):
    """keda/ holds the gateway's KEDA objects as the chart renders them with KEDA on (defaults
    otherwise); regenerate it as keda/README.md says."""
    rendered = run(["helm", "template", "herald-gateway", str(helm_charts / "gateway"), "-n", NAMESPACE,
                    "--kube-version", KUBE_VERSION, "--set", "keda.enabled=true", "--show-only", "templates/keda.yaml"])
    committed = (ROOT / "keda/gateway-scaledobject.yaml").read_text()
    assert committed == rendered, "".join(difflib.unified_diff(
        committed.splitlines(True), rendered.splitlines(True), "keda/gateway-scaledobject.yaml", "charts/gateway"))


@pytest.mark.parametrize("setting, rendered_grace", [(None, None), ("0", 0), ("30", 30)])
def test_rabbitmq_grace_is_the_operators_unless_set(helm_charts, setting, rendered_grace):
    """Unset, the RabbitmqCluster leaves terminationGracePeriodSeconds to the operator (7 days, its
    preStop checks keep quorum); set, even to 0, it is passed on."""
    extra = ["--set", f"rabbitmq.terminationGracePeriodSeconds={setting}"] if setting else []
    rendered = run(["helm", "template", "push-platform", str(helm_charts / "push-platform"), "-n", NAMESPACE,
                    "--kube-version", KUBE_VERSION, "--show-only", "templates/rabbitmqcluster.yaml", *extra])
    assert yaml.safe_load(rendered)["spec"].get("terminationGracePeriodSeconds") == rendered_grace
