"""Processes of the scenario: started with their output in a log file, stopped by pid only."""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Callable, Mapping, Sequence


_handed_out: set[int] = set()


def free_port() -> int:
    """A TCP port that nothing listens on now, below the kernel's ephemeral range (32768 and up).

    A port the kernel picks for us comes from the range it also gives outgoing connections, so
    between our pick and the server's bind another process's connection can take it (seen with
    RabbitMQ's distribution port). Each port is handed out once per run.
    """
    while True:
        port = random.randrange(20000, 32000)
        if port in _handed_out:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("", port))
            except OSError:
                continue
        _handed_out.add(port)
        return port


def wait_until(condition: Callable[[], object], timeout: float, what: str, interval: float = 0.2) -> object:
    """Polls `condition` until it returns a truthy value (which is returned) or `timeout` passes.

    Exceptions from the condition count as "not yet" (a server still starting refuses
    connections); the last one is reported if the deadline passes.
    """
    deadline = time.monotonic() + timeout
    last_error: Exception | None = None
    while True:
        try:
            value = condition()
            if value:
                return value
        except Exception as error:  # noqa: BLE001 - any failure of a probe means "not yet"
            last_error = error
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not true after {timeout:.0f} s" + (f" (last error: {last_error})" if last_error else ""))
        time.sleep(interval)


def port_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


class Proc:
    """A child process in a session of its own, its stdout+stderr appended to `log`, working in
    `cwd` (default: the log's folder, so whatever it drops there stays out of the source tree)."""

    def __init__(self, name: str, command: Sequence[str], log: Path, env: Mapping[str, str] | None = None,
                 cwd: Path | None = None):
        self.name = name
        self.log = log
        log.parent.mkdir(parents=True, exist_ok=True)
        full_env = dict(os.environ)
        full_env.update(env or {})
        with open(log, "ab") as out:
            self.popen = subprocess.Popen(list(command), stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                          env=full_env, cwd=cwd or log.parent, start_new_session=True)

    @property
    def pid(self) -> int:
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen.poll() is None

    def await_ready(self, probe: Callable[[], object], timeout: float) -> "Proc":
        def ready():
            if not self.alive():
                raise RuntimeError(f"{self.name} exited with {self.popen.returncode}; log: {self.tail()}")
            return probe()

        try:
            wait_until(ready, timeout, f"{self.name} ready")
        except TimeoutError as error:
            raise TimeoutError(f"{error}; log: {self.tail()}") from None
        return self

    def signal(self, sig: int) -> None:
        """Signals the process group this process leads (the process and the children it started)."""
        if self.alive():
            try:
                os.killpg(self.popen.pid, sig)
            except ProcessLookupError:
                pass

    def stop(self, grace: float = 30.0) -> int | None:
        """SIGTERM, then SIGKILL after `grace` seconds. Returns the exit status."""
        if self.alive():
            self.signal(signal.SIGTERM)
            try:
                self.popen.wait(grace)
            except subprocess.TimeoutExpired:
                self.signal(signal.SIGKILL)
                self.popen.wait(10)
        else:
            # The leader is gone; children it left in its group (e.g. a daemonised server) are not.
            try:
                os.killpg(self.popen.pid, signal.SIGTERM)
            except (ProcessLookupError, PermissionError):
                pass
        return self.popen.returncode

    def tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError as error:
            return f"(no log: {error})"
