"""`helm rollback` of the upgraded dispatcher, provider sandbox and gateway to their first revision."""

from __future__ import annotations

from releases import MAX_TARGETS_KEY, SANDBOX_LATENCY_KEY, sandbox_certificate


def test_rollback_dispatcher(rolled_back):
    assert rolled_back.dispatcher.ok, rolled_back.dispatcher


def test_dispatcher_back_to_two_replicas_and_the_default_config(rolled_back):
    replicas = rolled_back.objects.named("deployments", "herald-dispatcher")["spec"]["replicas"]
    configured = rolled_back.objects.named("configmaps", "herald-dispatcher").get("data", {}).get(MAX_TARGETS_KEY, "")
    assert (replicas, configured) == (2, "")


def test_rollback_sandbox(rolled_back):
    assert rolled_back.sandbox.ok, rolled_back.sandbox


def test_sandbox_back_to_the_default_config_with_the_same_certificate(installed, rolled_back):
    configured = rolled_back.objects.named("configmaps", "herald-provider-sandbox").get("data") or {}
    assert SANDBOX_LATENCY_KEY not in configured
    assert sandbox_certificate(rolled_back.objects) == sandbox_certificate(installed.objects) is not None


def test_rollback_gateway(rolled_back):
    assert rolled_back.gateway.ok, rolled_back.gateway


def test_gateway_scaled_object_gone(rolled_back):
    assert rolled_back.objects["scaledobjects.keda.sh"] == []


def test_helm_manages_two_gateway_replicas_again(rolled_back):
    assert rolled_back.objects.named("deployments", "herald-gateway")["spec"]["replicas"] == 2


def test_dispatcher_revision_three_is_the_rollback(rolled_back):
    latest = rolled_back.dispatcher_history[-1]
    assert (latest["revision"], latest["description"]) == (3, "Rollback to 1")
