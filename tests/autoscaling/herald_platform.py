"""Herald's own parts and its infrastructure as host processes: RabbitMQ, Redis, the provider
sandbox, the dispatcher and gateways, all on free loopback ports."""

from __future__ import annotations

import base64
import json
import os
import secrets
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from procs import Proc, free_port, port_open

RABBITMQ_SERVER = "/usr/lib/rabbitmq/bin/rabbitmq-server"
REDIS_SERVER = "/usr/bin/redis-server"


def http(method: str, url: str, body: object | None = None, headers: dict[str, str] | None = None,
         timeout: float = 10.0) -> tuple[int, object]:
    """One JSON request; returns (status, parsed body or text). HTTP errors are returned, not raised."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers=dict(headers or {}))
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as error:
        status, raw = error.code, error.read()
    text = raw.decode(errors="replace")
    try:
        return status, json.loads(text) if text else None
    except json.JSONDecodeError:
        return status, text


def basic_auth(user: str, password: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


class Rabbit:
    """Debian's rabbitmq-server with the management plugin (KEDA's http protocol reads its API).

    Its queue counts refresh about every 5 s (seen here with the statistics and quorum tick
    intervals set to 1 s as well): the timeline's steps, and what KEDA reads in a real cluster.
    """

    USER = "guest"
    PASSWORD = "guest"

    def __init__(self, work: Path):
        self.port, self.management_port, dist = free_port(), free_port(), free_port()
        home = work / "rabbitmq"
        (home / "home").mkdir(parents=True, exist_ok=True)
        (home / "rabbitmq.conf").write_text("\n".join([
            f"listeners.tcp.default = 127.0.0.1:{self.port}",
            f"management.tcp.port = {self.management_port}",
            "management.tcp.ip = 127.0.0.1",
            "loopback_users = none",
            ""]))
        (home / "enabled_plugins").write_text("[rabbitmq_management].\n")
        env = {
            "HOME": str(home / "home"),
            "RABBITMQ_NODENAME": f"heraldkeda{self.port}@localhost",
            "RABBITMQ_DIST_PORT": str(dist),
            "RABBITMQ_MNESIA_BASE": str(home / "mnesia"),
            "RABBITMQ_LOG_BASE": str(home / "log"),
            "RABBITMQ_CONFIG_FILE": str(home / "rabbitmq.conf"),
            "RABBITMQ_ENABLED_PLUGINS_FILE": str(home / "enabled_plugins"),
            "RABBITMQ_PID_FILE": str(home / "rabbit.pid"),
        }
        # Its own folder as working directory: a node that fails to start writes erl_crash.dump there.
        self.proc = Proc("rabbitmq", [RABBITMQ_SERVER], work / "logs" / "rabbitmq.log", env=env, cwd=home)
        self.proc.await_ready(lambda: port_open("127.0.0.1", self.port) and self.api("/api/overview")[0] == 200, 120)

    @property
    def management_url(self) -> str:
        return f"http://127.0.0.1:{self.management_port}"

    def api(self, path: str) -> tuple[int, object]:
        return http("GET", self.management_url + path, headers=basic_auth(self.USER, self.PASSWORD), timeout=5)

    def queue(self, name: str) -> dict:
        status, body = self.api(f"/api/queues/%2F/{name}")
        if status != 200:
            raise RuntimeError(f"queue {name}: HTTP {status} {body}")
        return body

    def stop(self) -> None:
        self.proc.stop(60)


class Redis:
    def __init__(self, work: Path):
        self.port = free_port()
        data = work / "redis"
        data.mkdir(parents=True, exist_ok=True)
        self.proc = Proc("redis", [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                                   "--appendonly", "no", "--dir", str(data)], work / "logs" / "redis.log")
        self.proc.await_ready(lambda: port_open("127.0.0.1", self.port), 30)

    @property
    def uri(self) -> str:
        return f"redis://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.proc.stop(10)


def exec_jar(root: Path, module: str) -> Path:
    jars = sorted((root / "services" / module / "target").glob(f"{module}-*-exec.jar"))
    if not jars:
        raise FileNotFoundError(f"no executable jar in services/{module}/target: build it with "
                                f"`cd services && mvn -B -q -pl gateway,dispatcher,provider-sandbox -am package -DskipTests`")
    return jars[-1]


def actuator_ready(port: int) -> bool:
    status, _ = http("GET", f"http://127.0.0.1:{port}/actuator/health/readiness", timeout=2)
    return status == 200


@dataclass
class Platform:
    """What the gateways and the dispatcher share: broker, store, secrets, the sandbox."""

    root: Path
    work: Path
    java: str
    rabbit: Rabbit
    redis: Redis
    crypto_key: str = field(default_factory=lambda: base64.b64encode(secrets.token_bytes(32)).decode())
    admin_token: str = field(default_factory=lambda: secrets.token_hex(24))
    sandbox: Proc | None = None
    sandbox_port: int = 0
    sandbox_apns_port: int = 0
    dispatcher: Proc | None = None
    dispatcher_port: int = 0

    @property
    def apns_certificate(self) -> Path:
        return self.work / "sandbox-apns.pem"

    def rabbit_args(self) -> list[str]:
        return ["--spring.rabbitmq.host=127.0.0.1", f"--spring.rabbitmq.port={self.rabbit.port}",
                f"--herald.redis-uri={self.redis.uri}"]

    def start_sandbox(self, latency_ms: int) -> None:
        self.sandbox_port, self.sandbox_apns_port = free_port(), free_port()
        self.sandbox = Proc("provider-sandbox", [
            self.java, "-Xmx512m", "-jar", str(exec_jar(self.root, "provider-sandbox")),
            f"--server.port={self.sandbox_port}", f"--herald.sandbox.apns-port={self.sandbox_apns_port}",
            f"--herald.sandbox.apns-certificate-path={self.apns_certificate}",
            f"--herald.sandbox.faults.latency-ms={latency_ms}"], self.work / "logs" / "provider-sandbox.log")
        self.sandbox.await_ready(lambda: actuator_ready(self.sandbox_port), 180)

    def sandbox_api(self, method: str, path: str, body: object | None = None) -> tuple[int, object]:
        return http(method, f"http://127.0.0.1:{self.sandbox_port}{path}", body)

    def start_dispatcher(self) -> None:
        self.dispatcher_port = free_port()
        env = {"HERALD_DISPATCHER_ADMIN_TOKEN": self.admin_token, "HERALD_CRYPTO_KEY": self.crypto_key}
        self.dispatcher = Proc("dispatcher", [
            self.java, "-Xmx512m", "-jar", str(exec_jar(self.root, "dispatcher")),
            f"--server.port={self.dispatcher_port}", *self.rabbit_args()],
            self.work / "logs" / "dispatcher.log", env=env)
        self.dispatcher.await_ready(lambda: actuator_ready(self.dispatcher_port), 180)

    def api(self, method: str, path: str, body: object | None = None, token: str | None = None) -> tuple[int, object]:
        headers = {"Authorization": f"Bearer {token or self.admin_token}"}
        return http(method, f"http://127.0.0.1:{self.dispatcher_port}{path}", body, headers)

    def gateway_command(self, management_port: int) -> list[str]:
        """The command line of one gateway replica: this machine's broker, store and sandbox (the
        arguments win over the release's environment, which points at the real providers)."""
        return [self.java, "-Xmx384m", "-XX:TieredStopAtLevel=1", "-jar", str(exec_jar(self.root, "gateway")),
                f"--server.port={management_port}", *self.rabbit_args(),
                f"--herald.gateway.fcm.endpoint=http://127.0.0.1:{self.sandbox_port}",
                f"--herald.gateway.apns.sandbox-endpoint=https://127.0.0.1:{self.sandbox_apns_port}",
                f"--herald.gateway.apns.production-endpoint=https://127.0.0.1:{self.sandbox_apns_port}",
                f"--herald.gateway.apns.trusted-certificate={self.apns_certificate}",
                "--herald.gateway.fcm.allowed-token-hosts=127.0.0.1,localhost"]

    def gateway_env(self) -> dict[str, str]:
        return {"HERALD_CRYPTO_KEY": self.crypto_key}

    def stop(self) -> None:
        for proc in (self.dispatcher, self.sandbox):
            if proc is not None:
                proc.stop(30)


def java25() -> str:
    """The java launcher of a JDK >= 25 (the services' release level)."""
    for candidate in ["/usr/lib/jvm/temurin-25-jdk-amd64", *sorted(str(p) for p in Path("/usr/lib/jvm").glob("*"))]:
        release = Path(candidate) / "release"
        launcher = Path(candidate) / "bin" / "java"
        if not (release.is_file() and os.access(launcher, os.X_OK)):
            continue
        for line in release.read_text().splitlines():
            if line.startswith("JAVA_VERSION="):
                major = line.split("=", 1)[1].strip('"').split(".")[0]
                if major.isdigit() and int(major) >= 25:
                    return str(launcher)
    raise FileNotFoundError("no JDK 25 or newer under /usr/lib/jvm")
