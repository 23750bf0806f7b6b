"""KEDA scales the gateway by the depth of its RabbitMQ queue, on a real control plane.

One run of the scenario (module fixture `run`), several properties checked on its timeline:
  - the real KEDA operator and metrics adapter (built from the Go module), the adapter in a network
    namespace of its own so the API server's aggregation layer reaches it at a non-loopback address;
  - the gateway chart installed with KEDA enabled (ScaledObject + TriggerAuthentication, trigger
    protocol http against the management API of a real RabbitMQ on this machine);
  - one real gateway process per replica of the Deployment (reconciler.py), consuming from the
    queue and delivering to the provider sandbox while KEDA scales them up and down;
  - a backlog sent through the real dispatcher API: replicas rise with depth / value up to the
    maximum, and return to the minimum after the (shortened) stabilisation window once it drains.
The timeline (one sample a second) is written as CSV and PNG to the output folder (printed).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from cluster import Keda, NetNs, aggregation_settings
from herald_load.local import LocalPlatform
from herald_load.processes import wait_until
from herald_load.provisioning import Provisioner
from herald_load.servers import RabbitMQ, http_json
from reconciler import GatewayReconciler
from testbed import ControlPlane, Kube, run
from timeline import Recorder, Sample, plot, write_csv

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(os.environ.get("HERALD_KEDA_OUT", ROOT / "target" / "autoscaling"))

NAMESPACE = "herald"
RELEASE = "herald-gateway"          # the chart's fullname is then the release name
QUEUE = "herald.send.normal"        # where single-token normal-priority sends go
QUEUES = ["herald.send.high", "herald.send.normal", "herald.audience"]  # what the trigger sums
RABBIT_SECRET = "herald-rabbitmq-connection"

# The scenario's scaling settings (passed to the chart as values).
MIN_REPLICAS = 1
MAX_REPLICAS = 4
# Target messages (ready + unacked) per replica: above what one replica holds (2 x 50), and large
# enough that the scale-down starts while there is work left: RabbitMQ's counts lag up to 5 s and
# the window adds 5 s, in which 4 replicas deliver about 300.
VALUE = 200
POLLING_INTERVAL = 1        # s, KEDA's poll of RabbitMQ (default 30)
SCALE_DOWN_WINDOW = 5       # s, HPA scale-down stabilisation (chart default 300)
SCALE_DOWN_PERIOD = 5       # s, period of the "at most half the pods" scale-down policy (chart default 60)
HPA_SYNC_PERIOD = "1s"      # kube-controller-manager's HPA loop (default 15s)

# The gateways are slowed down on purpose so that the backlog lasts long enough to watch:
# the sandbox answers after LATENCY_MS and each replica has MAX_IN_FLIGHT requests out, so a
# replica drains about MAX_IN_FLIGHT * 1000 / LATENCY_MS messages (single-target sends) a second.
LATENCY_MS = 500
# Heaps as the scenario has always run with; the gateways JIT-compile with C1 only, so that a
# replica a scale-up adds is ready sooner.
JVM_OPTIONS = ("-Xmx512m",)
GATEWAY_JVM_OPTIONS = ("-Xmx384m", "-XX:TieredStopAtLevel=1")
MAX_IN_FLIGHT = 4
PREFETCH = 50               # per consumer: a replica holds up to 2 * PREFETCH unacked batches
CONSUMERS = 2
BACKLOG = 1200              # single-target sends

# A depth that asks for the maximum, clear of the HPA's 10 % tolerance.
HIGH = int(VALUE * (MAX_REPLICAS - 1) * 1.1)

# Lag allowed between the queue changing and the HPA's desired replicas following: KEDA's poll,
# RabbitMQ's queue counts (refreshed about every 5 s), the HPA's sync period, plus a loaded 2-core machine.
LAG = 12


def clamp_replicas(depth: float) -> int:
    return min(MAX_REPLICAS, max(MIN_REPLICAS, math.ceil(depth / VALUE)))


def quantity(text: str) -> float:
    """A Kubernetes quantity as the metrics APIs write it (plain, milli, k)."""
    factors = {"m": 1e-3, "k": 1e3, "M": 1e6}
    return float(text[:-1]) * factors[text[-1]] if text and text[-1] in factors else float(text)


def helm_values() -> dict:
    """Values for the gateway chart: KEDA on, with this scenario's (shortened) scaling settings."""
    return {
        "keda": {
            "enabled": True,
            "minReplicaCount": MIN_REPLICAS,
            "maxReplicaCount": MAX_REPLICAS,
            "pollingInterval": POLLING_INTERVAL,
            "messagesPerReplica": VALUE,
            "queues": QUEUES,
            "authSecret": RABBIT_SECRET,
            "behavior": {
                "scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
                            "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15},
                                         {"type": "Pods", "value": 4, "periodSeconds": 15}]},
                # The chart's shape (at most half the pods per period, after a stabilisation window),
                # shortened from 300 s / 60 s so that the test sees it.
                "scaleDown": {"stabilizationWindowSeconds": SCALE_DOWN_WINDOW, "selectPolicy": "Min",
                              "policies": [{"type": "Percent", "value": 50, "periodSeconds": SCALE_DOWN_PERIOD}]},
            },
        },
        # The gateways' settings, as the pods would get them (the reconciler gives the host processes
        # the ConfigMap the chart renders from these).
        "config": {
            "HERALD_GATEWAY_MAX_IN_FLIGHT": str(MAX_IN_FLIGHT),
            "HERALD_GATEWAY_PREFETCH": str(PREFETCH),
            "HERALD_GATEWAY_CONSUMERS_NORMAL": str(CONSUMERS),
        },
    }


def secrets(platform: LocalPlatform) -> list[dict]:
    """What charts/push-platform would create: KEDA's TriggerAuthentication reads the first."""
    def secret(name: str, data: dict[str, str]) -> dict:
        return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": NAMESPACE},
                "type": "Opaque", "stringData": data}

    return [
        secret(RABBIT_SECRET, {"host": "127.0.0.1", "port": str(platform.rabbit.port), "username": RabbitMQ.USER,
                               "password": RabbitMQ.PASSWORD, "management-uri": platform.rabbit.management_url}),
        secret("herald-redis", {"redis-uri": platform.redis.uri}),
        secret("herald-app", {"crypto-key": platform.crypto_key}),
    ]


class Scenario:
    """Everything the run started, torn down in reverse order."""

    def __init__(self, out: Path):
        self.out = out
        self.teardown: list = []

    def later(self, action) -> None:
        self.teardown.append(action)

    def close(self) -> None:
        for action in reversed(self.teardown):
            try:
                action()
            except Exception as error:  # noqa: BLE001 - go on tearing down the rest
                print(f"teardown: {error}")


@pytest.fixture(scope="module")
def outcome():
    shutil.rmtree(OUT, ignore_errors=True)
    (OUT / "logs").mkdir(parents=True, exist_ok=True)
    scenario = Scenario(OUT)
    try:
        yield execute(scenario)
    finally:
        scenario.close()


def execute(scenario: Scenario) -> dict:
    out = scenario.out
    started = time.monotonic()
    keda_bin = Path(run(["bash", str(ROOT / "scripts/k8s/keda-build.sh")]).strip().splitlines()[-1])

    netns = NetNs(ROOT, f"herald-keda-{os.getpid()}").up()
    scenario.later(netns.down)

    testbed = ControlPlane(ROOT, out / "cluster", aggregation_settings(netns.host_ip, out / "front-proxy", HPA_SYNC_PERIOD))
    scenario.later(testbed.down)
    kube = testbed.up()

    keda = Keda(keda_bin, out, kube, adapter_ip=netns.ns_ip, metrics_service_ip=netns.host_ip,
                adapter_prefix=netns.exec_prefix())
    scenario.later(keda.stop)
    keda.start()

    platform = LocalPlatform(out, sandbox_latency_ms=LATENCY_MS, jvm_options=JVM_OPTIONS, root=ROOT)
    scenario.later(platform.close)
    platform.start_infrastructure()
    platform.start_dispatchers(1)
    rabbit, sandbox = platform.rabbit, platform.sandbox
    app_key = create_app(platform)
    setup_seconds = time.monotonic() - started

    values = out / "values.json"
    values.write_text(json.dumps(helm_values(), indent=2))
    kube.kubectl("create", "namespace", NAMESPACE)
    kube.apply(secrets(platform))
    # A copy of the charts: `helm dependency build` (the library chart) writes into the chart folder.
    charts = out / "charts"
    shutil.copytree(ROOT / "charts", charts)
    run(["helm", "dependency", "build", str(charts / "gateway")])
    kube.helm("install", RELEASE, str(charts / "gateway"), "--namespace", NAMESPACE, "-f", str(values),
              "--wait", "--timeout", "120s")
    hpa = wait_until(lambda: find_hpa(kube), 60, "the HPA that KEDA creates")
    metric_path = external_metric_path(hpa)

    def deployment() -> dict:
        return kube.get(f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments/{RELEASE}")

    wait_until(lambda: deployment()["status"].get("replicas") == MIN_REPLICAS, 60, "gateway at its minimum replicas")

    reconciler = GatewayReconciler(
        replicas_wanted=lambda: deployment()["status"].get("replicas", 0),
        command=lambda port: platform.gateway_command(port, jvm_options=GATEWAY_JVM_OPTIONS),
        env={**release_config(kube), **platform.service_env()}, logs=out / "logs").start()
    scenario.later(reconciler.stop)

    def probe(t: float) -> Sample:
        queues = [rabbit.queue(name) for name in QUEUES]
        status = (kube.get(f"/apis/autoscaling/v2/namespaces/{NAMESPACE}/horizontalpodautoscalers/{hpa['metadata']['name']}")
                  or {}).get("status", {})
        metric = kube.get(metric_path)["items"]
        return Sample(t=t, ready=sum(q.get("messages_ready", 0) for q in queues),
                      unacked=sum(q.get("messages_unacknowledged", 0) for q in queues),
                      depth=sum(q.get("messages", 0) for q in queues),
                      external_metric=quantity(metric[0]["value"]) if metric else float("nan"),
                      desired=status.get("desiredReplicas", 0), current=status.get("currentReplicas", 0),
                      deployment=deployment()["status"].get("replicas", 0), ready_pods=reconciler.processes(),
                      delivered=sandbox.stats().get("accepted", 0))

    recorder = Recorder(probe).start()
    scenario.later(recorder.stop)
    wait_until(lambda: any(r.proc.alive() and gateway_ready(r.proc) for r in list(reconciler.running)), 180,
               "the first gateway replica ready")
    marks = [(recorder.now(), "backlog sent")]
    ids = publish_backlog(platform, app_key)
    marks.append((recorder.now(), f"{BACKLOG} accepted (202)"))

    def drained() -> bool:
        accepted = sandbox.stats().get("accepted", 0)
        return accepted >= BACKLOG and rabbit.queue(QUEUE).get("messages", 1) == 0

    wait_until(drained, 600, "the backlog drained", interval=1)
    marks.append((recorder.now(), "queue empty"))
    wait_until(lambda: deployment()["status"].get("replicas") == MIN_REPLICAS and reconciler.processes() == MIN_REPLICAS,
               SCALE_DOWN_WINDOW + 120, "gateway back at its minimum replicas", interval=1)
    marks.append((recorder.now(), "back at min"))
    # A few seconds at the minimum, to show it stays there.
    end = recorder.now() + 5
    wait_until(lambda: recorder.now() >= end, 30, "the last samples")
    recorder.stop()

    statuses = message_statuses(platform, app_key, ids)
    sandbox_counts = token_counts(platform, BACKLOG)
    reconciler.stop()

    samples = recorder.samples
    write_csv(samples, out / "timeline.csv")
    plot(samples, out / "timeline.png", VALUE, MIN_REPLICAS, MAX_REPLICAS,
         f"KEDA rabbitmq trigger (http, QueueLength, value {VALUE}) on {QUEUE}: {BACKLOG} sends, "
         f"replicas {MIN_REPLICAS}..{MAX_REPLICAS}, scale-down window {SCALE_DOWN_WINDOW} s", marks,
         [at - recorder.t0 for at, what, _ in reconciler.events if what == "sigterm"])
    result = {
        "samples": samples, "marks": marks, "statuses": statuses, "sandbox": sandbox_counts,
        "replicas": [{"name": r.name, "exit_status": r.exit_status,
                      "stopped_after_sigterm_s": (r.stopped - r.stopping_since) if r.stopped and r.stopping_since else None}
                     for r in reconciler.finished],
        "reconciler_events": [(at - recorder.t0, what, name) for at, what, name in reconciler.events], "reconciler_errors": reconciler.errors,
        "recorder_errors": recorder.errors, "setup_seconds": round(setup_seconds, 1),
    }
    summary = {k: v for k, v in result.items() if k not in ("samples", "statuses")}
    summary["figures"] = figures(samples, marks)
    summary["figures"]["scale_downs"] = [
        {"at_s": round(at, 1), "gateway": name,
         # (repeated sends count in the sandbox's deliveries, so this can go below 0 at the end)
         "backlog_minus_sandbox_deliveries": BACKLOG - max((s for s in samples if s.t <= at), key=lambda s: s.t).delivered}
        for at, what, name in result["reconciler_events"] if what == "sigterm"]
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
    print(f"\nKEDA scenario output: {out} (timeline.csv, timeline.png, summary.json, logs/)")
    print(json.dumps(summary["figures"], indent=2))
    return result


# ------------------------------------------------------------------ helpers of the run

def create_app(platform: LocalPlatform) -> str:
    provisioner = Provisioner(platform.dispatcher_urls[0], platform.admin_token, platform.sandbox_url)
    return provisioner.create_app("scale", name="Autoscaling scenario").api_key


def publish_backlog(platform: LocalPlatform, key: str) -> list[str]:
    def send(i: int) -> str:
        status, body = platform.dispatcher_api("POST", "/v1/apps/scale/messages",
                                    {"to": {"tokens": [{"channel": "fcm", "token": f"scale-{i}"}]},
                                     "title": "Backlog", "body": f"message {i}", "priority": "normal"}, token=key)
        assert status == 202, f"send {i}: {status} {body}"
        return body["id"]

    with ThreadPoolExecutor(16) as pool:
        return list(pool.map(send, range(BACKLOG)))


def message_statuses(platform: LocalPlatform, key: str, ids: list[str]) -> list[dict]:
    def get(message_id: str) -> dict:
        return platform.dispatcher_api("GET", f"/v1/apps/scale/messages/{message_id}", token=key)[1]

    def all_done() -> list[dict] | None:
        with ThreadPoolExecutor(8) as pool:
            statuses = list(pool.map(get, ids))
        return statuses if all(s.get("state") in ("sent", "failed", "expired") for s in statuses) else None

    try:
        return wait_until(all_done, 120, "every message completed", interval=2)
    except TimeoutError:
        with ThreadPoolExecutor(8) as pool:
            return list(pool.map(get, ids))


def token_counts(platform: LocalPlatform, n: int) -> dict[str, int]:
    def received(i: int) -> int:
        body = platform.sandbox.api("GET", f"/sandbox/received?token=scale-{i}")[1]
        return int(body.get("fcm", 0))

    with ThreadPoolExecutor(8) as pool:
        counts = list(pool.map(received, range(n)))
    return {"tokens": n, "received_once": counts.count(1), "missing": counts.count(0),
            "duplicated": sum(1 for c in counts if c > 1), "accepted": sum(counts)}


def gateway_ready(proc) -> bool:
    return http_json("GET", f"http://127.0.0.1:{proc.port}/actuator/health/readiness", timeout=2)[0] == 200


def release_config(kube: Kube) -> dict[str, str]:
    """The environment the chart gives the gateway pods (its ConfigMap, by the Deployment's envFrom)."""
    deployment = kube.get(f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments/{RELEASE}")
    env: dict[str, str] = {}
    for source in deployment["spec"]["template"]["spec"]["containers"][0].get("envFrom", []):
        if "configMapRef" in source:
            name = source["configMapRef"]["name"]
            env.update(kube.get(f"/api/v1/namespaces/{NAMESPACE}/configmaps/{name}").get("data", {}))
    assert env.get("HERALD_GATEWAY_PREFETCH") == str(PREFETCH), f"the release's gateway config: {env}"
    return env


def find_hpa(kube: Kube) -> dict | None:
    items = kube.get(f"/apis/autoscaling/v2/namespaces/{NAMESPACE}/horizontalpodautoscalers")["items"]
    return next((h for h in items if h["metadata"]["name"].startswith("keda-hpa-")), None)


def external_metric_path(hpa: dict) -> str:
    """The external metrics API path of the HPA's metric (the trigger's sum over the queues)."""
    for metric in hpa["spec"]["metrics"]:
        ident = metric.get("external", {}).get("metric", {})
        if ident.get("name", "").startswith("s0-rabbitmq"):
            selector = ",".join(f"{k}={v}" for k, v in ident.get("selector", {}).get("matchLabels", {}).items())
            return (f"/apis/external.metrics.k8s.io/v1beta1/namespaces/{NAMESPACE}/{ident['name']}"
                    f"?labelSelector={urllib.parse.quote(selector)}")
    raise AssertionError(f"no rabbitmq external metric in the HPA: {hpa['spec']['metrics']}")


def figures(samples: list[Sample], marks: list[tuple[float, str]]) -> dict:
    sent_at = marks[0][0]
    at_max = next((s.t for s in samples if s.t >= sent_at and s.current == MAX_REPLICAS), None)
    peak = max(samples, key=lambda s: s.depth)
    empty_at = next((s.t for s in samples if s.t > peak.t and s.depth == 0), None)
    back_at = next((s.t for s in samples if empty_at is not None and s.t >= empty_at and s.current == MIN_REPLICAS), None)
    # Per-replica delivery rate while every replica consumes with a full buffer (all of them hold
    # their consumers' prefetch): deliveries at the sandbox per second, divided by the replicas.
    full = [s for s in samples if s.ready_pods == MAX_REPLICAS
            and s.unacked >= 0.9 * MAX_REPLICAS * CONSUMERS * PREFETCH]
    rate = None
    if len(full) >= 2 and full[-1].t > full[0].t:
        rate = round((full[-1].delivered - full[0].delivered) / (full[-1].t - full[0].t) / MAX_REPLICAS, 1)
    return {
        "samples": len(samples), "peak_depth": peak.depth, "peak_at_s": peak.t,
        "backlog_sent_at_s": round(sent_at, 1),
        "max_replicas_reached_after_s": round(at_max - sent_at, 1) if at_max is not None else None,
        "queue_empty_at_s": empty_at,
        "back_to_min_after_empty_s": round(back_at - empty_at, 1) if back_at is not None else None,
        "drain_rate_per_replica_at_max_msgs_per_s": rate,
    }


# ------------------------------------------------------------------ the properties

def test_replicas_rise_to_the_maximum_while_the_backlog_is_high(outcome):
    samples, sent_at = outcome["samples"], outcome["marks"][0][0]
    before = [s for s in samples if s.t < sent_at]
    assert before and all(s.deployment == MIN_REPLICAS and s.ready_pods == MIN_REPLICAS for s in before), (
        "at the minimum before the backlog")
    high = [s for s in samples if s.depth >= HIGH]
    assert high, f"the backlog never reached {HIGH} messages: {max(s.depth for s in samples)}"
    reached = next((s for s in samples if s.current == MAX_REPLICAS), None)
    assert reached is not None, "the HPA never reached the maximum replicas"
    assert reached.t - high[0].t <= LAG + 5, f"maximum reached {reached.t - high[0].t:.0f} s after the backlog was high"
    # Once up, it stays at the maximum while the backlog still asks for it (LAG seconds later).
    for s in samples:
        if s.t > reached.t and all(o.depth >= HIGH for o in samples if s.t - LAG <= o.t <= s.t):
            assert s.desired == MAX_REPLICAS, f"desired {s.desired} at {s.t:.0f} s though depth >= {HIGH}"


def test_desired_replicas_follow_depth_over_value(outcome):
    """Within the allowed lag, desired = clamp(ceil(depth / value)): never above what the largest
    depth of the last LAG + window seconds asks for, never below what the smallest depth of the
    last LAG seconds asks for."""
    samples = [s for s in outcome["samples"] if s.desired > 0]
    wrong = []
    for s in samples:
        recent = [o.depth for o in samples if s.t - LAG - SCALE_DOWN_WINDOW - SCALE_DOWN_PERIOD <= o.t <= s.t]
        settled = [o.depth for o in samples if s.t - LAG <= o.t <= s.t]
        # The HPA leaves the replicas alone while depth / (value * replicas) is within 10 % of 1.
        upper, lower = clamp_replicas(max(recent) / 0.9), clamp_replicas(min(settled) / 1.1)
        if not lower <= s.desired <= upper:
            wrong.append(f"t={s.t:.0f}s desired {s.desired} not in [{lower}, {upper}]")
    assert not wrong, "; ".join(wrong[:10])


def test_the_hpa_reads_the_queue_depth_through_the_aggregation_layer(outcome):
    """The external metric (API server -> adapter in the namespace -> operator -> RabbitMQ) is the
    queue's depth, not a fallback value: it moves with the queue, within a second's sampling skew."""
    samples = [s for s in outcome["samples"] if s.t >= outcome["marks"][0][0]]
    assert all(not math.isnan(s.external_metric) for s in samples), "samples without the external metric"
    close = [s for s in samples if abs(s.external_metric - s.depth) <= max(VALUE / 2, 0.2 * s.depth)]
    assert len(close) >= 0.8 * len(samples), (
        f"external metric matches the depth in only {len(close)} of {len(samples)} samples")
    assert max(s.external_metric for s in samples) >= HIGH


def test_scale_decisions_count_unacknowledged_messages(outcome):
    """While the gateways hold the rest of the backlog (ready 0, unacked high), the metric KEDA
    serves is that total and the replicas stay up: ready alone would have scaled them down."""
    samples = outcome["samples"]
    held = [s for s in samples if s.ready == 0 and s.unacked > VALUE]
    assert held, "no moment where the gateways held the backlog (ready 0, unacked > value)"
    for s in held:
        assert s.external_metric >= VALUE, f"t={s.t:.0f}s: metric {s.external_metric} while {s.unacked} unacked"
    assert any(s.desired >= 2 for s in held), "replicas never stayed up while only unacked messages remained"
    assert max(s.external_metric for s in held) >= 0.5 * max(s.unacked for s in held)


def test_replicas_return_to_the_minimum_after_the_drain(outcome):
    samples, figures_ = outcome["samples"], figures(outcome["samples"], outcome["marks"])
    empty_at = figures_["queue_empty_at_s"]
    assert empty_at is not None, "the queue never drained"
    back = figures_["back_to_min_after_empty_s"]
    assert back is not None, "replicas never returned to the minimum"
    assert back <= SCALE_DOWN_WINDOW + LAG + 10, f"back at the minimum {back} s after the queue emptied"
    assert samples[-1].current == MIN_REPLICAS and samples[-1].ready_pods == MIN_REPLICAS


def test_no_message_is_lost_while_replicas_go_down(outcome):
    statuses, sandbox = outcome["statuses"], outcome["sandbox"]
    not_sent = [s for s in statuses if s.get("state") != "sent" or s["targets"]["sent"] != 1]
    assert not not_sent, f"{len(not_sent)} messages not recorded as sent, e.g. {not_sent[:3]}"
    assert sandbox["missing"] == 0, f"sends the sandbox never received: {sandbox}"
    # Replicas really went down while there was work, and each stopped gracefully (SIGTERM -> exit 143).
    samples = outcome["samples"]
    sigterms = [at for at, what, _ in outcome["reconciler_events"] if what == "sigterm"]
    # Outstanding work when a replica was told to stop: sends not yet delivered at the sandbox (its
    # count is exact, where RabbitMQ's queue counts lag by a few seconds).
    outstanding = [BACKLOG - max((s for s in samples if s.t <= at), key=lambda s: s.t).delivered for at in sigterms]
    assert any(n >= VALUE / 2 for n in outstanding), (
        f"no replica was stopped while there was work left (SIGTERMs at {sigterms}, outstanding {outstanding})")
    stopped = [r for r in outcome["replicas"] if r["stopped_after_sigterm_s"] is not None]
    assert len(stopped) >= MAX_REPLICAS - MIN_REPLICAS, f"gateways stopped by scale-down: {outcome['replicas']}"
    assert all(r["exit_status"] == 143 for r in stopped), f"exit statuses: {outcome['replicas']}"
    assert not outcome["reconciler_errors"], outcome["reconciler_errors"]


def test_a_scale_down_sends_nothing_twice(outcome):
    """A gateway stopped by a scale-down cancels its consumers but keeps its channels open until
    the work in hand is recorded and acked (PendingWork), so RabbitMQ requeues nothing that another
    replica would send again: no token reaches the sandbox twice."""
    sigterms = [at for at, what, _ in outcome["reconciler_events"] if what == "sigterm"]
    assert sigterms, "no replica was stopped"
    assert outcome["sandbox"]["duplicated"] == 0, f"{outcome['sandbox']} with {len(sigterms)} replicas stopped"
