"""KEDA in the shared test cluster (tests/sharedcluster.py) scales real pods on the real node.

KEDA's operator and metrics adapter run as host processes (conftest `keda`); a ScaledObject with
KEDA's metrics-api trigger reads a number from an HTTP server in a pod, at its Service's in-cluster
name, so each hop of the gateway scenario's path is here without Herald: the operator resolves a
cluster.local name through the cluster's DNS and reaches a ClusterIP, the API server's aggregation
layer reaches the adapter, the HPA (synced every 2 s) scales a Deployment, and the kubelet starts and
stops its containers. Runs on the shared cluster only (HERALD_TEST_CLUSTER).
"""

from __future__ import annotations

import json
import time

import pytest

from sharedcluster import REAL_NODE_TAINT, attach
from realnode import REAL_NODE_LABEL

pytestmark = pytest.mark.skipif(attach() is None, reason="runs on the shared test cluster (HERALD_TEST_CLUSTER)")

NAMESPACE = "keda-check"
PER_REPLICA = 10
MAX_REPLICAS = 3
SECURITY = {"readOnlyRootFilesystem": True, "allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}


def on_real_node(spec: dict) -> dict:
    key, rest = REAL_NODE_TAINT.split("=", 1)
    value, effect = rest.split(":")
    return {**spec, "nodeSelector": {REAL_NODE_LABEL: "true"},
            "tolerations": [{"key": key, "operator": "Equal", "value": value, "effect": effect}],
            "securityContext": {"runAsUser": 65532, "runAsGroup": 65532, "runAsNonRoot": True}}


def objects(image: str) -> list[dict]:
    metric_server = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "metric", "namespace": NAMESPACE, "labels": {"app": "metric"}},
        "spec": on_real_node({
            "containers": [{
                "name": "httpd", "image": image, "imagePullPolicy": "Never",
                "command": ["/bin/sh", "-c", 'echo \'{"depth": 0}\' > /data/depth.json && exec httpd -f -p 8080 -h /data'],
                "securityContext": SECURITY, "resources": {"requests": {"cpu": "10m"}, "limits": {"memory": "16Mi"}},
                "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                "readinessProbe": {"tcpSocket": {"port": 8080}, "periodSeconds": 1}}],
            "volumes": [{"name": "data", "emptyDir": {}}]}),
    }
    worker = {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "worker", "namespace": NAMESPACE},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "worker"}},
                 "template": {"metadata": {"labels": {"app": "worker"}}, "spec": on_real_node({
                     "terminationGracePeriodSeconds": 5,
                     "containers": [{
                         "name": "worker", "image": image, "imagePullPolicy": "Never",
                         # Ready once started (no probe); SIGTERM ends it at once.
                         "command": ["/bin/sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"],
                         "securityContext": SECURITY,
                         "resources": {"requests": {"cpu": "10m"}, "limits": {"memory": "16Mi"}}}]})}},
    }
    scaled_object = {
        "apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject",
        "metadata": {"name": "worker", "namespace": NAMESPACE},
        "spec": {"scaleTargetRef": {"name": "worker"}, "minReplicaCount": 1, "maxReplicaCount": MAX_REPLICAS,
                 "pollingInterval": 1,
                 "advanced": {"horizontalPodAutoscalerConfig": {"behavior": {
                     "scaleDown": {"stabilizationWindowSeconds": 0,
                                   "policies": [{"type": "Percent", "value": 100, "periodSeconds": 1}]}}}},
                 "triggers": [{"type": "metrics-api", "metadata": {
                     # The name as a pod would use it: only the cluster's DNS knows it.
                     "url": f"http://metric.{NAMESPACE}.svc:8080/depth.json",
                     "valueLocation": "depth", "targetValue": str(PER_REPLICA)}}]},
    }
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "metric", "namespace": NAMESPACE},
               "spec": {"selector": {"app": "metric"}, "ports": [{"port": 8080}]}}
    return [metric_server, service, worker, scaled_object]


@pytest.fixture(scope="module")
def scaled(node, busybox_image, keda):
    kube = node.kube
    kube.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}])
    try:
        kube.apply(objects(busybox_image))
        kube.kubectl("wait", "-n", NAMESPACE, "--for=condition=Ready", "pod/metric", "--timeout=120s")
        kube.kubectl("rollout", "status", "-n", NAMESPACE, "deployment/worker", "--timeout=120s")
        yield kube
    finally:
        # The ScaledObject first, while the operator that removes its finalizer still runs.
        kube.kubectl("delete", "scaledobject", "worker", "-n", NAMESPACE, "--ignore-not-found", "--timeout=60s")
        kube.kubectl("delete", "namespace", NAMESPACE, "--ignore-not-found", "--timeout=120s")


def set_metric(kube, value: int) -> None:
    kube.kubectl("exec", "-n", NAMESPACE, "metric", "--", "sh", "-c",
                 f"echo '{{\"depth\": {value}}}' > /data/depth.json")


def workers(kube) -> list[dict]:
    return json.loads(kube.kubectl("get", "pods", "-n", NAMESPACE, "-l", "app=worker", "-o", "json"))["items"]


def ready_workers(kube) -> list[dict]:
    return [p for p in workers(kube) if p["metadata"].get("deletionTimestamp") is None and any(
        c["type"] == "Ready" and c["status"] == "True" for c in p.get("status", {}).get("conditions", []))]


def poll(what: str, check, timeout: float):
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(1)


def external_metric(kube) -> float | None:
    hpa = kube.get(f"/apis/autoscaling/v2/namespaces/{NAMESPACE}/horizontalpodautoscalers/keda-hpa-worker")
    if hpa is None:
        return None
    current = (hpa.get("status", {}).get("currentMetrics") or [{}])[0].get("external", {}).get("current", {})
    value = current.get("averageValue") or current.get("value")
    return None if value is None else float(value.rstrip("m")) / (1000 if value.endswith("m") else 1)


def test_keda_scales_real_pods_up_and_down_on_an_in_cluster_metric(scaled):
    kube = scaled
    poll("the HPA KEDA makes, reading the metric (0) through the aggregation layer",
         lambda: external_metric(kube) == 0, 120)
    assert len(ready_workers(kube)) == 1

    set_metric(kube, PER_REPLICA * MAX_REPLICAS - 5)  # 25: ceil(25 / 10) = 3 replicas
    pods = poll(f"{MAX_REPLICAS} worker pods Ready", lambda: (p := ready_workers(kube)) and len(p) == MAX_REPLICAS and p, 120)
    assert all(p["spec"]["nodeName"] == attach().name for p in pods), "worker pods not on the real node"
    assert all(s.get("containerID", "").startswith("containerd://") for p in pods
               for s in p["status"]["containerStatuses"]), "containers not started by the node's containerd"

    set_metric(kube, 0)
    poll("the workers back at one pod", lambda: len(workers(kube)) == 1 and len(ready_workers(kube)) == 1, 120)
