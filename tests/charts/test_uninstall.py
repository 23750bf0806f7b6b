"""`helm uninstall` leaves nothing behind but the Secrets marked helm.sh/resource-policy=keep."""

from __future__ import annotations

import pytest

from releases import RELEASES

KEPT = ["secret/herald-app", "secret/herald-rabbitmq-connection", "secret/herald-redis"]


@pytest.mark.parametrize("release", list(reversed(RELEASES)))
def test_uninstall(uninstalled, release):
    assert uninstalled.uninstalls[release].ok, uninstalled.uninstalls[release]


def test_only_the_kept_secrets_are_left(uninstalled):
    assert uninstalled.labelled_left == KEPT


def test_no_pods_left(uninstalled):
    """Pods go by the Deployments' garbage collection, after the uninstall."""
    assert uninstalled.pods_deleted.ok and uninstalled.pods_left == [], uninstalled.pods_deleted


def test_no_helm_release_left(uninstalled):
    assert uninstalled.releases_left.ok and uninstalled.releases_left.stdout.strip() == "", uninstalled.releases_left
