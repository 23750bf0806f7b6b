"""A run stopped by SIGTERM (.ci/run's timeout) or Ctrl-C tears the node down, and a second signal
during that teardown does not abort it (testbed.tear_down_on_sigterm). No node is needed: a child
Python process stands in for a suite, its teardown held until the test lets it finish."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]

# The stand-in suite: says "ready", blocks until interrupted, then "tearing down", blocks again
# (the second signal arrives here), and says "torn down" when the test writes a line.
SUITE = f"""
import sys
sys.path.insert(0, {str(TESTS)!r})
from testbed import tear_down_on_sigterm
tear_down_on_sigterm()
try:
    print("ready", flush=True)
    sys.stdin.readline()
    print("not interrupted", flush=True)
finally:
    print("tearing down", flush=True)
    sys.stdin.readline()
    print("torn down", flush=True)
"""


@pytest.mark.parametrize("first, second", [(signal.SIGTERM, signal.SIGTERM), (signal.SIGINT, signal.SIGTERM),
                                           (signal.SIGTERM, signal.SIGINT)])
def test_a_second_signal_does_not_abort_the_teardown(first, second):
    suite = subprocess.Popen([sys.executable, "-c", SUITE], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        assert suite.stdout.readline() == "ready\n"
        suite.send_signal(first)
        assert suite.stdout.readline() == "tearing down\n"
        suite.send_signal(second)
        suite.stdin.write("go on\n")
        suite.stdin.flush()
        assert suite.stdout.readline() == "torn down\n"
        _, errors = suite.communicate(timeout=30)
    finally:
        suite.kill()
    assert "KeyboardInterrupt" in errors  # the first signal ended the suite as an interrupt
    assert f"signal {int(second)} ignored: the teardown is under way" in errors
    assert suite.returncode != 0
