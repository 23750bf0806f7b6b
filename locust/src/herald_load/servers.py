"""The infrastructure Herald needs, as local servers on free loopback ports: a RabbitMQ node with
its management API, and Redis. Each keeps its data, configuration and log under the folders it is
given and is stopped by :meth:`stop`. Also the small JSON-over-HTTP client the platform's callers
share (standard library only, see :mod:`herald_load.processes`).
"""

from __future__ import annotations

import base64
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

from .processes import ChildProcess, PlatformError, free_port, port_open

__all__ = ["RabbitMQ", "Redis", "http_json", "SEND_QUEUES"]

RABBIT_SERVER = "/usr/lib/rabbitmq/bin/rabbitmq-server"
RABBIT_CTL = "/usr/lib/rabbitmq/bin/rabbitmqctl"
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


class RabbitMQ:
    """A node of Debian's rabbitmq-server of its own, with the management plugin (the load runs
    read queue depths from its API, and so does KEDA's rabbitmq trigger with protocol http).

    Its queue counts refresh about every 5 s (seen in the KEDA scenario with the statistics and
    quorum tick intervals set to 1 s as well, so they are left at their defaults): the
    scenario's timeline moves in those steps, as what KEDA reads in a real cluster does.
    """

    USER = "guest"
    PASSWORD = "guest"

    def __init__(self, folder: Path, log: Path):
        if not os.access(RABBIT_SERVER, os.X_OK):
            raise PlatformError(f"{RABBIT_SERVER} not found: run scripts/install-deps.sh")
        self.port, self.management_port, dist_port = free_port(), free_port(), free_port()
        (folder / "home").mkdir(parents=True, exist_ok=True)
        (folder / "rabbitmq.conf").write_text(
            f"listeners.tcp.default = 127.0.0.1:{self.port}\n"
            f"management.tcp.ip = 127.0.0.1\nmanagement.tcp.port = {self.management_port}\n"
            # guest may connect from 127.0.0.1 only by default; the address is loopback anyway.
            "loopback_users = none\n")
        (folder / "enabled_plugins").write_text("[rabbitmq_management].\n")
        # Empty on purpose: the node reads these instead of /etc/rabbitmq's (a machine's own
        # broker settings must not leak in).
        (folder / "rabbitmq-env.conf").write_text("")
        cookie = folder / "home" / ".erlang.cookie"
        if not cookie.exists():
            cookie.write_text(secrets.token_hex(20))
        cookie.chmod(0o400)
        self.node = f"herald-{self.port}@localhost"
        self._env = {
            "HOME": str(folder / "home"),
            "RABBITMQ_NODENAME": self.node,
            "RABBITMQ_DIST_PORT": str(dist_port),
            "RABBITMQ_MNESIA_BASE": str(folder / "mnesia"),
            "RABBITMQ_LOG_BASE": str(folder / "log"),
            "RABBITMQ_CONFIG_FILE": str(folder / "rabbitmq.conf"),
            "RABBITMQ_ADVANCED_CONFIG_FILE": str(folder / "advanced.config"),   # none
            "RABBITMQ_CONF_ENV_FILE": str(folder / "rabbitmq-env.conf"),
            "RABBITMQ_ENABLED_PLUGINS_FILE": str(folder / "enabled_plugins"),
            "RABBITMQ_PID_FILE": str(folder / "rabbit.pid"),
            # The distribution port (node-to-node, rabbitmqctl) on loopback only.
            "RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS": "-kernel inet_dist_use_interface {127,0,0,1}",
        }
        self._epmd_was_running = _epmd_running()
        # Its own folder as working directory: a node that fails to start writes erl_crash.dump there.
        self.process = ChildProcess("rabbitmq", [RABBIT_SERVER], log, env=self._env, cwd=folder,
                                    port=self.port)

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
        if self.process.alive():
            try:
                subprocess.run([RABBIT_CTL, "-q", "-n", self.node, "stop"],
                               env={**os.environ, **self._env}, capture_output=True, timeout=60)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.process.stop(30)
        if not self._epmd_was_running:
            try:
                names = subprocess.run(["epmd", "-names"], capture_output=True, text=True,
                                       timeout=5).stdout
                if "name " not in names:
                    subprocess.run(["epmd", "-kill"], capture_output=True, timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                pass
            self._epmd_was_running = True


def _epmd_running() -> bool:
    try:
        return subprocess.run(["epmd", "-names"], capture_output=True, timeout=5).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


class Redis:
    """redis-server on a free loopback port, without persistence (a run's data is throwaway)."""

    def __init__(self, folder: Path, log: Path):
        server = shutil.which("redis-server")
        if not server:
            raise PlatformError("redis-server not found: run scripts/install-deps.sh")
        self.port = free_port()
        folder.mkdir(parents=True, exist_ok=True)
        self.process = ChildProcess("redis", [server, "--port", str(self.port), "--bind", "127.0.0.1",
                                              "--save", "", "--appendonly", "no", "--dir", str(folder)],
                                    log, cwd=folder, port=self.port)

    @property
    def uri(self) -> str:
        return f"redis://127.0.0.1:{self.port}"

    def await_ready(self, timeout: float = 30) -> None:
        self.process.await_ready(self._ping, timeout)

    def _ping(self) -> bool:
        # PONG, not just an open port: Redis accepts connections while still loading.
        with socket.create_connection(("127.0.0.1", self.port), timeout=1) as conn:
            conn.sendall(b"PING\r\n")
            return conn.recv(16).startswith(b"+PONG")

    def stop(self) -> None:
        self.process.stop(20)
