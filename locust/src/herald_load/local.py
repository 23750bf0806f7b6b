"""The Herald platform as local processes on free loopback ports, all real: RabbitMQ, Redis, the
provider sandbox, and any number of dispatcher, gateway or connection-manager replicas.

Unlike ``scripts/run-local.sh`` (fixed ports 5672, 6379, 8080, ...: those belong to whoever runs
the platform by hand) every port here is a free one (:func:`herald_load.processes.free_port`), so
a load run, a test and a developer's platform can share the machine. Everything lives in one work
folder (logs under ``logs/``, the RabbitMQ node's and Redis' data, the sandbox's APNs certificate)
and everything started is stopped again by :meth:`LocalPlatform.close` (also when start-up fails
half-way).

Used by the load runs (:mod:`herald_load.scaleout`, the smoke tests) and by the KEDA scenario in
``tests/autoscaling`` (whose stand-in kubelet starts gateways from :meth:`gateway_command`).
"""

from __future__ import annotations

import base64
import secrets
import signal
from pathlib import Path
from typing import Callable, Iterable, Mapping

from .processes import ChildProcess, PlatformError, find_java, free_port, service_jar, repository_root
from .servers import SEND_QUEUES, RabbitMQ, Redis, http_json

__all__ = ["LocalPlatform", "ProviderSandbox", "DEFAULT_JVM_OPTIONS"]

# Small heaps and the serial collector: up to seven JVMs share two cores here, and parallel GC
# threads per JVM would compete with the work being measured.
DEFAULT_JVM_OPTIONS = ("-Xms64m", "-Xmx384m", "-XX:+UseSerialGC", "-XX:+ExitOnOutOfMemoryError")
READINESS = "/actuator/health/readiness"


class ProviderSandbox:
    """The provider sandbox (FCM over HTTP, APNs over HTTP/2 with TLS) we started, and its API."""

    def __init__(self, process: ChildProcess, apns_port: int, certificate: Path):
        self.process = process
        self.apns_port = apns_port
        self.certificate = certificate   # written by the sandbox: the APNs side's trust anchor

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.process.port}"

    def api(self, method: str, path: str, body: object | None = None) -> tuple[int, object]:
        return http_json(method, self.url + path, body)

    def stats(self) -> dict:
        """Counts of what it accepted and refused since the start (or the last reset)."""
        status, body = self.api("GET", "/sandbox/stats")
        if status != 200:
            raise PlatformError(f"sandbox stats: HTTP {status} {body}")
        return body

    def reset(self) -> None:
        status, body = self.api("POST", "/sandbox/reset")
        if status >= 300:
            raise PlatformError(f"sandbox reset: HTTP {status} {body}")


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
        self.logs = self.workdir / "logs"
        self.root = root or repository_root()
        self.sandbox_latency_ms = sandbox_latency_ms
        self.jvm_options = list(jvm_options)
        self.say = log
        self.admin_token = secrets.token_hex(24)
        self.crypto_key = base64.b64encode(secrets.token_bytes(32)).decode()
        self.redis: Redis | None = None
        self.rabbit: RabbitMQ | None = None
        self.sandbox: ProviderSandbox | None = None
        self.dispatchers: list[ChildProcess] = []
        self.gateways: list[ChildProcess] = []
        self.connection_managers: list[ChildProcess] = []
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
        if self.sandbox:
            self.sandbox.process.stop(20)
        for server in (self.redis, self.rabbit):
            if server:
                server.stop()
        self.sandbox = self.redis = self.rabbit = None

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
        return self.sandbox.url

    def pids(self) -> dict[str, int]:
        """Process ids by role (for CPU accounting)."""
        named = {"redis": self.redis and self.redis.process,
                 "rabbitmq": self.rabbit and self.rabbit.process,
                 "provider-sandbox": self.sandbox and self.sandbox.process}
        out = {name: p.pid for name, p in named.items() if p and p.alive()}
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
        self.redis = Redis(self.workdir / "redis", self.logs / "redis.log")
        self.rabbit = RabbitMQ(self.workdir / "rabbitmq", self.logs / "rabbitmq.log")
        self.sandbox = self._start_sandbox()
        self.redis.await_ready(30)
        self.rabbit.await_ready(120)
        self.sandbox = self._await_ready(self._start_sandbox, started=self.sandbox,
                                         path="/actuator/health")
        self.say(f"infrastructure ready: RabbitMQ 127.0.0.1:{self.rabbit.port} "
                 f"(management {self.rabbit.management_port}), Redis {self.redis.uri}, "
                 f"sandbox {self.sandbox_url} (latency {self.sandbox_latency_ms} ms)")

    def _start_sandbox(self) -> ProviderSandbox:
        apns_port = free_port()
        certificate = self.workdir / "sandbox-apns.pem"
        process = self._java_service("provider-sandbox", "provider-sandbox", {
            "herald.sandbox.apns-port": apns_port,
            "herald.sandbox.apns-certificate-path": certificate,
            "herald.sandbox.faults.latency-ms": self.sandbox_latency_ms})
        return ProviderSandbox(process, apns_port, certificate)

    def queue_depths(self) -> dict[str, int]:
        """Ready + unacknowledged messages per Herald queue (RabbitMQ's management API)."""
        return self.rabbit.queue_depths() if self.rabbit else {}

    def purge_queues(self, queues: Iterable[str] = SEND_QUEUES) -> None:
        """Drops the backlog a run left, so the next N starts from empty queues."""
        self.rabbit.purge(queues)

    def reset_sandbox_counts(self) -> None:
        self.sandbox.reset()

    def sandbox_stats(self) -> dict:
        return self.sandbox.stats()

    # ------------------------------------------------------------------ Herald services

    def service_env(self) -> dict[str, str]:
        """The environment of a Herald service of this platform: its secrets (by environment,
        never on the command line: ps shows that to every local user)."""
        return {"HERALD_DISPATCHER_ADMIN_TOKEN": self.admin_token,
                "HERALD_CRYPTO_KEY": self.crypto_key,
                "SPRING_RABBITMQ_USERNAME": RabbitMQ.USER,
                "SPRING_RABBITMQ_PASSWORD": RabbitMQ.PASSWORD}

    def _backends(self) -> dict[str, object]:
        # Arguments, not environment: they win over any environment the service is also given
        # (the KEDA scenario's gateways get a Helm release's, which names in-cluster servers).
        return {"spring.rabbitmq.host": "127.0.0.1", "spring.rabbitmq.port": self.rabbit.port,
                "herald.redis-uri": self.redis.uri}

    def _command(self, service: str, port: int, args: Mapping[str, object],
                 jvm_options: Iterable[str] | None = None) -> list[str]:
        options = self.jvm_options if jvm_options is None else list(jvm_options)
        return [self.java, *options, "-jar", str(service_jar(service, self.root)),
                f"--server.port={port}", *(f"--{k}={v}" for k, v in args.items())]

    def _java_service(self, service: str, name: str, args: Mapping[str, object],
                      env: dict[str, str] | None = None) -> ChildProcess:
        port = free_port()
        return ChildProcess(name, self._command(service, port, args), self.logs / f"{name}.log",
                            env=env, port=port)

    def _await_ready(self, start: Callable[[], ChildProcess | ProviderSandbox],
                     started=None, attempts: int = 3, path: str = READINESS, timeout: float = 240):
        """Waits for the readiness of a service ``start`` starts (or of ``started``). A free port
        can be taken by another process between our pick and the JVM binding it (a minute later
        on a busy machine): then the service is started again on a fresh port."""
        for attempt in range(1, attempts + 1):
            service = started if attempt == 1 and started is not None else start()
            process = service.process if isinstance(service, ProviderSandbox) else service
            try:
                process.await_ready(
                    lambda: http_json("GET", f"http://127.0.0.1:{process.port}{path}",
                                      timeout=2)[0] == 200, timeout)
                return service
            except PlatformError:
                process.stop(10)
                log = process.log.read_text(errors="replace") if process.log.exists() else ""
                if "already in use" not in log or attempt == attempts:
                    raise
                self.say(f"{process.name}: its port was taken meanwhile; starting it again")
                process.log.rename(process.log.with_suffix(f".port-clash-{attempt}.log"))
        raise AssertionError("unreachable")

    def start_dispatchers(self, count: int, settings: dict[str, object] | None = None) -> None:
        """Starts dispatchers until ``count`` run, and waits for their readiness."""
        args = {**self._backends(), **(settings or {})}
        for i in range(len(self.dispatchers) + 1, count + 1):
            self.dispatchers.append(self._await_ready(lambda i=i: self._java_service(
                "dispatcher", f"dispatcher-{i}", args, self.service_env())))

    def dispatcher_api(self, method: str, path: str, body: object | None = None,
                       token: str | None = None) -> tuple[int, object]:
        """A call to the first dispatcher's API, as admin unless an app's ``token`` is given."""
        headers = {"Authorization": f"Bearer {token or self.admin_token}"}
        return http_json(method, self.dispatcher_urls[0] + path, body, headers)

    def _gateway_args(self, settings: Mapping[str, object] | None) -> dict[str, object]:
        assert self.sandbox is not None, "start_infrastructure() first"
        apns = f"https://127.0.0.1:{self.sandbox.apns_port}"
        return {
            **self._backends(),
            "spring.profiles.active": "sandbox",   # the sandbox's token hosts; ports and certificate below
            "herald.gateway.fcm.endpoint": self.sandbox.url,
            "herald.gateway.apns.sandbox-endpoint": apns,
            "herald.gateway.apns.production-endpoint": apns,
            "herald.gateway.apns.trusted-certificate": self.sandbox.certificate,
            # The sandbox's OAuth token endpoint (a Helm release's config allows Google's only).
            "herald.gateway.fcm.allowed-token-hosts": "127.0.0.1,localhost",
            **(settings or {}),
        }

    def gateway_command(self, port: int, settings: Mapping[str, object] | None = None,
                        jvm_options: Iterable[str] | None = None) -> list[str]:
        """The command line of one gateway on ``port`` delivering to the sandbox, with
        ``settings`` (and ``jvm_options``, default the platform's); run it with
        :meth:`service_env`. The KEDA scenario starts one per replica the Deployment has."""
        return self._command("gateway", port, self._gateway_args(settings), jvm_options)

    def start_gateways(self, count: int, settings: dict[str, object] | None = None) -> None:
        """Starts gateways until ``count`` run (pointed at the sandbox), waits for readiness."""
        args = self._gateway_args(settings)
        # Started together (they warm up in parallel), then each awaited; one whose port was
        # taken meanwhile is started again. All are in self.gateways at once, so close() stops
        # them whatever happens.
        first = len(self.gateways)
        self.gateways.extend(self._java_service("gateway", f"gateway-{i}", args, self.service_env())
                             for i in range(first + 1, count + 1))
        for index in range(first, count):
            name = self.gateways[index].name
            self.gateways[index] = self._await_ready(
                lambda name=name: self._java_service("gateway", name, args, self.service_env()),
                started=self.gateways[index])

    def start_connection_managers(self, count: int) -> None:
        """Connection managers (MQTT) on free ports; ``replica.extra['mqtt_port']`` per replica."""
        def start(i: int) -> ChildProcess:
            mqtt_port = free_port()
            replica = self._java_service(
                "connection-manager", f"connection-manager-{i}",
                {**self._backends(), "herald.cm.mqtt.host": "127.0.0.1"},   # loopback only
                {**self.service_env(), "HERALD_CM_MQTT_PORT": str(mqtt_port),
                 "HERALD_CM_NODE_ID": f"load-cm-{i}"})
            replica.extra["mqtt_port"] = mqtt_port
            return replica

        for i in range(len(self.connection_managers) + 1, count + 1):
            self.connection_managers.append(self._await_ready(lambda i=i: start(i)))

    def stop_gateways(self) -> None:
        self._stop_all(self.gateways)

    def stop_dispatchers(self) -> None:
        self._stop_all(self.dispatchers)

    @staticmethod
    def _stop_all(group: list[ChildProcess]) -> None:
        for replica in group:  # SIGTERM to all first: they drain in parallel
            if replica.alive():
                replica.signal(signal.SIGTERM)
        for replica in group:
            replica.stop()
        group.clear()
