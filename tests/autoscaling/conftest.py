"""The scenario's helper modules sit beside the test; put their folder on the import path."""

import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def _stop_on_sigterm(signum, frame):
    # .ci/run ends a run that outlives it with SIGTERM to the test's process group. The scenario's
    # servers run in process groups of their own (so that each can be stopped with its children):
    # turn SIGTERM into an interrupt so that the fixture's teardown stops them.
    raise KeyboardInterrupt(f"signal {signum}")


signal.signal(signal.SIGTERM, _stop_on_sigterm)
