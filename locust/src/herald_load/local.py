"""The Herald platform as local processes on loopback ports, all real: RabbitMQ, Redis, the
provider sandbox, and any number of dispatcher, gateway or connection-manager replicas.

By default every port is a free one (:func:`herald_load.processes.free_port`), so a load run, a
test and a developer's platform can share the machine, and everything started is stopped again by
:meth:`LocalPlatform.close` (also when start-up fails half-way). With ``fixed_ports`` it is the
developer's platform of ``scripts/run-local.sh`` (:mod:`herald_load.localrun`): one of each service
on the well-known ports (:data:`herald_load.processes.FIXED_PORTS`), each with a pid file, left
running by :meth:`LocalPlatform.detach` and stopped from another process by
:meth:`LocalPlatform.attach` + :meth:`LocalPlatform.close`. Everything lives in one work folder
(logs, the RabbitMQ node's and Redis' data, the sandbox's APNs certificate).

Used by the local run, the load runs (:mod:`herald_load.scaleout`, the smoke tests) and the KEDA
scenario in ``tests/autoscaling`` (whose stand-in kubelet starts gateways from
:meth:`gateway_command`).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import secrets
import shutil
import signal
import subprocess
from pathlib import Path
from typing import Callable, Iterable, Mapping

from .processes import (FIXED_PORTS, ChildProcess, PlatformError, find_java, free_port,
                        repository_root, require_free, service_jar)
from .servers import SEND_QUEUES, RabbitMQ, Redis, http_json

__all__ = ["LocalPlatform", "ProviderSandbox", "DEFAULT_JVM_OPTIONS"]

# Small heaps and the serial collector: up to seven JVMs share two cores here, and parallel GC
# threads per JVM would compete with the work being measured.
DEFAULT_JVM_OPTIONS = ("-Xms64m", "-Xmx384m", "-XX:+UseSerialGC", "-XX:+ExitOnOutOfMemoryError")
# A service whose default heap does not suit it. The gateway makes most of its garbage per
# notification and keeps little (45 MB after five fan-outs): with 384 MB its young collections ran
# about three times a second of a fan-out. A fixed heap, as its chart's 1 GiB limit allows, with a
# 384 MB young generation: 10 young collections in three fan-outs. Measured with a 512 MB young
# generation: 5.62 s and 28.3 µs of gateway CPU per notification against 6.22 s and 34.9 µs
# (2026-11-29, warm fan-outs). -Xms as large as -Xmx: the AOT cache maps its archived objects into
# the old generation, and a JVM whose initial heap left no room for them refused to start.
# The dispatcher likewise: each accepted send leaves garbage and nothing that lives. With the default
# heap the accept benchmark cost it 276 µs per request; with a fixed 512 MB heap and a 320 MB young
# generation 242 to 245 µs in three runs (2026-11-29, 23:00 to 23:20 UTC).
SERVICE_HEAPS = {"gateway": ("-Xms640m", "-Xmx640m", "-Xmn384m"),
                 "dispatcher": ("-Xms512m", "-Xmx512m", "-Xmn320m")}
READINESS = "/actuator/health/readiness"
# A service's AOT cache recorded while it ran a workload, beside its jar's extracted layout.
WORKLOAD_AOT = "workload.aot"
# Start order: the gateway trusts the certificate the sandbox writes on start-up; the dispatcher
# is the last piece a client needs. Stopped in the reverse order.
SERVICES = ("provider-sandbox", "gateway", "connection-manager", "dispatcher")


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
                 log: Callable[[str], None] = print, fixed_ports: bool = False,
                 admin_token: str | None = None, crypto_key: str | None = None, aot_cache: bool = False):
        self.workdir = Path(workdir).resolve()
        self.aot_cache = aot_cache
        # While on, services start recording their AOT cache on what they run (see _with_aot_cache).
        self.aot_training = False
        self.fixed_ports = fixed_ports
        # The local run keeps its logs beside its pid files and secrets (.run/<service>.log).
        self.logs = self.workdir if fixed_ports else self.workdir / "logs"
        self.root = root or repository_root()
        self.sandbox_latency_ms = sandbox_latency_ms
        self.jvm_options = list(jvm_options)
        self.say = log
        self.admin_token = admin_token or secrets.token_hex(24)
        self.crypto_key = crypto_key or base64.b64encode(secrets.token_bytes(32)).decode()
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

    def detach(self) -> None:
        """Leaves everything running when this process ends (fixed ports: their pid files name
        them for :meth:`attach`); :meth:`close` stops nothing afterwards."""
        self.connection_managers, self.gateways, self.dispatchers = [], [], []
        self.sandbox = self.redis = self.rabbit = None

    def attach(self) -> None:
        """Takes over what a fixed-port platform in this work folder left running (pid files),
        so that :meth:`close` stops it or :meth:`status` shows it."""
        assert self.fixed_ports, "only a fixed-port platform leaves processes running"
        self.redis = Redis.adopt(self.workdir / "redis", self.logs / "redis.log")
        self.rabbit = RabbitMQ.adopt(self.workdir / "rabbitmq", self.logs / "rabbitmq.log")
        groups = {"dispatcher": self.dispatchers, "gateway": self.gateways,
                  "connection-manager": self.connection_managers}
        for service in SERVICES:
            process = ChildProcess.adopt(service, self._pid_file(service), self._log(service),
                                         FIXED_PORTS[service])
            if process and service == "provider-sandbox":
                self.sandbox = ProviderSandbox(process, FIXED_PORTS["apns"], self._certificate)
            elif process:
                groups[service].append(process)

    def status(self) -> list[str]:
        """One line per server of the local run: running (pid, port) or stopped."""
        running = self.processes()
        lines = []
        for name in (*SERVICES, "rabbitmq", "redis"):
            process = running.get(name)
            state = (f"running (pid {process.pid}, port {process.port})"
                     if process and process.alive() else "stopped")
            lines.append(f"{name + ':':<19} {state}")
        return lines

    def close(self) -> None:
        """Stops everything this platform started, services first, then the brokers."""
        self.stop_services()
        for server in (self.redis, self.rabbit):
            if server:
                self._announce_stop(server.process)
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

    def processes(self) -> dict[str, ChildProcess]:
        """The processes this platform runs, by role (replicas numbered on free ports)."""
        named = {"redis": self.redis and self.redis.process,
                 "rabbitmq": self.rabbit and self.rabbit.process,
                 "provider-sandbox": self.sandbox and self.sandbox.process}
        out = {name: process for name, process in named.items() if process}
        for group, prefix in ((self.dispatchers, "dispatcher"), (self.gateways, "gateway"),
                              (self.connection_managers, "connection-manager")):
            for i, replica in enumerate(group, start=1):
                out[self._name(prefix, i)] = replica
        return out

    def pids(self) -> dict[str, int]:
        """Process ids by role (for CPU accounting)."""
        return {name: process.pid for name, process in self.processes().items() if process.alive()}

    # ------------------------------------------------------------------ infrastructure

    def start_infrastructure(self) -> None:
        """Redis, RabbitMQ (with its management API) and the provider sandbox, in parallel."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.redis = self._broker(Redis, "redis")
        self.rabbit = self._broker(RabbitMQ, "rabbitmq")
        self.sandbox = self._start_sandbox()
        self.redis.await_ready(30)
        self.rabbit.await_ready(120)
        self.sandbox = self._await_ready(self._start_sandbox, started=self.sandbox,
                                         path="/actuator/health")
        self.say(f"infrastructure ready: RabbitMQ 127.0.0.1:{self.rabbit.port} "
                 f"(management {self.rabbit.management_port}), Redis {self.redis.uri}, "
                 f"sandbox {self.sandbox_url} (latency {self.sandbox_latency_ms} ms)")

    def _broker(self, kind: type, name: str):
        """A RabbitMQ or Redis started in ``workdir/<name>``; on fixed ports the one an earlier
        local run left there is reused (its data, e.g. the apps, survives a restart of the
        services)."""
        folder, log = self.workdir / name, self.logs / f"{name}.log"
        running = kind.adopt(folder, log) if self.fixed_ports else None
        if running:
            self.say(f"{name}: reusing ours (pid {running.process.pid}, port {running.port})")
            return running
        return kind(folder, log, fixed_ports=self.fixed_ports).start()

    @property
    def _certificate(self) -> Path:
        return self.workdir / "sandbox-apns.pem"

    def _start_sandbox(self) -> ProviderSandbox:
        apns_port = self._port("apns")
        process = self._java_service("provider-sandbox", "provider-sandbox", {
            "herald.sandbox.apns-port": apns_port,
            "herald.sandbox.apns-certificate-path": self._certificate,
            "herald.sandbox.faults.latency-ms": self.sandbox_latency_ms}, extra_ports=[apns_port])
        return ProviderSandbox(process, apns_port, self._certificate)

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
        # The sandbox's OAuth token endpoint (a Helm release's config allows Google's only): the
        # dispatcher refuses a service account naming another host, the gateway will not use one.
        return {"spring.rabbitmq.host": "127.0.0.1", "spring.rabbitmq.port": self.rabbit.port,
                "herald.redis-uri": self.redis.uri, "herald.fcm-token-hosts": "127.0.0.1,localhost"}

    def _command(self, service: str, port: int, args: Mapping[str, object],
                 jvm_options: Iterable[str] | None = None) -> list[str]:
        options = self._service_jvm_options(service) if jvm_options is None else list(jvm_options)
        return [self.java, *options, "-jar", str(service_jar(service, self.root)),
                f"--server.port={port}", *(f"--{k}={v}" for k, v in args.items())]

    def _service_jvm_options(self, service: str) -> list[str]:
        """The platform's JVM options with the service's own heap (:data:`SERVICE_HEAPS`) right
        after the defaults, so options given after those (``HERALD_JAVA_OPTS``) still win."""
        options = list(self.jvm_options)
        defaults = len(DEFAULT_JVM_OPTIONS)
        if tuple(options[:defaults]) == DEFAULT_JVM_OPTIONS:
            options[defaults:defaults] = SERVICE_HEAPS.get(service, ())
        return options

    def _port(self, name: str) -> int:
        return FIXED_PORTS[name] if self.fixed_ports else free_port()

    def _name(self, service: str, replica: int) -> str:
        return service if self.fixed_ports else f"{service}-{replica}"

    def _pid_file(self, name: str) -> Path | None:
        return self.workdir / f"{name}.pid" if self.fixed_ports else None

    def _log(self, name: str) -> Path:
        return self.logs / f"{name}.log"

    def _java_service(self, service: str, name: str, args: Mapping[str, object],
                      env: dict[str, str] | None = None, extra_ports: Iterable[int] = ()) -> ChildProcess:
        port = self._port(service)
        log = self._log(name)
        if self.fixed_ports:
            require_free(name, [port, *extra_ports])
            if log.exists():   # the previous run's log stays beside the new one
                log.replace(log.with_name(log.name + ".1"))
            self.say(f"starting {name} (log {log})")
        command = self._command(service, port, args)
        if self.aot_cache:
            command = self._with_aot_cache(service, command, env)
        return ChildProcess(name, command, log, env=env, port=port, pid_file=self._pid_file(name))

    def _with_aot_cache(self, service: str, command: list[str], env: Mapping[str, str] | None) -> list[str]:
        """``command`` run from the jar's extracted layout with the JDK's AOT cache (classes loaded
        and linked ahead, method profiles): start-up to ready is shorter, and with a workload's
        profiles the JIT compiles the hot path sooner. The caches live under ``workdir/aot/``, per
        build of the jar. A workload's cache (``workload.aot``, made by a start with
        :attr:`aot_training` on, written when that JVM exits) is used when there is one; otherwise
        a start's cache, made once by a training run that starts the service's context and exits
        (``spring.context.exit=onRefresh``; it needs the brokers running)."""
        jar = service_jar(service, self.root)
        folder = self._aot_folder(service, jar)
        extracted, cache, workload = folder / jar.name, folder / "app.aot", folder / WORKLOAD_AOT
        at = command.index("-jar")
        options, arguments = command[:at], [a for a in command[at + 2:] if not a.startswith("--server.port=")]
        if not extracted.exists():   # a new build: the caches of earlier ones (100 MB each) go
            for earlier in folder.parent.glob(f"{service}-*"):
                if earlier != folder and earlier.name.removeprefix(f"{service}-").isalnum():
                    shutil.rmtree(earlier, ignore_errors=True)
            folder.mkdir(parents=True, exist_ok=True)
            subprocess.run([self.java, "-Djarmode=tools", "-jar", str(jar), "extract", "--destination", str(folder)],
                           check=True, capture_output=True)
        if self.aot_training:
            self.say(f"{service}: training its AOT cache on the workload (written when it stops)")
            return [*options, f"-XX:AOTCacheOutput={workload}", "-jar", str(extracted), *command[at + 2:]]
        if not workload.exists() and not cache.exists():
            self.say(f"{service}: making its AOT cache (a training start, once per build)")
            with (self.logs / f"{service}-aot-training.log").open("ab") as out, \
                    contextlib.suppress(subprocess.TimeoutExpired):   # then it starts without a cache
                subprocess.run([*options, f"-XX:AOTCacheOutput={cache}", "-Dspring.context.exit=onRefresh",
                                "-jar", str(extracted), *arguments, f"--server.port={free_port()}"],
                               stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=folder,
                               env={**os.environ, **(env or {})}, timeout=600)
        chosen = workload if workload.exists() else cache
        cache_options = [f"-XX:AOTCache={chosen}"] if chosen.exists() else []
        return [*options, *cache_options, "-jar", str(extracted), *command[at + 2:]]

    def _aot_folder(self, service: str, jar: Path | None = None) -> Path:
        jar = jar or service_jar(service, self.root)
        with jar.open("rb") as content:   # by content: a rebuild of the same sources keeps its cache
            digest = hashlib.file_digest(content, "sha256").hexdigest()[:16]
        return self.workdir / "aot" / f"{service}-{digest}"

    def has_workload_aot_caches(self, services: Iterable[str] = ("dispatcher", "gateway", "connection-manager")) -> bool:
        """Whether each of ``services`` has a workload's AOT cache for its current jar."""
        return all((self._aot_folder(service) / WORKLOAD_AOT).exists() for service in services)

    def _await_ready(self, start: Callable[[], ChildProcess | ProviderSandbox],
                     started=None, attempts: int = 3, path: str = READINESS, timeout: float = 240):
        """Waits for the readiness of a service ``start`` starts (or of ``started``). A free port
        can be taken by another process between our pick and the JVM binding it (a minute later
        on a busy machine): then the service is started again on a fresh port."""
        attempts = 1 if self.fixed_ports else attempts   # a fixed port cannot be picked again
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
        args = {**self._backends(),
                # Local mode: Web Push subscriptions of the sandbox's push service (http, loopback).
                "herald.dispatcher.webpush.allow-local": "true",
                "herald.dispatcher.webpush.allowed-hosts": "127.0.0.1,localhost",
                **(settings or {})}
        for i in range(len(self.dispatchers) + 1, count + 1):
            self.dispatchers.append(self._await_ready(lambda i=i: self._java_service(
                "dispatcher", self._name("dispatcher", i), args, self.service_env())))

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
        self.gateways.extend(self._java_service("gateway", self._name("gateway", i), args,
                                                self.service_env())
                             for i in range(first + 1, count + 1))
        for index in range(first, count):
            name = self.gateways[index].name
            self.gateways[index] = self._await_ready(
                lambda name=name: self._java_service("gateway", name, args, self.service_env()),
                started=self.gateways[index])

    def start_connection_managers(self, count: int) -> None:
        """Connection managers (MQTT) on free ports; ``replica.extra['mqtt_port']`` per replica."""
        def start(i: int) -> ChildProcess:
            mqtt_port = self._port("mqtt")
            replica = self._java_service(
                "connection-manager", self._name("connection-manager", i),
                {**self._backends(), "herald.cm.mqtt.host": "127.0.0.1"},   # loopback only
                {**self.service_env(), "HERALD_CM_MQTT_PORT": str(mqtt_port),
                 "HERALD_CM_NODE_ID": f"load-cm-{i}"}, extra_ports=[mqtt_port])
            replica.extra["mqtt_port"] = mqtt_port
            return replica

        for i in range(len(self.connection_managers) + 1, count + 1):
            self.connection_managers.append(self._await_ready(lambda i=i: start(i)))

    def stop_services(self) -> None:
        """Stops the Herald services and the sandbox (in the reverse of their start order),
        leaving RabbitMQ and Redis running."""
        self.stop_herald_services()
        if self.sandbox:
            self._announce_stop(self.sandbox.process)
            self.sandbox.process.stop(20)
        self.sandbox = None

    def stop_herald_services(self) -> None:
        """Stops Herald's services (in the reverse of their start order), leaving the brokers and
        the sandbox running."""
        for group in (self.dispatchers, self.connection_managers, self.gateways):
            for replica in group:
                self._announce_stop(replica)
            self._stop_all(group)

    def _announce_stop(self, process: ChildProcess | None) -> None:
        if self.fixed_ports and process and process.alive():   # the local run says what it stops
            self.say(f"stopping {process.name} (pid {process.pid})")

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
