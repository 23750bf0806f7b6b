"""The brokers as the local platform runs them, on a real server."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from herald_load.processes import repository_root
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


def test_a_benchmark_apps_messages_are_removed_through_its_list_and_no_others(redis):
    cli = redis.cli()
    # Two messages of the app with keys of every kind a message has; one of another app.
    subprocess.run([*cli, "zadd", "msgs:{bench-1}", "1", "m1", "2", "m2"], check=True, capture_output=True)
    for message in ("m1", "m2", "other"):
        subprocess.run([*cli, "mset", *[part for prefix in Redis.MESSAGE_KEY_PREFIXES
                                        for part in (f"{prefix}:{{{message}}}", "x")]],
                       check=True, capture_output=True)

    assert redis.unlink_messages_of("bench-1") == 2
    left = subprocess.run([*cli, "--scan"], check=True, capture_output=True, text=True).stdout.split()
    assert sorted(left) == sorted(["msgs:{bench-1}", *(f"{prefix}:{{other}}" for prefix in Redis.MESSAGE_KEY_PREFIXES)])


def test_the_message_key_prefixes_are_those_the_store_documents():
    # libs/store/README.md owns the key layout; a message key added there must be removed here too.
    table = (repository_root() / "libs" / "store" / "README.md").read_text()
    documented = re.findall(r"^\| `([a-z]+):\{<message>\}`", table, flags=re.MULTILINE)
    assert sorted(documented) == sorted(Redis.MESSAGE_KEY_PREFIXES)


def test_no_automatic_aof_rewrite_while_a_benchmark_measures(redis):
    def setting():
        return subprocess.run([*redis.cli(), "config", "get", "auto-aof-rewrite-percentage"], check=True,
                              capture_output=True, text=True).stdout.split()[-1]

    before = setting()
    assert before != "0"   # Redis's own rewrites are on outside a benchmark
    with redis.aof_rewrites_held():
        assert setting() == "0"
    assert setting() == before


def test_a_redis_loading_its_data_is_waited_for_beyond_the_start_timeout(redis):
    # About 100 MB of append-only file: loading it takes Redis longer than the start's timeout
    # below, during which it answers PING with -LOADING.
    subprocess.run([*redis.cli(), "eval", "for i = 1, ARGV[1] do redis.call('set', 'k' .. i, string.rep('x', 100)) end",
                    "0", "600000"], check=True, capture_output=True)
    redis.stop()
    redis.start()
    redis.await_ready(timeout=0.2, loading_timeout=120)
    assert redis.loading_seen
    assert subprocess.run([*redis.cli(), "dbsize"], check=True, capture_output=True, text=True).stdout.strip() == "600000"
