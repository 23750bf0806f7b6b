"""The MQTT device scenario's first connect: tried again when the server answers "Server unavailable"
(what a connection manager says when its session store is slow), not when it refuses the
credentials. The server here is a stand-in speaking just enough MQTT 3.1.1 (CONNECT, SUBSCRIBE,
PINGREQ) to script those answers; the connection manager's own refusals are its tests' business.
"""

from __future__ import annotations

import csv
import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
CONNACK_ACCEPTED, CONNACK_SERVER_UNAVAILABLE, CONNACK_NOT_AUTHORIZED = 0, 3, 5


def _read_packet(connection: socket.socket) -> tuple[int, bytes] | None:
    header = connection.recv(1)
    if not header:
        return None
    length, shift = 0, 0
    while True:
        byte = connection.recv(1)[0]
        length |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            break
    body = b""
    while len(body) < length:
        chunk = connection.recv(length - len(body))
        if not chunk:
            return None
        body += chunk
    return header[0] >> 4, body


class ScriptedBroker:
    """Answers the n-th CONNECT with ``answers[n]`` (the last one from then on); counts CONNECTs."""

    def __init__(self, answers: list[int]):
        self.answers, self.connects = answers, 0
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        with connection:
            while (packet := _read_packet(connection)) is not None:
                kind, body = packet
                if kind == 1:                                   # CONNECT
                    code = self.answers[min(self.connects, len(self.answers) - 1)]
                    self.connects += 1
                    connection.sendall(bytes([0x20, 2, 0, code]))
                    if code != CONNACK_ACCEPTED:
                        return
                elif kind == 8:                                 # SUBSCRIBE: grant QoS 1
                    connection.sendall(bytes([0x90, 3]) + body[:2] + bytes([1]))
                elif kind == 12:                                # PINGREQ
                    connection.sendall(bytes([0xD0, 0]))
                elif kind == 14:                                # DISCONNECT
                    return

    def close(self) -> None:
        self.server.close()


def _run_devices(answers: list[int], out: Path, seconds: int) -> tuple[int, dict[str, dict]]:
    """One device's Locust run against a broker answering its CONNECTs with ``answers``: how many
    CONNECTs the broker saw, and Locust's stats rows by entry name."""
    broker = ScriptedBroker(answers)
    try:
        rows = _run_locust(broker, out, seconds)
        return broker.connects, rows
    finally:
        broker.close()


def _run_locust(broker: ScriptedBroker, out: Path, seconds: int) -> dict[str, dict]:
    provisioned = {"app": "app-1", "api_key": "unused", "topics": {"devices": 1},
                   "mqtt_devices": [{"device": "d-1", "clientId": "d-1", "username": "app-1",
                                     "password": "secret", "topic": "apps/app-1/devices/d-1"}]}
    environment = {**os.environ, "HERALD_LOAD_PROVISIONED": json.dumps(provisioned),
                   "HERALD_MQTT_HOST": "127.0.0.1", "HERALD_MQTT_PORT": str(broker.port)}
    prefix = out / "locust"
    result = subprocess.run(
        [sys.executable, "-m", "locust", "-f", str(SCENARIOS / "mqtt_devices.py"), "MqttDevice",
         "--headless", "-u", "1", "-r", "1", "-t", f"{seconds}s", "--csv", str(prefix),
         "--host", "http://127.0.0.1:9", "--only-summary", "--stop-timeout", "2"],
        env=environment, capture_output=True, text=True, timeout=seconds + 60)
    stats = prefix.with_name("locust_stats.csv")
    assert stats.exists(), result.stderr[-3000:]
    with stats.open(newline="") as handle:
        rows = {row["Name"]: row for row in csv.DictReader(handle)}
    rows["_stderr"] = result.stderr[-3000:]
    return rows


def test_a_first_connect_refused_as_server_unavailable_is_tried_again_until_accepted(tmp_path):
    connects, rows = _run_devices([CONNACK_SERVER_UNAVAILABLE, CONNACK_SERVER_UNAVAILABLE, CONNACK_ACCEPTED],
                                  tmp_path, seconds=8)
    assert connects == 3, rows["_stderr"]
    assert int(rows["connect"]["Request Count"]) == 3 and int(rows["connect"]["Failure Count"]) == 2
    assert int(rows["subscribe"]["Request Count"]) == 1 and int(rows["subscribe"]["Failure Count"]) == 0


def test_a_connect_refused_for_its_credentials_is_not_tried_again(tmp_path):
    connects, rows = _run_devices([CONNACK_NOT_AUTHORIZED, CONNACK_ACCEPTED], tmp_path, seconds=6)
    assert connects == 1, rows["_stderr"]
    assert int(rows["connect"]["Request Count"]) == 1 and int(rows["connect"]["Failure Count"]) == 1
    assert "subscribe" not in rows
