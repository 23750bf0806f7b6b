"""Fixtures of every suite that uses the real node (tests/node, tests/autoscaling, tests/capacity): the
run's shared cluster (tests/sharedcluster.py) when HERALD_TEST_CLUSTER names one, else a cluster like
it for the session, torn down at its end with a check that nothing is left; the RabbitMQ operators
and Herald installed on its node once per session (scripts/k8s/test-cluster.sh runs tests/node,
tests/autoscaling and tests/capacity in one session, so all use one installation). Made on first
use: the chart tests, which need none of them, never start them.

Usage (scripts/k8s/test-node.sh builds the tools and images, then runs this as root):
  pytest tests/node      HERALD_K8S_KEEP=true keeps the cluster running (and skips the teardown check)
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

# The shared cluster modules beside this file: testbed.py, realnode.py, sharedcluster.py, ...
sys.path.insert(1, str(Path(__file__).resolve().parent))

from heraldnode import Herald, prepared  # noqa: E402
from rabbitmq_operators import IMAGE_KINDS as RABBITMQ_IMAGES, install_operators, operator_logs, \
    uninstall_operators  # noqa: E402
from realnode import Node  # noqa: E402
from sharedcluster import SharedCluster, attach, built_image  # noqa: E402
from testbed import tear_down_on_sigterm  # noqa: E402


tear_down_on_sigterm()


@pytest.fixture(scope="session")
def busybox_image() -> str:
    return built_image("busybox")[0]


@pytest.fixture(scope="session")
def node_factory(busybox_image, tmp_path_factory):
    """Brings up a cluster like the shared one (tests/sharedcluster.py) in a fresh folder each call and
    returns its real node; every one made is torn down at the end of the session, and the session
    fails if anything is left of it."""
    made = []

    def make() -> Node:
        cluster = SharedCluster(tmp_path_factory.mktemp("cluster"), ["busybox", *RABBITMQ_IMAGES])
        made.append(cluster)
        cluster.up()
        return cluster.node

    yield make
    if os.environ.get("HERALD_K8S_KEEP") == "true":
        print("\nkept the test cluster(s): " + ", ".join(str(c.directory / "control-plane" / "env") for c in made))
        return
    left = [entry for cluster in reversed(made) for entry in cluster.down()]
    assert not left, "the node's teardown left:\n" + "\n".join(left)


@pytest.fixture(scope="session")
def node(request):
    """The shared cluster's real node (tests/sharedcluster.py) when the run has one, else a node of
    this session's own (node_factory)."""
    return attach() or request.getfixturevalue("node_factory")()


@pytest.fixture(scope="session")
def operators(node):
    """The RabbitMQ Cluster and Messaging Topology Operators as pods on the node (tests/rabbitmq_operators.py),
    for the session: whatever RabbitMQ objects the tests make, the operators outlive them (their
    finalizers need them)."""
    started = time.monotonic()
    try:
        install_operators(node.kube)
    except Exception:
        print(operator_logs(node.kube))
        raise
    print(f"\nboth RabbitMQ operators Available after {time.monotonic() - started:.0f} s")
    yield
    if node.running:  # a node already taken down (tests/node/test_teardown.py) took its pods along
        uninstall_operators(node.kube)


@pytest.fixture(scope="session")
def platform(node, operators, busybox_image) -> Herald:
    """Herald installed on the real node (tests/heraldnode.py): the images built here imported into
    the node's containerd, every release Ready. Uninstalled at the end."""
    herald = prepared(node.kube, node.socket, busybox_image)
    herald.install()
    yield herald
    if node.running:  # as for the operators: helm would wait for pods no kubelet can stop
        herald.uninstall()
