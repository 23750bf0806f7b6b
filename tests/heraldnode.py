"""Herald installed for real on the real node of a test cluster (tests/sharedcluster.py): the RabbitMQ
operators (tests/rabbitmq_operators.py), then every release the README installs, from the charts with
their ci/node-values.yaml (images built here, pulled never; a toleration of the real node's taint and
a selector of its label), each waited for through its real probes. The host reaches the releases'
Services at their ClusterIPs through kube-proxy, as a client inside the cluster would.

Standard library only, like tests/testbed.py.
"""

from __future__ import annotations

import base64
import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from realnode import import_images
from sharedcluster import built_images
from testbed import Kube

ROOT = Path(__file__).resolve().parents[1]
CHARTS = ROOT / "charts"
NAMESPACE = "herald-live"
# Release -> chart, in the README's install order (the sandbox stands in for FCM and APNs).
RELEASES = {"herald-platform": "push-platform", "herald-provider-sandbox": "provider-sandbox",
            "herald-dispatcher": "dispatcher", "herald-gateway": "gateway",
            "herald-connection-manager": "connection-manager"}
# The images Herald needs beyond those the shared cluster's node starts with (busybox for `helm test`,
# RabbitMQ's and its operators': sharedcluster.py), as scripts/k8s/images.sh kinds.
IMAGE_KINDS = ("services", "redis")
INSTALL_TIMEOUT = "600s"  # four JVMs starting on two shared cores, RabbitMQ booting


def prepared(kube: Kube, socket: Path, test_image: str) -> "Herald":
    """The images of IMAGE_KINDS built (cached) and imported into the node's containerd at `socket`;
    the Herald that installs them (its Redis image the one just imported)."""
    images = {}
    for kind in IMAGE_KINDS:
        images |= built_images(kind)
    import_images(socket, images)
    redis = next(name for name in images if name.startswith("docker.io/local/redis:"))
    return Herald(kube, test_image, redis)


def values_file(chart: str) -> Path:
    return CHARTS / chart / "ci" / "node-values.yaml"


@dataclass
class Herald:
    """The releases in `namespace` of the cluster behind `kube`; `test_image` is busybox's name on
    the node (the `helm test` pods' image)."""

    kube: Kube
    test_image: str
    redis_image: str  # docker.io/local/redis:<Debian version> (scripts/k8s/images.sh redis)
    namespace: str = NAMESPACE
    installed: list[str] = field(default_factory=list)
    # `--set` values for push-platform beyond its node values (a scale-out run's RabbitMQ memory)
    platform_settings: tuple[str, ...] = ()

    # ------------------------------------------------------------ install

    def install(self) -> None:
        """Every release in order, each `helm install --wait` (so every pod passed its readiness
        probe); the RabbitMQ operators must run already (tests/rabbitmq_operators.py)."""
        self.kube.kubectl("create", "namespace", self.namespace)
        for chart in set(RELEASES.values()):  # the service charts' library chart (herald-lib) into charts/
            if "\ndependencies:" in (CHARTS / chart / "Chart.yaml").read_text():
                self.kube.helm("dependency", "build", str(CHARTS / chart))
        for release, chart in RELEASES.items():
            extra = ["--set-string", f"redis.standalone.image.tag={self.redis_image.rsplit(':', 1)[1]}",
                     *(a for setting in self.platform_settings for a in ("--set", setting))] \
                if chart == "push-platform" else []
            self.helm_install(release, chart, *extra)
        self.wait_for_rabbitmq_queues()

    def helm_install(self, release: str, chart: str, *extra: str) -> None:
        self.kube.helm("upgrade", "--install", release, str(CHARTS / chart), "-n", self.namespace,
                       "-f", str(values_file(chart)), "--set", f"tests.image={self.test_image}",
                       "--wait", "--timeout", INSTALL_TIMEOUT, *extra)
        if release not in self.installed:
            self.installed.append(release)

    def wait_for_rabbitmq_queues(self, timeout: float = 300) -> None:
        """The topology operator made every Queue (status Ready) before the services need them."""
        deadline = time.monotonic() + timeout
        while True:
            queues = json.loads(self.kube.kubectl("get", "queues.rabbitmq.com", "-n", self.namespace, "-o", "json"))
            pending = [q["metadata"]["name"] for q in queues["items"]
                       if not any(c["type"] == "Ready" and c["status"] == "True"
                                  for c in q.get("status", {}).get("conditions", []))]
            if queues["items"] and not pending:
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"queues not Ready after {timeout:.0f} s: {pending}")
            time.sleep(2)

    # ------------------------------------------------------------ where things answer

    def cluster_ip(self, service: str) -> str:
        return self.kube.kubectl("get", "service", service, "-n", self.namespace,
                                 "-o", "jsonpath={.spec.clusterIP}").strip()

    def service_url(self, service: str, port: int) -> str:
        return f"http://{self.cluster_ip(service)}:{port}"

    def secret_value(self, secret: str, key: str) -> str:
        encoded = self.kube.kubectl("get", "secret", secret, "-n", self.namespace, "-o", f"jsonpath={{.data.{key}}}")
        return base64.b64decode(encoded).decode()

    @property
    def admin_token(self) -> str:
        return self.secret_value("herald-app", "admin-token")

    def demo_target(self):
        from herald_load.demo import DemoTarget

        return DemoTarget(dispatcher=self.service_url("herald-dispatcher", 8080),
                          sandbox=self.service_url("herald-provider-sandbox", 9090),
                          mqtt_host=self.cluster_ip("herald-connection-manager-mqtt"), mqtt_port=1883)

    def send_demo_traffic(self, say=lambda line: None) -> None:
        """The demo through the Services: an FCM push `sent` at the sandbox, an MQTT push `delivered`
        (herald_load.demo; DemoError if a step fails). Traffic for every service's metrics."""
        from herald_load.demo import run_demo

        run_demo(self.demo_target(), self.admin_token, say=say)

    # ------------------------------------------------------------ lifecycle

    def helm_test(self, release: str) -> str:
        # (no --logs: the test pods' hook-delete-policy removes a pod that succeeded before helm reads it)
        return self.kube.helm("test", release, "-n", self.namespace, "--timeout", "300s")

    def pods(self) -> list[dict]:
        return json.loads(self.kube.kubectl("get", "pods", "-n", self.namespace, "-o", "json"))["items"]

    def uninstall(self) -> None:
        for release in reversed(self.installed):
            self.kube.helm("uninstall", release, "-n", self.namespace, "--wait", "--timeout", "300s")
        self.installed.clear()


# ---------------------------------------------------------------- try it: the README's command

def bring_up(cluster, directory: Path, say=print, platform_settings: tuple[str, ...] = ()) -> Herald:
    """`cluster` (a SharedCluster made with busybox and RabbitMQ's images) up, the images built (cached)
    and imported, the RabbitMQ operators and Herald installed (push-platform with `platform_settings`
    as `--set` values beyond its node values); the admin token in DIR/admin-token."""
    from rabbitmq_operators import install_operators
    from sharedcluster import built_image

    say(f"==> bringing up a control plane and a real node in {directory}")
    attached = cluster.up()
    say("==> building (or finding cached) the images and importing them into the node")
    herald = prepared(attached.kube, attached.socket, built_image("busybox")[0])
    herald.platform_settings = platform_settings
    say(f"==> installing the RabbitMQ operators and Herald's releases ({', '.join(RELEASES)})")
    install_operators(attached.kube)
    herald.install()
    token_file = directory / "admin-token"
    token_file.touch(mode=0o600)
    token_file.write_text(herald.admin_token + "\n")
    return herald


def tear_down(cluster, say=print) -> int:
    """The cluster down; 1 (and what was left printed) if the teardown left anything."""
    say("==> tearing down")
    left = cluster.down()
    if left:
        say("the teardown left:\n" + "\n".join(left))
        return 1
    return 0


def try_it(directory: Path) -> int:
    """scripts/k8s/try-node.sh: the shared cluster with Herald installed and the demo run through its
    Services; then it waits (Ctrl-C or SIGTERM tears everything down, with the leftover check)."""
    import signal
    import threading

    from herald_load.demo import DemoError
    from rabbitmq_operators import IMAGE_KINDS as RABBITMQ_IMAGES
    from sharedcluster import SharedCluster

    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    cluster = SharedCluster(directory, ["busybox", *RABBITMQ_IMAGES])
    rc = 0
    try:
        herald = bring_up(cluster, directory, say=lambda line: print(line, flush=True))
        target = herald.demo_target()
        herald.send_demo_traffic(say=print)
        print(f"""
Herald runs on the local node. From this machine:
  export KUBECONFIG={herald.kube.kubeconfig}
  kubectl get pods -n {herald.namespace}
  curl -H "Authorization: Bearer $(cat {directory / "admin-token"})" {target.dispatcher}/v1/apps/demo
  dispatcher {target.dispatcher}   MQTT {target.mqtt_host}:1883   sandbox {target.sandbox}
Ctrl-C tears the node and the control plane down.""", flush=True)
        stop.wait()
    except DemoError as error:
        print(f"ERROR: {error}")
        rc = 1
    finally:
        rc = tear_down(cluster, say=lambda line: print(line, flush=True)) or rc
    return rc


if __name__ == "__main__":
    import sys

    sys.exit(try_it(Path(sys.argv[1]).resolve()) if len(sys.argv) == 2 else 2)
