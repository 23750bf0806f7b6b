"""The infrastructure Herald needs, as local servers on loopback ports (free ones, or the fixed
well-known ones of ``scripts/run-local.sh``): a RabbitMQ node with its management API, and Redis,
both started with the pinned settings the Java tests use too (:data:`SETTINGS_FILE`). Each keeps
its data, configuration and log under the folders it is given and is stopped by :meth:`stop`. Also the small JSON-over-HTTP client the platform's callers
share (standard library only, see :mod:`herald_load.processes`).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import secrets
import shutil
import socket
import subprocess
import urllib.error
import urllib.request
from pathlib import Path
from typing import Iterable

from .processes import (FIXED_PORTS, ChildProcess, PlatformError, free_port, port_open,
                        repository_root, require_free)

__all__ = ["RabbitMQ", "Redis", "http_json", "pinned_settings", "SEND_QUEUES"]

RABBIT_SERVER = "/usr/lib/rabbitmq/bin/rabbitmq-server"
RABBIT_CTL = "/usr/lib/rabbitmq/bin/rabbitmqctl"
# Shared with the Java tests (testing/test-support: LocalRabbit, LocalRedis).
SETTINGS_FILE = Path("testing/test-support/src/main/resources/dev/herald/testsupport/servers.properties")
# The queues the dispatcher publishes sends to (what the gateways consume).
SEND_QUEUES = ("herald.send.high", "herald.send.normal", "herald.audience")


def http_json(method: str, url: str, body: object | None = None,
              headers: dict[str, str] | None = None, timeout: float = 10.0) -> tuple[int, object]:
    """One request with an optional JSON body; returns (status, parsed JSON body, or its text).
    HTTP errors are returned, not raised; a connection that fails raises ``OSError``."""
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


def pinned_settings(path: Path | None = None) -> dict[str, str]:
    """The pinned RabbitMQ and Redis settings shared with the Java tests' LocalRabbit and
    LocalRedis (``key = value`` lines, ``#`` comments; see the file)."""
    settings = {}
    for line in (path or repository_root() / SETTINGS_FILE).read_text().splitlines():
        line = line.strip()
        if line and not line.startswith(("#", "!")):
            key, _, value = line.partition("=")
            settings[key.strip()] = value.strip()
    return settings


def _with_prefix(settings: dict[str, str], prefix: str) -> dict[str, str]:
    return {key[len(prefix):]: value for key, value in sorted(settings.items())
            if key.startswith(prefix)}


class RabbitMQ:
    """A node of Debian's rabbitmq-server of its own, with the management plugin (the load runs
    read queue depths from its API, and so does KEDA's rabbitmq trigger with protocol http).

    On free ports by default; with ``fixed_ports`` on the well-known ones (AMQP 5672, management
    15672, Erlang distribution 25672, Prometheus 15692) as node ``herald@localhost``, and left
    running when this process exits: :meth:`adopt` finds it again (``scripts/run-local.sh``).

    Its queue counts refresh about every 5 s (seen in the KEDA scenario with the statistics and
    quorum tick intervals set to 1 s as well, so they are left at their defaults): the
    scenario's timeline moves in those steps, as what KEDA reads in a real cluster does.
    """

    USER = "guest"
    PASSWORD = "guest"

    def __init__(self, folder: Path, log: Path, *, fixed_ports: bool = False):
        if not os.access(RABBIT_SERVER, os.X_OK):
            raise PlatformError(f"{RABBIT_SERVER} not found: run scripts/install-deps.sh")
        self.folder, self.log, self.fixed_ports = folder, log, fixed_ports
        if fixed_ports:
            self.port, self.management_port, self.dist_port, self.prometheus_port = (
                FIXED_PORTS[name] for name in ("rabbitmq", "rabbitmq-management",
                                               "rabbitmq-distribution", "rabbitmq-prometheus"))
            self.node = "herald@localhost"
        else:
            self.port, self.management_port, self.dist_port, self.prometheus_port = (
                free_port(), free_port(), free_port(), free_port())
            self.node = f"herald-{self.port}@localhost"
        self.settings = pinned_settings()
        self._env = {
            **_with_prefix(self.settings, "rabbitmq.env."),
            "HOME": str(folder / "home"),
            "RABBITMQ_NODENAME": self.node,
            "RABBITMQ_DIST_PORT": str(self.dist_port),
            "RABBITMQ_MNESIA_BASE": str(folder / "mnesia"),
            "RABBITMQ_LOG_BASE": str(folder / "log"),
            "RABBITMQ_CONFIG_FILE": str(folder / "rabbitmq.conf"),
            "RABBITMQ_ADVANCED_CONFIG_FILE": str(folder / "advanced.config"),   # none
            "RABBITMQ_CONF_ENV_FILE": str(folder / "rabbitmq-env.conf"),
            "RABBITMQ_ENABLED_PLUGINS_FILE": str(folder / "enabled_plugins"),
            "RABBITMQ_PID_FILE": str(folder / "rabbit.pid"),
        }
        self.process: ChildProcess | None = None

    @property
    def ports(self) -> tuple[int, ...]:
        return self.port, self.management_port, self.dist_port, self.prometheus_port

    @property
    def _pid_file(self) -> Path | None:
        return self.folder / "server.pid" if self.fixed_ports else None

    @property
    def _epmd_flag(self) -> Path:
        # Kept in a file: the run that stops the node may not be the one that started it.
        return self.folder / "epmd-started-by-us"

    def config(self) -> str:
        """rabbitmq.conf: the pinned settings and this node's ports."""
        lines = [f"{key} = {value}" for key, value in
                 _with_prefix(self.settings, "rabbitmq.conf.").items()]
        lines += [f"listeners.tcp.default = 127.0.0.1:{self.port}",
                  f"management.tcp.port = {self.management_port}",
                  f"prometheus.tcp.port = {self.prometheus_port}"]
        return "\n".join(lines) + "\n"

    def command(self) -> list[str]:
        return [RABBIT_SERVER]

    def environment(self) -> dict[str, str]:
        return dict(self._env)

    @classmethod
    def adopt(cls, folder: Path, log: Path) -> "RabbitMQ | None":
        """The fixed-port node an earlier run started in ``folder`` and left running, or None."""
        rabbit = cls(folder, log, fixed_ports=True)
        rabbit.process = ChildProcess.adopt("rabbitmq", rabbit._pid_file, log, rabbit.port)
        return rabbit if rabbit.process else None

    def vm_pid(self) -> int:
        """The Erlang VM's pid (RabbitMQ writes it once it runs)."""
        return int((self.folder / "rabbit.pid").read_text().strip())

    def start(self) -> "RabbitMQ":
        if self.fixed_ports:
            require_free("RabbitMQ", self.ports)
        (self.folder / "home").mkdir(parents=True, exist_ok=True)
        (self.folder / "rabbitmq.conf").write_text(self.config())
        plugins = self.settings["rabbitmq.plugins"].replace(",", ", ")
        (self.folder / "enabled_plugins").write_text(f"[{plugins}].\n")
        # Empty on purpose: the node reads these instead of /etc/rabbitmq's (a machine's own
        # broker settings must not leak in).
        (self.folder / "rabbitmq-env.conf").write_text("")
        cookie = self.folder / "home" / ".erlang.cookie"
        if not cookie.exists():
            cookie.write_text(secrets.token_hex(20))
        cookie.chmod(0o400)
        if _epmd_running():
            self._epmd_flag.unlink(missing_ok=True)
        else:
            self._epmd_flag.touch()
        # Its own folder as working directory: a node that fails to start writes erl_crash.dump there.
        self.process = ChildProcess("rabbitmq", self.command(), self.log, env=self._env,
                                    cwd=self.folder, port=self.port, pid_file=self._pid_file)
        return self

    def await_ready(self, timeout: float = 120) -> None:
        self.process.await_ready(
            lambda: port_open("127.0.0.1", self.port) and self.api("/api/overview")[0] == 200, timeout)

    @property
    def management_url(self) -> str:
        return f"http://127.0.0.1:{self.management_port}"

    def api(self, path: str, method: str = "GET") -> tuple[int, object]:
        """A call to the management API as guest."""
        auth = base64.b64encode(f"{self.USER}:{self.PASSWORD}".encode()).decode()
        return http_json(method, self.management_url + path,
                         headers={"Authorization": f"Basic {auth}"}, timeout=5)

    def queue(self, name: str) -> dict:
        """One queue's figures (messages, messages_ready, messages_unacknowledged, ...)."""
        status, body = self.api(f"/api/queues/%2F/{name}")
        if status != 200:
            raise PlatformError(f"queue {name}: HTTP {status} {body}")
        return body

    def queue_depths(self) -> dict[str, int]:
        """Ready + unacknowledged messages per Herald queue; empty if the API does not answer
        (for progress lines, where a missing figure is better than a failed run)."""
        try:
            status, queues = self.api("/api/queues/%2F")
        except OSError:
            return {}
        if status != 200 or not isinstance(queues, list):
            return {}
        return {q["name"]: int(q.get("messages", 0)) for q in queues
                if q.get("name", "").startswith("herald.")}

    def purge(self, queues: Iterable[str] = SEND_QUEUES) -> None:
        """Drops the messages in ``queues`` (a queue that does not exist yet is left alone)."""
        for queue in queues:
            try:
                self.api(f"/api/queues/%2F/{queue}/contents", method="DELETE")
            except OSError:
                pass

    def stop(self) -> None:
        """``rabbitmqctl stop`` (the node shuts down cleanly), then its process group; and the
        Erlang port mapper our node started, unless another node registered with it since."""
        if self.process and self.process.alive():
            try:
                subprocess.run([RABBIT_CTL, "-q", "-n", self.node, "stop"],
                               env={**os.environ, **self._env}, capture_output=True, timeout=60)
            except (OSError, subprocess.TimeoutExpired):
                pass
        if self.process:
            self.process.stop(30)
        if self._epmd_flag.exists():
            try:
                names = subprocess.run(["epmd", "-names"], capture_output=True, text=True,
                                       timeout=5).stdout
                if "name " not in names:
                    subprocess.run(["epmd", "-kill"], capture_output=True, timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                pass
            self._epmd_flag.unlink(missing_ok=True)


def _epmd_running() -> bool:
    try:
        return subprocess.run(["epmd", "-names"], capture_output=True, timeout=5).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


class Redis:
    """redis-server with the pinned settings (no persistence: a run's data is throwaway), on a
    free loopback port, or with ``fixed_ports`` on 6379 and left running for :meth:`adopt`."""

    def __init__(self, folder: Path, log: Path, *, fixed_ports: bool = False):
        self.server = shutil.which("redis-server")
        if not self.server:
            raise PlatformError("redis-server not found: run scripts/install-deps.sh")
        self.folder, self.log, self.fixed_ports = folder, log, fixed_ports
        self.port = FIXED_PORTS["redis"] if fixed_ports else free_port()
        self.process: ChildProcess | None = None
        self.loading_seen = False   # whether the last await_ready saw it loading its data

    @property
    def _pid_file(self) -> Path | None:
        return self.folder / "redis.pid" if self.fixed_ports else None

    def command(self) -> list[str]:
        options = _with_prefix(pinned_settings(), "redis.")
        return [self.server, "--port", str(self.port),
                *(part for option, value in options.items() for part in (f"--{option}", value)),
                "--dir", str(self.folder)]

    @classmethod
    def adopt(cls, folder: Path, log: Path) -> "Redis | None":
        """The fixed-port Redis an earlier run started in ``folder`` and left running, or None."""
        redis = cls(folder, log, fixed_ports=True)
        redis.process = ChildProcess.adopt("redis", redis._pid_file, log, redis.port)
        return redis if redis.process else None

    def start(self) -> "Redis":
        if self.fixed_ports:
            require_free("Redis", [self.port])
        self.folder.mkdir(parents=True, exist_ok=True)
        self.process = ChildProcess("redis", self.command(), self.log, cwd=self.folder,
                                    port=self.port, pid_file=self._pid_file)
        return self

    @property
    def uri(self) -> str:
        return f"redis://127.0.0.1:{self.port}"

    def await_ready(self, timeout: float = 30, loading_timeout: float = 600) -> None:
        """Waits for PONG, not just an open port: Redis accepts connections while it still loads
        its append-only file, and answers ``-LOADING`` meanwhile. A start answering neither within
        ``timeout`` fails; one that is loading gets ``loading_timeout`` to finish. Why: a local
        Redis holding about five million keys (2026-11-30) took 22 s for the base of its file and
        more after it, and the platform's start failed at the fixed 30 s wait it had then."""
        self.loading_seen = False
        self.process.await_ready(lambda: self._ping() in (b"+PONG", b"-LOADING"), timeout)
        if self._ping() != b"+PONG":
            self.loading_seen = True
            self.process.await_ready(lambda: self._ping() == b"+PONG", loading_timeout)

    def _ping(self) -> bytes:
        """The start of Redis's answer to PING: ``+PONG``, ``-LOADING`` while it loads its data."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=1) as conn:
            conn.sendall(b"PING\r\n")
            answer = conn.recv(16)
        return answer.split(b" ")[0].rstrip(b"\r\n")

    def cli(self) -> list[str]:
        """``redis-cli`` pointed at this server; a command's words follow."""
        return ["redis-cli", "-p", str(self.port)]

    @contextlib.contextmanager
    def aof_rewrites_held(self):
        """No automatic rewrite of the append-only file while in the block; the setting is put back
        after it. Why: Redis rewrites the file by itself each time it has doubled, in a forked child
        that takes a core for seconds. A benchmark adding 100,000 devices doubles it after a clean
        up, and twice in a row on 2026-11-29 that rewrite fell in the import's window (5.79 and
        6.62 s against 3.83 s without it)."""
        cli = self.cli()
        setting = subprocess.run([*cli, "config", "get", "auto-aof-rewrite-percentage"], check=True,
                                 capture_output=True, text=True).stdout.split()[-1]
        subprocess.run([*cli, "config", "set", "auto-aof-rewrite-percentage", "0"], check=True, capture_output=True)
        try:
            yield
        finally:
            subprocess.run([*cli, "config", "set", "auto-aof-rewrite-percentage", setting], check=True,
                           capture_output=True)

    def unlink_matching(self, pattern: str) -> int:
        """Removes the keys matching ``pattern`` (SCAN, then UNLINK 1,000 at a time: Redis frees
        them in the background); how many."""
        keys = subprocess.run([*self.cli(), "--scan", "--pattern", pattern], check=True,
                              capture_output=True, text=True).stdout.split()
        self._unlink(keys)
        return len(keys)

    def _unlink(self, keys: list[str]) -> None:
        """UNLINK, 1,000 keys a call."""
        for start in range(0, len(keys), 1000):
            subprocess.run([*self.cli(), "unlink", *keys[start:start + 1000]], check=True, capture_output=True)

    # The keys of one message (libs/store/README.md), all in its hash slot.
    MESSAGE_KEY_PREFIXES = ("msg", "done", "expand", "throttle", "sched")

    def unlink_messages_of(self, app: str) -> int:
        """Removes the keys of the app's messages, which its list of recent messages
        (``msgs:{app}``) names: their hash tag is the message's, not the app's, so
        :meth:`unlink_matching` on the app's tag leaves them (a week each, the status TTL). How
        many messages."""
        ids = subprocess.run([*self.cli(), "zrange", f"msgs:{{{app}}}", "0", "-1"], check=True,
                             capture_output=True, text=True).stdout.split()
        self._unlink([f"{prefix}:{{{message}}}" for message in ids for prefix in self.MESSAGE_KEY_PREFIXES])
        return len(ids)

    def stop(self) -> None:
        if self.process:
            self.process.stop(20)
