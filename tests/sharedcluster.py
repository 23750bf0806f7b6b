"""The one test cluster of a test run, shared by every cluster suite (tests/charts, tests/node, ...):
a control plane (tests/testbed.py) with three kwok nodes for the chart tests and one real node
(tests/realnode.py) for everything that must really run. The real node is tainted, so a pod lands on
it only if it tolerates REAL_NODE_TAINT and selects REAL_NODE_LABEL (the charts' ci/node-values.yaml
do); the kwok nodes take the rest.

The API server binds the node's address (NODE_IP, on the bridge the node makes first), so pods reach
it through the kubernetes Service, with the CA the controller-manager publishes. Its aggregation layer
is on (tests/aggregationlayer.py), so KEDA's metrics adapter serves the external metrics API, and the
HPA controller syncs every HPA_SYNC_PERIOD (tests/autoscaling watches it follow a queue).

    python tests/sharedcluster.py run DIR [--images=KIND,...] -- COMMAND...   brings the cluster up in
        DIR with the images of scripts/k8s/images.sh KINDs on its node (default busybox), runs each
        COMMAND (separate commands with `--`) with HERALD_TEST_CLUSTER=DIR/cluster.json in its
        environment, tears the cluster down and fails if the teardown left anything or a command
        failed. Suites attach to the cluster that variable names (attach()) instead of making one.

Needs root, the testbed's tools (scripts/k8s/testbed.sh build), CoreDNS and the pause image.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(1, str(Path(__file__).resolve().parent))

from aggregationlayer import front_proxy_flags  # noqa: E402
from rabbitmq_operators import IMAGE_KINDS as RABBITMQ_IMAGES  # noqa: E402
from realnode import NODE_IP, REAL_NODE_LABEL, Node  # noqa: E402
from testbed import ControlPlane, Kube, run, tear_down_on_sigterm, use_tools  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
NODE_NAME = "herald-node"
REAL_NODE_TAINT = f"{REAL_NODE_LABEL}=true:NoSchedule"
KWOK_NODES = 3  # the chart tests spread replicas over three zones
ENV = "HERALD_TEST_CLUSTER"
HPA_SYNC_PERIOD = "2s"  # kube-controller-manager's default 15s would hide how KEDA's HPA follows a queue
# Resizing a running pod's CPU (alpha in Kubernetes 1.31, so off by default): the scale-out runner
# warms its JVMs at a large CPU limit and then lowers each pod's limit in place (herald_load.kube),
# because a JVM started under a limit of a few tens of millicores was still compiling after 30 minutes.
FEATURE_GATES = {"InPlacePodVerticalScaling": True}


def built_images(kind: str) -> dict[str, Path]:
    """scripts/k8s/images.sh KIND (cached where it can be): the names to import the images under, and
    their tarballs (`services` makes one per service)."""
    printed = run(["bash", str(ROOT / "scripts/k8s/images.sh"), kind])
    return {name: Path(tarball) for name, tarball in (line.split() for line in printed.splitlines() if line.strip())}


def built_image(kind: str) -> tuple[str, Path]:
    """The one image of KIND: its name and tarball."""
    (name, tarball), = built_images(kind).items()
    return name, tarball


@dataclass(frozen=True)
class Attached:
    """A running shared cluster as a suite sees it (what DIR/cluster.json says)."""

    kube: Kube
    directory: Path
    name: str  # the real node's, like realnode.Node.name

    @property
    def socket(self) -> Path:  # the node's containerd, like realnode.Node.socket
        return self.directory / "node" / "containerd.sock"

    @property
    def running(self) -> bool:  # like realnode.Node.running: the driver keeps it up until every suite ran
        return True


def attach() -> Attached | None:
    """The shared cluster that HERALD_TEST_CLUSTER names, or None when the suite runs on its own."""
    record = os.environ.get(ENV)
    if not record:
        return None
    described = json.loads(Path(record).read_text())
    use_tools(ROOT)
    return Attached(Kube(Path(described["kubeconfig"])), Path(described["directory"]), described["node_name"])


class SharedCluster:
    def __init__(self, directory: Path, images: list[str]):
        self.directory = directory
        self.kinds = images

    def up(self) -> Attached:
        folders = use_tools(ROOT)
        pause, pause_tar = built_image("pause")
        images = {pause: pause_tar}
        for kind in self.kinds:
            images |= built_images(kind)
        self.node = Node(self.directory / "node", None, images, pause, folders["HERALD_K8S_BIN"], NODE_NAME,
                         taints=[REAL_NODE_TAINT], feature_gates=FEATURE_GATES)
        self.control_plane = ControlPlane(ROOT, self.directory / "control-plane", {
            "HERALD_K8S_BIND_ADDRESS": NODE_IP, "HERALD_K8S_NODES": str(KWOK_NODES),
            "HERALD_K8S_HPA_SYNC_PERIOD": HPA_SYNC_PERIOD,
            "HERALD_K8S_FEATURE_GATES": ",".join(f"{k}={str(v).lower()}" for k, v in FEATURE_GATES.items()),
            # kubectl logs/exec: the API server reaches the kubelet at the node's InternalIP.
            "HERALD_K8S_APISERVER_ARGS": " ".join(["--kubelet-preferred-address-types=InternalIP",
                                                   *front_proxy_flags(self.directory / "front-proxy")])})
        self.node.network_up()
        kube = self.control_plane.up()
        self.node.kube = kube
        self.node.up()
        (self.directory / "cluster.json").write_text(json.dumps({
            "kubeconfig": str(kube.kubeconfig), "directory": str(self.directory), "node_name": NODE_NAME}))
        return Attached(kube, self.directory, NODE_NAME)

    def down(self) -> list[str]:
        left = self.node.down() if getattr(self, "node", None) else []
        if getattr(self, "control_plane", None):
            self.control_plane.down()
        return left


def run_suites(directory: Path, kinds: list[str], commands: list[list[str]]) -> int:
    cluster = SharedCluster(directory, kinds)
    tear_down_on_sigterm()  # .ci/run's timeout: tear down all the same
    failed = []
    try:
        cluster.up()
        environment = dict(os.environ, **{ENV: str(directory / "cluster.json")})
        for command in commands:
            print(f"--- shared cluster: {' '.join(command)}", flush=True)
            if subprocess.run(command, env=environment).returncode != 0:
                failed.append(" ".join(command))
    finally:
        left = cluster.down()
    if left:
        print("the shared cluster's teardown left:\n" + "\n".join(left), file=sys.stderr)
    for command in failed:
        print(f"failed on the shared cluster: {command}", file=sys.stderr)
    return 1 if left or failed else 0


def main(arguments: list[str]) -> int:
    kinds = ["busybox", *RABBITMQ_IMAGES]
    if len(arguments) > 2 and arguments[0] == "run" and arguments[2].startswith("--images="):
        kinds = arguments.pop(2).removeprefix("--images=").split(",")
    if len(arguments) < 4 or arguments[0] != "run" or arguments[2] != "--":
        print(__doc__, file=sys.stderr)
        return 2
    commands, current = [], []
    for word in arguments[3:]:
        if word == "--":
            commands.append(current)
            current = []
        else:
            current.append(word)
    commands.append(current)
    directory = Path(arguments[1]).resolve()
    directory.mkdir(parents=True, exist_ok=True)
    return run_suites(directory, kinds, [c for c in commands if c])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
