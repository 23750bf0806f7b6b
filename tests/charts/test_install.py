"""The releases on a real control plane: every rendered scenario passes the API server's validation,
the releases install with --wait in the README's order, and the objects they create are there.

Pods do not run under kwok: "Available" proves the objects, their wiring and the controllers acting
on them, not the containers. The operators (RabbitMQ, KEDA, Prometheus) do not run either: their CRs
are validated against the real CRDs and stored, not reconciled."""

from __future__ import annotations

import pytest

from releases import DEPLOYMENTS, RELEASES, ci_scenarios, scenario_id


@pytest.mark.parametrize("scenario", [scenario_id(c, v) for c, v in ci_scenarios()])
def test_dry_run(dry_runs, scenario):
    assert dry_runs[scenario].ok, dry_runs[scenario]


@pytest.mark.parametrize("release", RELEASES)
def test_install(installed, release):
    assert installed.installs[release].ok, installed.installs[release]


def test_mqtt_load_balancer_service_appears(installed):
    assert installed.load_balancer.ok, installed.load_balancer


@pytest.mark.parametrize("deployment", DEPLOYMENTS)
def test_deployment_available(installed, deployment):
    assert installed.available[deployment].ok, installed.available[deployment]


def test_deployments_run_their_default_replicas(installed):
    """Two of each service; one provider sandbox (its counts are in its memory)."""
    deployments = installed.objects.labelled("deployments", "app.kubernetes.io/part-of", "herald")
    assert {d["metadata"]["name"]: d["status"].get("readyReplicas") for d in deployments} == {
        "herald-dispatcher": 2, "herald-provider-sandbox": 1, "herald-gateway": 2, "herald-connection-manager": 2}


# The CRs exist, i.e. the API server accepted them against the operators' CRD schemas.
CUSTOM_RESOURCES = {
    "rabbitmqclusters.rabbitmq.com": 1,
    "queues.rabbitmq.com": 5,  # 3 work queues, herald.dead, herald.parked
    "exchanges.rabbitmq.com": 3,  # herald.push, herald.dead, herald.park
    "bindings.rabbitmq.com": 5,
    "policies.rabbitmq.com": 1,
    "users.rabbitmq.com": 1,
    "permissions.rabbitmq.com": 1,
    "servicemonitors.monitoring.coreos.com": 5,
    "prometheusrules.monitoring.coreos.com": 3,
}


@pytest.mark.parametrize("resource, count", CUSTOM_RESOURCES.items())
def test_custom_resources_accepted(installed, resource, count):
    assert len(installed.objects[resource]) == count


def test_grafana_dashboards_as_labelled_configmaps(installed):
    assert len(installed.objects.labelled("configmaps", "grafana_dashboard", "1")) == 6
