"""Redis's CPU per unit of work in the store's hot functions, each library on a Redis of its own.

``python -m herald_load.bench.functions [--count N] [--rounds R] [LIBRARY.lua ...]`` (default: the
store's ``herald.lua``). For each round and library, in turn: a fresh ``redis-server`` on a free
loopback port, the library loaded, then

- ``device_import``: N new devices in batches of 500, N other new devices, and those again
  (idempotent), as the bulk import sends them;
- ``device_read``: the N devices read in pages of 500, as a fan-out's audience expansion does;
- ``outcome_record_all``: N targets of one message recorded in groups of 30, the size a fan-out's
  groups reach with the outcome linger.

It prints the server's CPU µs (from /proc) per registration, per device read and per target. The
JVMs, RabbitMQ and the sandbox are not running, so the figures move far less than a whole benchmark's
on a shared 2-core machine: give it two libraries (say ``git show REV:libs/store/...`` of an older
one beside the current) to compare a change. Standard library only.
"""
import argparse
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from ..processes import free_port
from .fanout import proc_cpu_seconds

LIBRARY = Path(__file__).resolve().parents[4] / "libs/store/src/main/resources/dev/herald/store/redis/herald.lua"
BATCH = 500
GROUP = 30


def command(*args) -> bytes:
    """One command in RESP."""
    out = [b"*%d\r\n" % len(args)]
    for arg in args:
        data = arg if isinstance(arg, bytes) else str(arg).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(out)


class Connection:
    """A blocking RESP client: enough for a benchmark's one command at a time."""

    def __init__(self, port: int):
        self.socket = socket.create_connection(("127.0.0.1", port), timeout=60)
        self.reader = self.socket.makefile("rb")

    def call(self, *args):
        self.socket.sendall(command(*args))
        return self.reply()

    def reply(self):
        line = self.reader.readline()
        kind, rest = line[:1], line[1:-2]
        if kind in (b"+", b":"):
            return rest
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind == b"$":
            size = int(rest)
            return None if size < 0 else self.reader.read(size + 2)[:-2]
        if kind == b"*":
            return [self.reply() for _ in range(int(rest))]
        raise RuntimeError(f"unexpected reply {line!r}")


def start_redis(port: int) -> subprocess.Popen:
    server = subprocess.Popen(["redis-server", "--port", str(port), "--save", "", "--appendonly", "no"],
                              stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            Connection(port).call("PING")
            return server
        except OSError:
            time.sleep(0.05)   # the server is still starting: nothing to wait on but its port
    server.kill()
    raise RuntimeError("redis-server did not start")


def measure(library: Path, count: int) -> dict[str, float]:
    """Redis CPU µs per unit for each step, on a Redis of its own."""
    port = free_port()
    server = start_redis(port)
    try:
        redis = Connection(port)
        redis.call("FUNCTION", "LOAD", "REPLACE", library.read_text())
        results = {}

        def timed(name, step):
            before = proc_cpu_seconds(server.pid)
            step()
            results[name] = (proc_cpu_seconds(server.pid) - before) / count * 1e6

        def import_devices(prefix):
            for start in range(0, count, BATCH):
                args = ["FCALL", "device_import", 1, "devseen:{app}", "tok:{app}:", "topic:{app}:", "dev:{app}:",
                        "devtopics:{app}:", int(time.time() * 1000)]
                for i in range(start, min(count, start + BATCH)):
                    args += [f"{prefix}-{i}", "fcm", f"{prefix}-token-{i}-{'x' * 100}", "", 1, "imported"]
                redis.call(*args)

        def read_devices():
            for start in range(0, count, BATCH):
                keys = [f"dev:{{app}}:a-{i}" for i in range(start, min(count, start + BATCH))]
                redis.call("FCALL", "device_read", len(keys), *keys, "channel", "token", "updatedAt")

        def record_outcomes():
            redis.call("HSET", "msg:{m}", "total", count, "expanded", "1")
            for start in range(0, count, GROUP):
                args = [3600, int(time.time() * 1000)]
                for i in range(start, min(count, start + GROUP)):
                    args += [f"fcm:a-token-{i}", i // BATCH, "sent", "", "0"]
                redis.call("FCALL", "outcome_record_all", 2, "msg:{m}", "done:{m}", *args)

        timed("import new", lambda: import_devices("a"))
        timed("import other new", lambda: import_devices("b"))
        timed("import again", lambda: import_devices("b"))
        timed("device_read", read_devices)
        timed("outcome_record_all", record_outcomes)
        return results
    finally:
        server.terminate()
        server.wait()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m herald_load.bench.functions", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("libraries", nargs="*", type=Path, default=[LIBRARY])
    p.add_argument("--count", type=int, default=100_000)
    p.add_argument("--rounds", type=int, default=2)
    a = p.parse_args(argv)
    print(f"Redis CPU µs per unit (registration, device read, target), {a.count} each; "
          f"load average {' '.join(f'{v:.2f}' for v in os.getloadavg())}", flush=True)
    for round_number in range(1, a.rounds + 1):
        for library in a.libraries:
            figures = measure(library, a.count)
            print(f"  round {round_number} {library.name:<20} "
                  + "  ".join(f"{name} {value:5.1f}" for name, value in figures.items()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
