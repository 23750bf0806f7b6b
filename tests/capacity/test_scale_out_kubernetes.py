"""The capacity pipeline from real pods, short (issue 14's "prove it": 2 replicas, short plateaus): the
runner's Kubernetes mode, the fit and the report, end to end on the shared cluster's real node. It
checks the pipeline, not the figures.

One run (module fixture `outcome`) on Herald as the `platform` fixture installed it (tests/heraldnode.py):
  - the Locust image (scripts/k8s/images.sh locust, cached by its inputs) imported into the node;
  - `scripts/scale-out.sh gateway --mode kubernetes` (the command tests/scaleoutnode.py runs): the
    gateway Deployment started at a CPU limit of one core, its pods resized in place to a smaller one
    before each N is measured, at N = 2, then 1, Locust as a Job on the real node, each N
    sampled (the kubelet's CPU counters, RabbitMQ's queues, the sandbox's deliveries), the notebook
    and the capacity report written into the run folder (locust/runs/ci-gateway-kubernetes/, kept);
  - then checked: both N complete, each with a throughput and the CPU of each measured pod; the fit
    with an interval for each parameter, or, from two points, Amdahl exact (or refused for what the
    two points say) and the USL refused, each saying why; the report saying it came from Kubernetes
    mode; the gateway Deployment as the run found it (replicas and pod template), so the modules
    after this one see the node values; no Job and no Locust pod left.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass

import pytest

from heraldnode import ROOT, Herald
from realnode import import_images
from scaleoutnode import SUPPORT_PROBE, scale_out_command, support_patch
from sharedcluster import attach, built_image

on_the_shared_cluster = pytest.mark.skipif(attach() is None,
                                           reason="runs on the shared test cluster (HERALD_TEST_CLUSTER)")

SERVICE, RELEASE, CHART = "gateway", "herald-gateway", "gateway"   # the Deployment is named as its release
RUN_DIR = ROOT / "locust" / "runs" / "ci-gateway-kubernetes"
# Short and light: two JVMs under a CPU limit small beside the node's 2 cores, 40 s per N (the
# report's plateau after 10 s), a small audience and backlog. Two points determine Amdahl exactly
# (no interval) and are too few for the USL: what the report then says is checked (fit_problems).
# The pods start at WARM_UP_CPU_LIMIT and are resized in place to CPU_LIMIT before they are measured
# (what real runs do, so that JVMs are not measured compiling).
MAX_N = 2
CPU_LIMIT, WARM_UP_CPU_LIMIT = "500m", "1"
OPTIONS = ["--run-id", RUN_DIR.name, "--max-n", str(MAX_N), "--descending", "--cpu-limit", CPU_LIMIT,
           "--warm-up-cpu-limit", WARM_UP_CPU_LIMIT,
           "--duration", "40", "--warmup", "10", "--devices", "200", "--backlog-per-replica", "500"]
RUN_TIMEOUT = 1200  # s; expected about 4 minutes warm (three JVM starts, two 40 s Jobs, the notebook)
# herald_load.kube's LABELS, on its ConfigMap, each Job and its pod (the suites' venv has herald_load
# without its dependencies, so not kube.py itself).
LOAD_SELECTOR = "app.kubernetes.io/name=herald-load"


# ---------------------------------------------------------------- what is checked (pure)

def fit_problems(capacity: dict) -> list[str]:
    """What capacity.json's fits lack: each fitted parameter with an interval around its value; an
    exact fit (Amdahl through two points: no residual to estimate an interval from) only from two
    points, with a value for each parameter; a refused model with its reason, and Amdahl refused only
    for what the points say (two points that did not rise, or rose superlinearly: the figures, which
    this run does not judge), never for too few points (herald_capacity's InsufficientDataError)."""
    points = len(capacity.get("points", []))
    problems = []
    for name in ("amdahl", "usl"):
        model = capacity.get("models", {}).get(name)
        if model is None:
            problems.append(f"{name}: no result")
            continue
        status, refusal = model.get("status"), model.get("refusal") or ""
        if status == "refused":
            if not refusal:
                problems.append(f"{name}: refused without a reason")
            elif name == "amdahl" and points >= 2 and "needs at least" in refusal:
                problems.append(f"amdahl: refused for too few points from {points}: {refusal}")
            continue
        if status not in ("fitted", "exact") or (status == "exact") != (points == 2):
            problems.append(f"{name}: {status} from {points} points")
        if not model.get("parameters"):
            problems.append(f"{name}: no parameters")
        for parameter, interval in (model.get("parameters") or {}).items():
            value, low, high = interval.get("value"), interval.get("low"), interval.get("high")
            if not isinstance(value, (int, float)):
                problems.append(f"{name}.{parameter}: no value")
            elif status == "fitted" and not (isinstance(low, (int, float)) and isinstance(high, (int, float))
                                             and low <= value <= high):
                problems.append(f"{name}.{parameter} = {value}: no interval around it ({low} – {high})")
    return problems


def as_found(deployment: dict) -> dict:
    """What the run must put back: the replicas and the pod template (resources, probes, the rest)."""
    return {"replicas": deployment["spec"]["replicas"], "template": deployment["spec"]["template"]}


def test_two_points_give_an_exact_amdahl_and_a_refused_usl_which_is_no_problem():
    assert fit_problems({"points": [{}, {}], "models": {
        "amdahl": {"status": "exact", "parameters": {"lambda": {"value": 1000.0, "low": None, "high": None},
                                                     "sigma": {"value": 0.05, "low": None, "high": None}}},
        "usl": {"status": "refused", "refusal": "USL fit refused: it needs at least 4 measured points"}}}) == []


def test_a_fitted_parameter_needs_an_interval_around_its_value():
    fitted = {"status": "fitted", "parameters": {"lambda": {"value": 1019.4, "low": 707.7, "high": 1331.0},
                                                 "sigma": {"value": 0.086, "low": 0.0, "high": 0.3}}}
    assert fit_problems({"points": [{}, {}, {}], "models": {
        "amdahl": fitted, "usl": {"status": "refused", "refusal": "needs 4 points"}}}) == []

    no_interval = {"status": "fitted", "parameters": {"lambda": {"value": 1019.4, "low": None, "high": None},
                                                      "sigma": {"value": 0.086, "low": 0.1, "high": 0.3}}}
    assert fit_problems({"points": [{}, {}, {}], "models": {"amdahl": no_interval, "usl": fitted}}) == [
        "amdahl.lambda = 1019.4: no interval around it (None – None)",
        "amdahl.sigma = 0.086: no interval around it (0.1 – 0.3)"]


def test_amdahl_refused_for_what_two_points_say_is_no_problem_but_for_their_number_it_is():
    usl = {"status": "refused", "refusal": "USL fit refused: it needs at least 4 measured points"}
    flat = {"status": "refused", "refusal": "Throughput did not rise with replicas (1,000.0 at N = 1, ...)"}
    assert fit_problems({"points": [{}, {}], "models": {"amdahl": flat, "usl": usl}}) == []

    too_few = {"status": "refused", "refusal": "Amdahl fit refused: it needs at least 3 measured points"}
    assert fit_problems({"points": [{}, {}], "models": {"amdahl": too_few, "usl": {"status": "refused"}}}) == [
        "amdahl: refused for too few points from 2: Amdahl fit refused: it needs at least 3 measured points",
        "usl: refused without a reason"]


def test_an_exact_fit_from_more_than_two_points_or_a_missing_model_is_a_problem():
    exact = {"status": "exact", "parameters": {"lambda": {"value": 1000.0, "low": None, "high": None}}}
    assert fit_problems({"points": [{}, {}, {}], "models": {"amdahl": exact}}) == [
        "amdahl: exact from 3 points", "usl: no result"]


def test_support_deployments_get_patient_probes_and_memory_only_where_asked():
    found = {"spec": {"template": {"spec": {"containers": [{
        "resources": {"requests": {"cpu": "100m"}, "limits": {"memory": "384Mi"}},
        "livenessProbe": {"httpGet": {"path": "/l"}, "timeoutSeconds": 1, "failureThreshold": 3},
        "startupProbe": {"httpGet": {"path": "/s"}}}]}}}}
    patched = support_patch(found, "1Gi")
    assert {"op": "replace", "path": "/spec/template/spec/containers/0/resources",
            "value": {"requests": {"cpu": "100m"}, "limits": {"memory": "1Gi"}}} in patched
    assert {"op": "replace", "path": "/spec/template/spec/containers/0/livenessProbe",
            "value": {"httpGet": {"path": "/l"}, **SUPPORT_PROBE}} in patched
    assert not any(p["path"].endswith("startupProbe") for p in patched)   # the start is not what failed
    assert [p["path"] for p in support_patch(found, None)] == ["/spec/template/spec/containers/0/livenessProbe"]


# ---------------------------------------------------------------- the run

@dataclass(frozen=True)
class Outcome:
    returncode: int
    found: dict          # the gateway Deployment before the run
    after: dict          # and after it
    jobs_left: list[str]  # by the runner (it deletes each Job once it read its log)
    pods_left: list[str]  # Locust pods still there after everything labelled was deleted


def load_objects(herald: Herald, kind: str, deleting: bool = False) -> list[str]:
    """The runner's objects of `kind` (with those being deleted: `deleting`)."""
    listed = json.loads(herald.kube.kubectl("get", kind, "-n", herald.namespace, "-l", LOAD_SELECTOR, "-o", "json"))
    return [o["metadata"]["name"] for o in listed["items"] if deleting or not o["metadata"].get("deletionTimestamp")]


def remove_load_objects(herald: Herald, timeout: float = 120, every: float = 2) -> list[str]:
    """Every Job and ConfigMap of the runner deleted (a failed N leaves its Job, and the runner
    keeps its ConfigMap for a next run); the Locust pods still there after `timeout` s (polled)."""
    herald.kube.kubectl("delete", "jobs,configmaps", "-n", herald.namespace, "-l", LOAD_SELECTOR,
                        "--cascade=foreground", "--wait=false")
    deadline = time.monotonic() + timeout
    while (pods := load_objects(herald, "pods", deleting=True)) and time.monotonic() < deadline:
        time.sleep(every)
    return pods


class StandInKube:
    """Answers `kubectl get pods` with each of `pods` in turn (the last one from then on), and
    records every call."""

    def __init__(self, *pods: list[dict]):
        self.pods, self.calls = list(pods), []

    def kubectl(self, *args: str) -> str:
        self.calls.append(args)
        items = (self.pods.pop(0) if len(self.pods) > 1 else self.pods[0]) if args[:2] == ("get", "pods") else []
        return json.dumps({"items": items})


def test_what_the_runner_left_is_deleted_by_its_label_and_its_pods_waited_for():
    terminating = {"metadata": {"name": "herald-load-gateway-n2-1", "deletionTimestamp": "2026-11-24T16:00:00Z"}}
    kube = StandInKube([terminating], [])

    assert remove_load_objects(Herald(kube, "busybox", "redis"), every=0) == []
    assert kube.calls[0] == ("delete", "jobs,configmaps", "-n", "herald-live", "-l", LOAD_SELECTOR,
                             "--cascade=foreground", "--wait=false")
    assert len(kube.calls) == 3      # the delete, the terminating pod seen, then none


def test_a_locust_pod_still_there_at_the_deadline_is_reported():
    stuck = {"metadata": {"name": "herald-load-gateway-n1-1"}}
    assert remove_load_objects(Herald(StandInKube([stuck]), "busybox", "redis"), timeout=0) == [
        "herald-load-gateway-n1-1"]


@pytest.fixture(scope="module")
def outcome(platform, node):
    herald, kube = platform, platform.kube

    def gateway() -> dict:
        return json.loads(kube.kubectl("get", f"deployment/{RELEASE}", "-n", herald.namespace, "-o", "json"))

    image, tarball = built_image("locust")
    import_images(node.socket, {image: tarball})
    shutil.rmtree(RUN_DIR, ignore_errors=True)  # complete N in it would be skipped (resume), not measured
    found = gateway()
    command = scale_out_command(SERVICE, herald.namespace, image, OPTIONS)
    print("\n==> " + " ".join(command), flush=True)
    started = time.monotonic()
    try:
        returncode = subprocess.run(command, env=dict(os.environ, KUBECONFIG=str(kube.kubeconfig)),
                                    timeout=RUN_TIMEOUT).returncode
        seconds = time.monotonic() - started
        jobs_left = load_objects(herald, "jobs")
    finally:
        pods_left = remove_load_objects(herald)
        after = gateway()
        if as_found(after) != as_found(found):  # the node values back for what runs after this module
            herald.helm_install(RELEASE, CHART)
    print(f"scale-out pipeline: {seconds:.0f} s (run, fit, report), run folder {RUN_DIR}", flush=True)
    return Outcome(returncode, found, after, jobs_left, pods_left)


def meta(n: int) -> dict:
    return json.loads((RUN_DIR / f"n={n}" / "meta.json").read_text())


def capacity_report() -> dict:
    return json.loads((RUN_DIR / "report" / "capacity.json").read_text())


@on_the_shared_cluster
def test_the_runner_fits_and_reports_without_an_error(outcome):
    assert outcome.returncode == 0


@on_the_shared_cluster
def test_each_n_is_complete_with_its_throughput_and_each_measured_pods_cpu(outcome, node):
    for n in range(1, MAX_N + 1):
        recorded = meta(n)
        resources = recorded["resources"]
        assert recorded["complete"] is True and recorded["machine"]["mode"] == "kubernetes"
        assert recorded["deployment"]["containers"][0]["resources"]["limits"]["cpu"] == WARM_UP_CPU_LIMIT
        assert len(recorded["pods"]) == n
        # each measured pod at CPU_LIMIT, as its kubelet reported having applied it
        assert recorded["cpu_limit_in_place"] == {"warm_up": WARM_UP_CPU_LIMIT, "measured": CPU_LIMIT,
                                                  "pods": {pod: CPU_LIMIT for pod in recorded["pods"]}}
        # ... and its CPU within it (10 % over for the sampling's edges)
        assert all(resources["pods_cores"][pod] <= 0.55 for pod in recorded["pods"]), resources["pods_cores"]
        assert all(resources["pods_cores"].get(pod, 0) > 0 for pod in recorded["pods"]), resources["pods_cores"]
        assert resources["nodes_cores"].get(node.name, 0) > 0, resources["nodes_cores"]
        assert (resources["sandbox_rate_per_s"] or 0) > 0, resources
        assert (RUN_DIR / f"n={n}" / "locust_stats_history.csv").stat().st_size > 0
    assert sorted((p["n"], p["throughput"] > 0) for p in capacity_report()["points"]) == \
        [(n, True) for n in range(1, MAX_N + 1)]


@on_the_shared_cluster
def test_the_fit_gives_each_parameter_an_interval_or_says_why_not(outcome):
    assert fit_problems(capacity_report()) == []


@on_the_shared_cluster
def test_the_report_says_it_came_from_kubernetes_mode_with_each_pods_cpu(outcome):
    html = (RUN_DIR / "report" / "scale-out.html").read_text()
    assert "(kubernetes)" in html                   # describe_run: the mode meta.json recorded
    assert "measured pods: cores each" in html      # the CPU table only Kubernetes runs have
    assert (RUN_DIR / "report" / "capacity.html").stat().st_size > 0


@on_the_shared_cluster
def test_the_gateway_deployment_is_put_back_as_found(outcome):
    assert as_found(outcome.after) == as_found(outcome.found)
    assert outcome.after["status"].get("readyReplicas") == outcome.found["spec"]["replicas"]


@on_the_shared_cluster
def test_no_job_and_no_locust_pod_is_left(outcome):
    assert outcome.jobs_left == []
    assert outcome.pods_left == []
