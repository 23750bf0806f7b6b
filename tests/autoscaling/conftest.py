"""The scenario's helper modules sit beside the test; put their folder on the import path."""

import importlib.util
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

# The platform's launcher is locust/'s herald_load package (scripts/k8s/test-keda.sh installs it).
if importlib.util.find_spec("herald_load") is None:
    raise ImportError("herald_load is not installed in this venv: pip install --no-deps -e locust "
                      "(scripts/k8s/test-keda.sh does)")


def _stop_on_sigterm(signum, frame):
    # .ci/run ends a run that outlives it with SIGTERM to the test's process group. The scenario's
    # servers run in process groups of their own (so that each can be stopped with its children):
    # turn SIGTERM into an interrupt so that the fixture's teardown stops them.
    raise KeyboardInterrupt(f"signal {signum}")


signal.signal(signal.SIGTERM, _stop_on_sigterm)
