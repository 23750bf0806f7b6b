"""The child-process helpers the load runs and the KEDA scenario share (no servers started)."""

from __future__ import annotations

import os
import signal
import socket
import sys

import pytest

from herald_load.processes import ChildProcess, PlatformError, _ephemeral_low, free_port, wait_until


def test_free_ports_lie_below_the_ephemeral_range_and_are_handed_out_once():
    ports = [free_port() for _ in range(50)]

    assert len(set(ports)) == len(ports)
    assert all(port < _ephemeral_low() for port in ports)
    with socket.socket() as server:      # and really free: a server can bind one
        server.bind(("127.0.0.1", ports[0]))


def test_wait_until_returns_the_first_truthy_value_and_treats_exceptions_as_not_yet():
    calls = iter([ConnectionRefusedError(), None, {"ready": True}])

    def probe():
        value = next(calls)
        if isinstance(value, Exception):
            raise value
        return value

    assert wait_until(probe, 5, "probe", interval=0.01) == {"ready": True}


def test_wait_until_names_the_last_error_when_it_gives_up():
    def refuse():
        raise ConnectionRefusedError("nobody home")

    with pytest.raises(TimeoutError, match="nobody home"):
        wait_until(refuse, 0.05, "probe", interval=0.01)


def test_a_process_that_exits_during_start_up_fails_at_once_with_its_log(tmp_path):
    process = ChildProcess("early-exit", [sys.executable, "-c", "print('bad config'); raise SystemExit(3)"],
                           tmp_path / "early.log")

    with pytest.raises(PlatformError, match="(?s)exited with 3.*bad config"):
        process.await_ready(lambda: False, 60)


def test_stop_ends_the_whole_process_group_sigkill_after_the_grace(tmp_path):
    # A parent that ignores SIGTERM, with a child in its group: both must go.
    script = ("import signal, subprocess, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
              "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
              "print(child.pid, flush=True); time.sleep(60)")
    process = ChildProcess("stubborn", [sys.executable, "-c", script], tmp_path / "stubborn.log")
    child = int(wait_until(lambda: process.log.read_text().strip(), 10, "child pid", interval=0.05))

    status = process.stop(grace=0.5)

    assert status == -signal.SIGKILL
    wait_until(lambda: not _running(child), 5, "child gone", interval=0.05)
    assert process.log.parent == tmp_path


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie child (its parent killed, not yet reaped by init) counts as gone.
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split()[2] != "Z"
    except OSError:
        return False
