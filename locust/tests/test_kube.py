"""Kubernetes mode against a stand-in kubectl that records its calls and answers like a cluster with
one node, a Deployment of N pods, RabbitMQ's metrics and the sandbox (the real cluster: the smoke
test in tests/node and scripts/k8s/scale-out-node.sh)."""

from __future__ import annotations

import json
import time

import pytest
import stat

from herald_load.kube import BEGIN, END, LABELS, KubeTarget, applied_cpu_limits, configmap_manifest, \
    job_manifest, millicores, plateau_resources, resize_patch, run_kubernetes, settled, split_csv_log, \
    unit_windows
from herald_load.counted import counted_points, main as counted_main
from herald_load.scaleout import ScaleOutSettings

HISTORY = "Timestamp,User Count,Type,Name,Requests/s,Failures/s\n1,2,DELIVERY,provider deliveries,300,0\n"


def fake_kubectl(tmp_path):
    calls = tmp_path / "calls.jsonl"
    script = tmp_path / "kubectl"
    script.write_text(f"""#!/usr/bin/env python3
import json, os, sys, time
ALARM = os.environ.get("FAKE_MEMORY_ALARM", "0")
args = sys.argv[1:]
stdin = sys.stdin.read() if "-f" in args else None
with open({str(calls)!r}, "a") as out:
    out.write(json.dumps({{"args": args, "stdin": stdin}}) + "\\n")
tick = time.time()  # counters that grow like the kubelet's (the sampler calls from its own thread)
# FAKE_COUNT_PER_SAMPLE: the counters grow by one step per sample instead (each stats/summary call
# is one), so that what one unit costs is exact however slowly a busy machine runs the samples.
STEPS = {str(tmp_path / "steps")!r}
if os.environ.get("FAKE_COUNT_PER_SAMPLE"):
    tick = int(open(STEPS).read()) if os.path.exists(STEPS) else 0
    if "--raw" in args and args[args.index("--raw") + 1].endswith("/stats/summary"):
        tick += 1
        # Replaced, not rewritten in place: the Job's poll may read it at the same moment.
        open(STEPS + ".new", "w").write(str(tick))
        os.replace(STEPS + ".new", STEPS)
# A pod's CPU limit: "1" until a resize in place (kubectl patch pod/...) sets another, which the
# kubelet's status then reports at once.
RESIZED = {str(tmp_path / "resized")!r}
cpu = open(RESIZED).read() if os.path.exists(RESIZED) else "1"
limits = {{"limits": {{"cpu": cpu}}}}
pod = lambda name, app: {{"metadata": {{"name": name, "labels": {{"app.kubernetes.io/name": app}}}},
                         "spec": {{"nodeName": "node-a", "containers": [{{"name": "c", "resources": limits}}]}},
                         "status": {{"podIP": "10.0.0.7", "containerStatuses": [{{"resources": limits}}]}}}}
if args[2] == "patch" and args[3].startswith("pod/"):
    open(RESIZED, "w").write(json.loads(args[-1])[0]["value"])
elif "logs" in args:
    print("locust noise")
    print({BEGIN!r} + "locust_stats_history.csv")
    sys.stdout.write({HISTORY!r})
    print({END!r})
elif "current-context" in args:
    print("test-cluster")
elif "--raw" in args:
    path = args[args.index("--raw") + 1]
    if path.endswith("/stats/summary"):
        print(json.dumps({{"node": {{"cpu": {{"usageCoreNanoSeconds": int(tick * 10**9)}}}},
                          "pods": [{{"podRef": {{"name": "gw-1", "namespace": "herald"}},
                                     "cpu": {{"usageCoreNanoSeconds": int(tick * 10**8)}}}}]}}))
    elif path.endswith("/actuator/prometheus"):
        print('herald_dispatcher_accepted_total{{kind="devices",priority="normal"}} ' + str(int(tick * 40)))
        print('herald_dispatcher_accepted_total{{kind="topic",priority="normal"}} ' + str(int(tick * 10)))
        jit_ms = float(os.environ.get("FAKE_JIT_MS_PER_TICK", "200"))
        print('jvm_compilation_time_ms_total{{compiler="HotSpot 64-Bit Tiered Compilers"}} ' + str(int(tick * jit_ms)))
    elif path.endswith("/metrics"):
        print('rabbitmq_queue_messages{{vhost="/",queue="herald.send.normal"}} 42')
        print('rabbitmq_alarms_memory_used_watermark ' + ALARM)
    else:
        print(json.dumps({{"accepted": int(tick * 100)}}))
elif args[2:4] == ["get", "deployment/herald-gateway"]:
    print(json.dumps({{"spec": {{"replicas": 3, "selector": {{"matchLabels": {{"app": "gw"}}}}, "template": {{"spec": {{
        "containers": [{{"name": "gateway", "image": "gw:1", "resources": {{"limits": {{"cpu": "250m"}}}},
        "startupProbe": {{"periodSeconds": 2, "failureThreshold": 150}},
        "livenessProbe": {{"periodSeconds": 10, "timeoutSeconds": 3, "failureThreshold": 3}}}}]}}}}}}}}))
elif args[2:4] == ["get", "pods"] and "-l" in args:
    print(json.dumps({{"items": [pod("gw-1", "gateway")]}}))
elif args[2:4] == ["get", "pods"]:
    print(json.dumps({{"items": [pod("gw-1", "gateway"), pod("herald-rabbitmq-server-0", "herald-rabbitmq")]}}))
elif args[2] == "get" and args[3].startswith("job/"):
    # FAKE_JOB_DONE_AT: epoch seconds before which the Job still runs (Locust's pod shutting down)
    # (FAKE_JOB_WAITING: only the Jobs whose name has it wait)
    done = time.time() >= float(os.environ.get("FAKE_JOB_DONE_AT", "0")) \
        or os.environ.get("FAKE_JOB_WAITING", "") not in args[3]
    print(json.dumps({{"status": {{"succeeded": 1}} if done else {{}}}}))
elif args[:2] == ["get", "node"]:
    print(json.dumps({{"status": {{"capacity": {{"cpu": "2"}}}}}}))
""")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script, calls


def target(kubectl="kubectl", **overrides) -> KubeTarget:
    return KubeTarget("herald", "herald-gateway", "http://d:8080", "http://s:9090", "local/locust:1",
                      kubectl=str(kubectl), sample_every_s=0.05, warmup_s=0, **overrides)


def test_kubernetes_mode_scales_runs_a_job_samples_and_stores_its_csvs(tmp_path):
    kubectl, calls = fake_kubectl(tmp_path)
    lines = []

    measured = run_kubernetes(tmp_path / "run", [2, 1], ScaleOutSettings(duration_s=60),
                              target(kubectl, cpu_limit="250m"), say=lines.append)

    assert measured == [2, 1]
    recorded = [json.loads(line)["args"] for line in calls.read_text().splitlines()]
    assert ["-n", "herald", "set", "resources", "deployment/herald-gateway", "--limits=cpu=250m"] in recorded
    scales = [a[4] for a in recorded if a[2] == "scale"]
    assert scales == ["--replicas=2", "--replicas=1"]
    job = json.loads(next(json.loads(line)["stdin"] for line in calls.read_text().splitlines()
                          if '"kind": "Job"' in (json.loads(line)["stdin"] or "")))
    env = {e["name"]: e.get("value") for e in job["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["HERALD_GATEWAY_METRICS"] == "http://10.0.0.7:8081"
    folder = tmp_path / "run" / "n=2"
    assert (folder / "locust_stats_history.csv").read_text() == HISTORY
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["complete"] and meta["machine"]["mode"] == "kubernetes"
    assert meta["machine"]["context"] == "test-cluster"
    assert meta["throughput_row"] == "provider deliveries"
    assert "max_in_flight" not in meta["settings"]          # the Deployment's own configuration instead
    assert meta["deployment"]["containers"][0]["resources"] == {"limits": {"cpu": "250m"}}
    assert meta["resources"]["queues"]["herald.send.normal"]["max"] == 42
    assert meta["resources"]["rabbitmq_memory_alarm_s"] == 0
    assert meta["resources"]["nodes_cores"]["node-a"] > 0
    assert "gateway" in meta["resources"]["components_cores"]
    assert (folder / "resources.csv").read_text().startswith("t_s,kind,name,value")
    assert any("deliveries/s" in line and "min of the run left" in line for line in lines)
    # Left as found: the next service's run must not be limited by this one's settings.
    restore = json.loads(next(a for a in reversed(recorded) if a[2] == "patch")[-1])
    assert {"op": "replace", "path": "/spec/replicas", "value": 3} in restore
    assert {"op": "replace", "path": "/spec/template/spec/containers/0/resources",
            "value": {"limits": {"cpu": "250m"}}} in restore
    # Throttled pods answer probes late: loosened for the run, put back after it.
    patches = [json.loads(a[-1]) for a in recorded if a[2] == "patch"]
    assert {"op": "replace", "path": "/spec/template/spec/containers/0/livenessProbe",
            "value": {"periodSeconds": 10, "timeoutSeconds": 10, "failureThreshold": 12}} in patches[0]
    assert {"op": "replace", "path": "/spec/template/spec/containers/0/livenessProbe",
            "value": {"periodSeconds": 10, "timeoutSeconds": 3, "failureThreshold": 3}} in restore
    # A JVM starting under a small limit gets SLOW_START_S (900 s) to pass its startup probe.
    assert {"op": "replace", "path": "/spec/template/spec/containers/0/startupProbe",
            "value": {"periodSeconds": 2, "timeoutSeconds": 10, "failureThreshold": 450}} in patches[0]
    assert {"op": "replace", "path": "/spec/template/spec/containers/0/startupProbe",
            "value": {"periodSeconds": 2, "failureThreshold": 150}} in restore

    # Resumed: nothing left to do, and no kubectl call at all.
    before = len(calls.read_text().splitlines())
    assert run_kubernetes(tmp_path / "run", [1, 2], ScaleOutSettings(duration_s=60), target(kubectl),
                          say=lambda _line: None) == []
    assert len(calls.read_text().splitlines()) == before


def test_each_n_starts_from_empty_send_queues_unless_told_otherwise(tmp_path):
    kubectl, calls = fake_kubectl(tmp_path)

    run_kubernetes(tmp_path / "run", [2, 1], ScaleOutSettings(duration_s=60), target(kubectl),
                   say=lambda _line: None)

    recorded = [json.loads(line)["args"][2:] for line in calls.read_text().splitlines()]
    purge = ["exec", "herald-rabbitmq-server-0", "-c", "rabbitmq", "--", "rabbitmqctl", "purge_queue"]
    reset = ["create", "--raw", "/api/v1/namespaces/herald/services/herald-provider-sandbox:9090/proxy/sandbox/reset"]
    steps = [a[-1] if a[:7] == purge else "reset" if a[:3] == reset else a[0] for a in recorded
             if a[:7] == purge or a[:3] == reset or a[0] == "scale" or (a[0] == "apply" and a[-1] == "-")]
    # per N: scaled, then every send queue emptied and the sandbox's record cleared (the gateway's
    # deliveries are counted there), then the Locust Job applied
    each_n = ["scale", "herald.send.high", "herald.send.normal", "herald.audience", "reset"]
    applied = [i for i, step in enumerate(steps) if step == "apply"]
    assert steps[applied[-2] - 5:applied[-2]] == each_n and steps[applied[-1] - 5:applied[-1]] == each_n

    (tmp_path / "left").mkdir()
    kubectl, calls = fake_kubectl(tmp_path / "left")
    run_kubernetes(tmp_path / "left" / "run", [1], ScaleOutSettings(duration_s=60),
                   target(kubectl, rabbitmq_pod=""), say=lambda _line: None)
    assert not any(json.loads(line)["args"][2] == "exec" for line in calls.read_text().splitlines())


def test_a_run_that_does_not_count_through_the_sandbox_leaves_its_record_alone(tmp_path):
    kubectl, calls = fake_kubectl(tmp_path)

    run_kubernetes(tmp_path / "run", [1], ScaleOutSettings(service="dispatcher", duration_s=60),
                   target(kubectl), say=lambda _line: None)

    assert not any("/sandbox/reset" in " ".join(json.loads(line)["args"]) for line in calls.read_text().splitlines())


def test_job_runs_non_root_read_only_on_the_chosen_node_with_the_backlog_for_its_n():
    job = job_manifest("j", "cm", target(node_selector=(("herald.dev/real-node", "true"),),
                                         tolerations=("herald.dev/real-node=true:NoSchedule",)),
                       ScaleOutSettings(backlog_per_replica=1500), 3)

    pod = job["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    assert container["image"] == "local/locust:1"
    assert "limits" not in container["resources"]
    assert pod["nodeSelector"] == {"herald.dev/real-node": "true"}
    assert pod["tolerations"] == [{"key": "herald.dev/real-node", "operator": "Equal", "value": "true",
                                   "effect": "NoSchedule"}]
    env = {e["name"]: e for e in container["env"]}
    assert env["HERALD_LOAD_BACKLOG"]["value"] == "4500"
    assert "secretKeyRef" in env["HERALD_ADMIN_TOKEN"]["valueFrom"]
    assert "--csv-full-history" in container["command"][2]


def test_what_a_run_makes_carries_one_label_so_a_selector_finds_what_it_left():
    job = job_manifest("j", "cm", target(), ScaleOutSettings(), 1)
    configmap = configmap_manifest("cm", "gateway_deliveries.py")

    assert job["metadata"]["labels"] == LABELS
    assert job["spec"]["template"]["metadata"]["labels"] == LABELS
    assert configmap["metadata"]["labels"] == LABELS


def test_plateau_resources_are_rates_over_the_window_only():
    rows = [(t, "cpu_ns", "pod/gw-1", t * 0.25e9 if t <= 20 else 5e9 + (t - 20) * 1e9)
            for t in range(0, 31, 5)]
    rows += [(t, "cpu_ns", "node/a", t * 1.5e9) for t in range(0, 31, 5)]
    rows += [(t, "queue", "q", float(t)) for t in range(0, 31, 5)]

    resources = plateau_resources(rows, 5, 20, {"gw-1": "gateway"})

    assert resources["pods_cores"] == {"gw-1": 0.25}
    assert resources["components_cores"] == {"gateway": 0.25}
    assert resources["nodes_cores"] == {"a": 1.5}
    assert resources["queues"]["q"] == {"mean": 12.5, "max": 20.0}


def test_a_pod_read_once_in_the_window_gets_its_cpu_from_the_reads_either_side():
    # gw-2's counter was refreshed at -2, 9, 25 and 42 s (a busy kubelet): once in 10-40 s.
    rows = [(t, "cpu_ns", "pod/gw-1", t * 0.5e9) for t in range(0, 46, 5)]
    rows += [(t, "cpu_ns", "pod/gw-2", (t + 2) * 0.4e9) for t in (-2.0, 9.0, 25.0, 42.0)]

    resources = plateau_resources(rows, 10, 40, {"gw-1": "gateway", "gw-2": "gateway"})

    assert resources["pods_cores"] == {"gw-1": 0.5, "gw-2": 0.4}      # gw-2 over 9-42 s
    assert resources["components_cores"] == {"gateway": 0.9}


def test_the_seconds_of_a_plateau_under_rabbitmqs_memory_alarm_are_recorded(tmp_path, monkeypatch):
    kubectl, _calls = fake_kubectl(tmp_path)
    monkeypatch.setenv("FAKE_MEMORY_ALARM", "1")
    # A Job of a few seconds: the window needs two samples or more, and each sample is several
    # kubectl calls (a second or more on a busy machine).
    monkeypatch.setenv("FAKE_JOB_DONE_AT", str(time.time() + 6))
    lines = []

    run_kubernetes(tmp_path / "run", [1], ScaleOutSettings(duration_s=6), target(kubectl),
                   say=lines.append)

    meta = json.loads((tmp_path / "run" / "n=1" / "meta.json").read_text())
    assert meta["resources"]["rabbitmq_memory_alarm_s"] > 0
    assert any("RabbitMQ memory alarm" in line for line in lines)
    rows = [(t, "alarm", "rabbitmq memory", 1.0 if 10 <= t < 25 else 0.0) for t in range(0, 41, 5)]
    assert plateau_resources(rows, 5, 40, {})["rabbitmq_memory_alarm_s"] == 15.0
    assert plateau_resources([], 5, 40, {})["rabbitmq_memory_alarm_s"] is None


def test_jvm_options_are_appended_for_the_run_and_taken_back_after_it(tmp_path):
    kubectl, calls = fake_kubectl(tmp_path)
    lines = []

    run_kubernetes(tmp_path / "run", [1], ScaleOutSettings(duration_s=1),
                   target(kubectl, jvm_options="-XX:TieredStopAtLevel=1"), say=lines.append)

    recorded = [json.loads(line)["args"] for line in calls.read_text().splitlines()]
    patches = [json.loads(a[-1]) for a in recorded if a[2] == "patch"]
    # The fake's container has no env: the option comes as the only entry, and goes with the restore.
    assert [{"op": "add", "path": "/spec/template/spec/containers/0/env",
             "value": [{"name": "JAVA_TOOL_OPTIONS", "value": "-XX:TieredStopAtLevel=1"}]}] in patches
    assert {"op": "remove", "path": "/spec/template/spec/containers/0/env"} in patches[-1]
    rollout = [i for i, a in enumerate(recorded) if a[2:4] == ["rollout", "status"]]
    first_patch = next(i for i, a in enumerate(recorded) if a[2] == "patch" and "JAVA_TOOL_OPTIONS" in a[-1])
    assert rollout and rollout[0] > first_patch          # the pods restart with it before the first N


def test_pods_warmed_at_a_large_cpu_limit_are_measured_at_the_small_one_after_a_resize_in_place(tmp_path):
    kubectl, calls = fake_kubectl(tmp_path)
    lines = []

    run_kubernetes(tmp_path / "run", [1], ScaleOutSettings(duration_s=1),
                   target(kubectl, cpu_limit="50m", warm_up_cpu_limit="1000m"), say=lines.append)

    recorded = [json.loads(line)["args"] for line in calls.read_text().splitlines()]
    # The Deployment starts its pods at the warm-up limit ...
    assert ["-n", "herald", "set", "resources", "deployment/herald-gateway", "--limits=cpu=1000m"] in recorded
    # ... each pod is resized in place (not the Deployment: that would start new JVMs) before its Job
    resize = next(i for i, a in enumerate(recorded) if a[2] == "patch" and a[3] == "pod/gw-1")
    job = next(i for i, a in enumerate(recorded) if a[2] == "apply" and '"kind": "Job"' in (
        json.loads(calls.read_text().splitlines()[i])["stdin"] or ""))
    assert resize < job
    assert json.loads(recorded[resize][-1]) == [
        {"op": "add", "path": "/spec/containers/0/resources/limits/cpu", "value": "50m"}]
    meta = json.loads((tmp_path / "run" / "n=1" / "meta.json").read_text())
    assert meta["cpu_limit_in_place"] == {"warm_up": "1000m", "measured": "50m", "pods": {"gw-1": "50m"}}
    assert "pod/gw-1: CPU limit lowered in place to 50m" in lines


def test_a_warm_up_cpu_limit_needs_the_limit_to_lower_to(tmp_path):
    kubectl, _ = fake_kubectl(tmp_path)
    with pytest.raises(ValueError, match="--cpu-limit"):
        run_kubernetes(tmp_path / "run", [1], ScaleOutSettings(duration_s=1),
                       target(kubectl, warm_up_cpu_limit="1000m"), say=lambda _line: None)


def test_a_resize_counts_as_applied_only_once_the_kubelet_reports_it():
    pod = {"spec": {"containers": [{"resources": {"limits": {"cpu": "50m"}}}]},
           "status": {"resize": "InProgress", "containerStatuses": [{"resources": {"limits": {"cpu": "1"}}}]}}
    assert applied_cpu_limits(pod) == [None]
    del pod["status"]["resize"]
    assert applied_cpu_limits(pod) == ["1"]
    assert [millicores(q) for q in ("50m", "1", "0.5", "1500m")] == [50, 1000, 500, 1500]
    assert resize_patch({"spec": {"containers": [{}, {}]}}, "40m") == [
        {"op": "add", "path": "/spec/containers/0/resources/limits/cpu", "value": "40m"},
        {"op": "add", "path": "/spec/containers/1/resources/limits/cpu", "value": "40m"}]


def test_jvm_options_extend_a_java_tool_options_the_chart_set():
    from herald_load.kube import _jvm_options_patch
    deployment = {"spec": {"template": {"spec": {"containers": [
        {"name": "gateway", "env": [{"name": "A", "value": "1"},
                                    {"name": "JAVA_TOOL_OPTIONS", "value": "-Xss512k"}]}]}}}}

    assert _jvm_options_patch(deployment, "-XX:TieredStopAtLevel=1") == [
        {"op": "replace", "path": "/spec/template/spec/containers/0/env/1",
         "value": {"name": "JAVA_TOOL_OPTIONS", "value": "-Xss512k -XX:TieredStopAtLevel=1"}}]


def test_the_plateau_window_ends_when_the_load_does_not_when_the_job_is_seen_complete(tmp_path, monkeypatch):
    kubectl, _calls = fake_kubectl(tmp_path)
    monkeypatch.setenv("FAKE_JOB_DONE_AT", str(time.time() + 4.0))

    run_kubernetes(tmp_path / "run", [1], ScaleOutSettings(duration_s=1), target(kubectl), say=lambda _l: None)

    meta = json.loads((tmp_path / "run" / "n=1" / "meta.json").read_text())
    assert meta["resources"]["window_s"][1] == 1.0
    rows = (tmp_path / "run" / "n=1" / "resources.csv").read_text().splitlines()[1:]
    assert max(float(r.split(",")[0]) for r in rows) > 1.0      # sampled past it all the same


def test_split_csv_log_keeps_only_the_marked_files():
    log = f"noise\n{BEGIN}a.csv\nx,y\n1,2\n{END}\nmore noise\n{BEGIN}b.csv\nz\n{END}\n"

    assert split_csv_log(log) == {"a.csv": "x,y\n1,2\n", "b.csv": "z\n"}


def test_dispatcher_runs_report_the_dispatchers_own_accept_rate_from_their_pods(tmp_path, monkeypatch):
    kubectl, calls = fake_kubectl(tmp_path)
    # Counters step once a sample, so rates compare exactly: per wall-clock second they did not (the
    # fake reads its clock some calls after the sampler's, and a busy machine read 62.1 for 50).
    monkeypatch.setenv("FAKE_COUNT_PER_SAMPLE", "1")
    lines = []

    run_kubernetes(tmp_path / "run", [1], ScaleOutSettings(service="dispatcher", duration_s=60),
                   target(kubectl), say=lines.append)

    recorded = [json.loads(line)["args"] for line in calls.read_text().splitlines()]
    assert ["-n", "herald", "get", "--raw",
            "/api/v1/namespaces/herald/pods/gw-1:8080/proxy/actuator/prometheus"] in recorded
    resources = json.loads((tmp_path / "run" / "n=1" / "meta.json").read_text())["resources"]
    # Both series summed: 40 + 10 accepts a sample, against the sandbox's 100 deliveries.
    assert resources["service_rate_per_s"] / resources["sandbox_rate_per_s"] == pytest.approx(0.5, rel=0.01)
    assert any("herald_dispatcher_accepted_total/s" in line for line in lines)


def test_connection_manager_job_connects_its_devices_to_the_measured_pods_in_turn():
    settings = ScaleOutSettings(service="connection-manager", users_per_replica=20,
                                backlog_per_device=70)
    job = job_manifest("j", "cm", target(), settings, 2, pod_hosts=["10.0.0.7", "10.0.0.8"])

    container = job["spec"]["template"]["spec"]["containers"][0]
    names = [e["name"] for e in container["env"]]
    env = {e["name"]: e.get("value") for e in container["env"]}
    # Each pod by its IP, not the Service (kube-proxy's random pick left 10 and 21 devices at N = 2).
    assert env["HERALD_MQTT_HOST"] == "10.0.0.7,10.0.0.8"
    assert names.count("HERALD_MQTT_HOST") == 1
    assert {e["name"]: e.get("value") for e in job_manifest("j", "cm", target(), settings, 2)[
        "spec"]["template"]["spec"]["containers"][0]["env"]}["HERALD_MQTT_HOST"] == \
        "herald-connection-manager-mqtt"
    # Every user but the topic feeder is a device, and every provisioned device connects: one left
    # offline would fill its box and count as outstanding for ever.
    assert env["HERALD_MQTT_DEVICES"] == "39"
    assert env["HERALD_LOAD_BACKLOG"] == str(settings.backlog_per_replica * 2)
    assert env["HERALD_MQTT_BACKLOG_PER_DEVICE"] == "70"
    assert "MqttDevice TopicFeeder" in container["command"][2]
    assert " -u 40 " in container["command"][2]


def test_counted_points_are_the_services_own_counter_over_the_plateau_window(tmp_path):
    folder = tmp_path / "run" / "n=2"
    folder.mkdir(parents=True)
    (folder / "meta.json").write_text(json.dumps({"n": 2, "service": "dispatcher", "pods": ["a", "b"],
                                                  "resources": {"window_s": [10, 40]}}))
    rows = ["t_s,kind,name,value", "0,counter,pod/a,0", "0,counter,pod/b,0"]
    for t, a, b in ((10, 1000, 500), (20, 2000, 1100), (30, 3000, 1600), (40, 4000, 2300)):
        rows += [f"{t},counter,pod/a,{a}", f"{t},counter,pod/b,{b}", f"{t},sandbox_accepted,sandbox,{t * 7}"]
        # pod a uses 0.1 cores throughout, pod b 0.3 cores until 20 s and then 0.1; the sandbox is
        # not measured
        rows += [f"{t},cpu_ns,pod/a,{t * 0.1e9:.0f}", f"{t},cpu_ns,pod/b,{min(t, 20) * 0.3e9 + max(t - 20, 0) * 0.1e9:.0f}",
                 f"{t},cpu_ns,pod/sandbox,{t * 1e9:.0f}"]
    (folder / "resources.csv").write_text("\n".join(rows) + "\n")

    [point] = counted_points(tmp_path / "run")

    assert point["n"] == 2 and point["samples"] == 4     # the sample before the window left out
    assert point["throughput"] == 160.0                  # (6300 - 1500) / 30 s, both pods
    assert point["drift_pct"] == 9.4                     # 155/s in the first 20 s, 170/s in the last 10 s
    assert point["source"] == "herald_dispatcher_accepted_total"
    assert point["service_cores"] == 0.267                 # a: 3 core-s, b: 5 core-s, over 30 s
    assert point["cpu_us_per_unit"] == 1666.7              # 0.2667 cores / 160 per s

    [later] = counted_points(tmp_path / "run", start_s=20)

    assert later["window_s"] == "20-40" and later["samples"] == 3
    assert later["throughput"] == 160.0                   # (6300 - 3100) / 20 s
    assert later["service_cores"] == 0.2                  # both pods at 0.1 after 20 s
    assert later["cpu_us_per_unit"] == 1250.0
    with pytest.raises(ValueError, match="cannot start at 40"):
        counted_points(tmp_path / "run", start_s=40)

    [earlier] = counted_points(tmp_path / "run", end_s=30)

    assert earlier["window_s"] == "10-30" and earlier["samples"] == 3
    assert earlier["throughput"] == 155.0                 # (4600 - 1500) / 20 s
    with pytest.raises(ValueError, match="cannot start at 20"):
        counted_points(tmp_path / "run", start_s=20, end_s=15)


def test_counted_warns_of_an_unsteady_plateau_and_of_rabbitmqs_memory_alarm(tmp_path, capsys):
    folder = tmp_path / "run" / "n=3"
    folder.mkdir(parents=True)
    (folder / "meta.json").write_text(json.dumps({"n": 3, "service": "gateway", "pods": [],
                                                  "resources": {"window_s": [0, 30],
                                                                "rabbitmq_memory_alarm_s": 12.0}}))
    rows = ["t_s,kind,name,value"] + [f"{t},sandbox_accepted,sandbox,{v}"
                                      for t, v in ((0, 0), (10, 1000), (20, 1500), (30, 2000))]
    (folder / "resources.csv").write_text("\n".join(rows) + "\n")

    assert counted_main([str(tmp_path / "run"), "--out", str(tmp_path / "points.csv")]) == 0

    err = capsys.readouterr().err
    assert "N = 3: the rate changed" in err                               # 100/s, then 50/s
    assert "N = 3: RabbitMQ's memory alarm blocked publishing for about 12 s" in err
    assert (tmp_path / "points.csv").read_text().splitlines()[0] == \
        "n,throughput,spread,drift_pct,samples,source,window_s,service_cores,cpu_us_per_unit,jit_pct"


def test_a_gateway_run_records_its_pods_jit_time_and_counted_flags_pods_still_compiling(tmp_path, capsys):
    kubectl, calls = fake_kubectl(tmp_path)

    run_kubernetes(tmp_path / "run", [1], ScaleOutSettings(duration_s=1), target(kubectl), say=lambda _l: None)

    recorded = [json.loads(line)["args"] for line in calls.read_text().splitlines()]
    assert ["-n", "herald", "get", "--raw",
            "/api/v1/namespaces/herald/pods/gw-1:8081/proxy/actuator/prometheus"] in recorded
    sampled = (tmp_path / "run" / "n=1" / "resources.csv").read_text()
    assert ",jit_ms,pod/gw-1," in sampled and ",counter," not in sampled   # the gateway has no counter

    folder = tmp_path / "counted" / "n=2"
    folder.mkdir(parents=True)
    (folder / "meta.json").write_text(json.dumps({"n": 2, "service": "gateway", "pods": ["a", "b"],
                                                  "resources": {"window_s": [10, 30]}}))
    rows = ["t_s,kind,name,value"]
    for t in (0, 10, 20, 25, 30):
        # pod a compiles 400 ms of every second until 20 s, then nothing; pod b 100 ms throughout;
        # the sandbox's JVM is not a measured pod
        rows += [f"{t},sandbox_accepted,sandbox,{t * 100}", f"{t},jit_ms,pod/a,{min(t, 20) * 400}",
                 f"{t},jit_ms,pod/b,{t * 100}", f"{t},jit_ms,pod/sandbox,{t * 900}"]
    (folder / "resources.csv").write_text("\n".join(rows) + "\n")

    [point] = counted_points(tmp_path / "counted")
    [later] = counted_points(tmp_path / "counted", start_s=20)

    assert point["jit_pct"] == 15.0          # over 10-30 s: a 4000 ms (20 %), b 2000 ms (10 %)
    assert later["jit_pct"] == 5.0           # a: 0 %, b: 10 %
    assert counted_main([str(tmp_path / "counted")]) == 0
    assert "N = 2: the pods' JIT was compiling 15 % of the window" in capsys.readouterr().err


def test_the_report_of_a_kubernetes_run_reads_each_ns_throughput_from_the_services_own_counter(tmp_path):
    from conftest import write_run
    from herald_capacity import load_run
    from herald_load.report import counted_run

    run_dir = write_run(tmp_path, {1: 100.0, 2: 200.0})       # what Locust's entry says
    for n in (1, 2):
        folder = run_dir / f"n={n}"
        meta = json.loads((folder / "meta.json").read_text())
        (folder / "meta.json").write_text(json.dumps({
            **meta, "service": "gateway", "pods": [f"gw-{i}" for i in range(n)],
            "machine": {"mode": "kubernetes"}, "resources": {"window_s": [0, 40]}}))
        # the sandbox counted 550 a second per pod, steadily
        (folder / "resources.csv").write_text("t_s,kind,name,value\n" + "".join(
            f"{t},sandbox_accepted,sandbox,{t * 550 * n}\n" for t in (0, 10, 20, 30, 40)))
    local = load_run(run_dir)

    counted = counted_run(local)

    assert [m.plateau.median for m in counted.measurements] == [550.0, 1100.0]
    assert [m.plateau.samples for m in counted.measurements] == [5, 5]
    assert all(m.plateau.stable and m.plateau.iqr == 0 for m in counted.measurements)
    assert [p.throughput for p in counted.points] == [550.0, 1100.0]
    for m in local.measurements:                             # a local-mode run is left as it is
        (m.path / "meta.json").write_text(json.dumps({**m.meta, "machine": {"mode": "local"}}))
    assert [m.plateau.median for m in counted_run(load_run(run_dir)).measurements] == \
        [m.plateau.median for m in local.measurements]


def _series(name: str, kind: str, per_s: list[float], step: float = 10.0) -> list[tuple]:
    """A counter sampled every ``step`` seconds growing by per_s[i] per second in step i."""
    rows, value = [(0.0, kind, name, 0.0)], 0.0
    for i, rate in enumerate(per_s):
        value += rate * step
        rows.append(((i + 1) * step, kind, name, value))
    return rows


def test_unit_windows_are_the_pods_cpu_per_unit_of_work_and_settle_when_two_in_a_row_agree():
    # 100 accepts/s throughout; the pod's CPU falls from 0.3 to 0.12 cores (two windows alike on the
    # way down), then stays.
    cpu = [0.3e9] * 6 + [0.2e9] * 6 + [0.19e9] * 6 + [0.12e9] * 18
    rows = _series("pod/d-1", "cpu_ns", cpu) + _series("pod/d-1", "counter", [100.0] * 36) \
        + _series("pod/other", "cpu_ns", [1e9] * 36)           # not a measured pod

    windows = unit_windows(rows, ["d-1"], 60.0, 0.0)

    assert [w["cpu_us_per_unit"] for w in windows] == [3000.0, 2000.0, 1900.0, 1200.0, 1200.0, 1200.0]
    assert [w["units_per_s"] for w in windows] == [100.0] * 6
    # Three windows in a row within 10 % of the least: two alike (2,000 and 1,900) are not enough.
    assert [settled(windows[:k]) for k in range(1, 7)] == [False, False, False, False, False, True]
    # The ramp is in no window, and only complete windows count.
    assert [w["from_s"] for w in unit_windows(rows, ["d-1"], 60.0, 30.0)] == [30.0, 90.0, 150.0, 210.0, 270.0]


def test_a_pod_whose_compilers_are_busy_has_not_settled_however_steady_its_cost():
    # Cost steady at 1,000 µs per accept throughout; the compilers busy 30 % of the first three
    # windows (300 ms per s), then 5 %.
    rows = _series("pod/d-1", "cpu_ns", [0.1e9] * 36) + _series("pod/d-1", "counter", [100.0] * 36) \
        + _series("pod/d-1", "jit_ms", [300.0] * 18 + [50.0] * 18) \
        + _series("pod/other", "jit_ms", [1000.0] * 36)          # not a measured pod

    windows = unit_windows(rows, ["d-1"], 60.0, 0.0)

    assert [w["cpu_us_per_unit"] for w in windows] == [1000.0] * 6
    assert [w["jit_pct"] for w in windows] == [30.0, 30.0, 30.0, 5.0, 5.0, 5.0]
    assert [settled(windows[:k]) for k in range(1, 7)] == [False, False, False, False, False, True]


def test_without_the_pods_own_counter_a_window_counts_the_sandboxs_deliveries():
    rows = _series("pod/gw-1", "cpu_ns", [0.05e9] * 12) + _series("sandbox", "sandbox_accepted", [500.0] * 12)
    assert [w["cpu_us_per_unit"] for w in unit_windows(rows, ["gw-1"], 60.0, 0.0)] == [100.0, 100.0]
    assert not settled(unit_windows(rows, ["gw-1"], 60.0, 0.0))       # two windows only
    idle = _series("pod/gw-1", "cpu_ns", [0.05e9] * 12)
    assert unit_windows(idle, ["gw-1"], 60.0, 0.0)[0]["cpu_us_per_unit"] is None
    assert not settled(unit_windows(idle, ["gw-1"], 60.0, 0.0))


def test_a_settling_job_at_the_measured_limit_runs_until_the_cost_per_unit_is_steady(tmp_path, monkeypatch):
    kubectl, calls = fake_kubectl(tmp_path)
    monkeypatch.setenv("FAKE_JOB_DONE_AT", str(time.time() + 300))   # it would run 5 minutes
    monkeypatch.setenv("FAKE_JOB_WAITING", "-settle-")
    monkeypatch.setenv("FAKE_COUNT_PER_SAMPLE", "1")
    # Compilers nearly idle, so the JIT rule holds: 1 % of the time at one sample a second. Not less:
    # jit_pct is rounded to 0.1, and 1 ms a sample read 0.0 when a loaded machine sampled slowly.
    monkeypatch.setenv("FAKE_JIT_MS_PER_TICK", "10")
    lines = []

    run_kubernetes(tmp_path / "run", [1], ScaleOutSettings(duration_s=1),
                   target(kubectl, cpu_limit="50m", warm_up_cpu_limit="1000m", settle_max_s=600,
                          settle_window_s=15),
                   say=lines.append)

    recorded = [json.loads(line) for line in calls.read_text().splitlines()]
    jobs = [(i, json.loads(c["stdin"])["metadata"]["name"]) for i, c in enumerate(recorded)
            if c["args"][2] == "apply" and '"kind": "Job"' in (c["stdin"] or "")]
    assert [name.split("-")[3] for _, name in jobs] == ["settle", "n1"]
    resize = next(i for i, c in enumerate(recorded) if c["args"][2:4] == ["patch", "pod/gw-1"])
    deleted = next(i for i, c in enumerate(recorded) if c["args"][2:4] == ["delete", f"job/{jobs[0][1]}"])
    # Resized before it settles, and the settling Job gone (ended early: steady) before the measured one.
    assert resize < jobs[0][0] < deleted < jobs[1][0]
    settle = json.loads((tmp_path / "run" / "settle.json").read_text())
    assert settle["steady"] and len(settle["windows"]) >= 3
    assert settle["cpu_limits"] == {"gw-1": "50m"}
    # Per sample the fake pod uses 0.1 core-seconds and the sandbox counts 100 deliveries: 1,000 µs each.
    assert [w["cpu_us_per_unit"] for w in settle["windows"][-3:]] == [1000.0, 1000.0, 1000.0]
    assert all(0 < w["jit_pct"] <= 10 for w in settle["windows"][-3:])       # sampled, and quiet
    assert settle["seconds"] < 280          # ended when steady, not when the Job did
    meta = json.loads((tmp_path / "run" / "n=1" / "meta.json").read_text())
    assert meta["settled"]["steady"] and meta["settled"]["job"] == jobs[0][1]
    assert any(line.startswith("settling: steady after") for line in lines)


def test_every_n_records_the_revision_the_run_started_with(tmp_path, monkeypatch):
    # A commit made during a long run must not show in the meta.json of the N measured after it: the
    # runner process still runs the code it loaded.
    kubectl, _ = fake_kubectl(tmp_path)
    revisions = iter(["aaa111", "bbb222", "ccc333"])
    monkeypatch.setattr("herald_load.kube.git_revision", lambda _root: next(revisions))

    run_kubernetes(tmp_path / "run", [2, 1], ScaleOutSettings(duration_s=1), target(kubectl),
                   say=lambda _line: None)

    recorded = [json.loads((tmp_path / "run" / f"n={n}" / "meta.json").read_text())["git_revision"]
                for n in (2, 1)]
    assert recorded == ["aaa111", "aaa111"]


def test_a_sandbox_reset_the_api_servers_proxy_did_not_deliver_is_sent_again(monkeypatch):
    from herald_load import kube

    unavailable = RuntimeError("kubectl create --raw .../proxy/sandbox/reset -f - failed: Error from server "
                               "(ServiceUnavailable): error trying to reach service: connection broken")
    calls, pauses, lines = [], [], []

    def flaky(_target, *args, stdin=None, timeout=600):
        calls.append(args)
        if len(calls) == 1:
            raise unavailable
        return ""

    monkeypatch.setattr(kube, "_kubectl", flaky)
    kube.reset_sandbox(target(), lines.append, pause=pauses.append)
    assert len(calls) == 2 and pauses == [1.0]
    assert lines[-1] == "    provider sandbox: record cleared"

    def refused(_target, *args, stdin=None, timeout=600):
        calls.append(args)
        raise RuntimeError("kubectl create --raw ... failed: Error from server (Forbidden): no")

    calls.clear()
    monkeypatch.setattr(kube, "_kubectl", refused)
    with pytest.raises(RuntimeError, match="Forbidden"):
        kube.reset_sandbox(target(), lines.append, pause=pauses.append)
    assert len(calls) == 1                  # any other failure is not retried

    def down(_target, *args, stdin=None, timeout=600):
        calls.append(args)
        raise unavailable

    calls.clear()
    monkeypatch.setattr(kube, "_kubectl", down)
    with pytest.raises(RuntimeError, match="ServiceUnavailable"):
        kube.reset_sandbox(target(), lines.append, pause=pauses.append)
    assert len(calls) == 3                  # at most three attempts
