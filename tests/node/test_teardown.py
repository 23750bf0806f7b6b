"""The node's teardown leaves nothing (containers, shims, mounts, network namespaces, the bridge,
kube-proxy's and the kubelet's iptables chains, processes, pod cgroups), and a node brought up again
on the same machine starts clean and runs pods. Runs after the other node tests (file order)."""

from __future__ import annotations

import pytest

from sharedcluster import attach


def test_teardown_leaves_nothing_and_a_second_node_starts_clean(node, node_factory, busybox_image):
    if attach():
        pytest.skip("the shared cluster's driver (tests/sharedcluster.py) tears it down and checks; "
                    "scripts/k8s/test-cluster.sh runs this test again on a node of its own afterwards")
    left = node.down()
    assert left == [], "\n".join(left)
    second = node_factory()  # Node.up refuses to start on leftovers of the first
    second.kube.apply([{
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "again", "namespace": "default"},
        "spec": {"nodeName": second.name, "restartPolicy": "Never",
                 "containers": [{"name": "again", "image": busybox_image, "imagePullPolicy": "Never",
                                 "command": ["/bin/sh", "-c", "echo again"]}]}}])
    second.kube.kubectl("wait", "-n", "default", "--for=jsonpath={.status.phase}=Succeeded", "pod/again",
                        "--timeout=120s")
    assert second.kube.kubectl("logs", "-n", "default", "again").strip() == "again"
