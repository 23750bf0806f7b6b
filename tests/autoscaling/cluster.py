"""The network namespace that gives KEDA's metrics adapter a non-loopback address, the
certificates, the control plane's settings for the aggregation layer (the control plane itself is
tests/testbed.py's), and KEDA itself."""

from __future__ import annotations

import base64
import subprocess
from dataclasses import dataclass
from pathlib import Path

from herald_load.processes import ChildProcess, free_port, port_open, wait_until
from testbed import Kube, run


# ------------------------------------------------------------------ network namespace

@dataclass
class NetNs:
    """A namespace of its own with a veth pair: host side `host_ip`, namespace side `ns_ip`."""

    root: Path
    name: str
    host_ip: str = ""
    ns_ip: str = ""

    def up(self) -> "NetNs":
        line = run(["bash", str(self.root / "scripts/k8s/netns.sh"), "up", self.name]).strip().splitlines()[-1]
        fields = dict(part.split("=", 1) for part in line.split())
        self.host_ip, self.ns_ip = fields["HOST_IP"], fields["NS_IP"]
        return self

    def down(self) -> None:
        subprocess.run(["bash", str(self.root / "scripts/k8s/netns.sh"), "down", self.name], capture_output=True)

    def exec_prefix(self) -> list[str]:
        return ["ip", "netns", "exec", self.name]


# ------------------------------------------------------------------ certificates

def _openssl(*args: str, cwd: Path) -> None:
    run(["openssl", *args], cwd=cwd)


def make_ca(directory: Path, name: str) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-keyout", f"{name}.key", "-out", f"{name}.crt", "-days", "2", "-subj", f"/CN=herald-test-{name}",
             "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
             cwd=directory)


def make_cert(directory: Path, ca: str, name: str, common_name: str, usages: str, sans: list[str] | None = None) -> None:
    """A leaf certificate `name`.crt/.key signed by `ca` (both in `directory`)."""
    extensions = ["basicConstraints=CA:FALSE", "keyUsage=critical,digitalSignature,keyEncipherment",
                  f"extendedKeyUsage={usages}"]
    if sans:
        extensions.append("subjectAltName=" + ",".join(sans))
    (directory / f"{name}.ext").write_text("\n".join(extensions) + "\n")
    _openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", f"{name}.key",
             "-out", f"{name}.csr", "-subj", f"/CN={common_name}", cwd=directory)
    _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.crt", "-CAkey", f"{ca}.key", "-CAcreateserial",
             "-out", f"{name}.crt", "-days", "2", "-extfile", f"{name}.ext", cwd=directory)


# ------------------------------------------------------------------ control plane

def aggregation_settings(bind_address: str, front_proxy: Path, hpa_sync_period: str) -> dict[str, str]:
    """The testbed's settings for a control plane whose aggregation layer reaches KEDA's metrics
    adapter (the front proxy's certificates in `front_proxy`)."""
    apiserver_args = [
        "--enable-aggregator-routing=true",
        f"--requestheader-client-ca-file={front_proxy / 'front-proxy-ca.crt'}",
        "--requestheader-allowed-names=front-proxy-client",
        "--requestheader-username-headers=X-Remote-User",
        "--requestheader-group-headers=X-Remote-Group",
        "--requestheader-extra-headers-prefix=X-Remote-Extra-",
        f"--proxy-client-cert-file={front_proxy / 'front-proxy-client.crt'}",
        f"--proxy-client-key-file={front_proxy / 'front-proxy-client.key'}",
    ]
    return {"HERALD_K8S_BIND_ADDRESS": bind_address, "HERALD_K8S_HPA_SYNC_PERIOD": hpa_sync_period,
            "HERALD_K8S_APISERVER_ARGS": " ".join(apiserver_args)}


# ------------------------------------------------------------------ KEDA

@dataclass
class Keda:
    """KEDA's operator (a host process; its gRPC metrics service bound to the host side of the
    veth pair) and its metrics adapter (in the network namespace), registered as the
    v1beta1.external.metrics.k8s.io APIService through a Service whose Endpoints are the adapter's
    namespace address."""

    bin: Path
    work: Path
    kube: Kube
    netns: NetNs
    operator: ChildProcess | None = None
    adapter: ChildProcess | None = None

    ADAPTER_PORT = 6443
    NAMESPACE = "keda"
    SERVICE = "keda-metrics-apiserver"

    def certificates(self) -> Path:
        certs = self.work / "keda-certs"
        make_ca(certs, "ca")
        make_cert(certs, "ca", "tls", "keda", "serverAuth,clientAuth", [
            f"IP:{self.netns.host_ip}", f"IP:{self.netns.ns_ip}", "IP:127.0.0.1",
            f"DNS:{self.SERVICE}.{self.NAMESPACE}.svc", f"DNS:keda-operator.{self.NAMESPACE}.svc", "DNS:localhost"])
        return certs

    def start(self) -> None:
        certs = self.certificates()
        self.kube.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": self.NAMESPACE}}])
        env = {"KUBECONFIG": str(self.kube.kubeconfig), "WATCH_NAMESPACE": "", "POD_NAMESPACE": self.NAMESPACE,
               "KEDA_CLUSTER_OBJECT_NAMESPACE": self.NAMESPACE, "KEDA_HTTP_DEFAULT_TIMEOUT": "3000"}
        grpc_port, health_port = free_port(), free_port()
        self.operator = ChildProcess("keda-operator", [
            str(self.bin / "keda-operator"), "--leader-elect=false", "--zap-log-level=info", "--zap-encoder=console",
            f"--metrics-bind-address=127.0.0.1:{free_port()}", f"--health-probe-bind-address=127.0.0.1:{health_port}",
            f"--metrics-service-bind-address={self.netns.host_ip}:{grpc_port}", f"--cert-dir={certs}",
            f"--ca-dir={certs}"], self.work / "logs" / "keda-operator.log", env=env)
        self.operator.await_ready(lambda: port_open(self.netns.host_ip, grpc_port), 120)

        kubeconfig = str(self.kube.kubeconfig)
        self.adapter = ChildProcess("keda-adapter", [
            *self.netns.exec_prefix(), str(self.bin / "keda-adapter"),
            f"--secure-port={self.ADAPTER_PORT}", f"--bind-address={self.netns.ns_ip}",
            f"--cert-dir={certs}", f"--tls-cert-file={certs / 'tls.crt'}", f"--tls-private-key-file={certs / 'tls.key'}",
            f"--lister-kubeconfig={kubeconfig}", f"--authentication-kubeconfig={kubeconfig}",
            f"--authorization-kubeconfig={kubeconfig}", f"--metrics-service-address={self.netns.host_ip}:{grpc_port}",
            f"--port={free_port()}", "--v=1"], self.work / "logs" / "keda-adapter.log", env=env)

        ca_bundle = base64.b64encode((certs / "ca.crt").read_bytes()).decode()
        self.kube.apply([
            {"apiVersion": "v1", "kind": "Service",
             "metadata": {"name": self.SERVICE, "namespace": self.NAMESPACE},
             "spec": {"ports": [{"name": "https", "port": 443, "targetPort": self.ADAPTER_PORT}]}},
            {"apiVersion": "v1", "kind": "Endpoints",
             "metadata": {"name": self.SERVICE, "namespace": self.NAMESPACE},
             "subsets": [{"addresses": [{"ip": self.netns.ns_ip}],
                          "ports": [{"name": "https", "port": self.ADAPTER_PORT}]}]},
            {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
             "metadata": {"name": "v1beta1.external.metrics.k8s.io"},
             "spec": {"group": "external.metrics.k8s.io", "version": "v1beta1", "caBundle": ca_bundle,
                      "service": {"name": self.SERVICE, "namespace": self.NAMESPACE, "port": 443},
                      "groupPriorityMinimum": 100, "versionPriority": 100}},
        ])
        # Available = the API server itself reached the adapter at the namespace address.
        self.adapter.await_ready(self.api_service_available, 180)
        wait_until(lambda: self.kube.get("/apis/external.metrics.k8s.io/v1beta1") is not None, 60,
                   "external metrics API served through the aggregation layer")

    def api_service_available(self) -> bool:
        service = self.kube.get("/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.external.metrics.k8s.io") or {}
        return any(c.get("type") == "Available" and c.get("status") == "True"
                   for c in service.get("status", {}).get("conditions", []))

    def stop(self) -> None:
        for proc in (self.adapter, self.operator):
            if proc is not None:
                proc.stop(15)
