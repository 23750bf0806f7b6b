"""Kubernetes mode against a stand-in kubectl that records its calls (no cluster here)."""

from __future__ import annotations

import json
import stat

from herald_load.kube import BEGIN, END, KubeTarget, job_manifest, run_kubernetes, split_csv_log
from herald_load.scaleout import ScaleOutSettings

HISTORY = "Timestamp,User Count,Type,Name,Requests/s,Failures/s\n1,2,DELIVERY,provider deliveries,300,0\n"


def fake_kubectl(tmp_path):
    calls = tmp_path / "calls.jsonl"
    script = tmp_path / "kubectl"
    script.write_text(f"""#!/usr/bin/env python3
import json, sys
args = sys.argv[1:]
stdin = sys.stdin.read() if "-f" in args else None
with open({str(calls)!r}, "a") as out:
    out.write(json.dumps({{"args": args, "stdin": stdin}}) + "\\n")
if "logs" in args:
    print("locust noise")
    print({BEGIN!r} + "locust_stats_history.csv")
    sys.stdout.write({HISTORY!r})
    print({END!r})
if "current-context" in args:
    print("test-cluster")
""")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script, calls


def test_kubernetes_mode_scales_runs_a_job_and_stores_its_csvs(tmp_path):
    kubectl, calls = fake_kubectl(tmp_path)
    target = KubeTarget("herald", "herald-gateway", "http://d:8080", "http://s:9090",
                        kubectl=str(kubectl))

    measured = run_kubernetes(tmp_path / "run", [1, 2], ScaleOutSettings(duration_s=60), target,
                              say=lambda _line: None)

    assert measured == [1, 2]
    recorded = [json.loads(line) for line in calls.read_text().splitlines()]
    verbs = [c["args"][2] for c in recorded]
    assert verbs[:6] == ["apply", "scale", "rollout", "apply", "wait", "logs"]
    assert recorded[1]["args"][2:] == ["scale", "deployment/herald-gateway", "--replicas=1"]
    job = json.loads(recorded[3]["stdin"])
    assert job["kind"] == "Job"
    assert (tmp_path / "run" / "n=2" / "locust_stats_history.csv").read_text() == HISTORY
    meta = json.loads((tmp_path / "run" / "n=2" / "meta.json").read_text())
    assert meta["complete"] and meta["machine"]["context"] == "test-cluster"
    assert meta["throughput_row"] == "provider deliveries"

    # Resumed: nothing left to do, kubectl only applies the ConfigMap.
    assert run_kubernetes(tmp_path / "run", [1, 2], ScaleOutSettings(duration_s=60), target,
                          say=lambda _line: None) == []


def test_job_runs_non_root_read_only_with_the_backlog_for_its_n():
    target = KubeTarget("herald", "herald-gateway", "http://d:8080", "http://s:9090")

    job = job_manifest("j", "cm", target, ScaleOutSettings(backlog_per_replica=1500), 3)

    pod = job["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    env = {e["name"]: e for e in container["env"]}
    assert env["HERALD_LOAD_BACKLOG"]["value"] == "4500"
    assert "secretKeyRef" in env["HERALD_ADMIN_TOKEN"]["valueFrom"]
    assert "--csv-full-history" in container["command"][2]


def test_split_csv_log_keeps_only_the_marked_files():
    log = f"noise\n{BEGIN}a.csv\nx,y\n1,2\n{END}\nmore noise\n{BEGIN}b.csv\nz\n{END}\n"

    assert split_csv_log(log) == {"a.csv": "x,y\n1,2\n", "b.csv": "z\n"}
