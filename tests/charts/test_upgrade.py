"""`helm upgrade` with changed values: RabbitMQ to 5 nodes (the generated credentials survive), the
dispatcher to 3 replicas and a new config value (which rolls its pods), the provider sandbox to a new
config value (its generated APNs certificate survives), the gateway to KEDA scaling."""

from __future__ import annotations

import pytest

from releases import (DISPATCHER_REPLICAS, MAX_TARGETS, MAX_TARGETS_KEY, RABBITMQ_REPLICAS, SANDBOX_LATENCY_KEY,
                      sandbox_certificate)

CHECKSUM = "checksum/config"


def secret_values(objects) -> dict[str, str]:
    """The generated credentials: RabbitMQ's password and the app's crypto key (base64, as stored)."""
    return {"password": objects.named("secrets", "herald-rabbitmq-connection").get("data", {}).get("password"),
            "crypto-key": objects.named("secrets", "herald-app").get("data", {}).get("crypto-key")}


def pod_template_checksum(objects) -> str | None:
    deployment = objects.named("deployments", "herald-dispatcher")
    return deployment.get("spec", {}).get("template", {}).get("metadata", {}).get("annotations", {}).get(CHECKSUM)


def test_upgrade_platform(upgraded):
    assert upgraded.platform.ok, upgraded.platform


def test_rabbitmq_cluster_has_new_replicas(upgraded):
    assert upgraded.objects.named("rabbitmqclusters.rabbitmq.com", "herald-rabbitmq")["spec"]["replicas"] == RABBITMQ_REPLICAS


def test_generated_credentials_survive_the_upgrade(installed, upgraded):
    before, after = secret_values(installed.objects), secret_values(upgraded.objects)
    assert None not in before.values() and after == before


def test_upgrade_dispatcher(upgraded):
    assert upgraded.dispatcher.ok, upgraded.dispatcher


def test_dispatcher_ready_replicas(upgraded):
    assert upgraded.objects.named("deployments", "herald-dispatcher")["status"].get("readyReplicas") == DISPATCHER_REPLICAS


def test_dispatcher_configmap_has_the_new_value(upgraded):
    assert upgraded.objects.named("configmaps", "herald-dispatcher")["data"].get(MAX_TARGETS_KEY) == MAX_TARGETS


def test_dispatcher_config_change_rolls_the_pods(installed, upgraded):
    """A new pod-template checksum, so the Deployment replaces its pods."""
    assert pod_template_checksum(upgraded.objects) != pod_template_checksum(installed.objects)


def test_upgrade_sandbox(upgraded):
    assert upgraded.sandbox.ok, upgraded.sandbox


def test_sandbox_configmap_has_the_new_value(upgraded):
    assert upgraded.objects.named("configmaps", "herald-provider-sandbox")["data"].get(SANDBOX_LATENCY_KEY) == "0"


def test_sandbox_certificate_survives_the_upgrade(installed, upgraded):
    """The gateway trusts the certificate it mounted at install: an upgrade must not make a new one."""
    before = sandbox_certificate(installed.objects)
    assert before is not None and sandbox_certificate(upgraded.objects) == before


def test_upgrade_gateway_to_keda(upgraded):
    assert upgraded.gateway.ok, upgraded.gateway


@pytest.mark.parametrize("resource", ["scaledobjects.keda.sh", "triggerauthentications.keda.sh"])
def test_gateway_keda_object_accepted(upgraded, resource):
    assert len(upgraded.objects[resource]) == 1


def test_helm_manifest_leaves_replicas_to_keda(upgraded):
    assert upgraded.gateway_manifest and "\n  replicas:" not in upgraded.gateway_manifest


def test_scaled_object_sums_the_work_queues_over_http(upgraded):
    trigger = upgraded.objects.named("scaledobjects.keda.sh", "herald-gateway")["spec"]["triggers"][0]["metadata"]
    assert (trigger.get("protocol"), trigger.get("operation")) == ("http", "sum")
