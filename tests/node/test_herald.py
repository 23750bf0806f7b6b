"""Herald for real on the real node (fixture `platform`, tests/heraldnode.py): every release installed
from its chart, every pod Ready through its own probes with the charts' security context; from
outside the cluster through its Services, the demo push is `sent` at the sandbox pod and an MQTT
device connected to the connection manager's Service gets a push `delivered`; `helm test` runs real
test pods against every release."""

from __future__ import annotations

import re
import urllib.request

import pytest

from heraldnode import RELEASES

HERALD_SERVICES = ["dispatcher", "gateway", "connection-manager", "provider-sandbox"]


def containers_of(pod: dict) -> list[dict]:
    return pod["spec"].get("initContainers", []) + pod["spec"]["containers"]


def test_every_pod_is_ready(platform):
    pods = [p for p in platform.pods() if p["status"].get("phase") != "Succeeded"]  # helm test pods end
    not_ready = [p["metadata"]["name"] for p in pods
                 if not any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions", []))]
    assert pods and not not_ready, not_ready
    names = " ".join(p["metadata"]["name"] for p in pods)
    for service in HERALD_SERVICES + ["rabbitmq", "redis"]:
        assert service in names, f"no pod of {service} among {names}"


@pytest.mark.parametrize("service", HERALD_SERVICES)
def test_herald_pods_run_non_root_on_a_read_only_root_without_capabilities(platform, service):
    pods = [p for p in platform.pods()
            if (p["metadata"].get("labels") or {}).get("app.kubernetes.io/name") == service]
    assert pods, f"no pod labelled app.kubernetes.io/name={service}"
    for pod in pods:
        level = pod["spec"].get("securityContext", {})
        for container in containers_of(pod):
            context = {**level, **container.get("securityContext", {})}
            assert context.get("runAsNonRoot") is True and context.get("runAsUser", 65532) != 0, context
            assert context.get("readOnlyRootFilesystem") is True, (pod["metadata"]["name"], context)
            assert "ALL" in context.get("capabilities", {}).get("drop", []), context
        statuses = pod["status"]["containerStatuses"]
        assert all(s["ready"] and s["restartCount"] == 0 for s in statuses), statuses


def test_the_demo_push_is_sent_and_the_mqtt_push_delivered_through_the_services(platform):
    said = []
    platform.send_demo_traffic(say=said.append)  # raises DemoError on any step that fails
    assert any("Demo OK" in line for line in said), said[-3:]


@pytest.mark.parametrize("release", list(RELEASES))
def test_helm_test_runs_real_pods_that_pass(platform, release):
    printed = platform.helm_test(release)
    assert "Phase:          Succeeded" in printed or "Phase: Succeeded" in printed, printed
    assert "Failed" not in printed.split("TEST SUITE:")[-1].split("NOTES:")[0], printed


def test_the_console_is_served_by_the_read_only_dispatcher_pod(platform):
    """The console's pages and scripts come out of the dispatcher's jar in the real pod (read-only
    root, non-root user), with the strict Content-Security-Policy the console's design relies on."""
    base = platform.service_url("herald-dispatcher", 8080)
    with urllib.request.urlopen(f"{base}/console/", timeout=30) as response:
        page = response.read().decode()
        policy = response.headers.get("Content-Security-Policy", "")
    assert response.status == 200 and "<title>" in page, page[:300]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy, policy
    scripts = re.findall(r'<script[^>]+src="([^"]+)"', page)
    assert scripts, page[:500]
    for script in scripts:
        with urllib.request.urlopen(f"{base}{script}", timeout=30) as response:
            assert response.status == 200 and response.read(), script
