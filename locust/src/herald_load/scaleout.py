"""The scale-out runner: one scenario at N = 1..K replicas of one service, each at saturation,
into a run folder the capacity model reads (format: locust/README.md).

Local mode starts RabbitMQ, Redis, the provider sandbox and the services as real processes on
free ports (:mod:`herald_load.local`); Kubernetes mode (:mod:`herald_load.kube`) scales a
Deployment and runs Locust as a Job. Either way, for each N:

1. skip it if ``n=N/meta.json`` says ``"complete": true`` (so a stopped run resumes);
2. bring the service to N replicas, empty the queues, zero the sandbox's counters;
3. run Locust headless for the same duration and the same load *per replica*, with
   ``--csv n=N/locust --csv-full-history``, printing progress every few seconds;
4. write ``meta.json`` (N, settings, git revision, machine, start/end, load average and CPU
   per process during the run), ``complete`` last.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

import requests

from .local import LocalPlatform
from .processes import repository_root
from .machine import LoadSampler, describe_machine, git_revision, services_revision
from .provisioning import Provisioner

__all__ = ["ScaleOutSettings", "Scenario", "SCENARIOS", "completed", "run_local", "still_to_measure",
           "write_meta"]

SCENARIO_DIR = Path(__file__).resolve().parents[2] / "scenarios"


@dataclass(frozen=True)
class Scenario:
    """A locustfile and how the runner drives it."""

    locustfile: str
    user_classes: tuple[str, ...]
    throughput_row: str            # the Locust stats entry whose Requests/s is the throughput
    what: str                      # one line for the report: what was measured
    metrics_port: int = 8081       # the service's /actuator/prometheus (Kubernetes mode)
    # The service's own count of what it did (summed over its pods, Kubernetes mode): the
    # progress line's rate and, over the plateau, meta.json's resources["service_rate_per_s"].
    # None: the provider sandbox's delivery count instead (the gateway's deliveries).
    counter: str | None = None
    gauge: str | None = None       # a per-pod gauge worth recording (how evenly load spread)
    job_env: tuple[tuple[str, str], ...] = ()   # extra environment of the Locust Job
    # The Job's environment variable that gets the measured pods' addresses (comma-separated), in
    # place of job_env's Service: the scenario spreads its connections over them in turn. Through
    # the Service, kube-proxy chose a pod at random per connection: 10 and 21 devices at N = 2.
    pod_hosts_env: str | None = None
    local: bool = True             # the local-process mode can run it


SCENARIOS = {
    "gateway": Scenario("gateway_deliveries.py", ("DeliveryMonitor", "BacklogFeeder"),
                        "provider deliveries",
                        "notifications delivered to the providers (the sandbox's counters) per "
                        "second, queues kept fed by topic sends"),
    "dispatcher": Scenario("http_senders.py", ("UnicastSender",), "Aggregated",
                           "unicast sends accepted by the dispatchers (202) per second",
                           metrics_port=8080, counter="herald_dispatcher_accepted_total"),
    # Devices connect to the connection managers' pods in turn (pod_hosts_env), so each pod holds
    # as many as the next; the pushes are topic sends reaching every device, fed while the
    # backlog allows. Unicast sends as fast as answered (the first try) measured nothing: the one
    # gateway and dispatcher ahead of the connection managers fell behind, and every push waited
    # in a queue of 70,000 on a host out of cores.
    "connection-manager": Scenario(
        "mqtt_devices.py", ("MqttDevice", "TopicFeeder"), "delivery (accept to device)",
        "pushes received by MQTT devices (connected through the connection managers) per second, "
        "queues kept fed by topic sends to every device",
        metrics_port=8082, counter="herald_cm_delivered_total", gauge="herald_cm_connections",
        job_env=(("HERALD_MQTT_HOST", "herald-connection-manager-mqtt"), ("HERALD_MQTT_PORT", "1883")),
        pod_hosts_env="HERALD_MQTT_HOST", local=False),
}


@dataclass(frozen=True)
class ScaleOutSettings:
    """Everything that must be the same at every N (it goes into meta.json's ``settings``)."""

    service: str = "gateway"
    duration_s: int = 240               # cold JVMs on a busy machine take ~90 s to warm up
    sandbox_latency_ms: int = 50
    max_in_flight: int = 16            # gateway: provider requests in flight per replica
    gateway_consumers_normal: int = 2
    gateway_prefetch: int = 2
    audience_batch_size: int = 100
    devices: int = 1000                # topic audience (gateway) / tokens to pick from
    backlog_per_replica: int = 1500    # gateway: outstanding notifications per replica
    # connection-manager: pushes outstanding per connected device. It must stay below the device
    # box (100 by default) so no push is evicted, and deep enough that the managers, not the
    # feeder, set the rate: at 20 the feeder allowed about 480/s at N = 1 (cm-k8s-20261125).
    backlog_per_device: int = 60
    users_per_replica: int = 16        # dispatcher: sender users per replica
    fixed_gateways: int = 1            # dispatcher scale-out: gateways running beside
    jvm_options: tuple[str, ...] = ("-Xms64m", "-Xmx384m", "-XX:+UseSerialGC",
                                    "-XX:+ExitOnOutOfMemoryError")

    def gateway_args(self) -> dict[str, object]:
        return {"herald.gateway.max-in-flight": self.max_in_flight,
                "herald.gateway.consumers.normal": self.gateway_consumers_normal,
                "herald.gateway.prefetch": self.gateway_prefetch,
                "herald.gateway.audience.batch-size": self.audience_batch_size}

    def users(self, n: int) -> int:
        scenario = SCENARIOS[self.service]
        if self.service == "gateway":
            return len(scenario.user_classes)      # feeder + monitor; the backlog scales with N
        return self.users_per_replica * n      # connection-manager: the feeder and the devices

    def mqtt_devices(self, n: int) -> int:
        """Devices to provision: one per device user (the connection manager's feeder is a user
        too), so that none sits offline filling its box."""
        return self.users(n) - 1 if self.service == "connection-manager" else 0


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def completed(folder: Path) -> bool:
    try:
        return json.loads((folder / "meta.json").read_text()).get("complete") is True
    except (OSError, ValueError):
        return False


def still_to_measure(run_dir: Path, replicas: list[int], say: Callable[[str], None]) -> list[int]:
    """The N of ``replicas`` (in their order) not yet complete in ``run_dir``; says which are skipped."""
    todo = [n for n in replicas if not completed(run_dir / f"n={n}")]
    for n in replicas:
        if n not in todo:
            say(f"N = {n}: already complete in {run_dir / f'n={n}'}, skipped")
    return todo


def write_meta(folder: Path, meta: dict) -> None:
    """Atomically: a crash never leaves a meta.json that claims a complete run."""
    tmp = folder / "meta.json.tmp"
    tmp.write_text(json.dumps(meta, indent=2, sort_keys=False) + "\n")
    tmp.replace(folder / "meta.json")


def locust_command(scenario: Scenario, prefix: Path, users: int, duration_s: int,
                   host: str) -> list[str]:
    return [sys.executable, "-m", "locust", "-f", str(SCENARIO_DIR / scenario.locustfile),
            *scenario.user_classes, "--headless", "-u", str(users), "-r", str(max(users, 1)),
            "-t", f"{duration_s}s", "--csv", str(prefix), "--csv-full-history",
            "--host", host, "--only-summary", "--stop-timeout", "5", "--loglevel", "WARNING"]


def _run_locust(command: list[str], env: dict[str, str], log: Path, duration_s: int,
                progress: Callable[[float], str], say: Callable[[str], None]) -> int:
    with log.open("w") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                                   env={**os.environ, **env}, start_new_session=True)
        started = time.monotonic()
        # Locust stops itself after -t; the deadline only guards against a hung run.
        deadline = started + duration_s + 120
        try:
            while process.poll() is None:
                time.sleep(1)
                elapsed = time.monotonic() - started
                if int(elapsed) % 10 == 0:
                    say(f"    {elapsed:5.0f}/{duration_s} s  {progress(elapsed)}")
                if time.monotonic() > deadline:
                    say("    Locust did not stop in time: terminating it")
                    process.terminate()
                    process.wait(30)
        except BaseException:
            process.terminate()
            process.wait(30)
            raise
    return process.returncode


class _Rate:
    """Delivery (or accept) rate over the last progress interval, for the progress line."""

    def __init__(self, read: Callable[[], float]):
        self.read = read
        self.last = (time.monotonic(), read())

    def __call__(self) -> float:
        now, value = time.monotonic(), self.read()
        rate = (value - self.last[1]) / max(1e-6, now - self.last[0])
        self.last = (now, value)
        return rate


def run_local(run_dir: Path, replicas: list[int], settings: ScaleOutSettings, *,
              run_id: str | None = None, say: Callable[[str], None] = print) -> list[int]:
    """Measures each N in ``replicas`` not yet complete in ``run_dir``; returns those measured."""
    run_dir = Path(run_dir)
    run_id = run_id or run_dir.name
    scenario = SCENARIOS[settings.service]
    if not scenario.local:
        raise ValueError(f"{settings.service}: the local-process mode does not run this scenario; "
                         f"use --mode kubernetes")
    todo = still_to_measure(run_dir, replicas, say)
    if not todo:
        return []
    root = repository_root()
    work = Path(os.environ.get("HERALD_LOAD_WORKDIR") or (run_dir.parent / f".work-{run_id}"))
    shutil.rmtree(work, ignore_errors=True)
    measured = []
    with LocalPlatform(work, sandbox_latency_ms=settings.sandbox_latency_ms,
                       jvm_options=settings.jvm_options, log=say) as platform:
        say(f"starting RabbitMQ, Redis and the provider sandbox on free ports (work folder {work})")
        platform.start_infrastructure()
        platform.start_dispatchers(1)
        provisioner = Provisioner(platform.dispatcher_urls[0], platform.admin_token,
                                  platform.sandbox_url)
        app = provisioner.create_app()
        say(f"provisioning app {app.app}: {settings.devices} FCM devices on topic 'load'")
        provisioner.register_fcm_devices(app, settings.devices, "load")
        for n in todo:
            measured.append(_measure_local(platform, app, run_dir, run_id, n, settings,
                                           scenario, root, say))
    shutil.rmtree(work, ignore_errors=True)
    return measured


def _measure_local(platform: LocalPlatform, app, run_dir: Path, run_id: str, n: int,
                   settings: ScaleOutSettings, scenario: Scenario, root: Path,
                   say: Callable[[str], None]) -> int:
    folder = run_dir / f"n={n}"
    shutil.rmtree(folder, ignore_errors=True)   # a half-written N is measured again
    folder.mkdir(parents=True)
    say(f"N = {n}: starting {n} {settings.service} replica(s)")
    if settings.service == "gateway":
        platform.start_gateways(n, settings.gateway_args())
    else:
        platform.stop_gateways()
        platform.start_dispatchers(n)
        platform.start_gateways(settings.fixed_gateways, settings.gateway_args())
    platform.purge_queues()
    platform.reset_sandbox_counts()
    env = {**app.to_env(), "HERALD_SANDBOX_URL": platform.sandbox_url,
           "HERALD_DISPATCHERS": ",".join(platform.dispatcher_urls),
           "HERALD_GATEWAY_METRICS": ",".join(platform.gateway_urls),
           "HERALD_LOAD_TOPIC": "load",
           "HERALD_LOAD_BACKLOG": str(settings.backlog_per_replica * n)}
    users = settings.users(n)
    command = locust_command(scenario, folder / "locust", users, settings.duration_s,
                             platform.dispatcher_urls[0])
    if settings.service == "gateway":
        rate = _Rate(lambda: float(platform.sandbox_stats()["accepted"]))
        unit = "deliveries/s"
    else:
        rate = _Rate(lambda: float(_dispatcher_accepted(platform.dispatcher_urls)))
        unit = "accepts/s"

    def progress(_elapsed: float) -> str:
        try:
            value = f"{rate():7.0f} {unit}"
        except (requests.RequestException, KeyError, ValueError):
            value = "(rate unavailable)"
        load = Path("/proc/loadavg").read_text().split()[0]
        return f"{value}  load {load}  queues {platform.queue_depths()}"

    started_at = _now()
    uptime_before = _uptime()
    say(f"N = {n}: Locust {scenario.locustfile} for {settings.duration_s} s, {users} users "
        f"({uptime_before})")
    with LoadSampler(folder / "load.csv", platform.pids()) as sampler:
        code = _run_locust(command, env, folder / "locust.log", settings.duration_s, progress, say)
    ended_at = _now()
    uptime_after = _uptime()
    sandbox = platform.sandbox_stats() if settings.service == "gateway" else None
    if settings.service == "gateway":
        platform.stop_gateways()
    else:
        platform.stop_dispatchers()
        platform.stop_gateways()
        platform.start_dispatchers(1)
    platform.purge_queues()
    if code != 0 or not list(folder.glob("*_stats_history.csv")):
        raise RuntimeError(f"N = {n}: Locust exited with {code}; see {folder / 'locust.log'}")
    meta = {
        "n": n,
        "run_id": run_id,
        "scenario": scenario.locustfile.removesuffix(".py"),
        "service": settings.service,
        "measured": scenario.what,
        "throughput_row": scenario.throughput_row,
        "users": users,
        "settings": {k: (list(v) if isinstance(v, tuple) else v)
                     for k, v in asdict(settings).items()},
        "git_revision": git_revision(root),
        "services_revision": services_revision(root),   # the code under test
        "machine": {**describe_machine(), "mode": "local processes"},
        "started_at": started_at,
        "ended_at": ended_at,
        "uptime_before": uptime_before,
        "uptime_after": uptime_after,
        "load_during_run": sampler.summary(skip_first_s=15),
        "sandbox_stats": sandbox,
        "complete": True,
    }
    write_meta(folder, meta)
    say(f"N = {n}: done ({uptime_after}); {folder}")
    return n


def _uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return "load average " + Path("/proc/loadavg").read_text().strip()


def _dispatcher_accepted(urls: list[str]) -> float:
    total = 0.0
    for url in urls:
        for line in requests.get(f"{url}/actuator/prometheus", timeout=2).text.splitlines():
            if line.startswith("herald_dispatcher_accepted_total"):
                total += float(line.rsplit(" ", 1)[1])
    return total
