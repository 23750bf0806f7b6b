"""The fan-out profile's tables and flame graphs, from ``jfr print`` text and ``INFO commandstats`` (no servers started)."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from pathlib import Path

from herald_load.bench.profile import area, parse_stacks, render, render_redis, thread_groups, threads, write

JFR_PRINT = """jdk.CPUTimeSample {
  startTime = 06:04:01.123 (2026-11-24)
  failed = false
  samplingPeriod = 10.0 ms
  biased = false
  eventThread = "lettuce-epollEventLoop-6-1" (javaThreadId = 52)
  stackTrace = [
    reactor.core.publisher.FluxFlatMap$FlatMapMain.drainLoop() line: 812
    dev.herald.gateway.delivery.BatchDelivery.send(BatchDelivery$Work, int) line: 150
    java.lang.Thread.run() line: 1474
  ]
}

jdk.CPUTimeSample {
  startTime = 06:04:01.133 (2026-11-24)
  stackTrace = [
    io.netty.channel.epoll.Native.epollWait(FileDescriptor, long, int, int) line: 220
    java.lang.Thread.run() line: 1474
    ...
  ]
}
"""


def test_stacks_are_read_innermost_first_without_line_numbers():
    stacks = parse_stacks(JFR_PRINT)

    assert stacks == [["reactor.core.publisher.FluxFlatMap$FlatMapMain.drainLoop()",
                       "dev.herald.gateway.delivery.BatchDelivery.send(BatchDelivery$Work, int)",
                       "java.lang.Thread.run()"],
                      ["io.netty.channel.epoll.Native.epollWait(FileDescriptor, long, int, int)",
                       "java.lang.Thread.run()"]]


def test_a_page_counts_self_and_total_samples_by_frame_and_area():
    page = render("gateway", parse_stacks(JFR_PRINT), "Fan-out")

    assert "2 CPU samples" in page
    assert "| `Reactor` | 1 | 50.0% |" in page
    assert "| `java.lang.Thread.run()` | 2 | 100.0% |" in page      # total: on both stacks
    assert "| `dev.herald.gateway.delivery.BatchDelivery.send(BatchDelivery$Work, int)` | 1 | 50.0% |" in page
    assert area("reactor.netty.http.client.HttpClient.post()") == "Reactor Netty"


def test_redis_commands_are_listed_by_time_per_notification():
    stats = ("# Commandstats\r\ncmdstat_hget:calls=100,usec=50,usec_per_call=0.50,rejected_calls=0,failed_calls=0\r\n"
             "cmdstat_fcall:calls=4,usec=400,usec_per_call=100.00,rejected_calls=0,failed_calls=0\r\n")

    lines = render_redis(stats, 100, "Fan-out").splitlines()
    rows = [line for line in lines if line.startswith("| fcall") or line.startswith("| hget")]

    assert rows == ["| fcall | 4 | 0.040 | 400 | 100.00 | 4.00 |", "| hget | 100 | 1.000 | 50 | 0.50 | 0.50 |"]


def test_each_page_names_the_command_that_regenerates_it():
    assert "`scripts/bench.sh fanout --profile`" in render("gateway", parse_stacks(JFR_PRINT), "Fan-out")
    assert "`scripts/bench.sh accept --profile`" in render("dispatcher", parse_stacks(JFR_PRINT), "Accept",
                                                           benchmark="accept")
    assert "`scripts/bench.sh accept --profile`" in render_redis("", 1, "Accept", "accept")


def test_the_redis_page_counts_per_unit_of_its_benchmark():
    stats = "cmdstat_fcall:calls=2,usec=300,usec_per_call=150.00,rejected_calls=0,failed_calls=0\r\n"

    page = render_redis(stats, 1000, "Bulk import", "import")

    assert "| command | calls | calls per registration | µs total | µs per call | µs per registration |" in page
    assert "| fcall | 2 | 0.002 | 300 | 150.00 | 0.30 |" in page
    assert "`scripts/bench.sh import --profile`" in page
    assert "calls per message" in render_redis(stats, 1, "Device receipts", "cm-delivery")


def test_a_page_links_its_flame_graph():
    assert "Flame graph: [fanout-gateway.svg](fanout-gateway.svg)" in render("gateway", parse_stacks(JFR_PRINT), "Fan-out")
    assert "[accept-dispatcher.svg](accept-dispatcher.svg)" in render("dispatcher", [], "Accept", benchmark="accept")


class Recordings:
    """Stands in for a Recorder: the same two samples for every service, no Redis, no thread CPU."""

    thread_cpu: dict[str, dict[str, float]] = {}

    def samples(self, recording: Path) -> list[list[str]]:
        return parse_stacks(JFR_PRINT)

    def redis_commandstats(self) -> str:
        return ""


def test_write_puts_a_flame_graph_next_to_each_page(tmp_path):
    recordings = {"gateway": tmp_path / "gateway.jfr", "dispatcher": tmp_path / "dispatcher.jfr"}

    summary = write(Recordings(), recordings, "fanout", 10, "Fan-out", tmp_path / "perf")

    assert sorted(path.name for path in (tmp_path / "perf").iterdir()) == [
        "fanout-dispatcher.md", "fanout-dispatcher.svg", "fanout-gateway.md", "fanout-gateway.svg"]
    graph = ET.parse(tmp_path / "perf" / "fanout-gateway.svg").getroot()
    assert graph.find("{http://www.w3.org/2000/svg}text").text == "Fan-out: gateway"
    assert "all (2 samples)" in (tmp_path / "perf" / "fanout-gateway.svg").read_text()
    assert "[fanout-gateway.svg](fanout-gateway.svg)" in (tmp_path / "perf" / "fanout-gateway.md").read_text()
    assert ".svg" in summary[-1]


def fake_proc(root: Path, pid: int, tasks: dict[int, tuple[str, int, int]]) -> Path:
    """A /proc with one process whose threads have the given names and user and system ticks."""
    for tid, (name, user, system) in tasks.items():
        task = root / str(pid) / "task" / str(tid)
        task.mkdir(parents=True, exist_ok=True)
        fields = ["S", "1", "1", "1", "0", "-1", "0", "0", "0", "0", "0", str(user), str(system), "0", "0"]
        (task / "stat").write_text(f"{tid} ({name}) " + " ".join(fields) + "\n")
    return root


def test_threads_are_read_from_proc_with_user_and_system_time(tmp_path):
    tick = os.sysconf("SC_CLK_TCK")
    proc = fake_proc(tmp_path, 7, {7: ("java", 0, 0), 8: ("C2 CompilerThre", 3 * tick, tick), 9: ("a) b", tick, 0)})

    assert threads(7, proc) == {7: ("java", 0.0), 8: ("C2 CompilerThre", 4.0), 9: ("a) b", 1.0)}


def test_thread_cpu_is_grouped_by_name_without_numbers_and_counts_new_threads_from_zero():
    before = {1: ("GC Thread#0", 2.0), 2: ("GC Thread#1", 1.0), 3: ("nioEventLoopGro", 5.0), 4: ("gone", 9.0),
              5: ("old name", 4.0)}
    after = {1: ("GC Thread#0", 2.5), 2: ("GC Thread#1", 1.25), 3: ("nioEventLoopGro", 8.0), 6: ("GC Thread#2", 0.25),
             5: ("reused", 0.5), 7: ("idle", 0.0)}

    assert thread_groups(before, after) == {"GC Thread": 1.0, "nioEventLoopGro": 3.0, "reused": 0.5}


def test_a_page_shows_cpu_by_thread_when_it_was_measured():
    page = render("gateway", parse_stacks(JFR_PRINT), "Fan-out", thread_cpu={"C2 CompilerThread": 3.0, "GC Thread": 1.0})

    assert "4.0 s of CPU in the window" in page
    lines = page.splitlines()
    assert lines.index("| `C2 CompilerThread` | 3.00 | 75.0% |") < lines.index("| `GC Thread` | 1.00 | 25.0% |")
    assert "CPU by thread" not in render("gateway", parse_stacks(JFR_PRINT), "Fan-out")
