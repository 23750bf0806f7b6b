"""The fan-out benchmark's settling: the measured window starts only once the services are quiet,
read from real processes' CPU time in /proc."""

from __future__ import annotations

import select
import subprocess
import sys
import time

from herald_load.bench.fanout import proc_cpu_seconds, settle

# Spins until it has used the given CPU seconds, then idles until killed.
BUSY_THEN_IDLE = """
import sys, time
while time.process_time() < float(sys.argv[1]):
    pass
print("idle", flush=True)
time.sleep(600)
"""


def _child(cpu_seconds: float) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", BUSY_THEN_IDLE, str(cpu_seconds)], stdout=subprocess.PIPE, text=True)


def test_settling_waits_out_a_busy_service_then_two_quiet_seconds():
    busy = _child(1.5)
    try:
        waited = settle({"busy": busy.pid}, quiet_share=0.08, quiet_seconds=2, longest=30)
        # It had finished spinning (and said so) before settling ended, and at least one busy second was seen.
        assert select.select([busy.stdout], [], [], 0)[0] == [busy.stdout]
        assert busy.stdout.readline() == "idle\n"
        assert waited >= 2.0 + 1.0
        assert proc_cpu_seconds(busy.pid) > 1.0
    finally:
        busy.kill()
        busy.wait()


def test_quiet_services_settle_after_the_quiet_seconds_and_a_busy_one_at_the_longest():
    idle = _child(0.0)
    spinning = _child(600.0)
    try:
        assert idle.stdout.readline() == "idle\n"
        started = time.monotonic()
        assert 2.0 <= settle({"idle": idle.pid}, quiet_seconds=2) < 3.5
        assert 3.0 <= settle({"spinning": spinning.pid}, quiet_seconds=2, longest=3.0) < 4.5
        assert time.monotonic() - started < 9
    finally:
        for child in (idle, spinning):
            child.kill()
            child.wait()


def test_targets_are_printed_only_beside_the_workload_they_were_set_for():
    from herald_load.bench.fanout import target_notes

    elapsed, cpu = target_notes("fcm", 100_000)
    assert "warm <= 6 s" in elapsed and "cold <= 12 s" in elapsed and cpu == "; target <= 50 µs"
    for channel, count in (("webpush", 10_000), ("webpush", 100_000), ("fcm", 5_000)):
        elapsed, cpu = target_notes(channel, count)
        assert "<=" not in elapsed and cpu == "", (channel, count)
        assert f"{count:,} {channel}" in elapsed
