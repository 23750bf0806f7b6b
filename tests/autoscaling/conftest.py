"""The scenario's helper modules sit beside the test, the control plane's (testbed.py) in tests/:
put both folders on the import path."""

import importlib.util
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[1]))

# The platform's launcher is locust/'s herald_load package (scripts/k8s/test-venv.sh installs it).
if importlib.util.find_spec("herald_load") is None:
    raise ImportError("herald_load is not installed in this venv: pip install --no-deps -e locust "
                      "(scripts/k8s/test-venv.sh does)")

from testbed import tear_down_on_sigterm  # noqa: E402

tear_down_on_sigterm()  # the scenario's servers run in process groups of their own
