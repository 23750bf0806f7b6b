"""Herald's charts, their CI scenarios, and their releases on the test control plane through the
lifecycle the README describes: install in order, helm test, upgrade with changed values, rollback,
uninstall.

Each step runs its commands and records what they returned and what the API server held afterwards;
the tests assert on those records. So a test may run in any order (a step runs once, when the first
test needs it, after the steps before it), and a failed command fails its own tests, not the run.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from herald_load.processes import wait_until
from testbed import Kube

ROOT = Path(__file__).resolve().parents[2]
CHARTS_DIR = ROOT / "charts"
CHARTS = ["push-platform", "dispatcher", "provider-sandbox", "gateway", "connection-manager"]
NAMESPACE = "herald"
KUBE_VERSION = "1.31.4"
# What `helm template` assumes the cluster serves: the operators' APIs the charts render for.
API_VERSIONS = ["--kube-version", KUBE_VERSION, "--api-versions", "monitoring.coreos.com/v1",
                "--api-versions", "keda.sh/v1alpha1", "--api-versions", "rabbitmq.com/v1beta1"]
# Release -> chart, in the README's install order.
RELEASES = {"herald-platform": "push-platform", "herald-dispatcher": "dispatcher",
            "herald-provider-sandbox": "provider-sandbox", "herald-gateway": "gateway",
            "herald-connection-manager": "connection-manager"}
DEPLOYMENTS = ["herald-dispatcher", "herald-provider-sandbox", "herald-gateway", "herald-connection-manager"]
MQTT_SERVICE = "herald-connection-manager-mqtt"
# Everything the tests read from the namespace, as `kubectl get` names it.
RESOURCES = ["deployments", "pods", "secrets", "configmaps", "services",
             "servicemonitors.monitoring.coreos.com", "prometheusrules.monitoring.coreos.com",
             "rabbitmqclusters.rabbitmq.com", "queues.rabbitmq.com", "exchanges.rabbitmq.com",
             "bindings.rabbitmq.com", "policies.rabbitmq.com", "users.rabbitmq.com",
             "permissions.rabbitmq.com", "scaledobjects.keda.sh", "triggerauthentications.keda.sh"]


def ci_scenarios() -> list[tuple[str, Path]]:
    """(chart, values file) of every ci/*-values.yaml: the scenarios each chart is linted and
    rendered with."""
    return [(chart, values) for chart in CHARTS for values in sorted((CHARTS_DIR / chart / "ci").glob("*-values.yaml"))]


def scenario_id(chart: str, values: Path) -> str:
    return f"{chart}-{values.name.removesuffix('-values.yaml')}"


@dataclass(frozen=True)
class Outcome:
    """What a command returned."""

    command: str
    returncode: int
    stdout: str
    stderr: str = ""

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    def __str__(self) -> str:
        tail = "\n".join(self.output.splitlines()[-20:])
        return f"{self.command} exited {self.returncode}:\n{tail}"


def attempt(*command: str, cwd: Path | None = None) -> Outcome:
    """Runs a command to completion and records its exit status and output."""
    result = subprocess.run(command, capture_output=True, text=True, cwd=cwd)
    return Outcome(shlex.join(command), result.returncode, result.stdout, result.stderr)


class Objects:
    """What the API server held in the namespace at one moment, by resource (`kubectl get` names)."""

    def __init__(self, by_resource: dict[str, list[dict]]):
        self.by_resource = by_resource

    def __getitem__(self, resource: str) -> list[dict]:
        return self.by_resource.get(resource, [])

    def named(self, resource: str, name: str) -> dict:
        """The object of that name; {} if there is none."""
        return next((o for o in self[resource] if o["metadata"]["name"] == name), {})

    def labelled(self, resource: str, label: str, value: str) -> list[dict]:
        return [o for o in self[resource] if (o["metadata"].get("labels") or {}).get(label) == value]


class Cluster:
    """The namespace of the releases on a started control plane, through kubectl and helm."""

    def __init__(self, kube: Kube):
        self.kube = kube

    def kubectl(self, *args: str) -> Outcome:
        return attempt("kubectl", "--kubeconfig", str(self.kube.kubeconfig), "-n", NAMESPACE, *args)

    def helm(self, *args: str) -> Outcome:
        return attempt("helm", "--kubeconfig", str(self.kube.kubeconfig), "-n", NAMESPACE, *args)

    def objects(self) -> Objects:
        """Every resource of RESOURCES in the namespace (none of a kind the API server does not serve)."""
        by_resource = {}
        for resource in RESOURCES:
            listed = self.kubectl("get", resource, "-o", "json")
            by_resource[resource] = json.loads(listed.stdout)["items"] if listed.ok else []
        return Objects(by_resource)

    def fake_load_balancer(self, service: str) -> Outcome:
        """kwok has no load-balancer controller: gives the Service an address as a cloud's would,
        once it exists (192.0.2.0/24 is TEST-NET-1: written into the status only, never contacted)."""
        try:
            wait_until(lambda: self.kube.get(f"/api/v1/namespaces/{NAMESPACE}/services/{service}"), 120,
                       f"Service {service}")
        except TimeoutError as error:
            return Outcome(f"wait for Service {service}", 1, "", str(error))
        return self.kubectl("patch", "service", service, "--subresource=status", "--type=merge",
                            "-p", '{"status":{"loadBalancer":{"ingress":[{"ip":"192.0.2.10"}]}}}')


# ------------------------------------------------------------------ the lifecycle's steps

@dataclass(frozen=True)
class Installed:
    installs: dict[str, Outcome]
    load_balancer: Outcome
    available: dict[str, Outcome]
    objects: Objects


def install(cluster: Cluster) -> Installed:
    """`helm install --wait` of every release in order, then each Deployment waited Available."""
    installs = {}
    with ThreadPoolExecutor(1) as background:
        load_balancer = None
        for release, chart in RELEASES.items():
            if release == "herald-connection-manager":
                # --wait waits for the LoadBalancer's address, which only the fake gives.
                load_balancer = background.submit(cluster.fake_load_balancer, MQTT_SERVICE)
            installs[release] = cluster.helm("install", release, str(CHARTS_DIR / chart), "--wait", "--timeout", "120s")
        load_balancer = load_balancer.result()
    available = {d: cluster.kubectl("wait", "--for=condition=Available", "--timeout=60s", f"deployment/{d}")
                 for d in DEPLOYMENTS}
    return Installed(installs, load_balancer, available, cluster.objects())


def helm_test(cluster: Cluster) -> dict[str, Outcome]:
    """`helm test` of every release (kwok completes the test pods)."""
    return {release: cluster.helm("test", release, "--timeout", "60s") for release in RELEASES}


@dataclass(frozen=True)
class Upgraded:
    platform: Outcome
    dispatcher: Outcome
    sandbox: Outcome
    gateway: Outcome
    gateway_manifest: str
    objects: Objects


# The values the upgrades change.
RABBITMQ_REPLICAS = 5
DISPATCHER_REPLICAS = 3
MAX_TARGETS_KEY = "HERALD_DISPATCHER_MAX_TARGETS_PER_REQUEST"
MAX_TARGETS = "500"
SANDBOX_LATENCY_KEY = "HERALD_SANDBOX_FAULTS_LATENCY_MS"
SANDBOX_TLS_SECRET = "herald-provider-sandbox-apns-tls"


def sandbox_certificate(objects: Objects) -> str | None:
    """The provider sandbox's APNs certificate as its Secret stores it (the gateway trusts this one)."""
    return objects.named("secrets", SANDBOX_TLS_SECRET).get("data", {}).get("tls.crt")


def upgrade(cluster: Cluster) -> Upgraded:
    """RabbitMQ to 5 nodes, the dispatcher to 3 replicas and a config value, the sandbox to a config
    value, the gateway to KEDA."""
    platform = cluster.helm("upgrade", "herald-platform", str(CHARTS_DIR / "push-platform"), "--wait",
                            "--set", f"rabbitmq.replicas={RABBITMQ_REPLICAS}")
    dispatcher = cluster.helm("upgrade", "herald-dispatcher", str(CHARTS_DIR / "dispatcher"), "--wait",
                              "--set", f"replicaCount={DISPATCHER_REPLICAS}", "--set", f"config.{MAX_TARGETS_KEY}={MAX_TARGETS}")
    sandbox = cluster.helm("upgrade", "herald-provider-sandbox", str(CHARTS_DIR / "provider-sandbox"), "--wait",
                           "--set-string", f"config.{SANDBOX_LATENCY_KEY}=0")
    gateway = cluster.helm("upgrade", "herald-gateway", str(CHARTS_DIR / "gateway"), "--wait",
                           "-f", str(CHARTS_DIR / "gateway/ci/keda-values.yaml"))
    manifest = cluster.helm("get", "manifest", "herald-gateway")
    return Upgraded(platform, dispatcher, sandbox, gateway, manifest.stdout if manifest.ok else "", cluster.objects())


@dataclass(frozen=True)
class RolledBack:
    dispatcher: Outcome
    sandbox: Outcome
    gateway: Outcome
    dispatcher_history: list[dict]
    objects: Objects


def roll_back(cluster: Cluster) -> RolledBack:
    """The dispatcher, the sandbox and the gateway back to their first revision."""
    dispatcher = cluster.helm("rollback", "herald-dispatcher", "1", "--wait")
    sandbox = cluster.helm("rollback", "herald-provider-sandbox", "1", "--wait")
    gateway = cluster.helm("rollback", "herald-gateway", "1", "--wait", "--timeout", "60s")
    history = cluster.helm("history", "herald-dispatcher", "-o", "json")
    return RolledBack(dispatcher, sandbox, gateway, json.loads(history.stdout) if history.ok else [], cluster.objects())


@dataclass(frozen=True)
class Uninstalled:
    uninstalls: dict[str, Outcome]
    labelled_left: list[str]
    pods_deleted: Outcome
    pods_left: list[str]
    releases_left: Outcome


def uninstall(cluster: Cluster) -> Uninstalled:
    """`helm uninstall --wait` in reverse order; then what is left in the namespace."""
    uninstalls = {release: cluster.helm("uninstall", release, "--wait", "--timeout", "120s")
                  for release in reversed(RELEASES)}
    # Everything namespaced that the API server lists, labelled by one of the releases (a kind that
    # cannot be listed after all fails alone: its error goes, the others' names stay).
    kinds = cluster.kubectl("api-resources", "--namespaced", "--verbs=list", "-o", "name").stdout.split()
    labelled = cluster.kubectl("get", ",".join(kinds), "-l", "app.kubernetes.io/part-of=herald", "-o", "name")
    # Pods go by the Deployments' garbage collection, after the uninstall: wait for each to be gone.
    pods = cluster.kubectl("get", "pods", "-o", "name").stdout.split()
    deleted = cluster.kubectl("wait", "--for=delete", "--timeout=60s", *pods) if pods else Outcome("no pods", 0, "")
    return Uninstalled(uninstalls, sorted(labelled.stdout.split()), deleted,
                       cluster.kubectl("get", "pods", "-o", "name").stdout.split(), cluster.helm("list", "-a", "-q"))
