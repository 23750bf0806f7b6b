"""Local child processes and what starting them needs: free ports, a JDK 25 ``java``, a service's
executable jar, waiting until something holds.

The one implementation of these for Python in this repository: the load runs
(:mod:`herald_load.local`) and the KEDA scenario (``tests/autoscaling``) both use it. Only the
standard library, so the scenario's venv installs this package without its dependencies.
"""

from __future__ import annotations

import glob
import os
import random
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence, TypeVar

__all__ = ["ChildProcess", "FIXED_PORTS", "PlatformError", "find_java", "free_port", "port_open",
           "repository_root", "require_free", "service_jar", "wait_until", "build_jars_if_missing"]

T = TypeVar("T")


class PlatformError(RuntimeError):
    """A local server could not be started (the message ends with its log's last lines)."""


def repository_root() -> Path:
    """The checkout this package lives in (``HERALD_ROOT`` overrides)."""
    if os.environ.get("HERALD_ROOT"):
        return Path(os.environ["HERALD_ROOT"]).resolve()
    return Path(__file__).resolve().parents[3]


# ------------------------------------------------------------------ ports

_HANDED_OUT: set[int] = set()
# The well-known ports of the local platform (scripts/run-local.sh, the services' defaults):
# free_port() never hands them out.
FIXED_PORTS = {"rabbitmq": 5672, "rabbitmq-management": 15672, "rabbitmq-distribution": 25672,
               "rabbitmq-prometheus": 15692, "redis": 6379, "dispatcher": 8080, "gateway": 8081,
               "connection-manager": 8082, "mqtt": 1883, "provider-sandbox": 9090, "apns": 9443}
_RESERVED = set(FIXED_PORTS.values())
_random = random.Random()


def _ephemeral_low() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port() -> int:
    """A TCP port nothing is bound to right now (on any address), below the kernel's ephemeral
    range, never one this process handed out before.

    Servers bind theirs seconds (a JVM on a busy machine: a minute) after we pick it. A port
    from the ephemeral range (what binding port 0 gives) is what every outgoing connection and
    every other test on the machine draws from too, and was taken meanwhile several times in
    practice (RabbitMQ's distribution port among them); below that range only servers that chose
    a port on purpose compete. Probing the wildcard address also finds a port bound on one
    address only (the KEDA scenario binds to its network namespace's host address).
    """
    low = max(10000, _ephemeral_low() - 12000)
    high = _ephemeral_low() - 1
    for _ in range(1000):
        port = _random.randint(low, high)
        if port in _HANDED_OUT or port in _RESERVED:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            try:
                probe.bind(("", port))
            except OSError:
                continue
        _HANDED_OUT.add(port)
        return port
    raise PlatformError(f"no free port between {low} and {high}")


def port_open(host: str, port: int, timeout: float = 0.5) -> bool:
    """True if something accepts TCP connections on ``host:port``."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def require_free(what: str, ports: Iterable[int]) -> None:
    """``PlatformError`` naming who listens, if anything accepts connections on one of ``ports``
    (the fixed ports of the local platform: someone else's server must not be taken for ours)."""
    taken = [port for port in ports if port_open("127.0.0.1", port)]
    if not taken:
        return
    owners = []
    for port in taken:
        try:
            listing = subprocess.run(["ss", "-Hltnp", f"sport = :{port}"], capture_output=True,
                                     text=True, timeout=5).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            listing = ""
        owners.append(f"  port {port}: {listing or 'in use'}")
    raise PlatformError(f"port(s) {', '.join(map(str, taken))} needed by the local {what} are in "
                        f"use by a process this launcher did not start:\n" + "\n".join(owners)
                        + "\nStop that process and retry.")


# ------------------------------------------------------------------ waiting

def wait_until(condition: Callable[[], T], timeout: float, what: str, interval: float = 0.25) -> T:
    """Polls ``condition`` until it returns a truthy value (which is returned); ``TimeoutError``
    once ``timeout`` seconds passed.

    Exceptions from the condition count as "not yet" (a server still starting refuses
    connections); the last one is named if the deadline passes.
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
            raise TimeoutError(f"{what}: not true after {timeout:g} s"
                               + (f" (last error: {last_error})" if last_error else ""))
        time.sleep(interval)


# ------------------------------------------------------------------ child processes

def _start_time(pid: int) -> int | None:
    """When ``pid`` started (clock ticks after boot), None if no such process runs (a zombie, an
    exited child not yet reaped, counts as gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return None if fields[0] in ("Z", "X") else int(fields[19])


class ChildProcess:
    """A server we started: in a session (process group) of its own, stdout and stderr appended
    to ``log``, working in ``cwd`` (default: the log's folder, so whatever it drops there, e.g.
    a crash dump, stays out of the source tree). ``port``: the one it serves on, if any;
    ``extra``: more of its ports or settings that callers want to look up later.

    With a ``pid_file`` it outlives this Python process if not stopped (the local platform of
    ``scripts/run-local.sh``): the file names its pid and start time, and :meth:`adopt` finds it
    again from another process, never a process that got the pid since.
    """

    def __init__(self, name: str, argv: Sequence[str], log: Path, env: Mapping[str, str] | None = None,
                 cwd: Path | None = None, port: int | None = None, pid_file: Path | None = None):
        self.name = name
        self.log = log
        self.port = port
        self.extra: dict = {}
        self.pid_file = pid_file
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("ab") as out:
            self.popen: subprocess.Popen | None = subprocess.Popen(
                list(argv), stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                cwd=cwd or log.parent, env={**os.environ, **(env or {})}, start_new_session=True)
        self._pid = self.popen.pid
        self._started = _start_time(self._pid)
        if pid_file:
            pid_file.parent.mkdir(parents=True, exist_ok=True)
            pid_file.write_text(f"{self._pid} {self._started}\n")

    @classmethod
    def adopt(cls, name: str, pid_file: Path, log: Path, port: int | None = None) -> "ChildProcess | None":
        """The running process ``pid_file`` names (started by another run of this package), or
        None: no file, or its process is gone (a pid reused since has another start time)."""
        try:
            pid, started = (int(field) for field in pid_file.read_text().split())
        except (OSError, ValueError):
            return None
        if _start_time(pid) != started:
            return None
        process = cls.__new__(cls)
        process.name, process.log, process.port, process.extra = name, log, port, {}
        process.pid_file, process.popen, process._pid, process._started = pid_file, None, pid, started
        return process

    @property
    def pid(self) -> int:
        return self._pid

    @property
    def returncode(self) -> int | None:
        return self.popen.returncode if self.popen else None

    def alive(self) -> bool:
        if self.popen:
            return self.popen.poll() is None
        return _start_time(self._pid) == self._started

    def await_ready(self, probe: Callable[[], object], timeout: float) -> "ChildProcess":
        """Waits until ``probe`` holds; ``PlatformError`` (with the log's end) if the process
        exits first or ``timeout`` seconds pass."""
        try:
            wait_until(lambda: not self.alive() or probe(), timeout, f"{self.name} ready")
        except TimeoutError as error:
            raise PlatformError(f"{self.name} not ready after {timeout:g} s ({error})"
                                f"{self.log_end()}") from None
        if not self.alive():
            raise PlatformError(f"{self.name} exited with {self.returncode} during start-up"
                                f"{self.log_end()}")
        return self

    def signal(self, sig: int) -> None:
        """Signals the process group this process leads: the process and the children it
        started (RabbitMQ's Erlang VM), never anything we did not start."""
        try:
            os.killpg(self._pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def _wait(self, timeout: float) -> bool:
        """True once the process has exited (within ``timeout`` seconds)."""
        if self.popen:
            try:
                self.popen.wait(timeout)
                return True
            except subprocess.TimeoutExpired:
                return False
        try:
            wait_until(lambda: not self.alive(), timeout, f"{self.name} exited", interval=0.1)
            return True
        except TimeoutError:
            return False

    def stop(self, grace: float = 40.0) -> int | None:
        """SIGTERM (a graceful stop: Spring Boot drains in-flight work), SIGKILL after ``grace``
        seconds. Returns the exit status (None for an adopted process: not our child)."""
        if self.alive():
            self.signal(signal.SIGTERM)
            if not self._wait(grace):
                self.signal(signal.SIGKILL)
                self._wait(10)
        elif self.popen:
            # The leader is gone; children it left in its group (a daemonised server) may not be.
            self.signal(signal.SIGTERM)
        if self.pid_file:
            self.pid_file.unlink(missing_ok=True)
        return self.returncode

    def tail(self, lines: int = 30) -> str:
        """The log's last lines, Java stack frames left out (the exception's message stays)."""
        try:
            text = self.log.read_text(errors="replace").splitlines()
        except OSError as error:
            return f"(no log: {error})"
        return "\n".join([line for line in text
                          if not line.lstrip().startswith(("at ", "... "))][-lines:])

    def log_end(self) -> str:
        return f"; see {self.log}; its end:\n{self.tail(25)}"


# ------------------------------------------------------------------ Java services

def find_java() -> str:
    """A JDK 25+ ``java`` (``JAVA_HOME`` first, then /usr/lib/jvm), as scripts/lib/common.sh does."""
    candidates = ([os.environ["JAVA_HOME"]] if os.environ.get("JAVA_HOME") else []) + \
        ["/usr/lib/jvm/temurin-25-jdk-amd64"] + sorted(glob.glob("/usr/lib/jvm/*"))
    for home in candidates:
        java = Path(home) / "bin" / "java"
        release = Path(home) / "release"
        if not (os.access(java, os.X_OK) and release.is_file()):
            continue
        for line in release.read_text(errors="replace").splitlines():
            if line.startswith("JAVA_VERSION="):
                major = line.split("=", 1)[1].strip('"').split(".")[0]
                if major.isdigit() and int(major) >= 25:
                    return str(java)
    raise PlatformError("no JDK 25 or newer found (JAVA_HOME or /usr/lib/jvm/*)")


def module_dir(module: str, root: Path | None = None) -> Path:
    """The folder of a Maven module: deployables in services/, test doubles in testing/."""
    root = root or repository_root()
    if module in ("provider-sandbox", "test-support"):
        return root / "testing" / module
    if module in ("contract", "store"):
        return root / "libs" / module
    return root / "services" / module


def service_jar(service: str, root: Path | None = None) -> Path:
    """The executable jar ``mvn package`` builds for a service (Spring Boot, classifier exec)."""
    root = root or repository_root()
    folder = module_dir(service, root)
    jars = sorted((folder / "target").glob(f"{service}-*-exec.jar"))
    if not jars:
        raise PlatformError(
            f"no executable jar for {service} in {folder.relative_to(root)}/target: build it first "
            f"(mvn -B -q package -DskipTests -pl :{service} -am)")
    return jars[-1]


def build_jars_if_missing(services: Sequence[str], root: Path | None = None,
                          say: Callable[[str], None] = print) -> None:
    """Builds the services' executable jars (``mvn package -DskipTests``) unless all exist."""
    root = root or repository_root()
    try:
        for service in services:
            service_jar(service, root)
        return
    except PlatformError:
        pass
    say("==> building the services (mvn -B -q package -DskipTests)")
    modules = ",".join(f":{service}" for service in services)
    if subprocess.run(["mvn", "-B", "-q", "package", "-DskipTests", "-pl", modules, "-am"],
                      cwd=root).returncode != 0:
        raise PlatformError("build failed")
