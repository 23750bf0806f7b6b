"""``python -m herald_load bench [fanout|accept|cm-connections|cm-delivery|all|soak]`` (default all):
Herald's benchmarks, printing figures (no pass/fail thresholds: targets are in the output).

Starts the local platform (:mod:`herald_load.localrun`, without the demo) with benchmark settings,
provisions a fresh app with the sandbox's credentials, then:

- fanout: N notifications (default 100,000) to N distinct FCM tokens through the whole pipeline,
  API accept -> sandbox receipt, sandbox latency 50 ms. Target: <= 10 s. Cold (services just
  started), then warm (same processes, second run).
- accept: sustained single-token sends to the dispatcher with wrk on the same machine. Target:
  >= 5,000 requests/s, p99 <= 25 ms, no errors. The gateway is stopped during the run (so it
  measures the dispatcher, not the 2 cores it shares with gateway and sandbox), the backlog purged
  afterwards and the gateway started again; ``ACCEPT_PIPELINE=1`` keeps it delivering.
- scheduled (the 07:00 case): ``SCHEDULED_COUNT`` (100,000) devices with time zones (one zone,
  or ``SCHEDULED_ZONES`` zones of the same UTC offset) on a topic, one send with
  ``sendAtLocalTime`` a minute ahead; delay from the due time to the sandbox's first and last
  receipt. Target: first <= 1 s, last <= 10 s.
- cm-connections: hold ``CM_CONNECTIONS`` (50,000) idle MQTT 5 connections on the connection
  manager, from source addresses 127.0.0.2.., and print its heap (after GC) and RSS per
  connection. Target: <= 20 kB per connection.
- cm-delivery: ``CM_DEVICES`` (1,000) MQTT devices connected; ``CM_RATE`` (1,000) messages/s for
  ``CM_SECONDS`` (30) through the dispatcher API, gateway and connection manager, one device
  each; p50/p99 from API accept to device receipt. Target: p99 <= 50 ms. ``CM_TO=tokens`` sends
  to the MQTT target directly instead of to the registered device.

- soak (not part of all: 30 minutes): :mod:`herald_load.bench.soak`, on a platform of its own on
  free ports; mixed load at a steady rate, per-minute heap/RSS/files/threads/permits, fails if any
  grows without bound (``SOAK_MINUTES`` and the other ``SOAK_*`` knobs there).

Knobs (environment): ``FANOUT_COUNT``, ``SCHEDULED_COUNT``, ``SCHEDULED_ZONES``, ``ACCEPT_SECONDS``, ``ACCEPT_CONNECTIONS``,
``CM_HOLD_SECONDS``, ``HERALD_GATEWAY_MAX_IN_FLIGHT`` and the gateway's other settings.
The platform stays running afterwards (``scripts/run-local.sh stop``).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import resource
import shutil
import subprocess
import time
from pathlib import Path

from . import fanout, mqtt, scheduled, soak
from ..localrun import local_platform, start
from ..processes import PlatformError
from ..provisioning import Provisioner

SEND_LUA = Path(__file__).with_name("send.lua")
API = "http://127.0.0.1:8080"
BENCHMARKS = ("fanout", "scheduled", "cm-connections", "cm-delivery", "accept")


def _env(name: str, default: object) -> str:
    return os.environ.get(name, str(default))


def _gateway_settings(what: str) -> None:
    """Benchmark settings for the gateway, by environment (the services inherit it)."""
    # 50 ms per request at the sandbox: 10,000/s needs at least 500 requests in flight; headroom.
    os.environ.setdefault("HERALD_GATEWAY_MAX_IN_FLIGHT", "2000")
    os.environ.setdefault("HERALD_GATEWAY_FCM_CONNECTIONS", "4")
    os.environ.setdefault("HERALD_GATEWAY_CONSUMERS_NORMAL", "4")
    if what == "cm-delivery":
        # One message per device send: each is its own small audience job and batch, so the
        # gateway needs more of them in hand than for fan-out (where one job becomes thousands
        # of targets).
        os.environ.setdefault("HERALD_GATEWAY_PREFETCH", "16")
        os.environ.setdefault("HERALD_GATEWAY_CONSUMERS_AUDIENCE", "4")
    os.environ.setdefault("HERALD_GATEWAY_PREFETCH", "2")


def _load_average() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def _fanout(app: str, key: str, pids: str) -> None:
    print(f"==> fan-out benchmark: {_env('FANOUT_COUNT', 100000)} notifications", flush=True)
    for label, topic in (("cold (services just started)", "fanout-cold"),
                         ("warm (same processes, second run)", "fanout-warm")):
        print(f"--- {label}", flush=True)
        fanout.main(["--app", app, "--key", key, "--count", _env("FANOUT_COUNT", 100000),
                     "--pids", pids, "--topic", topic])


def _scheduled(app: str, key: str) -> None:
    count, zones = _env("SCHEDULED_COUNT", 100000), _env("SCHEDULED_ZONES", 1)
    print(f"==> 07:00 benchmark: {count} devices in {zones} zone(s), a send at their local time a minute ahead",
          flush=True)
    scheduled.main(["--app", app, "--key", key, "--count", count, "--zones", zones])
    print(f"  load average after: {_load_average()}")


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


def _cm_delivery(app: str, key: str) -> None:
    rate, seconds, devices = _env("CM_RATE", 1000), _env("CM_SECONDS", 30), _env("CM_DEVICES", 1000)
    print(f"==> connection-manager delivery benchmark: {rate} messages/s for {seconds} s to "
          f"{devices} devices", flush=True)
    common = ["delivery", "--app", app, "--key", key, "--devices", devices, "--rate", rate,
              "--to", _env("CM_TO", "devices")]
    with contextlib.redirect_stdout(io.StringIO()):   # a warm-up at the same rate first (JIT)
        mqtt.main([*common, "--seconds", "10"])
    mqtt.main([*common, "--seconds", seconds])
    print(f"  load average after: {_load_average()}")


def _wrk(app: str, key: str, connections: str, seconds: str) -> str:
    return subprocess.run(["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "-s", str(SEND_LUA), API],
                          env={**os.environ, "HERALD_APP": app, "HERALD_KEY": key},
                          capture_output=True, text=True, check=True).stdout


def _accept(platform, app: str, key: str) -> None:
    seconds, connections = _env("ACCEPT_SECONDS", 30), _env("ACCEPT_CONNECTIONS", 32)
    print(f"==> accept benchmark: wrk, {connections} connections, {seconds} s (after a 10 s warm-up)",
          flush=True)
    if not shutil.which("wrk"):
        raise PlatformError("wrk not found: run scripts/install-deps.sh")
    version = subprocess.run(["wrk", "-v"], capture_output=True, text=True)
    print(f"generator: {(version.stdout + version.stderr).splitlines()[0][:60]}, 2 threads, "
          f"{connections} connections, closed loop")
    pipeline = _env("ACCEPT_PIPELINE", 0) == "1"
    if not pipeline:
        print("gateway stopped for this run: sends pile up in herald.send.high (purged afterwards)")
        platform.stop_gateways()
    _wrk(app, key, connections, "10")
    report = _wrk(app, key, connections, seconds).splitlines()
    first = next(i for i, line in enumerate(report) if line.strip().startswith("requests "))
    print("\n".join(report[first:]))
    print(f"  load average after: {_load_average()}")
    if not pipeline:
        platform.rabbit.purge(["herald.send.high"])
        platform.start_gateways(1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m herald_load bench",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("what", nargs="?", choices=[*BENCHMARKS, "all", "soak"], default="all")
    what = parser.parse_args(argv).what
    if what == "soak":
        return soak.main()
    _gateway_settings(what)
    platform = local_platform()
    try:
        start(platform)
        provisioner = Provisioner(API, platform.admin_token, platform.sandbox_url)
        app = provisioner.create_app(f"bench-{int(time.time())}", name="Benchmark")
        running = platform.pids()
        # The Erlang VM, not RabbitMQ's start script, is where the broker's CPU goes.
        running["rabbitmq"] = platform.rabbit.vm_pid()
        pids = {name: running[name] for name in ("dispatcher", "gateway", "provider-sandbox",
                                                 "connection-manager", "rabbitmq", "redis")}
        print(f"machine: {os.cpu_count()} cores, "
              f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') // 2**30} GiB, "
              f"load average {_load_average()}")
        print(f"gateway: max-in-flight {os.environ['HERALD_GATEWAY_MAX_IN_FLIGHT']}, "
              f"{os.environ['HERALD_GATEWAY_CONSUMERS_NORMAL']} normal consumers, "
              f"prefetch {os.environ['HERALD_GATEWAY_PREFETCH']}", flush=True)
        # Start from empty queues: a backlog of an earlier run would share the machine with this one.
        platform.purge_queues()
        selected = BENCHMARKS if what == "all" else (what,)
        if "fanout" in selected:
            _fanout(app.app, app.api_key, ",".join(f"{name}={pid}" for name, pid in pids.items()))
        if "scheduled" in selected:
            _scheduled(app.app, app.api_key)
        if "cm-connections" in selected:
            _cm_connections(app.app, pids["connection-manager"], platform.crypto_key)
        if "cm-delivery" in selected:
            _cm_delivery(app.app, app.api_key)
        if "accept" in selected:
            _accept(platform, app.app, app.api_key)
    except PlatformError as error:
        print(f"ERROR: {error}")
        return 1
    finally:
        platform.detach()   # the platform stays running, as after scripts/run-local.sh
    return 0
