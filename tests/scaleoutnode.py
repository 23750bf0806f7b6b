"""A scale-out run from real pods (scripts/k8s/scale-out-node.sh): the shared cluster with Herald on its
real node (heraldnode.bring_up), the Locust image (scripts/k8s/images.sh locust) imported into the
node's containerd, then `scripts/scale-out.sh SERVICE --mode kubernetes` against it: the service's
Deployment scaled on the real node, Locust as a Job there, the report written into the run folder.
Everything is torn down afterwards, on Ctrl-C and SIGTERM too (with the leftover check).

    python3 tests/scaleoutnode.py DIR SERVICE [scale-out.sh options...] [-- SERVICE [options...]]...

Several services (`gateway ... -- dispatcher ...`) are measured one after the other on the same
installation, each into its own run folder with its own options.

Standard library only, like tests/heraldnode.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from heraldnode import ROOT, bring_up, tear_down
from rabbitmq_operators import IMAGE_KINDS as RABBITMQ_IMAGES
from realnode import REAL_NODE_LABEL, import_images
from sharedcluster import REAL_NODE_TAINT, SharedCluster, built_image
from testbed import tear_down_on_sigterm


def scale_out_command(service: str, namespace: str, locust_image: str, options: list[str]) -> list[str]:
    """scripts/scale-out.sh in Kubernetes mode against Herald on the real node (its label and taint
    for the Locust Job's pod)."""
    return ["bash", str(ROOT / "scripts" / "scale-out.sh"), service, "--mode", "kubernetes",
            "--namespace", namespace, "--locust-image", locust_image,
            "--node-selector", f"{REAL_NODE_LABEL}=true", "--toleration", REAL_NODE_TAINT, *options]


# Memory for components that are not under test but saturate with it: at the node values' limits the
# provider sandbox (384Mi) and Redis (256Mi) were OOM-killed under a gateway run's load, and a run
# with a component restarting mid-plateau is worthless. The charts' own defaults are 512Mi; 1Gi
# leaves room (the node has the memory; CPU is what the run limits).
SUPPORT_MEMORY = {"herald-provider-sandbox": "1Gi", "herald-redis-master": "1Gi"}
# RabbitMQ too, set at install (its operator would restart the pod, and its emptyDir with the queues,
# if the limit changed later): at the node values' 512Mi, a gateway run at N = 5 with 10,000
# outstanding notifications per replica raised RabbitMQ's memory alarm, publishing was blocked, and
# deliveries stopped for about 10 s in the middle of the plateau.
RABBITMQ_MEMORY = ("rabbitmq.resources.requests.memory=1536Mi", "rabbitmq.resources.limits.memory=1536Mi")


# And patience in their probes: six gateway JVMs starting at once at a warm-up limit of one core each
# (--warm-up-cpu-limit) kept the host so busy that the sandbox missed three 1 s liveness probes and
# was restarted mid warm-up; the gateways dead-lettered what they could not deliver meanwhile, and the
# warm-up's feeder, counting those as outstanding, stopped sending. As the runner does for the
# measured pods (herald_load.kube's SLOW_PROBE): 10 s per probe and 12 misses before the kubelet acts.
# Repeated, not imported: this venv has herald_load without Locust's libraries, which herald_load.kube
# needs (through herald_load.scaleout).
SUPPORT_PROBE = {"timeoutSeconds": 10, "failureThreshold": 12}


# Every Deployment of the installation gets them (the services not measured carry the load to and from
# the one measured); the runner sets the measured one's own and puts back these after its run.
PATIENT = ("herald-provider-sandbox", "herald-redis-master", "herald-dispatcher", "herald-gateway",
           "herald-connection-manager")


def support_patch(deployment: dict, memory: str | None) -> list[dict]:
    """JSON patch giving each container of a Deployment patient probes, and `memory` (if given)."""
    patch = []
    for i, container in enumerate(deployment["spec"]["template"]["spec"]["containers"]):
        resources = container.get("resources", {})
        if memory:
            patch.append({"op": "replace", "path": f"/spec/template/spec/containers/{i}/resources",
                          "value": {**resources, "limits": {**resources.get("limits", {}), "memory": memory}}})
        patch += [{"op": "replace", "path": f"/spec/template/spec/containers/{i}/{probe}",
                   "value": {**container[probe], **SUPPORT_PROBE}}
                  for probe in ("livenessProbe", "readinessProbe") if probe in container]
    return patch


def give_support_memory(kube, namespace: str, say) -> None:
    for deployment in PATIENT:
        memory = SUPPORT_MEMORY.get(deployment)
        say(f"==> deployment/{deployment}: probes {SUPPORT_PROBE}" + (f", memory limit {memory}" if memory else ""))
        found = json.loads(kube.kubectl("-n", namespace, "get", f"deployment/{deployment}", "-o", "json"))
        kube.kubectl("-n", namespace, "patch", f"deployment/{deployment}", "--type=json",
                     "-p", json.dumps(support_patch(found, memory)))
        kube.kubectl("-n", namespace, "rollout", "status", f"deployment/{deployment}", "--timeout=600s")


def runs(arguments: list[str]) -> list[tuple[str, list[str]]]:
    """`SERVICE OPTIONS... -- SERVICE OPTIONS...` as (service, options) pairs."""
    groups, current = [], []
    for argument in arguments + ["--"]:
        if argument == "--":
            if current:
                groups.append((current[0], current[1:]))
            current = []
        else:
            current.append(argument)
    return groups


def main(directory: Path, measured: list[tuple[str, list[str]]]) -> int:
    def say(line: str) -> None:
        print(line, flush=True)

    tear_down_on_sigterm()
    directory.mkdir(parents=True, exist_ok=True)
    cluster = SharedCluster(directory, ["busybox", *RABBITMQ_IMAGES])
    rc = 1
    try:
        herald = bring_up(cluster, directory, say=say, platform_settings=RABBITMQ_MEMORY)
        give_support_memory(herald.kube, herald.namespace, say)
        image, tarball = built_image("locust")
        say(f"==> importing {image} into the node")
        import_images(cluster.node.socket, {image: tarball})
        environment = dict(os.environ, KUBECONFIG=str(herald.kube.kubeconfig))
        codes = []
        for service, options in measured:
            command = scale_out_command(service, herald.namespace, image, options)
            say("==> " + " ".join(command))
            codes.append(subprocess.run(command, env=environment).returncode)
        rc = max(codes)
    finally:
        rc = tear_down(cluster, say=say) or rc
    return rc


if __name__ == "__main__":
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(Path(sys.argv[1]).resolve(), runs(sys.argv[2:])))
