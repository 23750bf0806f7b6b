"""`helm test` of every release (a kwok Stage of the testbed marks the test pods Succeeded: this
proves the test pods' objects and wiring, not their containers)."""

import pytest

from releases import RELEASES


@pytest.mark.parametrize("release", RELEASES)
def test_helm_test(helm_tested, release):
    assert helm_tested[release].ok, helm_tested[release]
