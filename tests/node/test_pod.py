"""A pod with the charts' security settings really runs on the real node: non-root 65532, read-only
root filesystem, every capability dropped, an emptyDir, a CPU limit that its cgroup enforces; a
ClusterIP Service answers from the host through kube-proxy, an in-cluster name resolves through
CoreDNS from a pod, and `kubectl logs` and `kubectl exec` reach the kubelet."""

from __future__ import annotations

import glob
import json
import socket
import ssl
import subprocess
import urllib.parse

import pytest

from sharedcluster import NODE_NAME

NAMESPACE = "default"
GREETING = "hello from the real node"


def web_pod(image: str) -> dict:
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web-server", "namespace": NAMESPACE, "labels": {"app": "web"}},
        "spec": {
            "nodeName": NODE_NAME,
            "securityContext": {"runAsUser": 65532, "runAsGroup": 65532, "runAsNonRoot": True},
            "containers": [{
                "name": "web", "image": image, "imagePullPolicy": "Never",
                "command": ["/bin/sh", "-c",
                            f"echo '{GREETING}' > /data/index.html && echo serving && exec httpd -f -p 8080 -h /data"],
                "ports": [{"containerPort": 8080}],
                "securityContext": {"readOnlyRootFilesystem": True, "allowPrivilegeEscalation": False,
                                    "capabilities": {"drop": ["ALL"]}},
                "resources": {"limits": {"cpu": "200m", "memory": "32Mi"}},
                "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                "readinessProbe": {"tcpSocket": {"port": 8080}, "periodSeconds": 1},
            }],
            "volumes": [{"name": "data", "emptyDir": {}}],
        },
    }


WEB_SERVICE = {
    "apiVersion": "v1", "kind": "Service",
    "metadata": {"name": "web", "namespace": NAMESPACE},
    "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 8080}]},
}


@pytest.fixture(scope="module")
def web(node, busybox_image):
    node.kube.apply([web_pod(busybox_image), WEB_SERVICE])
    node.kube.kubectl("wait", "-n", NAMESPACE, "--for=condition=Ready", "pod/web-server", "--timeout=120s")
    return json.loads(node.kube.kubectl("get", "-n", NAMESPACE, "pod", "web-server", "-o", "json"))


def exec_in_web(node, *command: str) -> subprocess.CompletedProcess:
    return subprocess.run(["kubectl", "--kubeconfig", str(node.kube.kubeconfig), "exec", "-n", NAMESPACE, "web-server",
                           "--", *command], capture_output=True, text=True, timeout=60)


def test_the_pod_runs_as_65532_on_a_read_only_root_with_no_capabilities(node, web):
    assert exec_in_web(node, "id", "-u").stdout.strip() == "65532"
    assert exec_in_web(node, "touch", "/written").returncode != 0, "the root filesystem is writable"
    assert exec_in_web(node, "touch", "/data/written").returncode == 0, "the emptyDir is not writable"
    capabilities = {line.split(":")[0]: line.split(":")[1].strip()
                    for line in exec_in_web(node, "cat", "/proc/self/status").stdout.splitlines() if line.startswith("Cap")}
    assert capabilities["CapEff"] == "0000000000000000" and capabilities["CapBnd"] == "0000000000000000", capabilities
    assert web["status"]["podIP"].startswith("10.244.0."), web["status"]


def cpu_quota_millicores(pod: dict) -> int:
    """The CFS quota of the pod's first container's cgroup, in millicores of its period."""
    container_id = pod["status"]["containerStatuses"][0]["containerID"].split("://")[1]
    quotas = glob.glob(f"/sys/fs/cgroup/cpu*/kubepods/**/pod{pod['metadata']['uid']}/{container_id}/cpu.cfs_quota_us",
                       recursive=True)
    assert quotas, f"no cgroup of container {container_id}"
    period = int(open(quotas[0].replace("cfs_quota_us", "cfs_period_us")).read())
    return int(open(quotas[0]).read()) * 1000 // period


def test_the_cpu_limit_is_the_cgroup_quota(web):
    assert cpu_quota_millicores(web) == 200


def test_a_cpu_limit_lowered_in_place_is_the_running_containers_new_quota(node, busybox_image):
    # What the scale-out runner does to JVMs warmed at a large limit (herald_load.kube): the same
    # container keeps running, and its cgroup is what now limits it (InPlacePodVerticalScaling).
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "resized", "namespace": NAMESPACE},
           "spec": {"nodeName": NODE_NAME, "terminationGracePeriodSeconds": 0,
                    "containers": [{"name": "idle", "image": busybox_image, "imagePullPolicy": "Never",
                                    "command": ["sleep", "3600"],
                                    "resources": {"requests": {"cpu": "50m", "memory": "16Mi"},
                                                  "limits": {"cpu": "500m", "memory": "32Mi"}}}]}}
    kubectl = ("-n", NAMESPACE)
    node.kube.apply([pod])
    try:
        node.kube.kubectl(*kubectl, "wait", "--for=condition=Ready", "pod/resized", "--timeout=120s")
        before = json.loads(node.kube.kubectl(*kubectl, "get", "pod", "resized", "-o", "json"))
        assert cpu_quota_millicores(before) == 500
        node.kube.kubectl(*kubectl, "patch", "pod/resized", "--type=json", "-p", json.dumps(
            [{"op": "replace", "path": "/spec/containers/0/resources/limits/cpu", "value": "50m"}]))
        node.kube.kubectl(*kubectl, "wait", "--for=jsonpath={.status.containerStatuses[0].resources.limits.cpu}=50m",
                          "pod/resized", "--timeout=120s")
        after = json.loads(node.kube.kubectl(*kubectl, "get", "pod", "resized", "-o", "json"))
        assert cpu_quota_millicores(after) == 50
        assert after["status"]["containerStatuses"][0]["containerID"] == before["status"]["containerStatuses"][0]["containerID"]
        assert after["status"]["containerStatuses"][0]["restartCount"] == 0
        assert after["status"]["qosClass"] == "Burstable"
    finally:
        node.kube.kubectl(*kubectl, "delete", "pod", "resized", "--wait=false")


def test_logs_show_what_the_container_printed(node, web):
    assert node.kube.kubectl("logs", "-n", NAMESPACE, "web-server").strip() == "serving"


def test_a_cluster_ip_service_answers_from_the_host_through_kube_proxy(node, web):
    service = json.loads(node.kube.kubectl("get", "-n", NAMESPACE, "service", "web", "-o", "json"))
    address = service["spec"]["clusterIP"]
    node.kube.kubectl("wait", "-n", NAMESPACE, "--for=jsonpath={.subsets[0].addresses[0].ip}", "endpoints/web",
                      "--timeout=60s")
    # kube-proxy's rules appear shortly after the endpoints do: retry until the answer comes.
    result = subprocess.run(["curl", "-sf", "--retry", "30", "--retry-delay", "1", "--retry-all-errors",
                             "--max-time", "5", f"http://{address}/index.html"], capture_output=True, text=True)
    assert result.stdout.strip() == GREETING, result


def test_an_in_cluster_name_resolves_from_a_pod(node, web):
    service = json.loads(node.kube.kubectl("get", "-n", NAMESPACE, "service", "web", "-o", "json"))
    answer = exec_in_web(node, "nslookup", f"web.{NAMESPACE}.svc.cluster.local")
    assert service["spec"]["clusterIP"] in answer.stdout, answer
    # the pod's resolver is the cluster's DNS, with the cluster's search path
    resolv = exec_in_web(node, "cat", "/etc/resolv.conf").stdout
    assert "nameserver 10.244.0.1" in resolv and f"search {NAMESPACE}.svc.cluster.local" in resolv, resolv
    short = exec_in_web(node, "wget", "-qO-", "http://web/index.html")
    assert short.stdout.strip() == GREETING, short


def test_a_pod_reaches_the_api_server_through_the_kubernetes_service_and_can_verify_it(node, web):
    # what in-cluster clients (operators, RabbitMQ's peer discovery) do: the kubernetes Service by name
    version = exec_in_web(node, "wget", "-qO-", "https://kubernetes.default.svc/version")
    assert json.loads(version.stdout)["gitVersion"].startswith("v1."), version
    # ... and they verify the server with the service account's ca.crt, for that name
    ca = exec_in_web(node, "cat", "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt").stdout
    context = ssl.create_default_context(cadata=ca)
    server = urllib.parse.urlsplit(node.kube.server)
    with socket.create_connection((server.hostname, server.port), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname="kubernetes.default.svc") as tls:
            assert tls.version() is not None
