"""The developer's local platform: ``python -m herald_load local start|stop|status`` (what
``scripts/run-local.sh`` runs, after installing the system packages).

``start`` builds the jars (``mvn -B -q package -DskipTests``), starts RabbitMQ and Redis (or
reuses the ones an earlier start left), the provider sandbox, gateway, connection manager and
dispatcher on their well-known ports (:data:`herald_load.processes.FIXED_PORTS`), runs the demo
(:mod:`herald_load.demo`; ``HERALD_DEMO=0`` skips it) and leaves everything running; a rerun
restarts the services on the fresh build. ``stop`` stops everything a start left running.

Everything lives in ``.run/``: logs (``<service>.log``), pid files, the generated admin token
(``.run/admin-token``) and credential encryption key (``.run/crypto-key``), kept across runs so
credentials stored in Redis stay decryptable while Redis runs. Settings reach the services by
environment, Spring style (``HERALD_GATEWAY_MAX_IN_FLIGHT=64``); ``HERALD_JAVA_OPTS`` adds JVM
options. Standard library only.
"""

from __future__ import annotations

import argparse
import base64
import os
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Callable, Sequence

from .demo import DemoError, DemoTarget, run_demo
from .local import DEFAULT_JVM_OPTIONS, LocalPlatform
from .processes import FIXED_PORTS, PlatformError, repository_root, require_free

__all__ = ["run_dir", "local_platform", "start", "stop", "main"]

SUMMARY = """
Herald is running:
  dispatcher API    http://127.0.0.1:8080/v1   (admin token: .run/admin-token)
  console           http://127.0.0.1:8080/console/   (app "demo": API key in .run/demo-api-key;
                    admin: the admin token)
  gateway actuator  http://127.0.0.1:8081/actuator
  connection mgr    mqtt://127.0.0.1:1883, actuator http://127.0.0.1:8082/actuator
  provider sandbox  http://127.0.0.1:9090/sandbox (APNs on 9443)
  RabbitMQ UI       http://127.0.0.1:15672 (guest/guest), Redis 127.0.0.1:6379
  logs              .run/*.log
Stop it with: scripts/run-local.sh stop"""


def run_dir(root: Path | None = None) -> Path:
    return (root or repository_root()) / ".run"


def _secret(file: Path, make: Callable[[], str]) -> str:
    """The secret in ``file``, created (readable by us only) if missing."""
    if not file.exists() or not file.read_text().strip():
        file.touch(mode=0o600)
        file.write_text(make())
    return file.read_text().strip()


def jvm_options() -> list[str]:
    """The services' JVM options: the platform's defaults, then ``HERALD_JAVA_OPTS`` (a later option
    overrides an earlier one; another collector needs ``-XX:-UseSerialGC`` before it)."""
    return [*DEFAULT_JVM_OPTIONS, *os.environ.get("HERALD_JAVA_OPTS", "").split()]


def local_platform(root: Path | None = None, say: Callable[[str], None] = print,
                   extra_jvm_options: Sequence[str] = (), aot_cache: bool = False) -> LocalPlatform:
    """The fixed-port platform in ``.run/`` with its kept secrets, ``HERALD_JAVA_OPTS`` and
    ``extra_jvm_options`` (the benchmarks' own); ``aot_cache`` as in :class:`LocalPlatform`."""
    folder = run_dir(root)
    folder.mkdir(parents=True, exist_ok=True)
    return LocalPlatform(
        folder, fixed_ports=True, root=root, log=say, aot_cache=aot_cache,
        jvm_options=[*jvm_options(), *extra_jvm_options],
        admin_token=_secret(folder / "admin-token", lambda: secrets.token_hex(24)),
        crypto_key=_secret(folder / "crypto-key",
                           lambda: base64.b64encode(secrets.token_bytes(32)).decode()))


def build(root: Path, say: Callable[[str], None] = print) -> None:
    say("==> building the services (mvn -B -q package -DskipTests)")
    try:
        built = subprocess.run(["mvn", "-B", "-q", "package", "-DskipTests"], cwd=root).returncode == 0
    except OSError as error:   # no mvn
        raise PlatformError(f"cannot run Maven: {error}") from None
    if not built:
        raise PlatformError("build failed (RabbitMQ and Redis keep running; "
                            "scripts/run-local.sh stop stops them)")


def start(platform: LocalPlatform, say: Callable[[str], None] = print) -> None:
    """RabbitMQ and Redis (reused if ours run), a fresh build, then the services, restarted."""
    platform.attach()
    build(platform.root, say)
    platform.stop_services()
    platform.start_infrastructure()
    platform.start_gateways(1)
    platform.start_connection_managers(1)
    platform.start_dispatchers(1)


def stop(platform: LocalPlatform) -> None:
    platform.attach()
    platform.close()


def check_ports(platform: LocalPlatform) -> int:
    """1 (saying who holds them) if the brokers' fixed ports are taken by servers not ours."""
    platform.attach()
    taken = 0
    for ours, server in ((platform.rabbit, "RabbitMQ"), (platform.redis, "Redis")):
        ports = [FIXED_PORTS[name] for name in FIXED_PORTS if name.startswith(server.lower())]
        try:
            if not ours:
                require_free(server, ports)
        except PlatformError as error:
            print(f"ERROR: {error}", file=sys.stderr)
            taken = 1
    return taken


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m herald_load local",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("action", nargs="?", choices=["start", "stop", "status", "check-ports"],
                        default="start", help="check-ports: exit 1 if RabbitMQ's or Redis' fixed "
                        "ports are taken by something not ours (scripts/install-deps.sh)")
    action = parser.parse_args(argv).action

    def say(line: str) -> None:
        print(line, flush=True)

    if action != "start":   # nothing to create: stop, status and check-ports only look
        platform = LocalPlatform(run_dir(), fixed_ports=True, log=say)
    else:
        platform = local_platform(say=say)
    if action == "check-ports":
        return check_ports(platform)
    if action == "stop":
        stop(platform)
        return 0
    if action == "status":
        platform.attach()
        lines = platform.status()
        print("\n".join(lines))
        return 0 if all(line.endswith(")") for line in lines) else 3
    try:
        start(platform, say)
        if os.environ.get("HERALD_DEMO", "1") != "0":
            run_demo(DemoTarget(), platform.admin_token, platform.workdir, say)
    except (PlatformError, DemoError) as error:
        print(f"ERROR: {error}", file=sys.stderr)
        print("What started keeps running; scripts/run-local.sh stop stops it.", file=sys.stderr)
        return 1
    finally:
        platform.detach()
    print(SUMMARY)
    return 0
