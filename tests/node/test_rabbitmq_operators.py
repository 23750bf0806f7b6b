"""RabbitMQ the way the design card says, on the real node: the RabbitMQ Cluster Operator and the
Messaging Topology Operator (tests/rabbitmq_operators.py, built from their Go modules) run as pods;
`helm install` of charts/push-platform with ci/node-values.yaml makes a RabbitmqCluster of the image
built here from Debian's packages (scripts/k8s/images.sh rabbitmq), and its Queue, Exchange, Binding,
Policy, User and Permission objects. The cluster operator runs RabbitMQ as a StatefulSet, the
topology operator declares the quorum queues and the policy through the management API; the test
reads them back through the management Service from the host. No Herald service runs here, so
nothing else declares the queues, and deleting a Queue object deletes the queue: the operators made
them."""

from __future__ import annotations

import base64
import json
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
import yaml

from rabbitmq_operators import NAMESPACE as OPERATORS_NAMESPACE, image, operator_logs
from realnode import wait_for as poll

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "charts/push-platform"
VALUES = CHART / "ci/node-values.yaml"
NAMESPACE = "herald-rabbitmq-test"
RELEASE = "push-platform"
CLUSTER = "herald-rabbitmq"
WORK_QUEUES = ["herald.send.high", "herald.send.normal", "herald.audience"]
DEAD_LETTER_QUEUE = "herald.dead"
POLICY = "herald-dead-letter"


def wait_for(what: str, check, timeout: float, explain=lambda: ""):
    """realnode.wait_for, failing with what explain() shows."""
    try:
        return poll(what, check, timeout)
    except TimeoutError as timeout_error:
        raise AssertionError(f"{timeout_error}\n{explain()}") from None


def conditions(kube, path: str) -> dict[str, str]:
    found = kube.get(path) or {}
    return {c["type"]: c["status"] for c in found.get("status", {}).get("conditions", [])}


def describe(kube) -> str:
    """What a failing wait shows: the operators' logs, the RabbitMQ pod and its log."""
    pods = subprocess.run(["kubectl", "--kubeconfig", str(kube.kubeconfig), "get", "pods", "-A", "-o", "wide"],
                          capture_output=True, text=True).stdout
    rabbit = subprocess.run(["kubectl", "--kubeconfig", str(kube.kubeconfig), "logs", "-n", NAMESPACE,
                             f"{CLUSTER}-server-0", "--all-containers", "--tail=40"], capture_output=True, text=True)
    events = subprocess.run(["kubectl", "--kubeconfig", str(kube.kubeconfig), "get", "events", "-n", NAMESPACE],
                            capture_output=True, text=True).stdout
    return f"{pods}\n{events}\n--- {CLUSTER}-server-0:\n{rabbit.stdout}{rabbit.stderr}\n{operator_logs(kube)}"


def what_holds_the_namespace(kube) -> str:
    """A namespace stuck in Terminating: its conditions name what is left and whose finalizers hold it."""
    namespace = kube.get(f"/api/v1/namespaces/{NAMESPACE}") or {}
    held = "\n".join(f"{c['type']}: {c.get('message', '')}" for c in namespace.get("status", {}).get("conditions", []))
    pods = subprocess.run(["kubectl", "--kubeconfig", str(kube.kubeconfig), "get", "pods", "-n", NAMESPACE, "-o",
                           "custom-columns=NAME:.metadata.name,DELETING:.metadata.deletionTimestamp,"
                           "GRACE:.metadata.deletionGracePeriodSeconds,LABELS:.metadata.labels"],
                          capture_output=True, text=True)
    return f"{held}\n{pods.stdout}{pods.stderr}\n{describe(kube)}"


@pytest.fixture(scope="module")
def rabbitmq_release(node, operators):
    """push-platform installed with ci/node-values.yaml; uninstalled (while the operators still run,
    so that their finalizers complete) and its namespace deleted afterwards."""
    kube = node.kube
    values = yaml.safe_load(VALUES.read_text())
    assert values["rabbitmq"]["image"] == image("rabbitmq")[0], \
        "ci/node-values.yaml names another RabbitMQ image than scripts/k8s/images.sh rabbitmq builds"
    started = time.monotonic()
    # Redis is not this test's: the chart's standalone Redis stays off
    kube.helm("install", RELEASE, str(CHART), "-n", NAMESPACE, "--create-namespace", "-f", str(VALUES),
              "--set", "redis.standalone.enabled=false")
    yield started
    kube.helm("uninstall", RELEASE, "-n", NAMESPACE, "--wait", "--timeout", "120s")
    wait_for("the RabbitmqCluster to be deleted",
             lambda: kube.get(f"/apis/rabbitmq.com/v1beta1/namespaces/{NAMESPACE}/rabbitmqclusters/{CLUSTER}") is None,
             120, lambda: describe(kube))
    kube.kubectl("delete", "namespace", NAMESPACE, "--wait=false")
    wait_for(f"namespace {NAMESPACE} to be deleted", lambda: kube.get(f"/api/v1/namespaces/{NAMESPACE}") is None,
             180, lambda: what_holds_the_namespace(kube))


def rabbitmq_cluster_ready(kube):
    found = conditions(kube, f"/apis/rabbitmq.com/v1beta1/namespaces/{NAMESPACE}/rabbitmqclusters/{CLUSTER}")
    return found.get("AllReplicasReady") == "True" and found.get("ClusterAvailable") == "True"


@pytest.fixture(scope="module")
def management(node, rabbitmq_release):
    """GET on RabbitMQ's management API through the cluster's Service (the host reaches ClusterIPs
    through kube-proxy), as the operator's default user."""
    kube = node.kube
    wait_for(f"RabbitmqCluster {CLUSTER} AllReplicasReady and ClusterAvailable", lambda: rabbitmq_cluster_ready(kube),
             420, lambda: describe(kube))
    print(f"\nRabbitmqCluster ready {time.monotonic() - rabbitmq_release:.0f} s after helm install")
    service = kube.get(f"/api/v1/namespaces/{NAMESPACE}/services/{CLUSTER}")
    secret = kube.get(f"/api/v1/namespaces/{NAMESPACE}/secrets/{CLUSTER}-default-user")
    user, password = (base64.b64decode(secret["data"][key]).decode() for key in ("username", "password"))
    base = f"http://{service['spec']['clusterIP']}:15672/api"
    token = base64.b64encode(f"{user}:{password}".encode()).decode()

    def get(path: str):
        request = urllib.request.Request(base + path, headers={"Authorization": f"Basic {token}"})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as error:
            if error.code == 404:
                return None
            raise

    wait_for("the management API through the Service", lambda: _answers(get), 60)
    return get


def _answers(get) -> bool:
    try:
        return get("/overview") is not None
    except OSError:
        return False


def queue(get, name: str):
    return get(f"/queues/{urllib.parse.quote('/', safe='')}/{name}")


def test_the_cluster_operator_runs_the_debian_image_as_user_999(node, management):
    pod = node.kube.get(f"/api/v1/namespaces/{NAMESPACE}/pods/{CLUSTER}-server-0")
    assert pod["spec"]["nodeName"] == node.name
    container = next(c for c in pod["spec"]["containers"] if c["name"] == "rabbitmq")
    assert container["image"] == image("rabbitmq")[0]
    assert pod["spec"]["securityContext"]["runAsUser"] == 999
    # the operator's setup container (sh -c cp ...) ran in the same image
    assert pod["spec"]["initContainers"][0]["image"] == image("rabbitmq")[0]
    overview = management("/overview")
    print(f"RabbitMQ {overview['rabbitmq_version']} on Erlang {overview['erlang_version']}, "
          f"cluster {overview['cluster_name']}")
    assert overview["rabbitmq_version"] == image("rabbitmq")[0].rsplit(":", 1)[1]


def test_the_topology_operator_made_the_quorum_queues_and_the_policy(node, management):
    kube = node.kube
    objects = [f"queues/{q.replace('.', '-')}" for q in WORK_QUEUES + [DEAD_LETTER_QUEUE]]
    objects += [f"bindings/{q.replace('.', '-')}" for q in WORK_QUEUES + [DEAD_LETTER_QUEUE]]
    objects.append(f"policies/{POLICY}")
    for path in objects:
        wait_for(f"{path} Ready", lambda: conditions(kube, f"/apis/rabbitmq.com/v1beta1/namespaces/{NAMESPACE}/{path}")
                 .get("Ready") == "True", 180, lambda: operator_logs(kube))
    for name in WORK_QUEUES + [DEAD_LETTER_QUEUE]:
        found = wait_for(f"queue {name} in RabbitMQ", lambda: queue(management, name), 60)
        assert found["type"] == "quorum" and found["durable"], found
    for name in WORK_QUEUES:
        # a queue's policy shows once the management plugin's statistics of it came in
        found = wait_for(f"policy {POLICY} on {name}", lambda: (q := queue(management, name)).get("policy") == POLICY and q,
                         60, lambda: json.dumps(queue(management, name), indent=1))
        assert found["effective_policy_definition"]["dead-letter-exchange"] == DEAD_LETTER_QUEUE, found
        assert found["arguments"]["x-dead-letter-exchange"] == DEAD_LETTER_QUEUE, found
        print(f"{name}: {found['type']}, policy {found['policy']}, arguments {found['arguments']}")
    assert queue(management, DEAD_LETTER_QUEUE).get("policy") in (None, ""), "the policy matches the dead-letter queue"
    bindings = management(f"/exchanges/{urllib.parse.quote('/', safe='')}/herald.push/bindings/source")
    assert {(b["destination"], b["routing_key"]) for b in bindings} == {(q, q) for q in WORK_QUEUES}, bindings
    dead = management(f"/exchanges/{urllib.parse.quote('/', safe='')}/herald.dead/bindings/source")
    assert [b["destination"] for b in dead] == [DEAD_LETTER_QUEUE], dead


def test_deleting_a_queue_object_deletes_the_queue(node, management):
    """The queues are the topology operator's: without its Queue object a queue is gone."""
    name = WORK_QUEUES[-1]
    assert queue(management, name) is not None
    node.kube.kubectl("delete", "-n", NAMESPACE, f"queues.rabbitmq.com/{name.replace('.', '-')}", "--timeout=60s")
    wait_for(f"queue {name} to be deleted from RabbitMQ", lambda: queue(management, name) is None, 60,
             lambda: operator_logs(node.kube))


def test_the_operators_run_non_root_on_a_read_only_root(node, operators):
    pods = json.loads(node.kube.kubectl("get", "pods", "-n", OPERATORS_NAMESPACE, "-o", "json"))["items"]
    assert len(pods) == 2, [p["metadata"]["name"] for p in pods]
    for pod in pods:
        assert pod["spec"]["nodeName"] == node.name
        assert pod["spec"]["securityContext"]["runAsUser"] == 65532
        assert pod["spec"]["containers"][0]["securityContext"]["readOnlyRootFilesystem"] is True
