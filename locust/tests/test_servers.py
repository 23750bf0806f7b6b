"""The brokers as the local platform runs them, on a real server."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from herald_load.servers import Redis


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server (scripts/install-deps.sh)")
def test_a_benchmark_apps_keys_are_removed_and_no_others(tmp_path):
    redis = Redis(tmp_path / "redis", tmp_path / "redis.log").start()
    try:
        redis.await_ready()
        cli = ["redis-cli", "-p", str(redis.port)]
        # More keys than one UNLINK takes, and keys of other apps whose ids share the prefix.
        subprocess.run([*cli, "eval", "for i=1,2500 do redis.call('set', 'dev:{bench-1}:d'..i, 'x') end", "0"],
                       check=True, capture_output=True)
        subprocess.run([*cli, "mset", "topic:{bench-1}:news", "x", "dev:{bench-10}:d", "x", "apikey:k", "x"],
                       check=True, capture_output=True)

        assert redis.unlink_matching("*{bench-1}*") == 2501
        left = subprocess.run([*cli, "--scan"], check=True, capture_output=True, text=True).stdout.split()
        assert sorted(left) == ["apikey:k", "dev:{bench-10}:d"]
    finally:
        redis.stop()


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server (scripts/install-deps.sh)")
def test_the_append_only_file_is_rewritten_before_a_measurement(tmp_path):
    redis = Redis(tmp_path / "redis", tmp_path / "redis.log").start()
    try:
        redis.await_ready()
        cli = ["redis-cli", "-p", str(redis.port)]
        subprocess.run([*cli, "eval", "for i=1,20000 do redis.call('set', 'k'..i, 'x') end", "0"],
                       check=True, capture_output=True)

        def persistence():
            text = subprocess.run([*cli, "info", "persistence"], check=True, capture_output=True, text=True).stdout
            return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)

        assert persistence()["aof_enabled"] == "1"   # the pinned settings, as the local run's Redis
        rewrites = int(persistence().get("aof_rewrites", "0"))
        redis.rewrite_aof()

        after = persistence()
        assert int(after["aof_rewrites"]) == rewrites + 1 and after["aof_rewrite_in_progress"] == "0"
    finally:
        redis.stop()
