"""The RabbitMQ Cluster Operator and the Messaging Topology Operator as pods on the test cluster's real
node (tests/sharedcluster.py), the way their own installation manifests run them: one Deployment each
in the namespace rabbitmq-system, in-cluster config through a ServiceAccount, the ClusterRole and the
leader-election Role of the module's config/rbac (the Go module the testbed reads their CRDs from).

Both run as pods, not host processes: the topology operator calls RabbitMQ's management API at the
cluster's in-cluster name (<cluster>.<namespace>.svc), which only the cluster's DNS resolves, and the
cluster operator execs into RabbitMQ's pods. Their images, and RabbitMQ's, are built here
(scripts/k8s/images.sh; IMAGE_KINDS), and the node imports them when it starts.

    install_operators(kube)   applies everything and returns once both Deployments are Available
    uninstall_operators(kube) deletes it again
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

import yaml

from realnode import REAL_NODE_LABEL
from testbed import Kube, run

ROOT = Path(__file__).resolve().parents[1]
NAMESPACE = "rabbitmq-system"
# What scripts/k8s/images.sh builds for RabbitMQ on the real node; the node imports them (SharedCluster).
IMAGE_KINDS = ("rabbitmq", "rabbitmq-cluster-operator", "messaging-topology-operator")
# The real node's taint and label (tests/sharedcluster.py): the operators' pods ask for that node.
ON_THE_REAL_NODE = {
    "tolerations": [{"key": REAL_NODE_LABEL, "operator": "Equal", "value": "true", "effect": "NoSchedule"}],
    "nodeSelector": {REAL_NODE_LABEL: "true"},
}


@dataclass(frozen=True)
class Operator:
    name: str  # the image kind of scripts/k8s/images.sh, and the Deployment's name
    module: str
    version_variable: str  # of scripts/k8s/testbed.sh, which fetches the same module's CRDs
    role: str  # the ClusterRole of the module's config/rbac/role.yaml
    env: tuple[tuple[str, str], ...] = ()

    def version(self) -> str:
        for line in (ROOT / "scripts/k8s/testbed.sh").read_text().splitlines():
            if line.startswith(f"{self.version_variable}="):
                return line.split("=", 1)[1]
        raise RuntimeError(f"no {self.version_variable} in scripts/k8s/testbed.sh")

    def module_dir(self) -> Path:
        printed = run(["go", "mod", "download", "-json", f"{self.module}@v{self.version()}"], cwd="/")
        return Path(json.loads(printed)["Dir"])


OPERATORS = (
    Operator("rabbitmq-cluster-operator", "github.com/rabbitmq/cluster-operator/v2",
             "RABBITMQ_CLUSTER_OPERATOR_VERSION", "operator-role"),
    # Its admission webhooks need cert-manager's certificates; the chart's resources are valid as
    # rendered (tests/charts), so the test cluster runs it without them, as its docs allow.
    Operator("messaging-topology-operator", "github.com/rabbitmq/messaging-topology-operator",
             "RABBITMQ_TOPOLOGY_OPERATOR_VERSION", "manager-role", (("ENABLE_WEBHOOKS", "false"),)),
)


def image(kind: str) -> tuple[str, Path]:
    """scripts/k8s/images.sh KIND (cached): the name the node imports the image under, and its tarball."""
    name, tarball = run(["bash", str(ROOT / "scripts/k8s/images.sh"), kind]).split()
    return name, Path(tarball)


def rbac_objects(operator: Operator) -> list[dict]:
    """The module's ClusterRole and leader-election Role, renamed after the operator (both modules
    call theirs leader-election-role), with a ServiceAccount bound to each."""
    rbac = operator.module_dir() / "config/rbac"
    cluster_role = yaml.safe_load((rbac / "role.yaml").read_text())
    leader_role = yaml.safe_load((rbac / "leader_election_role.yaml").read_text())
    assert cluster_role["kind"] == "ClusterRole" and cluster_role["metadata"]["name"] == operator.role, cluster_role
    assert leader_role["kind"] == "Role", leader_role
    name = operator.name
    cluster_role["metadata"] = {"name": name}
    leader_role["metadata"] = {"name": f"{name}-leader-election", "namespace": NAMESPACE}
    subject = [{"kind": "ServiceAccount", "name": name, "namespace": NAMESPACE}]
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name, "namespace": NAMESPACE}},
        cluster_role,
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": name},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
         "subjects": subject},
        leader_role,
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
         "metadata": {"name": f"{name}-leader-election", "namespace": NAMESPACE},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": f"{name}-leader-election"},
         "subjects": subject},
    ]


def deployment(operator: Operator, image_name: str) -> dict:
    """Like the module's config/manager/manager.yaml, with the charts' security context."""
    labels = {"app.kubernetes.io/name": operator.name, "app.kubernetes.io/part-of": "rabbitmq"}
    env = [{"name": "OPERATOR_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}]
    env += [{"name": key, "value": value} for key, value in operator.env]
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": operator.name, "namespace": NAMESPACE, "labels": labels},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app.kubernetes.io/name": operator.name}},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "serviceAccountName": operator.name,
                    "securityContext": {"runAsNonRoot": True, "runAsUser": 65532, "runAsGroup": 65532},
                    **ON_THE_REAL_NODE,
                    "terminationGracePeriodSeconds": 10,
                    "containers": [{
                        "name": "operator", "image": image_name, "imagePullPolicy": "Never",
                        "env": env,
                        "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"memory": "256Mi"}},
                        "securityContext": {"readOnlyRootFilesystem": True, "allowPrivilegeEscalation": False,
                                            "capabilities": {"drop": ["ALL"]}},
                    }],
                },
            },
        },
    }


def install_operators(kube: Kube, timeout: int = 180) -> None:
    """Both operators in NAMESPACE, returning once both Deployments are Available (their CRDs come
    with the test control plane: scripts/k8s/testbed.sh)."""
    objects: list[dict] = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}]
    for operator in OPERATORS:
        objects += rbac_objects(operator)
        objects.append(deployment(operator, image(operator.name)[0]))
    kube.apply(objects)
    for operator in OPERATORS:
        kube.kubectl("rollout", "status", "-n", NAMESPACE, f"deployment/{operator.name}", f"--timeout={timeout}s")


def uninstall_operators(kube: Kube) -> None:
    """What install_operators made, cluster-scoped parts included (the namespace takes the rest)."""
    names = [operator.name for operator in OPERATORS]
    for kind in ("clusterrolebinding", "clusterrole"):
        subprocess.run(["kubectl", "--kubeconfig", str(kube.kubeconfig), "delete", kind, *names,
                        "--ignore-not-found", "--wait=false"], capture_output=True)
    subprocess.run(["kubectl", "--kubeconfig", str(kube.kubeconfig), "delete", "namespace", NAMESPACE,
                    "--ignore-not-found", "--timeout=60s"], capture_output=True)


def operator_logs(kube: Kube) -> str:
    """Each operator's log (for a failing test's message)."""
    logs = []
    for operator in OPERATORS:
        result = subprocess.run(["kubectl", "--kubeconfig", str(kube.kubeconfig), "logs", "-n", NAMESPACE,
                                 f"deployment/{operator.name}", "--tail=60"], capture_output=True, text=True)
        logs.append(f"--- {operator.name}:\n{result.stdout}{result.stderr}")
    return "\n".join(logs)
