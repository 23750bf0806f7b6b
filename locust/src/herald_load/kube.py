"""Kubernetes mode of the scale-out runner: ``kubectl scale`` a Deployment to N, wait until N
replicas are ready, run Locust as a Job in the cluster, and collect its CSVs from the Job's log.

Why a Job and the log: the official image (``locustio/locust``) has Locust and ``requests``;
the scenario and :mod:`herald_load` come in through a ConfigMap mounted at ``/mnt/locust``, and
the container prints each CSV between markers after Locust exits, so nothing needs a volume
that outlives the pod or ``kubectl cp`` into a finished container.

The Job provisions its own app (``test_start`` in the locustfile) through the dispatcher's
admin API, with the admin token from a Secret (``--admin-secret``, key ``admin-token``). The
sandbox's counters must be reachable from the Job (``--sandbox-url``).

Not exercised end to end on the development machine (no cluster there); the manifests and the
kubectl calls are unit-tested against a stand-in ``kubectl``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from .machine import git_revision
from .processes import repository_root
from .scaleout import SCENARIOS, SCENARIO_DIR, ScaleOutSettings, completed, write_meta

__all__ = ["KubeTarget", "job_manifest", "configmap_manifest", "split_csv_log", "run_kubernetes"]

PACKAGE_DIR = Path(__file__).resolve().parent
BEGIN, END = "=== herald-csv-begin ", "=== herald-csv-end"


@dataclass(frozen=True)
class KubeTarget:
    namespace: str
    deployment: str
    dispatcher_url: str
    sandbox_url: str
    admin_secret: str = "herald-admin"
    image: str = "locustio/locust:2.47.0"
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
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": files}


def job_manifest(name: str, configmap: str, target: KubeTarget, settings: ScaleOutSettings,
                 n: int) -> dict:
    scenario = SCENARIOS[settings.service]
    users = settings.users(n)
    locust = (f"locust -f /mnt/locust/scenarios/{scenario.locustfile} "
              f"{' '.join(scenario.user_classes)} --headless -u {users} -r {users} "
              f"-t {settings.duration_s}s --csv /tmp/out/locust --csv-full-history "
              f"--host {target.dispatcher_url} --only-summary --stop-timeout 5")
    script = (
        "set -u; mkdir -p /tmp/out /mnt/locust/scenarios /mnt/locust/herald_load; "
        "for f in /mnt/config/*; do b=$(basename $f); "
        "cp $f /mnt/locust/$(echo $b | sed 's|__|/|'); done; "
        f"{locust}; code=$?; "
        f"for f in /tmp/out/*.csv; do echo \"{BEGIN}$(basename $f)\"; cat $f; echo \"{END}\"; "
        "done; exit $code")
    env = [{"name": "PYTHONPATH", "value": "/mnt/locust"},
           {"name": "HOME", "value": "/tmp"},          # read-only root filesystem
           {"name": "HERALD_SANDBOX_URL", "value": target.sandbox_url},
           {"name": "HERALD_DISPATCHERS", "value": target.dispatcher_url},
           {"name": "HERALD_LOAD_DEVICES", "value": str(settings.devices)},
           {"name": "HERALD_LOAD_BACKLOG", "value": str(settings.backlog_per_replica * n)},
           {"name": "HERALD_ADMIN_TOKEN", "valueFrom": {"secretKeyRef": {
               "name": target.admin_secret, "key": "admin-token"}}}]
    return {
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
        "spec": {"backoffLimit": 0, "ttlSecondsAfterFinished": 3600, "template": {
            "metadata": {"labels": {"app.kubernetes.io/name": "herald-load"}},
            "spec": {
                "restartPolicy": "Never",
                "securityContext": {"runAsNonRoot": True, "runAsUser": 1000},
                "containers": [{
                    "name": "locust", "image": target.image,
                    "command": ["/bin/sh", "-c", script], "env": env,
                    "resources": {"requests": {"cpu": "1", "memory": "512Mi"}},
                    "securityContext": {"readOnlyRootFilesystem": True,
                                        "allowPrivilegeEscalation": False},
                    "volumeMounts": [{"name": "config", "mountPath": "/mnt/config"},
                                     {"name": "work", "mountPath": "/mnt/locust"},
                                     {"name": "out", "mountPath": "/tmp"}]}],
                "volumes": [{"name": "config", "configMap": {"name": configmap}},
                            {"name": "work", "emptyDir": {}},
                            {"name": "out", "emptyDir": {}}]}}}}


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


def run_kubernetes(run_dir: Path, replicas: list[int], settings: ScaleOutSettings,
                   target: KubeTarget, *, say: Callable[[str], None] = print) -> list[int]:
    if shutil.which(target.kubectl) is None:
        raise RuntimeError(f"{target.kubectl} not found on PATH")
    run_dir = Path(run_dir)
    scenario = SCENARIOS[settings.service]
    configmap = f"herald-load-{settings.service}"
    _kubectl(target, "apply", "-f", "-",
             stdin=json.dumps(configmap_manifest(configmap, scenario.locustfile)))
    measured = []
    for n in replicas:
        folder = run_dir / f"n={n}"
        if completed(folder):
            say(f"N = {n}: already complete in {folder}, skipped")
            continue
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        say(f"N = {n}: scaling deployment/{target.deployment} to {n}")
        _kubectl(target, "scale", f"deployment/{target.deployment}", f"--replicas={n}")
        _kubectl(target, "rollout", "status", f"deployment/{target.deployment}", "--timeout=600s")
        job = f"herald-load-{settings.service}-n{n}-{int(time.time())}"
        started_at = _now()
        say(f"N = {n}: Locust Job {job} for {settings.duration_s} s")
        _kubectl(target, "apply", "-f", "-",
                 stdin=json.dumps(job_manifest(job, configmap, target, settings, n)))
        _kubectl(target, "wait", "--for=condition=complete", f"job/{job}",
                 f"--timeout={settings.duration_s + 600}s", timeout=settings.duration_s + 660)
        files = split_csv_log(_kubectl(target, "logs", f"job/{job}"))
        if not any(name.endswith("_stats_history.csv") for name in files):
            raise RuntimeError(f"N = {n}: the Job's log carries no stats history")
        for name, text in files.items():
            (folder / name).write_text(text)
        write_meta(folder, {
            "n": n, "run_id": run_dir.name, "scenario": scenario.locustfile.removesuffix(".py"),
            "service": settings.service, "measured": scenario.what,
            "throughput_row": scenario.throughput_row, "users": settings.users(n),
            "settings": {k: (list(v) if isinstance(v, tuple) else v)
                         for k, v in asdict(settings).items()},
            "git_revision": git_revision(repository_root()),
            "machine": {"mode": "kubernetes", "namespace": target.namespace,
                        "deployment": target.deployment,
                        "context": _kubectl(target, "config", "current-context").strip()},
            "started_at": started_at, "ended_at": _now(), "job": job, "complete": True})
        measured.append(n)
        say(f"N = {n}: done; {folder}")
    return measured
