"""Bulk import benchmark: N device registrations in one streamed NDJSON import.

Sends ``POST /v1/apps/<app>/device-imports`` with N FCM devices (one topic), the body streamed in
chunks (generated before the clock starts, so the client's Python is not measured), and prints the
wall time, registrations/s and the CPU µs per registration of each process given (read from /proc
over the import). Three imports, as the fan-out has a cold and a warm run: N new devices right after
the dispatcher's start (its JIT compiles during it), N other new devices (the target's case: a
running platform loads an audience), and that second import again (idempotent: every device
updated, none new). Target: 100,000 new registrations <= 5 s. Standard library only.
"""
import argparse
import http.client
import json
import os
import sys
import time

from . import fanout

CHUNK_LINES = 1000


def body_chunks(count, topic, prefix="import", token_padding=100):
    """The NDJSON body: FCM devices ``<prefix>-<i>`` on ``topic``, tokens padded towards a real
    token's length (FCM's are about 160 characters)."""
    padding = "-" + "x" * token_padding if token_padding else ""
    lines = (json.dumps({"deviceId": f"{prefix}-{i}", "channel": "fcm", "token": f"{prefix}-token-{i}{padding}",
                         "topics": [topic]}, separators=(",", ":")) for i in range(count))
    chunk, chunks = [], []
    for line in lines:
        chunk.append(line)
        if len(chunk) == CHUNK_LINES:
            chunks.append(("\n".join(chunk) + "\n").encode())
            chunk = []
    if chunk:
        chunks.append(("\n".join(chunk) + "\n").encode())
    return chunks


def run_import(host, port, app, key, chunks):
    connection = http.client.HTTPConnection(host, port, timeout=300)
    try:
        connection.request("POST", f"/v1/apps/{app}/device-imports", body=iter(chunks), encode_chunked=True,
                           headers={"Authorization": f"Bearer {key}", "Content-Type": "application/x-ndjson"})
        response = connection.getresponse()
        data = response.read()
    finally:
        connection.close()
    if response.status != 200:
        raise SystemExit(f"import failed: {response.status} {data[:500]!r}")
    return json.loads(data)


def main(argv=None, recorder=None):
    """Runs the three imports; ``recorder`` (a :class:`herald_load.bench.profile.Recorder`), if
    given, records the warm import of new devices."""
    p = argparse.ArgumentParser(prog="python -m herald_load.bench.imports", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--api", default="127.0.0.1:8080")
    p.add_argument("--app", required=True)
    p.add_argument("--key", required=True, help="API key of the app")
    p.add_argument("--count", type=int, default=100_000)
    p.add_argument("--topic", default="imported")
    p.add_argument("--pids", default="", help="name=pid,... of processes to report CPU for")
    a = p.parse_args(argv)
    host, port = a.api.split(":")
    pids = dict(item.split("=") for item in a.pids.split(",") if item)
    cold, warm = body_chunks(a.count, a.topic, "import"), body_chunks(a.count, a.topic, "import-warm")
    print(f"bulk import: {a.count} devices, {sum(map(len, cold)) / 2**20:.1f} MiB of NDJSON streamed", flush=True)
    ok = True
    for label, chunks, expect_new, profiled in (("cold: new devices, dispatcher just started", cold, True, False),
                                                ("warm: other new devices", warm, True, True),
                                                ("warm: the same import again (idempotent)", warm, False, False)):
        window = fanout.CpuWindow(pids, recorder if profiled else None)
        window.start()
        started = time.monotonic()
        report = run_import(host, int(port), a.app, a.key, chunks)
        elapsed = time.monotonic() - started
        window.stop()
        cpu = window.cpu
        print(f"--- {label}")
        print(f"  {report['imported']} imported ({report['created']} new, {report['updated']} updated), "
              f"{report['failed']} failed")
        print(f"  wall {elapsed:6.2f} s   {a.count / elapsed:8.0f} registrations/s   (target: 100,000 in <= 5 s)")
        for name, seconds in cpu.items():
            print(f"  {name:<17} cpu {seconds:6.2f} s  {seconds / a.count * 1e6:7.1f} µs per registration")
        print(f"  total cpu {sum(cpu.values()) / a.count * 1e6:.1f} µs per registration; "
              f"load average {' '.join(f'{v:.2f}' for v in os.getloadavg())}", flush=True)
        ok = ok and report["imported"] == a.count and report["failed"] == 0 \
            and report["created"] == (a.count if expect_new else 0)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
