"""Fixtures of the real-node tests: one control plane (tests/testbed.py) with one real node
(tests/realnode.py) for the session, torn down at its end with a check that nothing is left.

Usage (scripts/k8s/test-node.sh builds the tools and images, then runs this as root):
  pytest tests/node      HERALD_K8S_KEEP=true keeps the cluster running (and skips the teardown check)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# The shared cluster modules: tests/testbed.py and tests/realnode.py.
sys.path.insert(1, str(Path(__file__).resolve().parents[1]))

from realnode import Node  # noqa: E402
from testbed import ControlPlane, run, tear_down_on_sigterm, use_tools  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
NODE_NAME = "herald-node"

tear_down_on_sigterm()


def built_image(kind: str) -> tuple[str, Path]:
    """scripts/k8s/images.sh KIND (cached): the name to import the image under, and its tarball."""
    name, tarball = run(["bash", str(ROOT / "scripts/k8s/images.sh"), kind]).split()
    return name, Path(tarball)


@pytest.fixture(scope="session")
def busybox_image() -> str:
    return built_image("busybox")[0]


@pytest.fixture(scope="session")
def node_factory(busybox_image, tmp_path_factory):
    """Brings up a control plane and a real node in a fresh folder each call; every one made is torn
    down at the end of the session, and the session fails if anything is left of it."""
    folders = use_tools(ROOT)
    pause, pause_tar = built_image("pause")
    busybox, busybox_tar = built_image("busybox")
    made = []

    def make():
        directory = tmp_path_factory.mktemp("cluster")
        control_plane = ControlPlane(ROOT, directory / "control-plane", {
            # kubectl logs/exec: the API server reaches the kubelet at the node's InternalIP.
            "HERALD_K8S_APISERVER_ARGS": "--kubelet-preferred-address-types=InternalIP"})
        made.append((control_plane, None))
        kube = control_plane.up()
        node = Node(directory / "node", kube, {pause: pause_tar, busybox: busybox_tar}, pause,
                    folders["HERALD_K8S_BIN"], NODE_NAME)
        made[-1] = (control_plane, node)
        node.up()
        return node

    yield make
    if os.environ.get("HERALD_K8S_KEEP") == "true":
        print("\nkept the test cluster(s): " + ", ".join(str(cp.directory / "env") for cp, _ in made))
        return
    left = []
    for control_plane, node in reversed(made):
        if node is not None:
            left += node.down()
        control_plane.down()
    assert not left, "the node's teardown left:\n" + "\n".join(left)


@pytest.fixture(scope="session")
def node(node_factory) -> Node:
    return node_factory()
