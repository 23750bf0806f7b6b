"""The scenario's helper modules sit beside the test, the cluster's (testbed.py, sharedcluster.py, ...)
in tests/: put both folders on the import path.

The suite uses the real-node fixtures of tests/conftest.py (`node`, `platform`, ...) and starts KEDA
once (`keda`)."""

import importlib.util
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(TESTS))

# The platform's launcher is locust/'s herald_load package (scripts/k8s/test-venv.sh installs it).
if importlib.util.find_spec("herald_load") is None:
    raise ImportError("herald_load is not installed in this venv: pip install --no-deps -e locust "
                      "(scripts/k8s/test-venv.sh does)")

from testbed import run, tear_down_on_sigterm  # noqa: E402

tear_down_on_sigterm()  # the scenario's servers run in process groups of their own


@pytest.fixture(scope="session")
def keda(node, tmp_path_factory):
    """KEDA's operator and metrics adapter for the cluster of `node`, as host processes (cluster.Keda):
    the adapter at the node's bridge address (the API server binds that address too, so the
    aggregation layer reaches it without a network namespace), the operator in a mount namespace
    whose resolv.conf names the cluster's DNS, so it reads the management API at the in-cluster
    Service name push-platform's Secret holds."""
    from keda import Keda, cluster_dns_prefix
    from realnode import NODE_IP

    work = tmp_path_factory.mktemp("keda")
    binaries = Path(run(["bash", str(TESTS.parent / "scripts/k8s/keda-build.sh")]).strip().splitlines()[-1])
    started = Keda(binaries, work, node.kube, adapter_ip=NODE_IP, metrics_service_ip="127.0.0.1",
                   operator_prefix=cluster_dns_prefix(work / "dns", NODE_IP))
    try:
        started.start()
        yield started
    finally:
        started.stop()
