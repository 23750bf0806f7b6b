"""A Prometheus for the test clusters: Debian's /usr/bin/prometheus scraping what the ServiceMonitors
in a cluster select, the way the prometheus-operator (v0.78) would configure it, and a small client
of its HTTP API. tests/dashboards.py checks the Grafana dashboards' and the alert rules' queries on it.

The scrape configuration follows the operator's (pkg/prometheus/promcfg.go,
generateServiceMonitorConfig, role endpoints): one job `serviceMonitor/<namespace>/<name>/<endpoint
index>` per endpoint of a ServiceMonitor, discovery in the namespaces of its namespaceSelector, and
relabel rules that keep the Services its selector matches and the endpoint's port, then set the
labels the operator sets: namespace, service, pod, container, node, job (the Service's name, or its
jobLabel), endpoint (the port's name); instance stays Prometheus' own (the scraped address). Left
out: the operator's sharding rules (one shard keeps every target) and what needs Secrets
(basicAuth, oauth2, authorization, bearerTokenSecret, TLS files): a ServiceMonitor using them is
refused with an error that names the field.

Discovery: Debian builds its prometheus package without Kubernetes service discovery (`promtool
check config` of a kubernetes_sd_configs job: "field kubernetes_sd_configs not found"). So each job
discovers through http_sd_configs from `EndpointsDiscovery`, a loopback server in the test process
that reads Endpoints, Services and Pods from the API server (tests/testbed.py's Kube) and answers
with the target groups and __meta_kubernetes_* labels that Prometheus' own discovery (role
endpoints, discovery/kubernetes/endpoints.go, pod.go, service.go) gives: the selection itself stays
Prometheus' relabeling, by the operator's rules.

Standard library and PyYAML (tests/requirements.txt); PyYAML writes the configuration.
"""

from __future__ import annotations

import http.server
import json
import os
import re
import signal
import subprocess
import threading
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import yaml

from realnode import free_port, wait_for
from testbed import Kube

PROMETHEUS = "/usr/bin/prometheus"  # Debian's `prometheus` package (scripts/install-deps.sh)
SERVICE_MONITORS = "/apis/monitoring.coreos.com/v1/servicemonitors"
PROMETHEUS_RULES = "/apis/monitoring.coreos.com/v1/prometheusrules"
DISCOVERY_REFRESH = "2s"  # how often Prometheus asks EndpointsDiscovery (its own discovery watches)
# The operator's defaults for a Prometheus object that sets neither.
DEFAULT_INTERVAL = "30s"
DEFAULT_EVALUATION_INTERVAL = "30s"
# Endpoint fields that need Secrets from the cluster, which this configuration does not read.
SECRET_FIELDS = ("basicAuth", "oauth2", "authorization", "bearerTokenSecret")
# A relabeling of the CRD (camelCase) -> Prometheus' key.
RELABEL_KEYS = {"sourceLabels": "source_labels", "separator": "separator", "targetLabel": "target_label",
                "regex": "regex", "modulus": "modulus", "replacement": "replacement", "action": "action"}


def sanitized(name: str) -> str:
    """A Kubernetes label name as it appears in a __meta_kubernetes_*_label_<name> label."""
    return re.sub(r"[^a-zA-Z0-9_]", "_", name)


def service_monitors(kube: Kube) -> list[dict]:
    """Every ServiceMonitor in the cluster, in a stable order."""
    listed = kube.get(SERVICE_MONITORS) or {"items": []}
    return sorted(listed["items"], key=lambda m: (m["metadata"]["namespace"], m["metadata"]["name"]))


def prometheus_rules(kube: Kube) -> list[dict]:
    listed = kube.get(PROMETHEUS_RULES) or {"items": []}
    return sorted(listed["items"], key=lambda r: (r["metadata"]["namespace"], r["metadata"]["name"]))


def selector_relabelings(selector: dict) -> list[dict]:
    """Keep/drop rules on the Service's labels: the ServiceMonitor's label selector."""
    rules = []
    for key in sorted(selector.get("matchLabels") or {}):
        rules.append({"action": "keep", "regex": f"({selector['matchLabels'][key]});true",
                      "source_labels": [f"__meta_kubernetes_service_label_{sanitized(key)}",
                                        f"__meta_kubernetes_service_labelpresent_{sanitized(key)}"]})
    for expression in selector.get("matchExpressions") or []:
        key, operator = sanitized(expression["key"]), expression["operator"]
        both = [f"__meta_kubernetes_service_label_{key}", f"__meta_kubernetes_service_labelpresent_{key}"]
        present = [f"__meta_kubernetes_service_labelpresent_{key}"]
        values = "|".join(expression.get("values") or [])
        rule = {"In": {"action": "keep", "source_labels": both, "regex": f"({values});true"},
                "NotIn": {"action": "drop", "source_labels": both, "regex": f"({values});true"},
                "Exists": {"action": "keep", "source_labels": present, "regex": "true"},
                "DoesNotExist": {"action": "drop", "source_labels": present, "regex": "true"}}.get(operator)
        if rule is None:
            raise ValueError(f"matchExpressions operator {operator!r} is not a label selector operator")
        rules.append(rule)
    return rules


def port_relabelings(endpoint: dict) -> list[dict]:
    """Keep the endpoint's port (by the Service port's name, or the container port's name/number)."""
    if endpoint.get("port"):
        return [{"action": "keep", "source_labels": ["__meta_kubernetes_endpoint_port_name"],
                 "regex": endpoint["port"]}]
    target_port = endpoint.get("targetPort")
    if isinstance(target_port, str) and target_port:
        return [{"action": "keep", "source_labels": ["__meta_kubernetes_pod_container_port_name"],
                 "regex": target_port}]
    if isinstance(target_port, int) and target_port:
        return [{"action": "keep", "source_labels": ["__meta_kubernetes_pod_container_port_number"],
                 "regex": str(target_port)}]
    return []


def target_relabelings(monitor: dict, endpoint: dict) -> list[dict]:
    """The labels the operator gives every target: node or pod (from the address' target reference),
    namespace, service, pod, container; then targetLabels, podTargetLabels, job and endpoint."""
    reference = ["__meta_kubernetes_endpoint_address_target_kind", "__meta_kubernetes_endpoint_address_target_name"]
    spec = monitor["spec"]
    rules = [
        {"source_labels": reference, "separator": ";", "regex": "Node;(.*)", "replacement": "${1}",
         "target_label": "node"},
        {"source_labels": reference, "separator": ";", "regex": "Pod;(.*)", "replacement": "${1}",
         "target_label": "pod"},
        {"source_labels": ["__meta_kubernetes_namespace"], "target_label": "namespace"},
        {"source_labels": ["__meta_kubernetes_service_name"], "target_label": "service"},
        {"source_labels": ["__meta_kubernetes_pod_name"], "target_label": "pod"},
        {"source_labels": ["__meta_kubernetes_pod_container_name"], "target_label": "container"},
    ]
    if endpoint.get("filterRunning", True):
        rules.append({"action": "drop", "source_labels": ["__meta_kubernetes_pod_phase"],
                      "regex": "(Failed|Succeeded)"})
    for label in spec.get("targetLabels") or []:
        rules.append({"source_labels": [f"__meta_kubernetes_service_label_{sanitized(label)}"],
                      "target_label": sanitized(label), "regex": "(.+)", "replacement": "${1}"})
    for label in spec.get("podTargetLabels") or []:
        rules.append({"source_labels": [f"__meta_kubernetes_pod_label_{sanitized(label)}"],
                      "target_label": sanitized(label), "regex": "(.+)", "replacement": "${1}"})
    rules.append({"source_labels": ["__meta_kubernetes_service_name"], "target_label": "job",
                  "replacement": "${1}"})
    if spec.get("jobLabel"):
        rules.append({"source_labels": [f"__meta_kubernetes_service_label_{sanitized(spec['jobLabel'])}"],
                      "target_label": "job", "regex": "(.+)", "replacement": "${1}"})
    port_name = endpoint.get("port") or (str(endpoint["targetPort"]) if endpoint.get("targetPort") else "")
    if port_name:
        rules.append({"target_label": "endpoint", "replacement": port_name})
    return rules


def relabel_configs(relabelings: list[dict]) -> list[dict]:
    """The CRD's relabelings (camelCase) as Prometheus relabel_configs."""
    converted = []
    for relabeling in relabelings or []:
        unknown = relabeling.keys() - RELABEL_KEYS.keys()
        if unknown:
            raise ValueError(f"relabeling fields not supported: {sorted(unknown)}")
        rule = {RELABEL_KEYS[key]: value for key, value in relabeling.items()}
        if "action" in rule:
            rule["action"] = rule["action"].lower()
        converted.append(rule)
    return converted


def discovery(monitor: dict, discovery_url: str) -> dict:
    """http_sd_configs from EndpointsDiscovery, in the namespaces of the namespaceSelector (any:
    every namespace; none: the ServiceMonitor's own)."""
    selector = monitor["spec"].get("namespaceSelector") or {}
    namespaces = [] if selector.get("any") else (selector.get("matchNames") or [monitor["metadata"]["namespace"]])
    query = urllib.parse.urlencode({"namespace": namespaces}, doseq=True)
    return {"url": f"{discovery_url}/endpoints" + (f"?{query}" if query else ""), "refresh_interval": DISCOVERY_REFRESH}


def endpoint_job(monitor: dict, index: int, endpoint: dict, discovery_url: str) -> dict:
    """The scrape config of one endpoint of a ServiceMonitor."""
    name = f"{monitor['metadata']['namespace']}/{monitor['metadata']['name']}"
    refused = [key for key in SECRET_FIELDS if endpoint.get(key)]
    tls = endpoint.get("tlsConfig") or {}
    refused += [f"tlsConfig.{key}" for key in tls if key not in ("insecureSkipVerify", "serverName")]
    if refused:
        raise ValueError(f"ServiceMonitor {name} endpoint {index}: {', '.join(refused)} need Secrets; not supported here")
    job = {"job_name": f"serviceMonitor/{name}/{index}",
           "honor_labels": bool(endpoint.get("honorLabels", False))}
    if "honorTimestamps" in endpoint:
        job["honor_timestamps"] = bool(endpoint["honorTimestamps"])
    job["http_sd_configs"] = [discovery(monitor, discovery_url)]
    for crd_key, key in (("interval", "scrape_interval"), ("scrapeTimeout", "scrape_timeout"), ("path", "metrics_path"),
                         ("proxyUrl", "proxy_url"), ("params", "params"), ("scheme", "scheme"),
                         ("followRedirects", "follow_redirects"), ("enableHttp2", "enable_http2"),
                         ("bearerTokenFile", "bearer_token_file")):
        if endpoint.get(crd_key) not in (None, ""):
            job[key] = endpoint[crd_key]
    if tls:
        job["tls_config"] = {{"insecureSkipVerify": "insecure_skip_verify", "serverName": "server_name"}[k]: v
                             for k, v in tls.items()}
    job["relabel_configs"] = (
        # the operator keeps the configured job name for the user's relabelings
        [{"source_labels": ["job"], "target_label": "__tmp_prometheus_job_name"}]
        + selector_relabelings(monitor["spec"].get("selector") or {})
        + port_relabelings(endpoint)
        + target_relabelings(monitor, endpoint)
        + relabel_configs(endpoint.get("relabelings")))
    if endpoint.get("metricRelabelings"):
        job["metric_relabel_configs"] = relabel_configs(endpoint["metricRelabelings"])
    for crd_key, key in (("sampleLimit", "sample_limit"), ("targetLimit", "target_limit"),
                         ("labelLimit", "label_limit"), ("labelNameLengthLimit", "label_name_length_limit"),
                         ("labelValueLengthLimit", "label_value_length_limit")):
        if monitor["spec"].get(crd_key):
            job[key] = monitor["spec"][crd_key]
    return job


def scrape_configs(monitors: list[dict], discovery_url: str) -> list[dict]:
    return [endpoint_job(monitor, index, endpoint, discovery_url)
            for monitor in monitors
            for index, endpoint in enumerate(monitor["spec"].get("endpoints") or [])]


def prometheus_config(monitors: list[dict], discovery_url: str, rule_files: list[Path] = ()) -> dict:
    """A whole configuration: the operator's global defaults and one job per ServiceMonitor endpoint,
    discovering from the EndpointsDiscovery at `discovery_url`."""
    config = {"global": {"scrape_interval": DEFAULT_INTERVAL, "evaluation_interval": DEFAULT_EVALUATION_INTERVAL},
              "scrape_configs": scrape_configs(monitors, discovery_url)}
    if rule_files:
        config["rule_files"] = [str(f) for f in rule_files]
    return config


def label_selector(selector: dict) -> str:
    """A ServiceMonitor's selector as the API server's labelSelector parameter."""
    terms = [f"{key}={value}" for key, value in sorted((selector.get("matchLabels") or {}).items())]
    for expression in selector.get("matchExpressions") or []:
        key, values = expression["key"], ",".join(expression.get("values") or [])
        terms.append({"In": f"{key} in ({values})", "NotIn": f"{key} notin ({values})", "Exists": key,
                      "DoesNotExist": f"!{key}"}[expression["operator"]])
    return ",".join(terms)


def selected_pods(kube: Kube, monitors: list[dict]) -> set[tuple[str, str, str]]:
    """(namespace, pod, port name) of every address that the ServiceMonitors select, from the API
    server alone: the Services their selectors match in their namespaces, those Services' Endpoints
    on the endpoints' port names. What target_pods() of the scraped targets should equal."""
    selected = set()
    for monitor in monitors:
        spec = monitor["spec"]
        namespaces = spec.get("namespaceSelector") or {}
        prefixes = ["/api/v1"] if namespaces.get("any") else \
            [f"/api/v1/namespaces/{n}" for n in namespaces.get("matchNames") or [monitor["metadata"]["namespace"]]]
        query = urllib.parse.urlencode({"labelSelector": label_selector(spec.get("selector") or {})})
        for prefix in prefixes:
            for service in kube.get(f"{prefix}/services?{query}")["items"]:
                endpoints = kube.get(f"/api/v1/namespaces/{service['metadata']['namespace']}/endpoints/"
                                     f"{service['metadata']['name']}") or {}
                for subset in endpoints.get("subsets") or []:
                    for port in subset.get("ports") or []:
                        for endpoint in spec.get("endpoints") or []:
                            if port.get("name") == endpoint.get("port"):
                                selected |= {(service["metadata"]["namespace"], a["targetRef"]["name"], port["name"])
                                             for a in subset.get("addresses") or []}
    return selected


def target_pods(targets: list[dict]) -> set[tuple[str, str, str]]:
    """(namespace, pod, endpoint) of Prometheus' targets (Prometheus.targets())."""
    return {(t["labels"].get("namespace"), t["labels"].get("pod"), t["labels"].get("endpoint")) for t in targets}


def object_labels(kind: str, metadata: dict) -> dict[str, str]:
    """An object's labels and annotations as Prometheus' Kubernetes discovery names them."""
    found = {}
    for what, mapping in (("label", metadata.get("labels")), ("annotation", metadata.get("annotations"))):
        for key, value in (mapping or {}).items():
            found[f"__meta_kubernetes_{kind}_{what}_{sanitized(key)}"] = value
            found[f"__meta_kubernetes_{kind}_{what}present_{sanitized(key)}"] = "true"
    return found


def pod_labels(pod: dict) -> dict[str, str]:
    metadata, status = pod["metadata"], pod.get("status") or {}
    ready = next((c["status"].lower() for c in status.get("conditions") or [] if c["type"] == "Ready"), "unknown")
    labels = {"__meta_kubernetes_pod_name": metadata["name"], "__meta_kubernetes_pod_ip": status.get("podIP", ""),
              "__meta_kubernetes_pod_ready": ready, "__meta_kubernetes_pod_phase": status.get("phase", ""),
              "__meta_kubernetes_pod_node_name": pod["spec"].get("nodeName", ""),
              "__meta_kubernetes_pod_host_ip": status.get("hostIP", ""), "__meta_kubernetes_pod_uid": metadata.get("uid", ""),
              **object_labels("pod", metadata)}
    controller = next((o for o in metadata.get("ownerReferences") or [] if o.get("controller")), None)
    if controller:
        labels["__meta_kubernetes_pod_controller_kind"] = controller["kind"]
        labels["__meta_kubernetes_pod_controller_name"] = controller["name"]
    return labels


def container_port_labels(container: dict, port: dict) -> dict[str, str]:
    return {"__meta_kubernetes_pod_container_name": container["name"],
            "__meta_kubernetes_pod_container_port_name": port.get("name", ""),
            "__meta_kubernetes_pod_container_port_number": str(port["containerPort"]),
            "__meta_kubernetes_pod_container_port_protocol": port.get("protocol", "TCP")}


def endpoints_targets(endpoints: dict, services: dict[str, dict], pods: dict[str, dict]) -> list[dict]:
    """The targets of one Endpoints object, as http_sd target groups (one per target): an address per
    port of each subset (ready or not), with its Service's and Pod's labels, and then the pods'
    container ports that no Service port covered."""
    metadata = endpoints["metadata"]
    common = {"__meta_kubernetes_namespace": metadata["namespace"], "__meta_kubernetes_endpoints_name": metadata["name"],
              **object_labels("endpoints", metadata)}
    service = services.get(metadata["name"])
    if service:
        common.update({"__meta_kubernetes_service_name": service["metadata"]["name"],
                       **object_labels("service", service["metadata"])})
    groups, covered = [], {}
    for subset in endpoints.get("subsets") or []:
        for port in subset.get("ports") or []:
            for address, ready in [(a, "true") for a in subset.get("addresses") or []] + \
                                  [(a, "false") for a in subset.get("notReadyAddresses") or []]:
                labels = {**common, "__meta_kubernetes_endpoint_port_name": port.get("name", ""),
                          "__meta_kubernetes_endpoint_port_protocol": port.get("protocol", "TCP"),
                          "__meta_kubernetes_endpoint_ready": ready}
                reference = address.get("targetRef") or {}
                if reference:
                    labels["__meta_kubernetes_endpoint_address_target_kind"] = reference.get("kind", "")
                    labels["__meta_kubernetes_endpoint_address_target_name"] = reference.get("name", "")
                if address.get("nodeName"):
                    labels["__meta_kubernetes_endpoint_node_name"] = address["nodeName"]
                if address.get("hostname"):
                    labels["__meta_kubernetes_endpoint_hostname"] = address["hostname"]
                pod = pods.get(reference.get("name", "")) if reference.get("kind") == "Pod" else None
                if pod:
                    labels.update(pod_labels(pod))
                    covered.setdefault(pod["metadata"]["name"], set()).add(port["port"])
                    container, container_port = next(
                        ((c, cp) for c in pod["spec"]["containers"] for cp in c.get("ports") or []
                         if cp["containerPort"] == port["port"]), (None, None))
                    if container:
                        labels.update(container_port_labels(container, container_port))
                groups.append({"targets": [f"{address['ip']}:{port['port']}"], "labels": labels})
    for name, ports in covered.items():
        pod = pods[name]
        for container in pod["spec"]["containers"]:
            for port in container.get("ports") or []:
                if port["containerPort"] not in ports:
                    groups.append({"targets": [f"{pod['status'].get('podIP', '')}:{port['containerPort']}"],
                                   "labels": {**common, **pod_labels(pod), **container_port_labels(container, port)}})
    return groups


class LoopbackServer(http.server.ThreadingHTTPServer):
    """An HTTP server on a free loopback port, serving from a thread of its own while it is used as a
    context manager: `answer(path)` gives each GET's (content type, body); LookupError is a 404,
    OSError and RuntimeError (the API server failed) a 503."""

    def __init__(self, answer: Callable[[str], tuple[str, bytes]]):
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                try:
                    content_type, body = answer(self.path)
                except LookupError:
                    self.send_error(404)
                    return
                except (OSError, RuntimeError) as error:
                    self.send_error(503, str(error)[:200])
                    return
                self.send_response(200)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        super().__init__(("127.0.0.1", 0), Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def __enter__(self):
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.shutdown()
        self.server_close()


class EndpointsDiscovery(LoopbackServer):
    """Prometheus' Kubernetes discovery (role endpoints) over HTTP, for a Prometheus built without it:
    GET /endpoints?namespace=A&namespace=B (none: every namespace) answers with the target groups of
    the Endpoints there, read from the API server on each request. A context manager."""

    def __init__(self, kube: Kube):
        self.kube = kube
        super().__init__(self.answer)

    def answer(self, path: str) -> tuple[str, bytes]:
        url = urllib.parse.urlsplit(path)
        if url.path != "/endpoints":
            raise LookupError(url.path)
        return "application/json", json.dumps(self.targets(urllib.parse.parse_qs(url.query).get("namespace", []))).encode()

    def targets(self, namespaces: list[str]) -> list[dict]:
        groups = []
        for prefix in [f"/api/v1/namespaces/{n}" for n in namespaces] or ["/api/v1"]:
            listed = {kind: (self.kube.get(f"{prefix}/{kind}") or {"items": []})["items"]
                      for kind in ("endpoints", "services", "pods")}
            for endpoints in listed["endpoints"]:
                namespace = endpoints["metadata"]["namespace"]
                same = lambda kind: {o["metadata"]["name"]: o for o in listed[kind]  # noqa: E731
                                     if o["metadata"]["namespace"] == namespace}
                groups += endpoints_targets(endpoints, same("services"), same("pods"))
        return groups


def seconds(duration: str) -> float:
    """A Prometheus duration (30s, 1m30s, 500ms, 1h) in seconds."""
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}
    parts = re.findall(r"(\d+)(ms|s|m|h|d|w|y)", duration)
    if not parts or "".join(n + u for n, u in parts) != duration:
        raise ValueError(f"not a Prometheus duration: {duration!r}")
    return sum(int(n) * units[u] for n, u in parts)


def longest_scrape_interval(config: dict) -> float:
    default = config.get("global", {}).get("scrape_interval", "1m")
    return max([seconds(job.get("scrape_interval", default)) for job in config["scrape_configs"]] or [seconds(default)])


class QueryError(RuntimeError):
    """Prometheus answered a query with an error (a bad expression, an unknown function, ...)."""


@dataclass
class Prometheus:
    """Debian's Prometheus on a free loopback port, with `config` (a dict) and its data in `folder`.
    Use as a context manager, or start()/stop()."""

    folder: Path
    config: dict
    binary: str = PROMETHEUS
    port: int = 0
    process: subprocess.Popen | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def config_file(self) -> Path:
        return self.folder / "prometheus.yml"

    @property
    def log_file(self) -> Path:
        return self.folder / "prometheus.log"

    def start(self) -> "Prometheus":
        self.folder.mkdir(parents=True, exist_ok=True)
        self.config_file.write_text(yaml.safe_dump(self.config, sort_keys=False))
        os.chmod(self.config_file, 0o600)
        self.port = free_port()
        with open(self.log_file, "w") as log:
            self.process = subprocess.Popen(
                [self.binary, f"--config.file={self.config_file}", f"--storage.tsdb.path={self.folder / 'data'}",
                 f"--web.listen-address=127.0.0.1:{self.port}", "--web.enable-lifecycle"],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        wait_for("Prometheus ready", lambda: self.http("/-/ready", raw=True), timeout=60, alive=self.alive)
        return self

    def alive(self) -> None:
        if self.process is not None and self.process.poll() is not None:
            raise RuntimeError(f"prometheus exited ({self.process.returncode}):\n{self.log()[-3000:]}")

    def log(self) -> str:
        return self.log_file.read_text(errors="replace") if self.log_file.exists() else ""

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)

    def __enter__(self) -> "Prometheus":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def reload(self, config: dict) -> None:
        """A new configuration, applied without a restart (the data stays)."""
        self.config = config
        self.config_file.write_text(yaml.safe_dump(config, sort_keys=False))
        self.http("/-/reload", data=b"")

    def http(self, path: str, params: dict | None = None, data: bytes | None = None, raw: bool = False):
        url = self.url + path + ("?" + urllib.parse.urlencode(params, doseq=True) if params else "")
        try:
            with urllib.request.urlopen(urllib.request.Request(url, data=data), timeout=30) as response:
                body = response.read()
        except urllib.error.HTTPError as error:
            body = error.read()
            try:
                answer = json.loads(body)
            except ValueError:
                raise RuntimeError(f"GET {path}: HTTP {error.code}: {body[:300]!r}") from None
            raise QueryError(f"{answer.get('errorType')}: {answer.get('error')}") from None
        if raw:
            return body.decode(errors="replace")
        answer = json.loads(body)
        if answer.get("status") != "success":
            raise QueryError(f"{answer.get('errorType')}: {answer.get('error')}")
        return answer["data"]

    def query(self, expr: str) -> list[dict]:
        """An instant query now; its result (a vector's samples; a scalar as one sample)."""
        data = self.http("/api/v1/query", {"query": expr})
        if data["resultType"] in ("scalar", "string"):
            return [{"metric": {}, "value": data["result"]}]
        return data["result"]

    def label_values(self, label: str, match: str | None = None) -> list[str]:
        return self.http(f"/api/v1/label/{label}/values", {"match[]": match} if match else None)

    def targets(self, state: str = "active") -> list[dict]:
        data = self.http("/api/v1/targets", {"state": state})
        return data["activeTargets" if state == "active" else "droppedTargets"]
