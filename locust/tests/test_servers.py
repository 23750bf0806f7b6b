"""The brokers as the local platform runs them, on a real server."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from herald_load.servers import Redis

pytestmark = pytest.mark.skipif(shutil.which("redis-server") is None,
                                reason="needs redis-server (scripts/install-deps.sh)")


@pytest.fixture
def redis(tmp_path):
    running = Redis(tmp_path / "redis", tmp_path / "redis.log").start()
    try:
        running.await_ready()
        yield running
    finally:
        running.stop()


def test_a_benchmark_apps_keys_are_removed_and_no_others(redis):
    cli = redis.cli()
    # More keys than one UNLINK takes, and keys of other apps whose ids share the prefix.
    subprocess.run([*cli, "eval", "for i=1,2500 do redis.call('set', 'dev:{bench-1}:d'..i, 'x') end", "0"],
                   check=True, capture_output=True)
    subprocess.run([*cli, "mset", "topic:{bench-1}:news", "x", "dev:{bench-10}:d", "x", "apikey:k", "x"],
                   check=True, capture_output=True)

    assert redis.unlink_matching("*{bench-1}*") == 2501
    left = subprocess.run([*cli, "--scan"], check=True, capture_output=True, text=True).stdout.split()
    assert sorted(left) == ["apikey:k", "dev:{bench-10}:d"]


def test_no_automatic_aof_rewrite_while_a_benchmark_measures(redis):
    def setting():
        return subprocess.run([*redis.cli(), "config", "get", "auto-aof-rewrite-percentage"], check=True,
                              capture_output=True, text=True).stdout.split()[-1]

    before = setting()
    assert before != "0"   # Redis's own rewrites are on outside a benchmark
    with redis.aof_rewrites_held():
        assert setting() == "0"
    assert setting() == before
