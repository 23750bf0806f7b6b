"""``python -m herald_load bench [fanout|fanout-webpush|accept|import|cm-connections|cm-delivery|all|soak]`` (default all):
Herald's benchmarks, printing figures (no pass/fail thresholds: targets are in the output).

Starts the local platform (:mod:`herald_load.localrun`, without the demo) with benchmark settings,
provisions a fresh app with the sandbox's credentials, then:

- fanout: N notifications (default 100,000) to N distinct FCM tokens through the whole pipeline,
  API accept -> sandbox receipt, sandbox latency 50 ms. Targets: warm <= 6 s, cold <= 12 s, CPU
  per notification (gateway + dispatcher + Redis + RabbitMQ) <= 50 µs. Cold (services just
  started), a warm-up run, then warm (same processes, third run; ``FANOUT_WARM_RUNS``, default 2,
  counts the runs after the cold one).
- fanout-webpush: the fan-out with ``WEBPUSH_COUNT`` (10,000) Web Push subscriptions of the
  sandbox's push service instead of FCM tokens: every push encrypted (RFC 8291), VAPID-signed and
  decrypted and checked by the sandbox. Same figures; no target of its own (a cold and a warm run).
- accept: sustained single-token sends to the dispatcher with wrk on the same machine. Target:
  >= 5,000 requests/s, p99 <= 25 ms, no errors. The gateway is stopped during the run (so it
  measures the dispatcher, not the 2 cores it shares with gateway and sandbox), the backlog purged
  after each 30 s step of the warm-up and afterwards, and the gateway started again;
  ``ACCEPT_PIPELINE=1`` keeps it delivering.
- scheduled (the 07:00 case): ``SCHEDULED_COUNT`` (100,000) devices with time zones (one zone,
  or ``SCHEDULED_ZONES`` zones of the same UTC offset) on a topic, one send with
  ``sendAtLocalTime`` a minute ahead; delay from the due time to the sandbox's first and last
  receipt. Target: first <= 1 s, last <= 10 s.
- import: ``IMPORT_COUNT`` (100,000) device registrations in one streamed NDJSON bulk import
  (:mod:`herald_load.bench.imports`): cold (the dispatcher just started), warm (other new devices),
  then the warm one again (idempotent). Prints the time and the CPU µs per registration of the
  dispatcher and Redis. Target: <= 5 s.
- cm-connections: hold ``CM_CONNECTIONS`` (50,000) idle MQTT 5 connections on the connection
  manager, from source addresses 127.0.0.2.., and print its heap (after GC) and RSS per
  connection. Target: <= 20 kB per connection.
- cm-delivery: ``CM_DEVICES`` (1,000) MQTT devices connected; ``CM_RATE`` (1,000) messages/s for
  ``CM_SECONDS`` (30) through the dispatcher API, gateway and connection manager, one device
  each; p50/p99 from API accept to device receipt. Target: p99 <= 50 ms. ``CM_TO=tokens`` sends
  to the MQTT target directly instead of to the registered device. ``CM_WARMUP_SECONDS`` (60): the
  warm-up at the same rate before (the services are started afresh, so their JIT compiles then).

- soak (not part of all: 30 minutes): :mod:`herald_load.bench.soak`, on a platform of its own on
  free ports; mixed load at a steady rate, per-minute heap/RSS/files/threads/permits, fails if any
  grows without bound (``SOAK_MINUTES`` and the other ``SOAK_*`` knobs there).

Redis's own share of the import and the fan-out, without the JVMs beside it, comes from
``python -m herald_load.bench.functions [LIBRARY.lua ...]`` (:mod:`herald_load.bench.functions`:
each library on a Redis of its own, CPU µs per registration, device read and recorded outcome), the
steadiest figure for a change to ``herald.lua``.

Fan-out also prints CPU µs per notification per process (from /proc over the measured window)
and runs the seed-style sender (:mod:`herald_load.bench.seed`: 50 threads, a blocking HTTP client,
one request per notification; ``SEED_COUNT`` notifications, default 10,000) against the same
sandbox, printing Herald's warm rate as a multiple of it. ``--profile`` records the warm run with
JFR in every JVM and Redis's command statistics and writes top-frame tables to ``docs/perf/``
(:mod:`herald_load.bench.profile`); with ``accept`` it records the dispatcher over wrk's measured
run (``docs/perf/accept-*.md``), with ``import`` the dispatcher and Redis over the warm import
(``docs/perf/import-*.md``), with ``cm-delivery`` the dispatcher, gateway and connection manager over the
measured sends (``docs/perf/cm-delivery-*.md``). ``--record`` appends the run's output, dated, with its commit
and the machine's load, to ``docs/benchmarks.md`` (earlier sections stay for comparison).
``BENCH_PORTS=free`` runs a platform of its own on free ports under ``.run/bench`` (stopped at the
end) instead of the local run's fixed ports, for a machine where those are taken (fan-out only).

Knobs (environment): ``BENCH_FCM_PER_MINUTE`` (the app's FCM quota: 6,000,000 a minute, or ``default``), ``FANOUT_COUNT``, ``FANOUT_WARM_RUNS``, ``FANOUT_WARM_PROVIDER``, ``SEED_COUNT``, ``IMPORT_COUNT``, ``WEBPUSH_COUNT``, ``SCHEDULED_COUNT``, ``SCHEDULED_ZONES``, ``ACCEPT_SECONDS``, ``ACCEPT_CONNECTIONS``,
``CM_HOLD_SECONDS``, ``CM_WARMUP_SECONDS`` (60), ``ACCEPT_WARMUP_SECONDS`` (180; the services start afresh, so their JIT compiles during the warm-up), ``HERALD_GATEWAY_MAX_IN_FLIGHT`` and the gateway's other settings.
The platform stays running afterwards (``scripts/run-local.sh stop``).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import io
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

from . import fanout, imports, mqtt, profile, scheduled, seed, soak
from ..local import LocalPlatform
from ..localrun import build, jvm_options, local_platform, run_dir, start
from ..processes import PlatformError
from ..provisioning import Provisioner, ProvisioningError

SEND_LUA = Path(__file__).with_name("send.lua")
API = "http://127.0.0.1:8080"
BENCHMARKS = ("fanout", "scheduled", "cm-connections", "cm-delivery", "accept", "import", "fanout-webpush")


# The services start afresh for each run, and on a 2-core machine their compilers are still busy for
# tens of seconds under load: on 2026-11-28 the same accept run cost the dispatcher 3,963 µs per
# request after a 10 s warm-up and 742 µs after 60 s (382 against 1,427 requests/s).
WARM_UP_SECONDS = 60
# The accept benchmark's dispatcher is warm later. Measured at 23:24 UTC on 2026-11-29 (20 s wrk
# windows back to back from a fresh start, the queue emptied between them), its CPU per request was
# 952, 258, 210, 214, 217, 178, 185, 198, 177 and 171 µs: steady after about two minutes.
ACCEPT_WARM_UP_SECONDS = 180
# With the gateway stopped, a quorum queue that three minutes of sends filled (about 800,000
# messages) cost RabbitMQ 181 µs per message in the window after it, against 75 to 112 µs on a queue
# holding up to 500,000: the backlog, not the send path. The warm-up empties it every step.
ACCEPT_WARM_UP_STEP_SECONDS = 30


def _env(name: str, default: object) -> str:
    return os.environ.get(name, str(default))


# The benchmark app's FCM quota: the most an app's limits take (FCM's published default ten times
# over, as for a project whose quota Google raised). The sandbox enforces no quota, and the field
# notes' gorush run had none. At FCM's default of 600,000 a minute the gateway admits a burst of
# 10,000 and then 9,833 a second, so 100,000 targets take at least 9.2 s whatever the pipeline
# costs. The fan-outs of 2026-11-28 and 29 ran into that gate (9.3 to 10.3 s, with about 90 µs of
# platform CPU per notification against about 50 µs unthrottled: held targets are parked and
# admitted again).
RAISED_FCM_PER_MINUTE = 6_000_000


def _app_limits(provisioner: Provisioner, app: str) -> None:
    """Raises the benchmark app's FCM quota, unless ``BENCH_FCM_PER_MINUTE`` says otherwise
    (``default``: the gateway's own, FCM's 600,000 a minute)."""
    wanted = _env("BENCH_FCM_PER_MINUTE", RAISED_FCM_PER_MINUTE)
    if wanted == "default":
        print("app's FCM quota: the gateway's default (FCM's 600,000 a minute: a 100,000 fan-out takes at least 9.2 s)")
        return
    if not wanted.isdigit():
        raise PlatformError(f"BENCH_FCM_PER_MINUTE={wanted!r}: give messages a minute (1 to 6000000) or 'default'")
    try:
        limits = provisioner.set_limits(app, fcmPerMinute=int(wanted))
    except ProvisioningError as refused:   # out of the admin API's bounds: its problem+json says which
        raise PlatformError(f"BENCH_FCM_PER_MINUTE={wanted}: {refused}") from None
    print(f"app's FCM quota: {limits['fcmPerMinute']:,} a minute (a raised project quota; the sandbox enforces "
          f"none; BENCH_FCM_PER_MINUTE=default for FCM's 600,000)", flush=True)


def _gateway_settings(what: str) -> None:
    """Benchmark settings for the gateway, by environment (the services inherit it)."""
    # 50 ms per request at the sandbox: 10,000/s needs at least 500 requests in flight; headroom.
    os.environ.setdefault("HERALD_GATEWAY_MAX_IN_FLIGHT", "2000")
    # An HTTP/2 server allows a limited number of streams per connection (the sandbox, like Netty's
    # default, 100): 2,000 in flight need 20 connections. With 4, 400 requests were in flight and the
    # rest queued in the client's pool, which capped the fan-out at 400 / 50 ms = 8,000/s.
    os.environ.setdefault("HERALD_GATEWAY_FCM_CONNECTIONS", "20")
    os.environ.setdefault("HERALD_GATEWAY_CONSUMERS_NORMAL", "4")
    if what == "cm-delivery":
        # One message per device send: each is its own small audience job and batch, so the
        # gateway needs more of them in hand than for fan-out (where one job becomes thousands
        # of targets).
        os.environ.setdefault("HERALD_GATEWAY_PREFETCH", "16")
        os.environ.setdefault("HERALD_GATEWAY_CONSUMERS_AUDIENCE", "4")
    os.environ.setdefault("HERALD_GATEWAY_PREFETCH", "2")


STARTED = re.compile(r"Started \S+ in ([\d.]+) seconds \(process running for ([\d.]+)\)")


def _start_up(platform) -> None:
    """Each service's start-up to ready, as Spring Boot logs it (the latest start in its log)."""
    for name, process in platform.processes().items():
        log = process.log.read_text(errors="replace") if process.log and process.log.exists() else ""
        started = STARTED.findall(log)
        if started:
            context, jvm = started[-1]
            print(f"  start-up {name:<21} {float(jvm):6.2f} s from JVM start to ready ({float(context):.2f} s in Spring)")


def _load_average() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def _fanout(platform, app: str, key: str, pids: dict[str, int], profiling: bool) -> None:
    count = int(_env("FANOUT_COUNT", 100000))
    print(f"==> fan-out benchmark: {count} notifications", flush=True)
    if _env("FANOUT_WARM_PROVIDER", 1) != "0":
        _warm_provider(platform, app, key, pids, count)

    common = [*_fanout_args(platform, app, key, count),
              "--pids", ",".join(f"{name}={pid}" for name, pid in pids.items())]
    print("--- cold (Herald's services just started)", flush=True)
    fanout.run([*common, "--topic", "fanout-cold"])
    recorder = None
    if profiling:
        jvms = {name: pids[name] for name in ("gateway", "dispatcher", "provider-sandbox") if name in pids}
        recorder = profile.Recorder(platform.java, jvms, platform.redis.port, run_dir(platform.root) / "profile")
        print(f"profiling the warm run: JFR in {', '.join(jvms)}, Redis commandstats", flush=True)
    # One warm-up fan-out before the warm one: after a single run on this machine the JIT compilers
    # were still a fifth of the gateway's CPU and half the dispatcher's in the second (thread table
    # of docs/perf/fanout-*.md). FANOUT_WARM_RUNS=1 measures the second run as before.
    runs = max(1, int(_env("FANOUT_WARM_RUNS", 2)))
    for number in range(1, runs):
        print(f"--- warm-up {number} (same processes)", flush=True)
        fanout.run([*common, "--topic", f"fanout-warm-up-{number}"])
    print(f"--- warm (same processes, run {runs + 1})", flush=True)
    warm = fanout.run([*common, "--topic", "fanout-warm"], window=recorder)
    if recorder:
        recordings = recorder.recordings
        title = f"Fan-out of {count} (warm), {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC"
        print("\n".join(profile.write(recorder, recordings, "fanout", count, title,
                                      platform.root / "docs" / "perf")), flush=True)
    print("--- seed-style sender, same sandbox", flush=True)
    platform.sandbox.reset()
    baseline = seed.run(["--sandbox", platform.sandbox_url, "--count", _env("SEED_COUNT", 10000)])
    print(f"Herald's warm fan-out: {warm['rate']:.0f} notifications/s = {warm['rate'] / baseline['rate']:.1f} x "
          f"the seed-style sender's {baseline['rate']:.0f}/s", flush=True)


def _warm_provider(platform, app: str, key: str, pids: dict[str, int], count: int) -> None:
    """One fan-out through the whole platform, then Herald's services restarted (``pids`` updated):
    the cold run then measures cold Herald against a warm provider. The sandbox stands in for FCM,
    whose servers are never cold; started with the platform, its JIT took more CPU than the gateway
    in the cold run (349 µs per notification against 238 on 2026-11-28, scripts/bench.sh fanout).
    ``FANOUT_WARM_PROVIDER=0`` measures both cold, as before. With the AOT cache on, and no
    workload's cache for these builds yet, Herald's services run one more fan-out first, recording
    their AOT caches (classes and method profiles, written as they stop): the cold run then starts
    from caches trained on the work it measures, as the JDK intends them to be made."""
    print("--- provider warm-up (the sandbox stands in for FCM, never cold: one fan-out, "
          "then Herald's services are restarted)", flush=True)
    fanout.run([*_fanout_args(platform, app, key, count), "--topic", "fanout-provider-warm-up"])
    if platform.aot_cache and not platform.has_workload_aot_caches():
        print("--- AOT cache training (once per build): Herald's services restarted to record a fan-out, "
              "their caches written as they stop", flush=True)
        platform.aot_training = True
        try:
            _restart_herald(platform, pids)
            fanout.run([*_fanout_args(platform, app, key, count), "--topic", "fanout-aot-training"])
        finally:
            platform.aot_training = False
    _restart_herald(platform, pids)
    platform.purge_queues()


def _fanout_args(platform, app: str, key: str, count: int) -> list[str]:
    """A fan-out run's arguments, its topic and the processes it measures aside."""
    return ["--app", app, "--key", key, "--count", str(count), "--api", API.removeprefix("http://"),
            "--sandbox", platform.sandbox_url]


def _forget(redis, app: str) -> None:
    """The run's devices (500,000 in a fan-out) and its messages' statuses (about 360,000 in an accept
    run, kept a week) would otherwise stay in the local run's Redis: it then took over 30 s to load
    its append-only file at the next start, and 4 million keys had piled up by the morning of
    2026-11-29. The messages go first: the app's list of them is among its keys."""
    try:
        messages = redis.unlink_messages_of(app)
        print(f"removed the benchmark app's {messages} messages and {redis.unlink_matching(f'*{{{app}}}*')} "
              f"keys from Redis", flush=True)
    except (OSError, subprocess.CalledProcessError) as error:   # the figures above stand
        print(f"WARNING: the benchmark app's keys stay in Redis: {error}", flush=True)


def _restart_herald(platform, pids: dict[str, int]) -> None:
    """Herald's services stopped and started again, the brokers and the sandbox kept; ``pids``
    updated."""
    global API
    platform.stop_herald_services()
    platform.start_gateways(1)
    platform.start_connection_managers(1)
    platform.start_dispatchers(1)
    API = platform.dispatcher_urls[0]
    # Only Herald's: RabbitMQ's is its Erlang VM's, not what the platform started (see _run).
    pids.update({role: pid for role, pid in _roles(platform).items()
                 if role in ("dispatcher", "gateway", "connection-manager")})


def _roles(platform) -> dict[str, int]:
    """Process ids by role: a private platform numbers its replicas (gateway-1); there is one of each."""
    return {name.removesuffix("-1"): pid for name, pid in platform.pids().items()}


def _fanout_webpush(app: str, key: str, pids: str) -> None:
    print(f"==> Web Push fan-out benchmark: {_env('WEBPUSH_COUNT', 10000)} notifications", flush=True)
    for label, topic in (("cold (Web Push just started)", "webpush-cold"), ("warm (second run)", "webpush-warm")):
        print(f"--- {label}", flush=True)
        fanout.main(["--app", app, "--key", key, "--count", _env("WEBPUSH_COUNT", 10000),
                     "--pids", pids, "--topic", topic, "--channel", "webpush"])


def _scheduled(app: str, key: str) -> None:
    count, zones = _env("SCHEDULED_COUNT", 100000), _env("SCHEDULED_ZONES", 1)
    print(f"==> 07:00 benchmark: {count} devices in {zones} zone(s), a send at their local time a minute ahead",
          flush=True)
    scheduled.main(["--app", app, "--key", key, "--count", count, "--zones", zones])
    print(f"  load average after: {_load_average()}")


def _import(platform, app: str, key: str, pids: dict[str, int], profiling: bool) -> None:
    count = _env("IMPORT_COUNT", 100000)
    print(f"==> bulk import benchmark: {count} devices", flush=True)
    recorder = profile.Recorder(platform.java, {"dispatcher": pids["dispatcher"]}, platform.redis.port,
                                run_dir(platform.root) / "profile-import") if profiling else None
    if recorder:
        print("profiling the warm import: JFR in the dispatcher, Redis commandstats", flush=True)
    imports.main(["--app", app, "--key", key, "--count", count,
                  "--pids", ",".join(f"{name}={pid}" for name, pid in pids.items())], recorder)
    if recorder:
        title = f"Bulk import of {count} devices (warm), {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC"
        print("\n".join(profile.write(recorder, recorder.recordings, "import", int(count), title,
                                      platform.root / "docs" / "perf")), flush=True)


def _cm_connections(app: str, cm_pid: int, crypto_key: str) -> None:
    count = int(_env("CM_CONNECTIONS", 50000))
    # One descriptor per connection in the CM (and in the client): a hard limit below that cannot
    # be raised without CAP_SYS_RESOURCE, so the run is scaled down to fit, and says so.
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard != resource.RLIM_INFINITY and count > hard - 1000:
        print(f"WARNING: open-files hard limit is {hard} here (raising it needs CAP_SYS_RESOURCE): "
              f"measuring {hard - 1000} connections instead of {count}", flush=True)
        count = hard - 1000
    print(f"==> connection-manager connections benchmark: {count} idle MQTT connections", flush=True)
    mqtt.main(["connections", "--app", app, "--pid", str(cm_pid), "--crypto-key", crypto_key,
               "--count", str(count), "--hold", _env("CM_HOLD_SECONDS", 20)])
    print(f"  load average after: {_load_average()}")


def _cm_delivery(platform, app: str, key: str, pids: dict[str, int], profiling: bool) -> None:
    rate, seconds, devices = _env("CM_RATE", 1000), _env("CM_SECONDS", 30), _env("CM_DEVICES", 1000)
    print(f"==> connection-manager delivery benchmark: {rate} messages/s for {seconds} s to "
          f"{devices} devices", flush=True)
    common = ["delivery", "--app", app, "--key", key, "--devices", devices, "--rate", rate,
              "--to", _env("CM_TO", "devices")]
    with contextlib.redirect_stdout(io.StringIO()):   # a warm-up at the same rate first (JIT)
        mqtt.main([*common, "--seconds", _env("CM_WARMUP_SECONDS", WARM_UP_SECONDS)])
    jvms = {name: pids[name] for name in ("dispatcher", "gateway", "connection-manager")}
    recorder = profile.Recorder(platform.java, jvms, platform.redis.port,
                                run_dir(platform.root) / "profile-cm-delivery") if profiling else None
    if recorder:
        print(f"profiling the measured run: JFR in {', '.join(jvms)}, Redis commandstats", flush=True)
    client = "load client"   # this process: the API sender and the 1,000 MQTT devices (mqtt.delivery)
    window = fanout.CpuWindow({**pids, client: os.getpid()}, recorder)
    mqtt.main([*common, "--seconds", seconds], window)
    messages = int(rate) * int(seconds)
    herald = {name: cpu for name, cpu in window.cpu.items() if name != client}
    # CPU per message says which process the machine's two cores went to while the receipts waited.
    print("  cpu per message: " + ", ".join(f"{name} {cpu / messages * 1e6:.0f} µs" for name, cpu in herald.items())
          + f" (total {sum(herald.values()) / messages * 1e6:.0f} µs)")
    # Not Herald's, but on the same two cores: what the benchmark's own sender and devices took.
    print(f"  the load client's own CPU: {window.cpu[client] / messages * 1e6:.0f} µs per message")
    if recorder:
        title = f"Device receipts at {rate} messages/s, {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC"
        print("\n".join(profile.write(recorder, recorder.recordings, "cm-delivery", messages, title,
                                      platform.root / "docs" / "perf")), flush=True)
    print(f"  load average after: {_load_average()}")


def _wrk(app: str, key: str, connections: str, seconds: str) -> str:
    return subprocess.run(["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "-s", str(SEND_LUA), API],
                          env={**os.environ, "HERALD_APP": app, "HERALD_KEY": key},
                          capture_output=True, text=True, check=True).stdout


def _accept_warm_up(platform, app: str, key: str, connections: str, seconds: int, purge: bool) -> None:
    """wrk for ``seconds`` in steps of at most ACCEPT_WARM_UP_STEP_SECONDS. With the gateway stopped,
    the queue is emptied after each step, as a consuming gateway keeps it, so the measured window
    starts on a queue the warm-up did not fill."""
    while seconds > 0:
        step = min(seconds, ACCEPT_WARM_UP_STEP_SECONDS)
        _wrk(app, key, connections, str(step))
        seconds -= step
        if purge:
            platform.rabbit.purge(["herald.send.high"])


def _accept(platform, app: str, key: str, pids: dict[str, int], profiling: bool = False) -> None:
    seconds, connections = _env("ACCEPT_SECONDS", 30), _env("ACCEPT_CONNECTIONS", 32)
    print(f"==> accept benchmark: wrk, {connections} connections, {seconds} s "
          f"(after a {_env('ACCEPT_WARMUP_SECONDS', ACCEPT_WARM_UP_SECONDS)} s warm-up)",
          flush=True)
    if not shutil.which("wrk"):
        raise PlatformError("wrk not found: run scripts/install-deps.sh")
    version = subprocess.run(["wrk", "-v"], capture_output=True, text=True)
    print(f"generator: {(version.stdout + version.stderr).splitlines()[0][:60]}, 2 threads, "
          f"{connections} connections, closed loop")
    pipeline = _env("ACCEPT_PIPELINE", 0) == "1"
    if not pipeline:
        print("gateway stopped for this run: sends pile up in herald.send.high (purged after each warm-up "
              "step and afterwards)")
        platform.stop_gateways()
    _accept_warm_up(platform, app, key, connections, int(_env("ACCEPT_WARMUP_SECONDS", ACCEPT_WARM_UP_SECONDS)),
                    purge=not pipeline)
    recorder = profile.Recorder(platform.java, {"dispatcher": pids["dispatcher"]}, platform.redis.port,
                                run_dir(platform.root) / "profile-accept") if profiling else None
    if recorder:
        print("profiling the measured run: JFR in the dispatcher, Redis commandstats", flush=True)
    window = fanout.CpuWindow(pids, recorder)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    window.start()
    report = _wrk(app, key, connections, seconds).splitlines()
    window.stop()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    wrk_cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    cpu = window.cpu
    first = next(i for i, line in enumerate(report) if line.strip().startswith("requests "))
    print("\n".join(report[first:]))
    requests = int(report[first].split()[1])
    if recorder:
        title = f"Accept, wrk {connections} connections, {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC"
        print("\n".join(profile.write(recorder, recorder.recordings, "accept", requests, title,
                                      platform.root / "docs" / "perf")), flush=True)
    # CPU per request is far steadier than the rate on a shared machine.
    print("  cpu per request: " + ", ".join(f"{name} {seconds / requests * 1e6:.0f} µs" for name, seconds in cpu.items())
          + f" (total {sum(cpu.values()) / requests * 1e6:.0f} µs)")
    # wrk does the same work per request in every run, so its cost tells how fast the machine was
    # then: 20 to 32 µs on 2026-11-29, and the platform's figures moved with it.
    print(f"  the load client's own CPU: wrk {wrk_cpu / requests * 1e6:.0f} µs per request")
    print(f"  load average after: {_load_average()}")
    if not pipeline:
        platform.rabbit.purge(["herald.send.high"])
        platform.start_gateways(1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m herald_load bench",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("what", nargs="?", choices=[*BENCHMARKS, "all", "soak"], default="all")
    parser.add_argument("--profile", action="store_true",
                        help="fan-out and accept: JFR and Redis command statistics over the measured run, "
                             "tables to docs/perf/")
    parser.add_argument("--record", action="store_true",
                        help="append this run's output to docs/benchmarks.md (dated, with commit and load)")
    options = parser.parse_args(argv)
    what = options.what
    if what == "soak":
        return soak.main()
    if not options.record:
        return _run(what, options.profile)
    tee = _Tee(sys.stdout)
    with contextlib.redirect_stdout(tee):
        code = _run(what, options.profile)
    _record(argv if argv is not None else sys.argv[1:], tee.getvalue())
    return code


class _Tee(io.StringIO):
    """Keeps what is printed and passes it on."""

    def __init__(self, out):
        super().__init__()
        self.out = out

    def write(self, text: str) -> int:
        self.out.write(text)
        return super().write(text)

    def flush(self) -> None:
        self.out.flush()


def _record(argv: list[str], output: str) -> None:
    root = Path(__file__).resolve().parents[4]
    commit = subprocess.run(["git", "-C", str(root), "log", "-1", "--format=%h %s"],
                            capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    now = datetime.datetime.now(datetime.timezone.utc)
    section = (f"\n## {now:%Y-%m-%d %H:%M} UTC: `scripts/bench.sh {' '.join(argv)}`\n\n"
               f"Commit {commit}{' (with uncommitted changes)' if dirty else ''}. Output as printed "
               f"(load averages are 1, 5 and 15 minutes):\n\n```text\n{output.strip()}\n```\n")
    with open(root / "docs" / "benchmarks.md", "a") as document:
        document.write(section)
    print(f"appended to {root / 'docs' / 'benchmarks.md'}")


def _measure(platform, app, selected: tuple[str, ...], pids: dict[str, int], profiling: bool) -> None:
    if "fanout" in selected:
        _fanout(platform, app.app, app.api_key, pids, profiling)
    if "fanout-webpush" in selected:
        _fanout_webpush(app.app, app.api_key, ",".join(f"{name}={pid}" for name, pid in pids.items()))
    if "scheduled" in selected:
        _scheduled(app.app, app.api_key)
    if "cm-connections" in selected:
        _cm_connections(app.app, pids["connection-manager"], platform.crypto_key)
    if "cm-delivery" in selected:
        _cm_delivery(platform, app.app, app.api_key, pids, profiling)
    if "accept" in selected:
        _accept(platform, app.app, app.api_key,
                {name: pids[name] for name in ("dispatcher", "redis", "rabbitmq")}, profiling)
    if "import" in selected:
        _import(platform, app.app, app.api_key, {name: pids[name] for name in ("dispatcher", "redis")}, profiling)


def _run(what: str, profiling: bool) -> int:
    global API
    _gateway_settings(what)
    private = os.environ.get("BENCH_PORTS") == "free"
    if private and what != "fanout":
        print("ERROR: BENCH_PORTS=free runs the fan-out benchmark only")
        return 2
    # The services start with the JDK's AOT cache unless HERALD_AOT_CACHE=0 (the local run's do not).
    aot_cache = os.environ.get("HERALD_AOT_CACHE", "1") != "0"
    platform = (LocalPlatform(run_dir() / "bench", jvm_options=[*jvm_options(), *profile.JVM_OPTIONS],
                              aot_cache=aot_cache)
                if private else local_platform(extra_jvm_options=profile.JVM_OPTIONS, aot_cache=aot_cache))
    app = None
    try:
        if private:
            build(platform.root)
            platform.start_infrastructure()
            platform.start_gateways(1)
            platform.start_connection_managers(1)
            platform.start_dispatchers(1)
            API = platform.dispatcher_urls[0]
        else:
            start(platform)
        provisioner = Provisioner(API, platform.admin_token, platform.sandbox_url)
        app = provisioner.create_app(f"bench-{int(time.time())}", name="Benchmark")
        _app_limits(provisioner, app.app)
        running = _roles(platform)
        # The Erlang VM, not RabbitMQ's start script, is where the broker's CPU goes.
        running["rabbitmq"] = platform.rabbit.vm_pid()
        pids = {name: running[name] for name in ("dispatcher", "gateway", "provider-sandbox",
                                                 "connection-manager", "rabbitmq", "redis")}
        print(f"machine: {os.cpu_count()} cores, "
              f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') // 2**30} GiB, "
              f"load average {_load_average()}")
        print(f"AOT cache: {'on' if platform.aot_cache else 'off'}")
        _start_up(platform)
        print(f"gateway: max-in-flight {os.environ['HERALD_GATEWAY_MAX_IN_FLIGHT']}, "
              f"{os.environ['HERALD_GATEWAY_FCM_CONNECTIONS']} FCM connections, "
              f"{os.environ['HERALD_GATEWAY_CONSUMERS_NORMAL']} normal consumers, "
              f"prefetch {os.environ['HERALD_GATEWAY_PREFETCH']}", flush=True)
        # Start from empty queues: a backlog of an earlier run would share the machine with this one.
        platform.purge_queues()
        selected = BENCHMARKS if what == "all" else (what,)
        with platform.redis.aof_rewrites_held():
            _measure(platform, app, selected, pids, profiling)
    except PlatformError as error:
        print(f"ERROR: {error}")
        return 1
    finally:
        if app and platform.redis:
            _forget(platform.redis, app.app)
        if private:
            platform.close()
        else:
            platform.detach()   # the platform stays running, as after scripts/run-local.sh
    return 0
