"""The 07:00 benchmark's choice of zones (no servers started)."""

from __future__ import annotations

import datetime
from zoneinfo import ZoneInfo

from herald_load.bench.scheduled import zones_for


def test_spread_zones_share_the_first_zones_offset_now_so_the_local_time_is_one_instant():
    zones = zones_for("Europe/Paris", 5)
    now = datetime.datetime.now(datetime.timezone.utc)

    assert zones[0] == "Europe/Paris"
    assert 1 <= len(zones) <= 5
    assert len(set(zones)) == len(zones)
    assert {now.astimezone(ZoneInfo(z)).utcoffset() for z in zones} == {now.astimezone(ZoneInfo("Europe/Paris")).utcoffset()}


def test_one_zone_is_just_that_zone():
    assert zones_for("Asia/Tokyo", 1) == ["Asia/Tokyo"]
