"""``python -m herald_load``: the local platform, benchmarks, scale-out runs and their report.

    python -m herald_load local start|stop|status     # scripts/run-local.sh (standard library only)
    python -m herald_load bench [fanout|accept|cm-connections|cm-delivery|all]   # scripts/bench.sh
    python -m herald_load capacity gateway --max-n 4 --target 1500 [--run-id ID]   # scripts/scale-out.sh

    python -m herald_load scale-out runs/<run-id> --service gateway --max-n 4      # local
    python -m herald_load scale-out runs/<run-id> --n 5                             # one more N
    python -m herald_load scale-out runs/<run-id> --mode kubernetes --namespace herald \
        --locust-image docker.io/local/herald-locust:KEY --cpu-limit 250m --descending ...
    python -m herald_load report runs/<run-id> --target 1500                       # notebook -> HTML
    python -m herald_load counted runs/<run-id> --out points.csv   # each N from the service's counter

``capacity`` is the two in one (what ``scripts/scale-out.sh`` runs): builds the jars if missing,
measures into ``locust/runs/<run-id>/`` (default ``<service>-<UTC date>``, git-ignored) and writes
the report there; its ``--target``, ``--fit-max-n`` and ``--warmup`` go to the report, the rest to
the runner. A run folder that already holds complete N are skipped (resume). ``report`` executes the
scale-out notebook headless (nbconvert) into ``<run>/report/scale-out.html`` and writes the
capacity package's own report (HTML + JSON) beside it.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

# Subcommands that need no third-party package (a fresh machine's python3 runs them), by name.
STANDARD_LIBRARY_COMMANDS = {"local": "localrun", "bench": "bench.run"}


def _parser() -> argparse.ArgumentParser:
    from .scaleout import SCENARIOS, ScaleOutSettings
    parser = argparse.ArgumentParser(prog="python -m herald_load",
                                     description="Herald scale-out runs and capacity report.")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("scale-out", help="measure a service at N = 1..K replicas")
    run.add_argument("run_dir", type=Path, help="run folder (created; complete N are skipped)")
    run.add_argument("--service", choices=sorted(SCENARIOS), default="gateway")
    which = run.add_mutually_exclusive_group()
    which.add_argument("--max-n", type=int, default=4, help="measure N = 1..MAX_N (default 4)")
    which.add_argument("--n", type=int, action="append", help="measure exactly these N (repeatable)")
    run.add_argument("--mode", choices=["local", "kubernetes"], default="local")
    defaults = ScaleOutSettings()
    run.add_argument("--duration", type=int, default=defaults.duration_s, metavar="SECONDS",
                     help="Locust run per N (default %(default)s)")
    run.add_argument("--max-in-flight", type=int, default=defaults.max_in_flight,
                     help="gateway: provider requests in flight per replica (default %(default)s)")
    run.add_argument("--sandbox-latency-ms", type=int, default=defaults.sandbox_latency_ms)
    run.add_argument("--devices", type=int, default=defaults.devices,
                     help="devices subscribed to the load topic (default %(default)s)")
    run.add_argument("--backlog-per-replica", type=int, default=defaults.backlog_per_replica)
    run.add_argument("--backlog-per-device", type=int, default=defaults.backlog_per_device,
                     help="connection-manager: pushes outstanding per connected device, below "
                          "its box of 100 (default %(default)s)")
    run.add_argument("--users-per-replica", type=int, default=defaults.users_per_replica,
                     help="dispatcher: sender users per replica (default %(default)s)")
    kube = run.add_argument_group("kubernetes mode (see locust/README.md)")
    kube.add_argument("--namespace", default="herald")
    kube.add_argument("--deployment", default=None,
                      help="Deployment to scale (default herald-<service>)")
    kube.add_argument("--dispatcher-url", default="http://herald-dispatcher:8080",
                      help="dispatcher URL as seen from inside the cluster")
    kube.add_argument("--sandbox-url", default="http://herald-provider-sandbox:9090",
                      help="provider sandbox URL as seen from inside the cluster")
    kube.add_argument("--admin-secret", default="herald-app",
                      help="Secret with key admin-token (the dispatcher's admin token)")
    kube.add_argument("--locust-image", default=None,
                      help="Locust image on the nodes (scripts/k8s/images.sh locust prints it)")
    kube.add_argument("--rabbitmq-pod", default="herald-rabbitmq-server-0",
                      help="RabbitMQ's pod, where the send queues are emptied before each N "
                           "(kubectl exec rabbitmqctl purge_queue); '' leaves them")
    kube.add_argument("--cpu-limit", default=None, metavar="CPU",
                      help="CPU limit set on the Deployment before the run, e.g. 250m")
    kube.add_argument("--cpu-request", default=None, metavar="CPU")
    kube.add_argument("--warm-up-cpu-limit", default=None, metavar="CPU",
                      help="the pods start and warm up at this CPU limit, then each is resized in place "
                           "to --cpu-limit before it is measured (needs InPlacePodVerticalScaling)")
    kube.add_argument("--memory-limit", default=None, metavar="MEMORY",
                      help="memory limit set on the Deployment, e.g. 1Gi (the JVM's heap follows it)")
    kube.add_argument("--node-selector", action="append", default=[], metavar="KEY=VALUE",
                      help="where the Locust Job's pod may run (repeatable)")
    kube.add_argument("--toleration", action="append", default=[], metavar="KEY=VALUE:EFFECT",
                      help="a taint the Locust Job's pod tolerates (repeatable)")
    kube.add_argument("--descending", action="store_true",
                      help="measure the largest N first (scaling down starts no JVM)")
    kube.add_argument("--warmup", type=float, default=90.0, metavar="SECONDS",
                      help="seconds of each Job left out of the CPU and queue figures")
    kube.add_argument("--warm-up-run", type=float, default=0.0, metavar="SECONDS",
                      help="a discarded Locust Job of SECONDS at the first N before measuring "
                           "(cold JVMs under a small CPU limit)")
    kube.add_argument("--settle-run", type=float, default=0.0, metavar="MAX_SECONDS",
                      help="after the warm-up (and the resize to --cpu-limit), a discarded Locust Job at "
                           "the first N until the pods' CPU per unit of work agrees within 10 %% over three "
                           "60 s windows in a row, or MAX_SECONDS (settle.json in the run folder)")
    kube.add_argument("--jvm-options", default=None, metavar="OPTIONS",
                      help="appended to the measured pods' JAVA_TOOL_OPTIONS for the run, e.g. "
                           "-XX:TieredStopAtLevel=1 (restored after)")

    report = sub.add_parser("report", help="execute the scale-out notebook into an HTML report")
    report.add_argument("run_dir", type=Path)
    report.add_argument("--target", type=float, action="append", default=[],
                        help="throughput to find replicas for (repeatable)")
    report.add_argument("--predict", type=int, default=None,
                        help="N to predict (and compare with the measurement if one exists)")
    report.add_argument("--fit-max-n", type=int, default=None,
                        help="fit only N <= this (e.g. fit 1..4 and check the prediction at 5)")
    report.add_argument("--warmup", type=float, default=90.0, metavar="SECONDS",
                        help="plateau: seconds skipped after full load is reached (default "
                             "%(default)s; cold replicas need it)")
    report.add_argument("--out", type=Path, default=None,
                        help="report folder (default <run_dir>/report)")
    return parser


def capacity(argv: list[str]) -> int:
    """``capacity SERVICE [--run-id ID] [runner and report options]``: scale-out, then report."""
    from datetime import datetime, timezone
    from .processes import build_jars_if_missing, repository_root
    from .scaleout import SCENARIOS
    if not argv or argv[0] not in SCENARIOS:
        print(f"usage: python -m herald_load capacity {'|'.join(SCENARIOS)} [--max-n K] "
              "[--target X/s] [--run-id ID] ...", file=sys.stderr)
        return 2
    service, rest = argv[0], argv[1:]
    run_id = f"{service}-{datetime.now(timezone.utc):%Y%m%d}"
    runner, report = [], []
    while rest:
        option = rest.pop(0)
        if option == "--run-id":
            run_id = rest.pop(0)
        elif option in ("--target", "--fit-max-n"):
            report += [option, rest.pop(0)]
        elif option == "--warmup":        # the report's plateau and the runner's resource window
            value = rest.pop(0)
            report += [option, value]
            runner += [option, value]
        else:
            runner.append(option)
    if "kubernetes" not in runner:       # the cluster runs its own images
        build_jars_if_missing(["provider-sandbox", "dispatcher", "gateway"])
    run_dir = str(repository_root() / "locust" / "runs" / run_id)
    print(f"==> scale-out run {run_dir}", flush=True)
    code = main(["scale-out", run_dir, "--service", service, *runner])
    if code != 0:
        return code
    print("==> report", flush=True)
    return main(["report", run_dir, *report])


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in STANDARD_LIBRARY_COMMANDS:
        module = importlib.import_module(f".{STANDARD_LIBRARY_COMMANDS[argv[0]]}", __package__)
        return module.main(argv[1:])
    if argv and argv[0] == "capacity":
        return capacity(argv[1:])
    if argv and argv[0] == "counted":
        from .counted import main as counted
        return counted(argv[1:])
    args = _parser().parse_args(argv)
    if args.command == "report":
        from .notebook import execute_report
        out = execute_report(args.run_dir, out_dir=args.out, targets=args.target,
                             predict=args.predict, fit_max_n=args.fit_max_n,
                             warmup_s=args.warmup)
        print(f"report: {out}")
        return 0
    from .scaleout import SCENARIOS, ScaleOutSettings, run_local
    replicas = sorted(set(args.n)) if args.n else list(range(1, args.max_n + 1))
    settings = ScaleOutSettings(service=args.service, duration_s=args.duration,
                                sandbox_latency_ms=args.sandbox_latency_ms,
                                max_in_flight=args.max_in_flight, devices=args.devices,
                                backlog_per_replica=args.backlog_per_replica,
                                backlog_per_device=args.backlog_per_device,
                                users_per_replica=args.users_per_replica)

    def say(line: str) -> None:
        print(line, flush=True)

    if args.mode == "local":
        if not SCENARIOS[args.service].local:
            print(f"{args.service}: only --mode kubernetes runs this scenario", file=sys.stderr)
            return 2
        run_local(args.run_dir, replicas, settings, say=say)
    else:
        from .kube import KubeTarget, run_kubernetes
        if not args.locust_image:
            print("--mode kubernetes needs --locust-image (build it: scripts/k8s/images.sh locust)",
                  file=sys.stderr)
            return 2
        target = KubeTarget(namespace=args.namespace,
                            deployment=args.deployment or f"herald-{args.service}",
                            dispatcher_url=args.dispatcher_url, sandbox_url=args.sandbox_url,
                            admin_secret=args.admin_secret, image=args.locust_image,
                            cpu_limit=args.cpu_limit, cpu_request=args.cpu_request,
                            memory_limit=args.memory_limit,
                            node_selector=tuple(tuple(s.split("=", 1)) for s in args.node_selector),
                            tolerations=tuple(args.toleration), warmup_s=args.warmup,
                            warm_up_run_s=args.warm_up_run, rabbitmq_pod=args.rabbitmq_pod,
                            jvm_options=args.jvm_options, warm_up_cpu_limit=args.warm_up_cpu_limit,
                            settle_max_s=args.settle_run)
        if args.descending:
            replicas = sorted(replicas, reverse=True)
        run_kubernetes(args.run_dir, replicas, settings, target, say=say)
    return 0


if __name__ == "__main__":
    sys.exit(main())
