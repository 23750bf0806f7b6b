"""Fixtures of the chart tests. All are session fixtures made on first use: a test that asks for none
of them (e.g. one that only reads files) runs without the testbed's tools or a control plane; the
static ones need the tools (helm), the rest one control plane that all of them share.

Usage (scripts/k8s/test-charts.sh builds the tools and runs this):
  pytest tests/charts [--scrapes-from DIR]     HERALD_K8S_KEEP=true keeps the control plane running
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# The control plane's module (tests/testbed.py), shared with tests/autoscaling.
sys.path.insert(1, str(Path(__file__).resolve().parents[1]))

from releases import (CHARTS, CHARTS_DIR, NAMESPACE, ROOT, API_VERSIONS, Cluster, attempt,  # noqa: E402
                      ci_scenarios, helm_test, install, roll_back, scenario_id, uninstall, upgrade)
from sharedcluster import attach  # noqa: E402
from testbed import ControlPlane, run, tear_down_on_sigterm, use_tools  # noqa: E402

tear_down_on_sigterm()  # the control plane goes down with the session


def pytest_addoption(parser):
    parser.addoption("--scrapes-from", type=Path, default=ROOT,
                     help="a checkout whose */*/target/metrics-scrape/*.prom (left by mvn verify) the metric-name "
                          "test reads (default: this one)")


@pytest.fixture(scope="session")
def tools():
    """The testbed's helm, kubectl and binaries first on PATH; its cache folders."""
    return use_tools(ROOT)


@pytest.fixture(scope="session")
def helm_charts(tools) -> Path:
    """The charts folder, with each chart's dependencies (the library chart) built."""
    for chart in CHARTS:
        if "\ndependencies:" in "\n" + (CHARTS_DIR / chart / "Chart.yaml").read_text():
            run(["helm", "dependency", "build", str(CHARTS_DIR / chart)])
    return CHARTS_DIR


@pytest.fixture(scope="session")
def rendered(helm_charts, tmp_path_factory) -> dict[str, Path]:
    """Every CI scenario rendered by `helm template`, by scenario id."""
    folder = tmp_path_factory.mktemp("rendered")
    manifests = {}
    for chart, values in ci_scenarios():
        manifest = folder / f"{scenario_id(chart, values)}.yaml"
        manifest.write_text(run(["helm", "template", f"herald-{chart}", str(helm_charts / chart), "-n", NAMESPACE,
                                 "-f", str(values), *API_VERSIONS]))
        manifests[scenario_id(chart, values)] = manifest
    return manifests


@pytest.fixture(scope="session")
def cluster(helm_charts, tmp_path_factory):
    """A control plane with three kwok nodes and the operators' CRDs, and the releases' namespace: the
    run's shared cluster (tests/sharedcluster.py; its real node is tainted, so the releases' pods land
    on the kwok nodes), or one of the session's own."""
    shared = attach()
    if shared is not None:
        shared.kube.kubectl("create", "namespace", NAMESPACE)
        yield Cluster(shared.kube)
        return
    directory = tmp_path_factory.mktemp("k8s")
    control_plane = ControlPlane(ROOT, directory, {"HERALD_K8S_NODES": "3"})
    try:
        kube = control_plane.up()
        kube.kubectl("create", "namespace", NAMESPACE)
        yield Cluster(kube)
    finally:
        if os.environ.get("HERALD_K8S_KEEP") == "true":
            print(f"\nkept the test cluster: source {directory / 'env'}")
        else:
            control_plane.down()


# The releases' lifecycle, one step each; every step comes after the one before it (releases.py).

@pytest.fixture(scope="session")
def dry_runs(cluster, rendered):
    """Every rendered scenario through the API server's validation (server-side dry run), before
    anything is installed."""
    return {name: cluster.kubectl("apply", "--dry-run=server", "--validate=strict", "-f", str(manifest))
            for name, manifest in rendered.items()}


def lifecycle_step(name: str, action, after: str):
    """The session fixture `name`: `action` on the cluster, run once the step `after` has run."""

    def step(request, cluster):
        request.getfixturevalue(after)
        return action(cluster)

    step.__doc__ = action.__doc__
    return pytest.fixture(step, scope="session", name=name)


installed = lifecycle_step("installed", install, after="dry_runs")
helm_tested = lifecycle_step("helm_tested", helm_test, after="installed")
upgraded = lifecycle_step("upgraded", upgrade, after="helm_tested")
rolled_back = lifecycle_step("rolled_back", roll_back, after="upgraded")
uninstalled = lifecycle_step("uninstalled", uninstall, after="rolled_back")


@pytest.fixture(scope="session")
def lint(helm_charts):
    """`helm lint --strict` of a chart with extra arguments (values files, --set)."""
    return lambda chart, *args: attempt("helm", "lint", "--strict", str(helm_charts / chart), *args)
