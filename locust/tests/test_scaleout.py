from __future__ import annotations

import json

from herald_load.scaleout import (SCENARIOS, ScaleOutSettings, completed, locust_command,
                                  run_local, write_meta)


def test_a_folder_is_complete_only_once_its_meta_json_says_so(tmp_path):
    folder = tmp_path / "n=1"
    folder.mkdir()
    assert not completed(folder)
    (folder / "meta.json").write_text(json.dumps({"n": 1}))
    assert not completed(folder)

    write_meta(folder, {"n": 1, "complete": True})

    assert completed(folder)
    assert not (folder / "meta.json.tmp").exists()


def test_resume_skips_every_complete_n_without_starting_anything(tmp_path):
    run = tmp_path / "run"
    for n in (1, 2):
        (run / f"n={n}").mkdir(parents=True)
        write_meta(run / f"n={n}", {"n": n, "complete": True})
    lines = []

    measured = run_local(run, [1, 2], ScaleOutSettings(), say=lines.append)

    assert measured == []
    assert lines == [f"N = 1: already complete in {run / 'n=1'}, skipped",
                     f"N = 2: already complete in {run / 'n=2'}, skipped"]


def test_locust_writes_the_full_history_the_capacity_model_reads(tmp_path):
    command = locust_command(SCENARIOS["gateway"], tmp_path / "locust", 2, 150, "http://h:1")

    assert "--csv-full-history" in command
    assert command[command.index("--csv") + 1] == str(tmp_path / "locust")
    assert command[command.index("-t") + 1] == "150s"
    assert {"DeliveryMonitor", "BacklogFeeder"} <= set(command)


def test_same_load_per_replica_at_every_n():
    gateway = ScaleOutSettings(service="gateway")
    dispatcher = ScaleOutSettings(service="dispatcher", users_per_replica=16)

    assert gateway.users(1) == gateway.users(5) == 2   # the backlog, not users, scales with N
    assert [dispatcher.users(n) for n in (1, 2, 3)] == [16, 32, 48]
    assert gateway.gateway_args()["herald.gateway.max-in-flight"] == 16
