"""The Herald platform as local processes on free loopback ports, all real: RabbitMQ, Redis, the
provider sandbox, the dispatcher, and any number of gateway, dispatcher or connection-manager
replicas.

Unlike ``scripts/run-local.sh`` (fixed ports 5672, 6379, 8080, ...: those belong to whoever runs
the platform by hand) every port here is asked from the kernel, so a load run, a test and a
developer's platform can share the machine. Everything lives in one work folder (logs, the
RabbitMQ node's data, the sandbox's APNs certificate) and everything started is stopped again by
:meth:`LocalPlatform.close` (also when start-up fails half-way).
"""

from __future__ import annotations

import base64
import glob
import os
import random
import secrets
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

import requests

__all__ = ["LocalPlatform", "PlatformError", "Replica", "free_port", "repository_root",
           "find_java", "service_jar"]

RABBIT_SERVER = "/usr/lib/rabbitmq/bin/rabbitmq-server"
RABBIT_CTL = "/usr/lib/rabbitmq/bin/rabbitmqctl"
SEND_QUEUES = ("herald.send.high", "herald.send.normal", "herald.audience")
# Small heaps and the serial collector: up to seven JVMs share two cores here, and parallel GC
# threads per JVM would compete with the work being measured.
DEFAULT_JVM_OPTIONS = ("-Xms64m", "-Xmx384m", "-XX:+UseSerialGC", "-XX:+ExitOnOutOfMemoryError")


class PlatformError(RuntimeError):
    """A local server could not be started (the message names its log)."""


def repository_root() -> Path:
    """The checkout this package lives in (``HERALD_ROOT`` overrides)."""
    if os.environ.get("HERALD_ROOT"):
        return Path(os.environ["HERALD_ROOT"]).resolve()
    return Path(__file__).resolve().parents[3]


_HANDED_OUT: set[int] = set()
# The fixed ports of scripts/run-local.sh and the connection manager: never ours.
_RESERVED = {1883, 5672, 6379, 8080, 8081, 8082, 9090, 9443, 15672, 25672}
_random = random.Random()


def _ephemeral_low() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now, below the kernel's ephemeral range, never one
    this process handed out before.

    Servers bind theirs seconds (a JVM on a busy machine: a minute) after we pick it. A port
    from the ephemeral range (what binding port 0 gives) is what every outgoing connection and
    every other test on the machine draws from too, and was taken meanwhile several times in
    practice; below that range only servers that chose a port on purpose compete.
    """
    low = max(10000, _ephemeral_low() - 12000)
    high = _ephemeral_low() - 1
    for _ in range(1000):
        port = _random.randint(low, high)
        if port in _HANDED_OUT or port in _RESERVED:
            continue
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
        _HANDED_OUT.add(port)
        return port
    raise PlatformError(f"no free port between {low} and {high}")


def find_java() -> str:
    """A JDK 25+ ``java`` (``JAVA_HOME`` first, then /usr/lib/jvm), as scripts/lib/common.sh does."""
    candidates = ([os.environ["JAVA_HOME"]] if os.environ.get("JAVA_HOME") else []) + \
        ["/usr/lib/jvm/temurin-25-jdk-amd64"] + sorted(glob.glob("/usr/lib/jvm/*"))
    for home in candidates:
        java = Path(home) / "bin" / "java"
        release = Path(home) / "release"
        if not java.is_file() or not release.is_file():
            continue
        for line in release.read_text(errors="replace").splitlines():
            if line.startswith("JAVA_VERSION="):
                major = line.split("=", 1)[1].strip('"').split(".")[0]
                if major.isdigit() and int(major) >= 25:
                    return str(java)
    raise PlatformError("no JDK 25 or newer found (JAVA_HOME or /usr/lib/jvm/*)")


def service_jar(service: str, root: Path | None = None) -> Path:
    """The executable jar ``mvn package`` builds for a service (Spring Boot, classifier exec)."""
    root = root or repository_root()
    jars = sorted((root / "services" / service / "target").glob(f"{service}-*-exec.jar"))
    if not jars:
        raise PlatformError(
            f"no executable jar for {service} in services/{service}/target: build it first "
            f"(cd services && mvn -B -q package -DskipTests -pl {service} -am)")
    return jars[-1]


def _wait_until(condition: Callable[[], bool], timeout_s: float, what: str,
                alive: Callable[[], bool] | None = None, log: Path | None = None) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if alive is not None and not alive():
            raise PlatformError(f"{what} exited during start-up{_log_tail(log)}")
        if time.monotonic() > deadline:
            raise PlatformError(f"{what} not ready after {timeout_s:g} s{_log_tail(log)}")
        time.sleep(0.25)


def _log_tail(log: Path | None, lines: int = 25) -> str:
    if log is None or not log.exists():
        return ""
    text = [line for line in log.read_text(errors="replace").splitlines()
            if not line.lstrip().startswith(("at ", "... "))]
    return f"; see {log}; its end:\n" + "\n".join(text[-lines:])


def _http_ok(url: str) -> bool:
    try:
        return requests.get(url, timeout=2).status_code == 200
    except requests.RequestException:
        return False


def _port_open(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(0.2)
        return probe.connect_ex(("127.0.0.1", port)) == 0


@dataclass
class Replica:
    """One server process we started: its own session (process group) and log."""

    name: str
    process: subprocess.Popen
    log: Path
    port: int | None = None
    extra: dict = field(default_factory=dict)

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self, timeout_s: float = 40.0) -> None:
        """SIGTERM (a graceful stop: Spring Boot drains in-flight work), SIGKILL after the timeout.

        Signals go to the process group the replica leads (``start_new_session``), so helper
        processes it started (RabbitMQ's Erlang VM) go too; never to anything we did not start.
        """
        if not self.alive():
            return
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        try:
            self.process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.process.wait(10)


def _start(name: str, argv: list[str], log: Path, env: dict[str, str] | None = None,
           cwd: Path | None = None, port: int | None = None) -> Replica:
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as out:
        process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, cwd=cwd,
                                   env={**os.environ, **(env or {})}, start_new_session=True)
    return Replica(name, process, log, port)


class LocalPlatform:
    """RabbitMQ, Redis, the provider sandbox and Herald services on free ports under ``workdir``.

    ::

        with LocalPlatform(workdir) as platform:
            platform.start_infrastructure()         # Redis, RabbitMQ, provider sandbox
            platform.start_dispatchers(1)
            platform.start_gateways(3, {"herald.gateway.max-in-flight": 16})
            ...
    """

    def __init__(self, workdir: Path, *, sandbox_latency_ms: int = 50,
                 jvm_options: Iterable[str] = DEFAULT_JVM_OPTIONS, root: Path | None = None,
                 log: Callable[[str], None] = print):
        self.workdir = Path(workdir).resolve()
        self.root = root or repository_root()
        self.sandbox_latency_ms = sandbox_latency_ms
        self.jvm_options = list(jvm_options)
        self.say = log
        self.admin_token = secrets.token_hex(24)
        self.crypto_key = base64.b64encode(secrets.token_bytes(32)).decode()
        self.redis: Replica | None = None
        self.rabbit: Replica | None = None
        self.sandbox: Replica | None = None
        self.dispatchers: list[Replica] = []
        self.gateways: list[Replica] = []
        self.connection_managers: list[Replica] = []
        self.rabbit_port = self.rabbit_mgmt_port = self.redis_port = 0
        self.apns_port = 0
        self._rabbit_env: dict[str, str] = {}
        self._epmd_was_running = True
        self._java: str | None = None

    # ------------------------------------------------------------------ lifecycle

    def __enter__(self) -> "LocalPlatform":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Stops everything this platform started, services first, then the brokers."""
        for group in (self.connection_managers, self.gateways, self.dispatchers):
            self._stop_all(group)
        for replica in (self.sandbox, self.redis):
            if replica:
                replica.stop(20)
        self.sandbox = self.redis = None
        self._stop_rabbit()

    @property
    def java(self) -> str:
        if self._java is None:
            self._java = find_java()
        return self._java

    @property
    def dispatcher_urls(self) -> list[str]:
        return [f"http://127.0.0.1:{d.port}" for d in self.dispatchers]

    @property
    def gateway_urls(self) -> list[str]:
        return [f"http://127.0.0.1:{g.port}" for g in self.gateways]

    @property
    def sandbox_url(self) -> str:
        assert self.sandbox is not None, "start_infrastructure() first"
        return f"http://127.0.0.1:{self.sandbox.port}"

    def pids(self) -> dict[str, int]:
        """Process ids by role (for CPU accounting)."""
        named = {"redis": self.redis, "rabbitmq": self.rabbit, "provider-sandbox": self.sandbox}
        out = {name: r.pid for name, r in named.items() if r and r.alive()}
        for group, prefix in ((self.dispatchers, "dispatcher"), (self.gateways, "gateway"),
                              (self.connection_managers, "connection-manager")):
            for i, replica in enumerate(group, start=1):
                if replica.alive():
                    out[f"{prefix}-{i}"] = replica.pid
        return out

    # ------------------------------------------------------------------ infrastructure

    def start_infrastructure(self) -> None:
        """Redis, RabbitMQ (with its management API) and the provider sandbox, in parallel."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._start_redis()
        self._start_rabbit()
        self.sandbox = self._java_service("provider-sandbox", "provider-sandbox",
                                          self._sandbox_args())
        _wait_until(self._redis_ping, 30, "Redis", self.redis.alive, self.redis.log)
        _wait_until(self._rabbit_ready, 120, "RabbitMQ", self.rabbit.alive,
                    self.workdir / "rabbitmq" / "stdout.log")
        self.sandbox = self._start_ready(
            lambda: self._java_service("provider-sandbox", "provider-sandbox",
                                       self._sandbox_args()),
            started=self.sandbox, path="/actuator/health")
        self.say(f"infrastructure ready: RabbitMQ 127.0.0.1:{self.rabbit_port} "
                 f"(management {self.rabbit_mgmt_port}), Redis 127.0.0.1:{self.redis_port}, "
                 f"sandbox {self.sandbox_url} (latency {self.sandbox_latency_ms} ms)")

    def _start_redis(self) -> None:
        if not shutil.which("redis-server"):
            raise PlatformError("redis-server not found: run scripts/install-deps.sh")
        self.redis_port = free_port()
        folder = self.workdir / "redis"
        folder.mkdir(parents=True, exist_ok=True)
        self.redis = _start("redis", ["redis-server", "--port", str(self.redis_port),
                                      "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                                      "--dir", str(folder)], folder / "redis.log",
                            port=self.redis_port)

    def _redis_ping(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.redis_port), timeout=1) as conn:
                conn.sendall(b"PING\r\n")
                return conn.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def _start_rabbit(self) -> None:
        if not os.access(RABBIT_SERVER, os.X_OK):
            raise PlatformError(f"{RABBIT_SERVER} not found: run scripts/install-deps.sh")
        self.rabbit_port, self.rabbit_mgmt_port, dist = free_port(), free_port(), free_port()
        folder = self.workdir / "rabbitmq"
        (folder / "home").mkdir(parents=True, exist_ok=True)
        (folder / "rabbitmq.conf").write_text(
            f"listeners.tcp.default = 127.0.0.1:{self.rabbit_port}\n"
            f"management.tcp.ip = 127.0.0.1\nmanagement.tcp.port = {self.rabbit_mgmt_port}\n"
            "loopback_users = none\n")
        (folder / "enabled_plugins").write_text("[rabbitmq_management].\n")
        (folder / "rabbitmq-env.conf").write_text("")
        cookie = folder / "home" / ".erlang.cookie"
        if not cookie.exists():
            cookie.write_text(secrets.token_hex(20))
        cookie.chmod(0o400)
        node = f"herald-load-{self.rabbit_port}@localhost"
        self._rabbit_env = {
            "HOME": str(folder / "home"),
            "RABBITMQ_NODENAME": node,
            "RABBITMQ_DIST_PORT": str(dist),
            "RABBITMQ_MNESIA_BASE": str(folder / "mnesia"),
            "RABBITMQ_LOG_BASE": str(folder / "log"),
            "RABBITMQ_CONFIG_FILE": str(folder / "rabbitmq.conf"),
            "RABBITMQ_ADVANCED_CONFIG_FILE": str(folder / "advanced.config"),
            "RABBITMQ_CONF_ENV_FILE": str(folder / "rabbitmq-env.conf"),
            "RABBITMQ_ENABLED_PLUGINS_FILE": str(folder / "enabled_plugins"),
            "RABBITMQ_PID_FILE": str(folder / "rabbit.pid"),
            "RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS": "-kernel inet_dist_use_interface {127,0,0,1}",
        }
        self._epmd_was_running = self._epmd_running()
        self.rabbit = _start("rabbitmq", [RABBIT_SERVER], folder / "stdout.log",
                             env=self._rabbit_env, cwd=folder, port=self.rabbit_port)

    @staticmethod
    def _epmd_running() -> bool:
        try:
            return subprocess.run(["epmd", "-names"], capture_output=True, timeout=5).returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            return False

    def _rabbit_ready(self) -> bool:
        return _port_open(self.rabbit_port) and self._management("GET", "/api/overview") == 200

    def _management(self, method: str, path: str) -> int:
        try:
            return requests.request(method, f"http://127.0.0.1:{self.rabbit_mgmt_port}{path}",
                                    auth=("guest", "guest"), timeout=5).status_code
        except requests.RequestException:
            return 0

    def queue_depths(self) -> dict[str, int]:
        """Ready + unacknowledged messages per Herald queue (RabbitMQ's management API)."""
        try:
            queues = requests.get(f"http://127.0.0.1:{self.rabbit_mgmt_port}/api/queues/%2F",
                                  auth=("guest", "guest"), timeout=5).json()
        except (requests.RequestException, ValueError):
            return {}
        return {q["name"]: int(q.get("messages", 0)) for q in queues
                if q.get("name", "").startswith("herald.")}

    def purge_queues(self, queues: Iterable[str] = SEND_QUEUES) -> None:
        """Drops the backlog a run left, so the next N starts from empty queues."""
        for queue in queues:
            self._management("DELETE", f"/api/queues/%2F/{queue}/contents")

    def _stop_rabbit(self) -> None:
        if self.rabbit and self.rabbit.alive():
            try:
                subprocess.run([RABBIT_CTL, "-q", "-n", self._rabbit_env["RABBITMQ_NODENAME"],
                                "stop"], env={**os.environ, **self._rabbit_env},
                               capture_output=True, timeout=60)
            except (OSError, subprocess.TimeoutExpired):
                pass
            self.rabbit.stop(30)
        self.rabbit = None
        if not self._epmd_was_running:
            # Our node started epmd; end it unless another Erlang node registered since.
            try:
                names = subprocess.run(["epmd", "-names"], capture_output=True, text=True,
                                       timeout=5).stdout
                if "name " not in names:
                    subprocess.run(["epmd", "-kill"], capture_output=True, timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                pass
            self._epmd_was_running = True

    # ------------------------------------------------------------------ Herald services

    def _java_service(self, service: str, name: str, args: dict[str, object],
                      env: dict[str, str] | None = None) -> Replica:
        port = free_port()
        argv = [self.java, *self.jvm_options, "-jar", str(service_jar(service, self.root)),
                f"--server.port={port}", *(f"--{k}={v}" for k, v in args.items())]
        return _start(name, argv, self.workdir / "logs" / f"{name}.log", env=env, port=port)

    def _common_env(self) -> dict[str, str]:
        # Secrets by environment, never on the command line (ps shows it to every local user).
        return {"HERALD_DISPATCHER_ADMIN_TOKEN": self.admin_token,
                "HERALD_CRYPTO_KEY": self.crypto_key,
                "HERALD_REDIS_URI": f"redis://127.0.0.1:{self.redis_port}",
                "SPRING_RABBITMQ_HOST": "127.0.0.1",
                "SPRING_RABBITMQ_PORT": str(self.rabbit_port),
                "SPRING_RABBITMQ_USERNAME": "guest",
                "SPRING_RABBITMQ_PASSWORD": "guest"}

    def _sandbox_args(self) -> dict[str, object]:
        self.apns_port = free_port()
        self.sandbox_certificate = self.workdir / "sandbox-apns.pem"
        return {"herald.sandbox.apns-port": self.apns_port,
                "herald.sandbox.apns-certificate-path": self.sandbox_certificate,
                "herald.sandbox.faults.latency-ms": self.sandbox_latency_ms}

    @staticmethod
    def _await_ready(replica: Replica, path: str = "/actuator/health/readiness",
                     timeout_s: float = 240) -> None:
        _wait_until(lambda: _http_ok(f"http://127.0.0.1:{replica.port}{path}"),
                    timeout_s, replica.name, replica.alive, replica.log)

    def _start_ready(self, start: Callable[[], Replica], started: Replica | None = None,
                     attempts: int = 3, path: str = "/actuator/health/readiness") -> Replica:
        """Starts a service (or takes ``started``) and waits for its readiness. A free port can
        be taken by another process between asking the kernel and the JVM binding it (a minute
        later on a busy machine): then the replica is started again on a fresh port."""
        for attempt in range(1, attempts + 1):
            replica = started if attempt == 1 and started is not None else start()
            try:
                self._await_ready(replica, path)
                return replica
            except PlatformError:
                replica.stop(10)
                log = replica.log.read_text(errors="replace") if replica.log.exists() else ""
                if "already in use" not in log or attempt == attempts:
                    raise
                self.say(f"{replica.name}: its port was taken meanwhile; starting it again")
                replica.log.rename(replica.log.with_suffix(f".port-clash-{attempt}.log"))
        raise AssertionError("unreachable")

    def start_dispatchers(self, count: int, settings: dict[str, object] | None = None) -> None:
        """Starts dispatchers until ``count`` run, and waits for their readiness."""
        for i in range(len(self.dispatchers) + 1, count + 1):
            self.dispatchers.append(self._start_ready(lambda i=i: self._java_service(
                "dispatcher", f"dispatcher-{i}", dict(settings or {}), self._common_env())))

    def start_gateways(self, count: int, settings: dict[str, object] | None = None) -> None:
        """Starts gateways until ``count`` run (pointed at the sandbox), waits for readiness."""
        args = {
            "herald.gateway.fcm.endpoint": self.sandbox_url,
            "herald.gateway.apns.sandbox-endpoint": f"https://127.0.0.1:{self.apns_port}",
            "herald.gateway.apns.production-endpoint": f"https://127.0.0.1:{self.apns_port}",
            "herald.gateway.apns.trusted-certificate": self.sandbox_certificate,
            **(settings or {}),
        }
        # Started together (they warm up in parallel), then each awaited; one whose port was
        # taken meanwhile is started again. All are in self.gateways at once, so close() stops
        # them whatever happens.
        first = len(self.gateways)
        self.gateways.extend(self._java_service("gateway", f"gateway-{i}", args,
                                                self._common_env())
                             for i in range(first + 1, count + 1))
        for index in range(first, count):
            name = self.gateways[index].name
            self.gateways[index] = self._start_ready(
                lambda name=name: self._java_service("gateway", name, args, self._common_env()),
                started=self.gateways[index])

    def start_connection_managers(self, count: int) -> None:
        """Connection managers (MQTT) on free ports; ``replica.extra['mqtt_port']`` per replica."""
        def start(i: int) -> Replica:
            mqtt_port = free_port()
            replica = self._java_service(
                "connection-manager", f"connection-manager-{i}",
                {"herald.cm.mqtt.host": "127.0.0.1"},   # loopback only
                {**self._common_env(), "HERALD_CM_MQTT_PORT": str(mqtt_port),
                 "HERALD_CM_NODE_ID": f"load-cm-{i}"})
            replica.extra["mqtt_port"] = mqtt_port
            return replica

        for i in range(len(self.connection_managers) + 1, count + 1):
            self.connection_managers.append(self._start_ready(lambda i=i: start(i)))

    def stop_gateways(self) -> None:
        self._stop_all(self.gateways)

    def stop_dispatchers(self) -> None:
        self._stop_all(self.dispatchers)

    @staticmethod
    def _stop_all(group: list[Replica]) -> None:
        for replica in group:  # SIGTERM to all first: they drain in parallel
            if replica.alive():
                try:
                    os.killpg(replica.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        for replica in group:
            replica.stop()
        group.clear()

    def reset_sandbox_counts(self) -> None:
        requests.post(f"{self.sandbox_url}/sandbox/reset", timeout=10).raise_for_status()

    def sandbox_stats(self) -> dict:
        return requests.get(f"{self.sandbox_url}/sandbox/stats", timeout=10).json()
