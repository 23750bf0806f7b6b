"""KEDA's operator and metrics adapter as host processes against the shared test cluster, and where they
run: the adapter at a non-loopback address the API server reaches (the real node's bridge address),
the operator where in-cluster names resolve (cluster_dns_prefix). The aggregation layer's
certificates and flags are tests/aggregationlayer.py's."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from pathlib import Path

from herald_load.processes import ChildProcess, free_port, port_open, wait_until
from aggregationlayer import make_ca, make_cert
from testbed import Kube


# ------------------------------------------------------------------ where KEDA runs

def cluster_dns_prefix(directory: Path, nameserver: str) -> list[str]:
    """A command prefix that runs a host process in a mount namespace of its own whose
    /etc/resolv.conf is a pod's (`nameserver`, the cluster.local search list, ndots 5): the process
    resolves in-cluster names (a Service's name.namespace.svc) through the cluster's DNS, while the
    rest of the machine keeps its resolver."""
    directory.mkdir(parents=True, exist_ok=True)
    resolv_conf = directory / "resolv.conf"
    resolv_conf.write_text(f"nameserver {nameserver}\nsearch svc.cluster.local cluster.local\noptions ndots:5\n")
    return ["unshare", "--mount", "--propagation", "private", "--",
            "sh", "-c", 'mount --bind "$0" /etc/resolv.conf && exec "$@"', str(resolv_conf)]


# ------------------------------------------------------------------ KEDA

@dataclass
class Keda:
    """KEDA's operator and its metrics adapter, host processes, registered as the
    v1beta1.external.metrics.k8s.io APIService through a Service whose Endpoints are the adapter's
    address `adapter_ip` (not loopback: the API server refuses such Endpoints). The operator serves
    the adapter its metrics over gRPC at `metrics_service_ip`; the operator runs behind
    `operator_prefix` (a mount namespace with the cluster's DNS). stop() takes the APIService
    away again, so a cluster that outlives the scenario serves API discovery without it."""

    bin: Path
    work: Path
    kube: Kube
    adapter_ip: str
    metrics_service_ip: str
    operator_prefix: list[str] = field(default_factory=list)
    operator: ChildProcess | None = None
    adapter: ChildProcess | None = None

    NAMESPACE = "keda"
    SERVICE = "keda-metrics-apiserver"
    API_SERVICE = "v1beta1.external.metrics.k8s.io"

    def certificates(self) -> Path:
        certs = self.work / "keda-certs"
        make_ca(certs, "ca")
        make_cert(certs, "ca", "tls", "keda", "serverAuth,clientAuth", [
            f"IP:{self.adapter_ip}", f"IP:{self.metrics_service_ip}", "IP:127.0.0.1",
            f"DNS:{self.SERVICE}.{self.NAMESPACE}.svc", f"DNS:keda-operator.{self.NAMESPACE}.svc", "DNS:localhost"])
        return certs

    def start(self) -> None:
        certs = self.certificates()
        self.kube.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": self.NAMESPACE}}])
        env = {"KUBECONFIG": str(self.kube.kubeconfig), "WATCH_NAMESPACE": "", "POD_NAMESPACE": self.NAMESPACE,
               "KEDA_CLUSTER_OBJECT_NAMESPACE": self.NAMESPACE, "KEDA_HTTP_DEFAULT_TIMEOUT": "3000"}
        grpc_port, health_port, adapter_port = free_port(), free_port(), free_port()
        self.operator = ChildProcess("keda-operator", [
            *self.operator_prefix, str(self.bin / "keda-operator"), "--leader-elect=false",
            "--zap-log-level=info", "--zap-encoder=console",
            f"--metrics-bind-address=127.0.0.1:{free_port()}", f"--health-probe-bind-address=127.0.0.1:{health_port}",
            f"--metrics-service-bind-address={self.metrics_service_ip}:{grpc_port}", f"--cert-dir={certs}",
            f"--ca-dir={certs}"], self.work / "logs" / "keda-operator.log", env=env)
        self.operator.await_ready(lambda: port_open(self.metrics_service_ip, grpc_port), 120)

        kubeconfig = str(self.kube.kubeconfig)
        self.adapter = ChildProcess("keda-adapter", [
            str(self.bin / "keda-adapter"),
            f"--secure-port={adapter_port}", f"--bind-address={self.adapter_ip}",
            f"--cert-dir={certs}", f"--tls-cert-file={certs / 'tls.crt'}", f"--tls-private-key-file={certs / 'tls.key'}",
            f"--lister-kubeconfig={kubeconfig}", f"--authentication-kubeconfig={kubeconfig}",
            f"--authorization-kubeconfig={kubeconfig}", f"--metrics-service-address={self.metrics_service_ip}:{grpc_port}",
            f"--port={free_port()}", "--v=1"], self.work / "logs" / "keda-adapter.log", env=env)

        ca_bundle = base64.b64encode((certs / "ca.crt").read_bytes()).decode()
        self.kube.apply([
            {"apiVersion": "v1", "kind": "Service",
             "metadata": {"name": self.SERVICE, "namespace": self.NAMESPACE},
             "spec": {"ports": [{"name": "https", "port": 443, "targetPort": adapter_port}]}},
            {"apiVersion": "v1", "kind": "Endpoints",
             "metadata": {"name": self.SERVICE, "namespace": self.NAMESPACE},
             "subsets": [{"addresses": [{"ip": self.adapter_ip}],
                          "ports": [{"name": "https", "port": adapter_port}]}]},
            {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
             "metadata": {"name": self.API_SERVICE},
             "spec": {"group": "external.metrics.k8s.io", "version": "v1beta1", "caBundle": ca_bundle,
                      "service": {"name": self.SERVICE, "namespace": self.NAMESPACE, "port": 443},
                      "groupPriorityMinimum": 100, "versionPriority": 100}},
        ])
        # Available = the API server itself reached the adapter at its address.
        self.adapter.await_ready(self.api_service_available, 180)
        wait_until(lambda: self.kube.get("/apis/external.metrics.k8s.io/v1beta1") is not None, 60,
                   "external metrics API served through the aggregation layer")

    def api_service_available(self) -> bool:
        service = self.kube.get(f"/apis/apiregistration.k8s.io/v1/apiservices/{self.API_SERVICE}") or {}
        return any(c.get("type") == "Available" and c.get("status") == "True"
                   for c in service.get("status", {}).get("conditions", []))

    def stop(self) -> None:
        """Unregisters the adapter (an APIService whose server is gone breaks API discovery: kubectl
        and helm complain about every call), removes its namespace, stops both processes."""
        try:
            self.kube.kubectl("delete", "apiservice", self.API_SERVICE, "--ignore-not-found")
            self.kube.kubectl("delete", "namespace", self.NAMESPACE, "--ignore-not-found", "--timeout=60s")
        finally:
            for proc in (self.adapter, self.operator):
                if proc is not None:
                    proc.stop(15)
