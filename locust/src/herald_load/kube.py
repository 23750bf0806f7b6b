"""Kubernetes mode of the scale-out runner: ``kubectl scale`` a Deployment to N, wait until N
replicas are ready, run Locust as a Job in the cluster, and collect its CSVs from the Job's log;
meanwhile sample what each pod, the node and RabbitMQ's queues are doing.

Why a Job and the log: the Locust image (``scripts/k8s/images.sh locust``: Debian's Python and
Locust from PyPI, built here) has Locust and the scenarios' libraries; the scenario and
:mod:`herald_load` come in through a ConfigMap mounted at ``/mnt/config``, and the container prints
each CSV between markers after Locust exits, so nothing needs a volume that outlives the pod or
``kubectl cp`` out of a finished container.

The Job provisions its own app (``test_start`` in the locustfile) through the dispatcher's admin
API, with the admin token from a Secret (``--admin-secret``, key ``admin-token``).

What is sampled every few seconds while the Job runs (``resources.csv`` in ``n=N/``, summed up
over the plateau in ``meta.json``'s ``resources``), all through the API server so that it works
wherever kubectl does:

- each pod's and each node's CPU: the kubelet's ``/stats/summary`` (cgroup CPU usage, cumulative
  ``usageCoreNanoSeconds``; a rate between two samples is cores in use). The node's figure is the
  whole machine's (its root cgroup), which on the test node is the host every pod shares;
- RabbitMQ's queue depths: its per-object Prometheus metrics (``rabbitmq_queue_messages``), read
  through the API server's service proxy;
- the provider sandbox's delivery count (the progress line's rate, gateway runs).

The Deployment's CPU limit (``--cpu-limit``) is set with ``kubectl set resources`` before the first
N and recorded with the rest of the Deployment's configuration in each meta.json.

With ``--warm-up-cpu-limit`` the pods start and warm up at that larger limit, and each measured pod's
limit is then lowered to ``--cpu-limit`` in place (a resize of the running pod: same container, same
JVM, its compiled code kept; Kubernetes' InPlacePodVerticalScaling, which the test cluster turns on).
A JVM started under a limit of a few tens of millicores spends its first half hour compiling, so the
plateaus would measure its JIT, not the service. Each meta.json records both limits and the limit
each pod's status reported when its N was measured.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import threading
import time
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from .machine import git_revision
from .processes import repository_root
from .servers import SEND_QUEUES
from .scaleout import SCENARIOS, SCENARIO_DIR, Scenario, ScaleOutSettings, still_to_measure, write_meta

__all__ = ["KubeTarget", "LABELS", "job_manifest", "configmap_manifest", "split_csv_log", "run_kubernetes",
           "plateau_resources", "unit_windows", "settled", "jit_pct", "JIT_BUSY_PCT"]

PACKAGE_DIR = Path(__file__).resolve().parent
BEGIN, END = "=== herald-csv-begin ", "=== herald-csv-end"
# Settings of the local mode that a Deployment's own configuration replaces (recorded instead).
LOCAL_ONLY = ("max_in_flight", "gateway_consumers_normal", "gateway_prefetch", "audience_batch_size",
              "jvm_options", "sandbox_latency_ms", "fixed_gateways")
# On every object a run makes (the ConfigMap, each Job and its pod): one selector finds what a run
# left, e.g. `kubectl delete jobs,configmaps -l app.kubernetes.io/name=herald-load`.
LABELS = {"app.kubernetes.io/name": "herald-load"}
_QUEUE_LINE = re.compile(r'^rabbitmq_queue_messages\{[^}]*queue="([^"]+)"[^}]*\}\s+([0-9.eE+-]+)')
# 1 while RabbitMQ's memory alarm blocks every publisher: a plateau with it raised measured the
# broker's memory, not the service (a gateway run's N = 5 and 6 stalled on it at 512Mi).
_MEMORY_ALARM_LINE = re.compile(r'^rabbitmq_alarms_memory_used_watermark(?:\{[^}]*\})?\s+([0-9.eE+-]+)')


@dataclass(frozen=True)
class KubeTarget:
    namespace: str
    deployment: str
    dispatcher_url: str                  # as the Job's pod reaches it
    sandbox_url: str
    image: str                           # the Locust image, present on the nodes (images.sh locust)
    admin_secret: str = "herald-app"
    cpu_limit: str | None = None         # set on the Deployment's containers; None: as deployed
    cpu_request: str | None = None
    memory_limit: str | None = None      # e.g. the chart's 1Gi where a test values file shrank it
    # Appended to each container's JAVA_TOOL_OPTIONS for the run (e.g. -XX:TieredStopAtLevel=1:
    # C1-only code, meant to be steady sooner than C2's, which under a 50m limit was still compiling
    # after more than 30 minutes); None: as deployed. Recorded in meta.json, restored after the run.
    jvm_options: str | None = None
    node_selector: tuple[tuple[str, str], ...] = ()   # where the Job's pod may run
    tolerations: tuple[str, ...] = ()    # key=value:Effect, for the Job's pod
    sandbox_service: str = "herald-provider-sandbox:9090"
    rabbitmq_service: str = "herald-rabbitmq:15692"    # RabbitMQ's Prometheus port
    # Where the send queues are emptied before each N (`kubectl exec ... rabbitmqctl purge_queue`);
    # "" leaves them. A backlog left by one N is not that N's load, and one that keeps growing (the
    # dispatcher's scenario accepts faster than its one gateway delivers) raises RabbitMQ's memory
    # alarm, which blocks publishing mid-plateau.
    rabbitmq_pod: str = "herald-rabbitmq-server-0"
    metrics_port: int = 8081             # each pod's /actuator (the Job reads latency there)
    sample_every_s: float = 10.0
    warmup_s: float = 90.0               # left out of meta.json's resources (the ramp)
    warm_up_run_s: float = 0.0           # a discarded Locust Job at the first N before measuring
    # The Deployment's CPU limit while its pods start and warm up; each pod is then resized in place
    # to cpu_limit before it is measured. None: the pods run at cpu_limit from their start.
    warm_up_cpu_limit: str | None = None
    # After the warm-up (and the resize to cpu_limit), a discarded Job at the first N that ends when
    # the measured pods' CPU per unit of work has settled (SETTLE_WINDOWS settle_window_s windows in a row
    # within SETTLE_TOLERANCE, after the Job's first warmup_s), or after this many seconds; 0: none.
    settle_max_s: float = 0.0
    settle_window_s: float = 60.0
    kubectl: str = "kubectl"


def _kubectl(target: KubeTarget, *args: str, stdin: str | None = None,
             timeout: int = 600) -> str:
    result = subprocess.run([target.kubectl, "-n", target.namespace, *args], input=stdin,
                            capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        raise RuntimeError(f"kubectl {' '.join(args)} failed: {result.stderr.strip()}")
    return result.stdout


def configmap_manifest(name: str, scenario_file: str) -> dict:
    """The scenario and the herald_load package as one ConfigMap (keys cannot hold '/')."""
    files = {f"scenarios__{scenario_file}": (SCENARIO_DIR / scenario_file).read_text()}
    for source in sorted(PACKAGE_DIR.glob("*.py")):
        files[f"herald_load__{source.name}"] = source.read_text()
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": LABELS},
            "data": files}


def _toleration(text: str) -> dict:
    key_value, _, effect = text.partition(":")
    key, _, value = key_value.partition("=")
    return {"key": key, "operator": "Equal", "value": value, "effect": effect}


def job_manifest(name: str, configmap: str, target: KubeTarget, settings: ScaleOutSettings,
                 n: int, gateway_metrics: list[str] = (), pod_hosts: list[str] = ()) -> dict:
    """The Locust Job for N replicas; ``pod_hosts``: the measured pods' IPs, for a scenario that
    connects to each pod in turn (Scenario.pod_hosts_env) rather than through its Service."""
    scenario = SCENARIOS[settings.service]
    direct = ((scenario.pod_hosts_env, ",".join(pod_hosts)),) if scenario.pod_hosts_env and pod_hosts else ()
    job_env = [(key, value) for key, value in scenario.job_env if key not in dict(direct)] + list(direct)
    users = settings.users(n)
    locust = (f"python3 -m locust -f /mnt/locust/scenarios/{scenario.locustfile} "
              f"{' '.join(scenario.user_classes)} --headless -u {users} -r {users} "
              f"-t {settings.duration_s}s --csv /tmp/out/locust --csv-full-history "
              f"--host {target.dispatcher_url} --only-summary --stop-timeout 5 --loglevel WARNING "
              # Failed requests are in the CSVs (the report weighs them); a Job that failed
              # because a few sends were refused would lose a whole N.
              f"--exit-code-on-error 0")
    script = (
        "set -u; mkdir -p /tmp/out /mnt/locust/scenarios /mnt/locust/herald_load; "
        "for f in /mnt/config/*; do b=$(basename $f); "
        "cp $f /mnt/locust/$(echo $b | sed 's|__|/|'); done; "
        f"{locust}; code=$?; "
        f"for f in /tmp/out/*.csv; do echo \"{BEGIN}$(basename $f)\"; cat $f; echo \"{END}\"; "
        "done; exit $code")
    env = [{"name": "PYTHONPATH", "value": "/mnt/locust:/opt/locust"},
           {"name": "HOME", "value": "/tmp"},          # read-only root filesystem
           {"name": "HERALD_SANDBOX_URL", "value": target.sandbox_url},
           {"name": "HERALD_DISPATCHERS", "value": target.dispatcher_url},
           {"name": "HERALD_GATEWAY_METRICS", "value": ",".join(gateway_metrics)},
           {"name": "HERALD_LOAD_DEVICES", "value": str(settings.devices)},
           {"name": "HERALD_LOAD_BACKLOG", "value": str(settings.backlog_per_replica * n)},
           {"name": "HERALD_MQTT_DEVICES", "value": str(settings.mqtt_devices(n))},
           {"name": "HERALD_MQTT_BACKLOG_PER_DEVICE", "value": str(settings.backlog_per_device)},
           *({"name": key, "value": value} for key, value in job_env),
           {"name": "HERALD_ADMIN_TOKEN", "valueFrom": {"secretKeyRef": {
               "name": target.admin_secret, "key": "admin-token"}}}]
    pod = {
        "restartPolicy": "Never",
        "securityContext": {"runAsNonRoot": True, "runAsUser": 65532, "runAsGroup": 65532},
        "containers": [{
            "name": "locust", "image": target.image, "imagePullPolicy": "IfNotPresent",
            "command": ["/bin/sh", "-c", script], "env": env,
            # No CPU limit: the load generator must never be what limits the measurement.
            "resources": {"requests": {"cpu": "100m", "memory": "256Mi"}},
            "securityContext": {"readOnlyRootFilesystem": True,
                                "allowPrivilegeEscalation": False,
                                "capabilities": {"drop": ["ALL"]}},
            "volumeMounts": [{"name": "config", "mountPath": "/mnt/config"},
                             {"name": "work", "mountPath": "/mnt/locust"},
                             {"name": "out", "mountPath": "/tmp"}]}],
        "volumes": [{"name": "config", "configMap": {"name": configmap}},
                    {"name": "work", "emptyDir": {}},
                    {"name": "out", "emptyDir": {}}]}
    if target.node_selector:
        pod["nodeSelector"] = dict(target.node_selector)
    if target.tolerations:
        pod["tolerations"] = [_toleration(t) for t in target.tolerations]
    return {
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "labels": LABELS},
        "spec": {"backoffLimit": 0, "ttlSecondsAfterFinished": 3600, "template": {
            "metadata": {"labels": LABELS}, "spec": pod}}}


def split_csv_log(log: str) -> dict[str, str]:
    """The CSV files the Job printed between markers, by file name."""
    files, current, lines = {}, None, []
    for line in log.splitlines():
        if line.startswith(BEGIN):
            current, lines = line[len(BEGIN):].strip(), []
        elif line.startswith(END) and current:
            files[current] = "\n".join(lines) + "\n"
            current = None
        elif current:
            lines.append(line)
    return files


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


# ---------------------------------------------------------------- what the cluster is doing

# Milliseconds the JVM's compiler threads spent compiling (Micrometer's JVM compilation metrics,
# on every Spring Boot service's /actuator/prometheus).
JIT_METRIC = "jvm_compilation_time_ms_total"


class ClusterSampler:
    """Samples the kubelet's CPU counters, RabbitMQ's queue depths and the sandbox's delivery count
    every ``target.sample_every_s`` into rows ``(t, kind, name, value)`` (t: seconds since start)."""

    def __init__(self, target: KubeTarget, nodes: list[str], scenario: Scenario | None = None,
                 pods: list[str] = ()):
        self.target = target
        self.nodes = nodes
        self.scenario = scenario
        self.pods = list(pods)          # the measured pods, whose own counter is read
        self.rows: list[tuple[float, str, str, float]] = []
        self.errors: dict[str, str] = {}
        self.started = time.monotonic()
        self.started_epoch = time.time()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> "ClusterSampler":
        self.sample()
        self._thread.start()
        return self

    def __exit__(self, *_exc) -> None:
        self._stop.set()
        self._thread.join(30)
        self.sample()

    def _loop(self) -> None:
        while not self._stop.wait(self.target.sample_every_s):
            self.sample()

    def _raw(self, path: str) -> str:
        return _kubectl(self.target, "get", "--raw", path, timeout=30)

    def _stat_time(self, cpu: dict, fallback: float) -> float:
        """When the kubelet read a CPU counter (it refreshes them every 10-15 s, not when asked),
        in seconds since start: rates between samples must use it, not the time of the request."""
        try:
            read = datetime.strptime(cpu["time"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
        except (KeyError, ValueError):
            return fallback
        return read.timestamp() - self.started_epoch

    def sample(self) -> None:
        t = time.monotonic() - self.started
        rows = [(t, "loadavg", "runner host", float(_loadavg().split()[0]))] \
            if _loadavg() != "unknown" else []
        for node in self.nodes:
            try:
                summary = json.loads(self._raw(f"/api/v1/nodes/{node}/proxy/stats/summary"))
                cpu = summary["node"]["cpu"]
                rows.append((self._stat_time(cpu, t), "cpu_ns", f"node/{node}",
                             float(cpu["usageCoreNanoSeconds"])))
                for pod in summary.get("pods", []):
                    ref, cpu = pod["podRef"], pod.get("cpu", {})
                    if ref["namespace"] == self.target.namespace and "usageCoreNanoSeconds" in cpu:
                        rows.append((self._stat_time(cpu, t), "cpu_ns", f"pod/{ref['name']}",
                                     float(cpu["usageCoreNanoSeconds"])))
            except (RuntimeError, ValueError, KeyError, subprocess.TimeoutExpired) as error:
                self.errors["stats/summary"] = str(error)[:300]
        service = f"/api/v1/namespaces/{self.target.namespace}/services"
        try:
            for line in self._raw(f"{service}/{self.target.rabbitmq_service}/proxy/metrics").splitlines():
                match = _QUEUE_LINE.match(line)
                if match:
                    rows.append((t, "queue", match.group(1), float(match.group(2))))
                alarm = _MEMORY_ALARM_LINE.match(line)
                if alarm:
                    rows.append((t, "alarm", "rabbitmq memory", float(alarm.group(1))))
        except (RuntimeError, subprocess.TimeoutExpired) as error:
            self.errors["rabbitmq metrics"] = str(error)[:300]
        try:
            stats = json.loads(self._raw(f"{service}/{self.target.sandbox_service}/proxy/sandbox/stats"))
            rows.append((t, "sandbox_accepted", "sandbox", float(stats["accepted"])))
        except (RuntimeError, ValueError, KeyError, subprocess.TimeoutExpired) as error:
            self.errors["sandbox stats"] = str(error)[:300]
        rows.extend(self._service_metrics(t))
        self.rows.extend(rows)

    def _service_metrics(self, t: float) -> list[tuple[float, str, str, float]]:
        """Each measured pod's JIT compile time and the scenario's counter (and gauge), through the
        pod proxy. The JIT's time tells whether a pod was still compiling in its plateau: under a
        small CPU limit the compiler shares the pod's quota with the work for tens of minutes."""
        scenario = self.scenario
        if scenario is None:
            return []
        rows = []
        for pod in self.pods:
            path = (f"/api/v1/namespaces/{self.target.namespace}/pods/{pod}:{scenario.metrics_port}"
                    f"/proxy/actuator/prometheus")
            try:
                text = self._raw(path)
            except (RuntimeError, subprocess.TimeoutExpired) as error:
                self.errors[f"metrics of {pod}"] = str(error)[:300]
                continue
            for kind, metric in (("counter", scenario.counter), ("gauge", scenario.gauge),
                                 ("jit_ms", JIT_METRIC)):
                values = [float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                          if metric and (line.startswith(metric + " ") or line.startswith(metric + "{"))]
                if values:
                    rows.append((t, kind, f"pod/{pod}", sum(values)))
        return rows

    def latest_rates(self) -> dict[str, float]:
        """Per second over the last two samples: deliveries, and cores of each node."""
        rates = {}
        kinds = ("cpu_ns", "sandbox_accepted", "counter")
        for kind, name in {(k, n) for _t, k, n, _v in self.rows if k in kinds}:
            series = sorted({(t, v) for t, k, n, v in self.rows if k == kind and n == name})[-2:]
            if len(series) == 2 and series[1][0] > series[0][0]:
                per_s = (series[1][1] - series[0][1]) / (series[1][0] - series[0][0])
                if kind == "counter":
                    rates["service"] = rates.get("service", 0.0) + per_s
                else:
                    rates[name] = per_s / 1e9 if kind == "cpu_ns" else per_s
        return rates

    def memory_alarm(self) -> bool:
        """Whether the last sample found RabbitMQ's memory alarm raised."""
        alarms = sorted((t, v) for t, k, _n, v in self.rows if k == "alarm")
        return bool(alarms) and alarms[-1][1] > 0

    def latest_queues(self) -> int:
        last = max((t for t, k, _n, _v in self.rows if k == "queue"), default=None)
        return int(sum(v for t, k, _n, v in self.rows if k == "queue" and t == last))

    def write(self, path: Path) -> None:
        with path.open("w", newline="") as out:
            writer = csv.writer(out)
            writer.writerow(["t_s", "kind", "name", "value"])
            writer.writerows((f"{t:.2f}", k, n, f"{v:.0f}" if k == "cpu_ns" else v)
                             for t, k, n, v in self.rows)


def counter_rates(rows: list[tuple[float, str, str, float]], kind: str) -> dict[str, float]:
    """Per second, how much each sampled counter of ``kind`` (by name) grew between its own first
    and last sample in ``rows`` (unrounded; a counter sampled fewer than twice is left out)."""
    rates: dict[str, float] = {}
    for name in sorted({n for _t, k, n, _v in rows if k == kind}):
        series = sorted({(t, v) for t, k, n, v in rows if k == kind and n == name})
        if len(series) >= 2 and series[-1][0] > series[0][0]:
            rates[name] = (series[-1][1] - series[0][1]) / (series[-1][0] - series[0][0])
    return rates


def cpu_cores(rows: list[tuple[float, str, str, float]]) -> dict[str, float]:
    """Cores each sampled CPU counter (``pod/NAME``, ``node/NAME``) used in ``rows`` (unrounded)."""
    return {name: ns_per_s / 1e9 for name, ns_per_s in counter_rates(rows, "cpu_ns").items()}


# Settling. After a resize to a small CPU limit, a JVM's cost per unit of work kept falling for
# minutes: three dispatcher plateaus measured one after another cost 2.99, then 1.55, then 1.19 ms of
# CPU per accept, so the fitted curve measured the settling, not the scale-out. No fixed warm-up says
# when that is over; the runner measures it instead (KubeTarget.settle_max_s).
SETTLE_TOLERANCE = 0.10
# Three windows, not two: in run dispatcher-k8s-20261128e two 60 s windows in a row agreed within
# 1 % (6.2 ms per accept) while the cost was still falling, to 4.1 ms in the plateau measured next
# and 1.9 ms a quarter of an hour later.
SETTLE_WINDOWS = 3
# And a JVM whose compilers are busy is not settled, whatever its cost says: in
# dispatcher-k8s-20261128f the settle run's last three windows agreed at about 2.0 ms per accept, and
# the next Job's plateau, with the pods' compilers busy 31 % of it, cost 2.3 ms. Over that settle
# run the accepts per second rose and fell against the compilers' share, window by window (77 % busy
# at 53/s, 6 % at 218/s). Above this share of a window (mean per pod, wall time of the compiler
# threads from jvm_compilation_time_ms_total) a pod is still warming up.
JIT_BUSY_PCT = 10.0


def unit_windows(rows: list[tuple[float, str, str, float]], pods: list[str], window_s: float,
                 skip_s: float) -> list[dict]:
    """Consecutive complete windows of ``window_s`` from ``skip_s`` on: per window the units of work
    per second (the pods' own counter where sampled, else the provider sandbox's deliveries) and
    the µs of the pods' CPU per unit, and the share of the window their JIT compilers were busy
    (``jit_pct``, mean per pod; None where not sampled)."""
    names = {f"pod/{pod}" for pod in pods}
    last = max((r[0] for r in rows), default=0.0)
    windows, start = [], skip_s
    while start + window_s <= last:
        window = [r for r in rows if start <= r[0] <= start + window_s]
        own = counter_rates([r for r in window if r[2] in names], "counter")
        units = sum(own.values()) if own else sum(counter_rates(window, "sandbox_accepted").values())
        cores = sum(v for name, v in cpu_cores(window).items() if name in names)
        jit = jit_pct(window, pods)
        windows.append({"from_s": round(start, 1), "to_s": round(start + window_s, 1),
                        "units_per_s": round(units, 1), "pods_cores": round(cores, 3),
                        "cpu_us_per_unit": round(cores * 1e6 / units, 1) if units > 0 else None,
                        "jit_pct": round(jit, 1) if jit is not None else None})
        start += window_s
    return windows


def jit_pct(rows: list[tuple[float, str, str, float]], pods: list[str]) -> float | None:
    """Percent of the rows' span the pods' JIT compilers were compiling, mean per pod (None: not
    sampled)."""
    names = {f"pod/{pod}" for pod in pods}
    ms_per_s = counter_rates([r for r in rows if r[2] in names], "jit_ms")
    return sum(ms_per_s.values()) / len(ms_per_s) / 1000 * 100 if ms_per_s else None


def settled(windows: list[dict], tolerance: float = SETTLE_TOLERANCE) -> bool:
    """Whether the last SETTLE_WINDOWS windows' CPU per unit agree within ``tolerance`` of the
    least of them, with the pods' compilers busy for at most JIT_BUSY_PCT of each (where sampled)."""
    last = windows[-SETTLE_WINDOWS:]
    costs = [w["cpu_us_per_unit"] for w in last]
    if len(costs) < SETTLE_WINDOWS or None in costs:
        return False
    if any((w.get("jit_pct") or 0.0) > JIT_BUSY_PCT for w in last):
        return False
    return max(costs) - min(costs) <= tolerance * min(costs)


def _cpu_with_edges(rows: list[tuple[float, str, str, float]], start_s: float,
                    end_s: float) -> list[tuple[float, str, str, float]]:
    """The CPU samples in [start_s, end_s], and for a counter read fewer than twice in there, also
    its last read before and its first after. The kubelet refreshes a pod's counter every 10-15 s,
    more slowly on a busy host: in a 30 s window a pod once showed one refresh (16-17 s apart), and
    so no CPU at all."""
    cpu = [r for r in rows if r[1] == "cpu_ns"]
    inside = [r for r in cpu if start_s <= r[0] <= end_s]
    found = list(inside)
    for name in sorted({r[2] for r in cpu}):
        if len({r[0] for r in inside if r[2] == name}) < 2:
            before = [r for r in cpu if r[2] == name and r[0] < start_s]
            after = [r for r in cpu if r[2] == name and r[0] > end_s]
            found += ([max(before)] if before else []) + ([min(after)] if after else [])
    return found


def plateau_resources(rows: list[tuple[float, str, str, float]], start_s: float, end_s: float,
                      components: dict[str, str]) -> dict:
    """CPU (cores) of each pod, each component (pods grouped by ``components``: pod name ->
    component) and each node between the first and last sample in [start_s, end_s]; queue depth
    (mean and max per queue, mean of the sum); the runner host's load average (mean)."""
    window = [r for r in rows if start_s <= r[0] <= end_s]
    cores = cpu_cores(_cpu_with_edges(rows, start_s, end_s))
    by_component: dict[str, float] = {}
    for name, value in cores.items():
        if name.startswith("pod/"):
            component = components.get(name[4:], name[4:])
            by_component[component] = by_component.get(component, 0.0) + value
    queues = {}
    for name in sorted({n for _t, k, n, _v in window if k == "queue"}):
        values = [v for _t, k, n, v in window if k == "queue" and n == name]
        queues[name] = {"mean": sum(values) / len(values), "max": max(values)}
    totals: dict[float, float] = {}
    for t, k, _n, v in window:
        if k == "queue":
            totals[t] = totals.get(t, 0.0) + v
    loads = [v for _t, k, _n, v in window if k == "loadavg"]
    # Seconds of the window that began with the alarm raised (None: RabbitMQ's metrics had no alarm).
    alarms = sorted((t, v) for t, k, _n, v in window if k == "alarm")
    alarm_s = round(sum(b[0] - a[0] for a, b in zip(alarms, alarms[1:]) if a[1] > 0), 1) \
        if alarms else None
    counted = {f"{kind}/{name}": rate for kind in ("counter", "sandbox_accepted")
               for name, rate in counter_rates(window, kind).items()}
    gauges = {n[4:]: round(sum(v for _t, k, m, v in window if k == "gauge" and m == n)
                           / max(1, sum(1 for _t, k, m, _v in window if k == "gauge" and m == n)), 1)
              for n in sorted({n for _t, k, n, _v in window if k == "gauge"})}
    service = [v for name, v in counted.items() if name.startswith("counter/")]
    return {
        # The service's own count per second over the window (its pods' counter summed), and the
        # provider sandbox's deliveries per second: the figures nearest to "delivered".
        "service_rate_per_s": round(sum(service), 1) if service else None,
        "sandbox_rate_per_s": round(counted["sandbox_accepted/sandbox"], 1)
        if "sandbox_accepted/sandbox" in counted else None,
        "pods_gauge_mean": gauges,
        "window_s": [round(start_s, 1), round(end_s, 1)],
        "nodes_cores": {n[5:]: round(v, 3) for n, v in cores.items() if n.startswith("node/")},
        "pods_cores": {n[4:]: round(v, 3) for n, v in cores.items() if n.startswith("pod/")},
        "components_cores": {c: round(v, 3) for c, v in sorted(by_component.items())},
        "queues": {q: {k: round(v, 1) for k, v in s.items()} for q, s in queues.items()},
        "queue_total_mean": round(sum(totals.values()) / len(totals), 1) if totals else None,
        "rabbitmq_memory_alarm_s": alarm_s,
        "runner_loadavg_mean": round(sum(loads) / len(loads), 2) if loads else None,
    }


# ---------------------------------------------------------------- the run

def _selector(deployment: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in deployment["spec"]["selector"]["matchLabels"].items())


def _ready_pods(target: KubeTarget) -> tuple[dict, list[dict]]:
    """The Deployment, and its running pods not being deleted, after its rollout (at the replicas set)."""
    _kubectl(target, "rollout", "status", f"deployment/{target.deployment}", "--timeout=600s")
    deployment = json.loads(_kubectl(target, "get", f"deployment/{target.deployment}", "-o", "json"))
    pods = json.loads(_kubectl(target, "get", "pods", "-l", _selector(deployment),
                               "--field-selector=status.phase=Running", "-o", "json"))["items"]
    return deployment, [p for p in pods if not p["metadata"].get("deletionTimestamp")]


def _job_addresses(settings: ScaleOutSettings, target: KubeTarget, pods: list[dict]) -> dict:
    """job_manifest's arguments naming the measured pods: the gateways' metrics URLs (the gateway
    scenario's feeder reads their backlog) and the pods' IPs (Scenario.pod_hosts_env)."""
    ips = [p["status"]["podIP"] for p in pods]
    return {"gateway_metrics": [f"http://{ip}:{target.metrics_port}" for ip in ips]
            if settings.service == "gateway" else [],
            "pod_hosts": ips if SCENARIOS[settings.service].pod_hosts_env else []}


def _deployment_record(target: KubeTarget, deployment: dict) -> dict:
    """What the measured pods ran with: image, resources, env and the ConfigMaps they read."""
    containers = deployment["spec"]["template"]["spec"]["containers"]
    configmaps = {}
    for container in containers:
        for source in container.get("envFrom", []):
            name = (source.get("configMapRef") or {}).get("name")
            if name:
                configmaps[name] = json.loads(_kubectl(target, "get", "configmap", name,
                                                       "-o", "json")).get("data", {})
    return {"name": target.deployment,
            "containers": [{"name": c["name"], "image": c["image"],
                            "resources": c.get("resources", {}),
                            **{probe: c[probe] for probe in PROBES if probe in c},
                            "env": {e["name"]: e.get("value") for e in c.get("env", [])
                                    if "value" in e}} for c in containers],
            "configmaps": configmaps}


def _components(target: KubeTarget) -> tuple[dict[str, str], list[str]]:
    """Pod name -> component (its app.kubernetes.io/name label, else its name), and the nodes."""
    pods = json.loads(_kubectl(target, "get", "pods", "-o", "json"))["items"]
    components = {p["metadata"]["name"]: p["metadata"].get("labels", {}).get(
        "app.kubernetes.io/name", p["metadata"]["name"]) for p in pods}
    nodes = sorted({p["spec"].get("nodeName") for p in pods if p["spec"].get("nodeName")})
    return components, nodes


def _restarts(target: KubeTarget) -> dict[str, int]:
    """Container restarts so far of each pod in the namespace (an OOM kill or a failed liveness
    probe mid-plateau makes that N's figure worthless)."""
    pods = json.loads(_kubectl(target, "get", "pods", "-o", "json"))["items"]
    return {p["metadata"]["name"]: sum(c.get("restartCount", 0)
                                       for c in p["status"].get("containerStatuses", []))
            for p in pods}


def reset_sandbox(target: KubeTarget, say: Callable[[str], None], attempts: int = 3,
                  pause: Callable[[float], None] = time.sleep) -> None:
    """Clears the provider sandbox's record (POST /sandbox/reset through the API server). It keeps
    every (token, message) pair it accepted, to find duplicates: over a gateway run's warm-up and
    first N, millions of them filled its heap, its CPU per request rose more than fourfold (0.51
    cores for 2,800 deliveries/s against 0.19 for 4,600), and the gateways waited on it.
    The reset is idempotent, so one the API server's proxy could not deliver (ServiceUnavailable:
    a CI run's proxy wrote to a connection the sandbox had just closed) is sent again."""
    path = f"/api/v1/namespaces/{target.namespace}/services/{target.sandbox_service}/proxy/sandbox/reset"
    for attempt in range(1, attempts + 1):
        try:
            _kubectl(target, "create", "--raw", path, "-f", "-", stdin="{}")
            break
        except RuntimeError as error:
            if "(ServiceUnavailable)" not in str(error) or attempt == attempts:
                raise
            say(f"    provider sandbox: reset not delivered (attempt {attempt} of {attempts}), again")
            pause(1.0)
    say("    provider sandbox: record cleared")


def empty_queues(target: KubeTarget, say: Callable[[str], None]) -> None:
    """Purges the send queues through rabbitmqctl in RabbitMQ's pod, if the target names one."""
    if not target.rabbitmq_pod:
        return
    for queue in SEND_QUEUES:
        printed = _kubectl(target, "exec", target.rabbitmq_pod, "-c", "rabbitmq", "--",
                           "rabbitmqctl", "purge_queue", queue)
        say(f"    {queue}: {printed.strip().splitlines()[-1] if printed.strip() else 'purged'}")


def _job_state(target: KubeTarget, job: str) -> str | None:
    status = json.loads(_kubectl(target, "get", f"job/{job}", "-o", "json")).get("status", {})
    if status.get("succeeded"):
        return "complete"
    if status.get("failed"):
        return "failed"
    return None


def run_kubernetes(run_dir: Path, replicas: list[int], settings: ScaleOutSettings,
                   target: KubeTarget, *, say: Callable[[str], None] = print) -> list[int]:
    """Measures each N in ``replicas``, in the order given, not yet complete in ``run_dir``
    (descending saves a JVM start per N: scaling down only stops pods)."""
    if shutil.which(target.kubectl) is None:
        raise RuntimeError(f"{target.kubectl} not found on PATH")
    run_dir = Path(run_dir)
    scenario = SCENARIOS[settings.service]
    todo = still_to_measure(run_dir, replicas, say)
    if not todo:
        return []
    configmap = f"herald-load-{settings.service}"
    _kubectl(target, "apply", "-f", "-",
             stdin=json.dumps(configmap_manifest(configmap, scenario.locustfile)))
    original = json.loads(_kubectl(target, "get", f"deployment/{target.deployment}", "-o", "json"))
    if target.warm_up_cpu_limit and not target.cpu_limit:
        raise ValueError("a warm-up CPU limit needs the CPU limit to lower the pods to (--cpu-limit)")
    limits = ",".join(f"{what}={value}" for what, value in (("cpu", target.warm_up_cpu_limit or target.cpu_limit),
                                                           ("memory", target.memory_limit)) if value)
    if target.cpu_limit:
        _tolerate_slow_probes(target, original)
    if target.jvm_options:
        say(f"deployment/{target.deployment}: JAVA_TOOL_OPTIONS += {target.jvm_options}")
        _kubectl(target, "patch", f"deployment/{target.deployment}", "--type=json",
                 "-p", json.dumps(_jvm_options_patch(original, target.jvm_options)))
    if limits or target.cpu_request:
        limits = [f"--limits={limits}"] if limits else []
        requests = [f"--requests=cpu={target.cpu_request}"] if target.cpu_request else []
        say(f"deployment/{target.deployment}: {' '.join(limits + requests)}")
        _kubectl(target, "set", "resources", f"deployment/{target.deployment}", *limits, *requests)
    if limits or target.cpu_request or target.jvm_options:
        # A change rolls the pods: let that finish first, or old and new pods start side by side.
        _kubectl(target, "rollout", "status", f"deployment/{target.deployment}", "--timeout=600s")
    context = _kubectl(target, "config", "current-context").strip()
    # The code this process loaded: read once, at the start, so that a commit made during a long run
    # does not show in the meta.json of the N measured after it.
    revision = git_revision(repository_root())
    settings_record = {k: (list(v) if isinstance(v, tuple) else v)
                       for k, v in asdict(settings).items() if k not in LOCAL_ONLY}
    try:
        if target.warm_up_run_s:
            _warm_up(target, settings, configmap, todo[0], say)
        settle = _settle(run_dir, target, settings, configmap, todo[0], say) if target.settle_max_s else None
        return _measure_each(run_dir, todo, settings, target, configmap, context, revision,
                             settings_record, say, settle)
    finally:
        _restore(target, original, say)


# A pod throttled at its CPU limit answers its probes late: at 100m a saturated gateway missed
# three 3 s liveness probes and was killed (exit 143) mid-run. The run measures throughput, not
# probe latency, so the measured pods get 10 s per probe and 12 misses (2 minutes) before the
# kubelet acts; a pod that hangs longer is still restarted (and the restart recorded).
# A JVM starting under a CPU limit of a few tens of millicores takes minutes to pass its startup
# probe (Spring's start costs some CPU-seconds): the startup probe gets SLOW_START_S in all.
SLOW_PROBE = {"timeoutSeconds": 10, "failureThreshold": 12}
SLOW_START_S = 900
PROBES = ("startupProbe", "livenessProbe", "readinessProbe")


def _slow(probe: str, spec: dict) -> dict:
    if probe != "startupProbe":
        return {**spec, **SLOW_PROBE}
    period = spec.get("periodSeconds", 10)
    return {**spec, "timeoutSeconds": SLOW_PROBE["timeoutSeconds"],
            "failureThreshold": max(spec.get("failureThreshold", 3), -(-SLOW_START_S // period))}


def _tolerate_slow_probes(target: KubeTarget, deployment: dict) -> None:
    patch = [{"op": "replace", "path": f"/spec/template/spec/containers/{i}/{probe}",
              "value": _slow(probe, c[probe])}
             for i, c in enumerate(deployment["spec"]["template"]["spec"]["containers"])
             for probe in PROBES if probe in c]
    if patch:
        _kubectl(target, "patch", f"deployment/{target.deployment}", "--type=json",
                 "-p", json.dumps(patch))


def _jvm_options_patch(deployment: dict, options: str) -> list[dict]:
    """JSON patch appending ``options`` to each container's JAVA_TOOL_OPTIONS (added if absent)."""
    patch = []
    for i, c in enumerate(deployment["spec"]["template"]["spec"]["containers"]):
        env = c.get("env", [])
        at = next((j for j, e in enumerate(env) if e["name"] == "JAVA_TOOL_OPTIONS"), None)
        if at is None:
            patch.append({"op": "add", "path": f"/spec/template/spec/containers/{i}/env",
                          "value": env + [{"name": "JAVA_TOOL_OPTIONS", "value": options}]})
        else:
            value = f"{env[at].get('value', '')} {options}".strip()
            patch.append({"op": "replace", "path": f"/spec/template/spec/containers/{i}/env/{at}",
                          "value": {"name": "JAVA_TOOL_OPTIONS", "value": value}})
    return patch


def _restore(target: KubeTarget, original: dict, say: Callable[[str], None]) -> None:
    """The Deployment as the run found it (replicas, each container's resources and probes), so
    that the next service's run is not limited by what this one set."""
    patch = [{"op": "replace", "path": "/spec/replicas", "value": original["spec"]["replicas"]}]
    for i, c in enumerate(original["spec"]["template"]["spec"]["containers"]):
        patch.append({"op": "replace", "path": f"/spec/template/spec/containers/{i}/resources",
                      "value": c.get("resources", {})})
        patch += [{"op": "replace", "path": f"/spec/template/spec/containers/{i}/{probe}",
                   "value": c[probe]} for probe in PROBES if probe in c]
        if target.jvm_options:
            patch.append({"op": "replace", "path": f"/spec/template/spec/containers/{i}/env",
                          "value": c["env"]} if "env" in c
                         else {"op": "remove", "path": f"/spec/template/spec/containers/{i}/env"})
    say(f"deployment/{target.deployment}: back to {original['spec']['replicas']} replica(s) and its "
        f"own resources")
    _kubectl(target, "patch", f"deployment/{target.deployment}", "--type=json",
             "-p", json.dumps(patch))
    _kubectl(target, "rollout", "status", f"deployment/{target.deployment}", "--timeout=600s")


def _start_job(target: KubeTarget, settings: ScaleOutSettings, configmap: str, kind: str, n: int,
               pods: list[dict], duration_s: int | None = None) -> str:
    """Applies a Locust Job of ``kind`` (warm-up, settle, nN) at N = ``n`` against ``pods``, for
    ``duration_s`` (default: the run's); its name."""
    job = f"herald-load-{settings.service}-{kind}-{int(time.time())}"
    run = settings if duration_s is None else replace(settings, duration_s=duration_s)
    _kubectl(target, "apply", "-f", "-", stdin=json.dumps(
        job_manifest(job, configmap, target, run, n, **_job_addresses(settings, target, pods))))
    return job


def _warm_up(target: KubeTarget, settings: ScaleOutSettings, configmap: str, n: int,
              say: Callable[[str], None]) -> None:
    """A Locust Job at the first N whose figures are thrown away: JVMs started cold under a small
    CPU limit compile their hot path for minutes, which would bias the first N measured low."""
    seconds = int(target.warm_up_run_s)
    say(f"warm-up: deployment/{target.deployment} at {n}, a {seconds} s Locust Job (discarded)")
    _kubectl(target, "scale", f"deployment/{target.deployment}", f"--replicas={n}")
    _, pods = _ready_pods(target)
    job = _start_job(target, settings, configmap, "warm-up", n, pods, seconds)
    deadline = time.monotonic() + seconds + 600
    while _job_state(target, job) is None:
        if time.monotonic() > deadline:
            raise RuntimeError(f"warm-up Job {job} did not finish in time")
        time.sleep(target.sample_every_s)
    _kubectl(target, "delete", f"job/{job}", "--wait=false")


def _settle(run_dir: Path, target: KubeTarget, settings: ScaleOutSettings, configmap: str, n: int,
            say: Callable[[str], None]) -> dict:
    """A discarded Locust Job at N = ``n``, with the pods already at the measured CPU limit (resized
    in place first when they warmed up at a larger one), that ends as soon as the pods' CPU per unit
    of work agrees within SETTLE_TOLERANCE over SETTLE_WINDOWS target.settle_window_s windows in a row, with
    their compilers busy at most JIT_BUSY_PCT of each (after the Job's first target.warmup_s, its ramp),
    or after target.settle_max_s. Its windows go to
    ``settle.json`` in the run folder, its samples to ``settle-resources.csv``; the summary returned
    goes into each N's meta.json."""
    scenario = SCENARIOS[settings.service]
    max_s = int(target.settle_max_s)
    _kubectl(target, "scale", f"deployment/{target.deployment}", f"--replicas={n}")
    _, pods = _ready_pods(target)
    cpu_limits = _lower_in_place(target, pods, say) if target.warm_up_cpu_limit else None
    names = [p["metadata"]["name"] for p in pods]
    empty_queues(target, say)
    _, nodes = _components(target)
    run_dir.mkdir(parents=True, exist_ok=True)
    say(f"settling: {len(pods)} pod(s) at N = {n}, a discarded Locust Job until their CPU per unit "
        f"agrees within {SETTLE_TOLERANCE:.0%} over {SETTLE_WINDOWS} {target.settle_window_s:.0f} s windows in a row "
        f"with their JIT busy at most {JIT_BUSY_PCT:.0f} % of each (at most {max_s} s)")
    job = _start_job(target, settings, configmap, "settle", n, pods, max_s + int(target.warmup_s))
    windows, steady = [], False
    with ClusterSampler(target, nodes, scenario, names) as sampler:
        while not steady:
            time.sleep(target.sample_every_s)
            found = unit_windows(sampler.rows, names, target.settle_window_s, target.warmup_s)
            for window in found[len(windows):]:
                say(f"    settling: {window['from_s']:.0f}-{window['to_s']:.0f} s, "
                    f"{window['units_per_s']:.0f} units/s, {window['pods_cores']:.3f} cores, "
                    f"{window['cpu_us_per_unit']} µs per unit, JIT busy {window['jit_pct']} %")
            windows, steady = found, settled(found)
            elapsed = time.monotonic() - sampler.started
            if _job_state(target, job) is not None or elapsed > max_s + target.warmup_s + 60:
                break
    _kubectl(target, "delete", f"job/{job}", "--wait=false")
    sampler.write(run_dir / "settle-resources.csv")
    record = {"n": n, "pods": names, "steady": steady, "seconds": round(time.monotonic() - sampler.started),
              "max_s": max_s, "window_s": target.settle_window_s, "tolerance": SETTLE_TOLERANCE,
              "cpu_limits": cpu_limits, "job": job, "sampling_errors": sampler.errors}
    (run_dir / "settle.json").write_text(json.dumps({**record, "windows": windows}, indent=2) + "\n")
    say(f"settling: {'steady' if steady else 'NOT steady'} after {record['seconds']} s "
        f"({len(windows)} windows; the last {windows[-1]['cpu_us_per_unit'] if windows else None} µs per unit)")
    return {**record, "last_windows": windows[-SETTLE_WINDOWS:]}


def _measure_each(run_dir: Path, todo: list[int], settings: ScaleOutSettings, target: KubeTarget,
                  configmap: str, context: str, revision: str | None, settings_record: dict,
                  say: Callable[[str], None], settle: dict | None = None) -> list[int]:
    """``settle``: what _settle found before the first N (its summary goes into each meta.json)."""
    scenario = SCENARIOS[settings.service]
    per_n_s = settings.duration_s + 60
    measured = []
    for index, n in enumerate(todo):
        folder = run_dir / f"n={n}"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        say(f"N = {n} ({index + 1} of {len(todo)}): scaling deployment/{target.deployment} to {n}")
        _kubectl(target, "scale", f"deployment/{target.deployment}", f"--replicas={n}")
        deployment, ready = _ready_pods(target)
        cpu_limits = _lower_in_place(target, ready, say) if target.warm_up_cpu_limit else None
        empty_queues(target, say)
        if scenario.counter is None:        # the sandbox's count is the measurement
            reset_sandbox(target, say)
        components, nodes = _components(target)
        restarts_before = _restarts(target)
        started_at, load_before = _now(), _loadavg()
        job = _start_job(target, settings, configmap, f"n{n}", n, ready)
        say(f"N = {n}: {len(ready)} pod(s) ready; Locust Job {job} for {settings.duration_s} s "
            f"(load average {load_before})")
        deadline = time.monotonic() + settings.duration_s + 600
        with ClusterSampler(target, nodes, scenario, [p["metadata"]["name"] for p in ready]) as sampler:
            state = None
            while state is None:
                time.sleep(target.sample_every_s)
                state = _job_state(target, job)
                if time.monotonic() > deadline:
                    raise RuntimeError(f"N = {n}: Job {job} did not finish in time")
                elapsed = time.monotonic() - sampler.started
                rates = sampler.latest_rates()
                host = ", ".join(f"{name[5:]} {v:.2f} cores" for name, v in rates.items()
                                 if name.startswith("node/"))
                left = (per_n_s * (len(todo) - index) - elapsed) / 60
                rate = (f"{rates.get('service', 0):6.0f} {scenario.counter}/s" if scenario.counter
                        else f"{rates.get('sandbox', 0):6.0f} deliveries/s")
                say(f"    N = {n}: {elapsed:4.0f}/{settings.duration_s} s, "
                    f"{rate}, {host or 'host CPU n/a'}, "
                    f"queues {sampler.latest_queues()}"
                    f"{' (RabbitMQ memory alarm: publishing blocked)' if sampler.memory_alarm() else ''}, "
                    f"load {_loadavg().split()[0]}, "
                    f"about {left:.0f} min of the run left")
        ended_at, load_after = _now(), _loadavg()
        restarts = {pod: count - restarts_before.get(pod, 0) for pod, count in _restarts(target).items()
                    if count > restarts_before.get(pod, 0)}
        if restarts:
            say(f"N = {n}: containers restarted during the run: {restarts}")
        log = _kubectl(target, "logs", f"job/{job}")
        (folder / "job.log").write_text(log)
        files = split_csv_log(log)
        if state != "complete" or not any(name.endswith("_stats_history.csv") for name in files):
            raise RuntimeError(f"N = {n}: Job {job} {state}; its log: {folder / 'job.log'}")
        for name, text in files.items():
            (folder / name).write_text(text)
        sampler.write(folder / "resources.csv")
        # The window ends when the load does: Locust sends for duration_s from its pod's start, a
        # little after the sampler's t = 0, and the Job is seen complete some seconds later. A window
        # that ran to that last sample took in the seconds after the senders stopped (the
        # dispatcher's accepts fell to nothing there).
        end_s = min(max(r[0] for r in sampler.rows), float(settings.duration_s))
        resources = plateau_resources(sampler.rows, min(target.warmup_s, end_s / 2), end_s,
                                      components)
        write_meta(folder, {
            "n": n, "run_id": run_dir.name, "scenario": scenario.locustfile.removesuffix(".py"),
            "service": settings.service, "measured": scenario.what,
            "throughput_row": scenario.throughput_row, "users": settings.users(n),
            "settings": settings_record,
            "git_revision": revision,
            "machine": {"mode": "kubernetes", "context": context, "namespace": target.namespace,
                        "nodes": nodes, "cpus": os.cpu_count(),
                        "node_cpu_capacity": _node_cpus(target, nodes),
                        "note": "cpus and loadavg: the machine the runner ran on"},
            "deployment": _deployment_record(target, deployment),
            "pods": [p["metadata"]["name"] for p in ready],
            **({"cpu_limit_in_place": {"warm_up": target.warm_up_cpu_limit, "measured": target.cpu_limit,
                                       "pods": cpu_limits}} if cpu_limits is not None else {}),
            **({"settled": settle} if settle is not None else {}),
            "started_at": started_at, "ended_at": ended_at,
            "load_before": load_before, "load_after": load_after,
            "resources": resources, "sampling_errors": sampler.errors,
            "restarts_during_run": restarts,
            "job": job, "locust_image": target.image, "complete": True})
        _kubectl(target, "delete", f"job/{job}", "--wait=false")
        measured.append(n)
        say(f"N = {n}: done; host {resources['nodes_cores']} cores, gateways/others "
            f"{resources['components_cores']}; {folder}")
    return measured


def millicores(quantity: str) -> int:
    """A CPU quantity as Kubernetes writes it ("50m", "1", "0.5") in millicores."""
    return int(quantity[:-1]) if quantity.endswith("m") else round(float(quantity) * 1000)


def resize_patch(pod: dict, cpu_limit: str) -> list[dict]:
    """JSON patch lowering (or raising) each container's CPU limit of a running pod; its request
    and everything else as they are (the pod's QoS class may not change in a resize)."""
    return [{"op": "add", "path": f"/spec/containers/{i}/resources/limits/cpu", "value": cpu_limit}
            for i, _ in enumerate(pod["spec"]["containers"])]


def applied_cpu_limits(pod: dict) -> list[str | None]:
    """Each container's CPU limit as the kubelet reports having applied it (the status, not the
    spec); None while the pod has a resize pending or in progress."""
    if pod["status"].get("resize"):
        return [None for _ in pod["spec"]["containers"]]
    return [(c.get("resources") or {}).get("limits", {}).get("cpu")
            for c in pod["status"].get("containerStatuses", [])]


RESIZE_TIMEOUT_S = 120


def _lower_in_place(target: KubeTarget, pods: list[dict], say: Callable[[str], None]) -> dict[str, str]:
    """Resizes each pod not yet at target.cpu_limit to it, waits until the kubelet reports it
    applied (the container's cgroup quota), and returns each pod's applied limit."""
    wanted = millicores(target.cpu_limit)
    names = [p["metadata"]["name"] for p in pods]
    for pod in pods:
        if any(millicores(c["resources"].get("limits", {}).get("cpu", "0")) != wanted
               for c in pod["spec"]["containers"]):
            say(f"pod/{pod['metadata']['name']}: CPU limit lowered in place to {target.cpu_limit}")
            _kubectl(target, "patch", f"pod/{pod['metadata']['name']}", "--type=json",
                     "-p", json.dumps(resize_patch(pod, target.cpu_limit)))
    deadline = time.monotonic() + RESIZE_TIMEOUT_S
    while True:
        listed = json.loads(_kubectl(target, "get", "pods", *names, "-o", "json"))
        current = {p["metadata"]["name"]: p for p in listed.get("items", [listed])}  # one name: no List
        applied = {name: applied_cpu_limits(current[name]) for name in names}
        if all(limits and all(v is not None and millicores(v) == wanted for v in limits)
               for limits in applied.values()):
            return {name: limits[0] for name, limits in applied.items()}
        if time.monotonic() > deadline:
            raise RuntimeError(f"the pods' CPU limits were not resized to {target.cpu_limit} within "
                               f"{RESIZE_TIMEOUT_S} s (is InPlacePodVerticalScaling on?): {applied}")
        time.sleep(1)


def _node_cpus(target: KubeTarget, nodes: list[str]) -> dict[str, str]:
    out = {}
    for node in nodes:
        described = json.loads(subprocess.run([target.kubectl, "get", "node", node, "-o", "json"],
                                              capture_output=True, text=True, timeout=60).stdout or "{}")
        out[node] = described.get("status", {}).get("capacity", {}).get("cpu", "?")
    return out
