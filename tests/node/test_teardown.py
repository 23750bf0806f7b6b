"""The node's teardown leaves nothing (containers, shims, mounts, network namespaces, the bridge,
kube-proxy's and the kubelet's iptables chains, processes, pod cgroups), and a node brought up again
on the same machine starts clean and runs pods, even after a node killed before its teardown ran left
its bridge and chains behind. Runs after the other node tests (file order)."""

from __future__ import annotations

import subprocess

import pytest

from realnode import BRIDGE, leftovers
from sharedcluster import attach


def leave_what_a_killed_node_leaves(tmp_path) -> list[str]:
    """The bridge and a kube-proxy chain with a jump to it, as a node SIGKILLed mid-run leaves them."""
    subprocess.run(["ip", "link", "add", BRIDGE, "type", "bridge"], check=True)
    subprocess.run(["iptables", "-t", "filter", "-N", "KUBE-STALE-TEST"], check=True)
    subprocess.run(["iptables", "-t", "filter", "-A", "FORWARD", "-j", "KUBE-STALE-TEST"], check=True)
    return leftovers(tmp_path)


def test_teardown_leaves_nothing_and_a_second_node_starts_clean(node, node_factory, busybox_image, tmp_path):
    if attach():
        pytest.skip("the shared cluster's driver (tests/sharedcluster.py) tears it down and checks; "
                    "scripts/k8s/test-cluster.sh runs this test again on a node of its own afterwards")
    left = node.down()
    assert left == [], "\n".join(left)
    stale = leave_what_a_killed_node_leaves(tmp_path)
    assert f"link {BRIDGE}" in stale and "iptables -t filter chain KUBE-STALE-TEST" in stale
    second = node_factory()  # removes a stale node's leftovers; refuses to start on any other
    assert not any("KUBE-STALE-TEST" in item for item in leftovers(tmp_path))
    second.kube.apply([{
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "again", "namespace": "default"},
        "spec": {"nodeName": second.name, "restartPolicy": "Never",
                 "containers": [{"name": "again", "image": busybox_image, "imagePullPolicy": "Never",
                                 "command": ["/bin/sh", "-c", "echo again"]}]}}])
    second.kube.kubectl("wait", "-n", "default", "--for=jsonpath={.status.phase}=Succeeded", "pod/again",
                        "--timeout=120s")
    assert second.kube.kubectl("logs", "-n", "default", "again").strip() == "again"
