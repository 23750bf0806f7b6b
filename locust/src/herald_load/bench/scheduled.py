"""The 07:00 benchmark: N devices, one send scheduled at their local time a minute ahead.

Registers N devices (FCM tokens, the sandbox behind them) on one topic, each with an IANA time zone:
all in one zone, or spread over several zones that have the same UTC offset today (so the local
time falls at one instant everywhere, and the platform fires them as one zone group). Then it sends
to the topic with ``sendAtLocalTime`` = the local time a minute ahead (whole seconds), and prints
the delay from that due instant to the sandbox's first and last receipt. One immediate send goes
first (``--no-warm-up`` skips it), so the gateway holds its provider connection and OAuth token as a
platform that has been running does.

Receipts are observed by polling the sandbox's ``/sandbox/stats`` (accepted count) every
``--poll`` seconds: the first receipt is when the count leaves 0, the last when it reaches N, each
known to within one polling interval. Assumes the platform runs and an app with the sandbox's FCM
credentials exists (:mod:`herald_load.bench.run` provisions one). Standard library only.
"""
import argparse
import concurrent.futures
import datetime
import json
import sys
import time
import urllib.request
from zoneinfo import ZoneInfo

from .fanout import parse_instant, request

# Zones to spread devices over; the ones sharing the first's UTC offset today are used.
SPREAD = ("Europe/Paris", "Europe/Berlin", "Europe/Madrid", "Europe/Rome", "Europe/Vienna", "Europe/Warsaw",
          "Europe/Stockholm", "Africa/Lagos", "Europe/London", "Europe/Lisbon", "Africa/Abidjan", "UTC",
          "Europe/Athens", "Africa/Cairo", "Europe/Helsinki", "Africa/Johannesburg")


def zones_for(first, count):
    """``count`` zones with the UTC offset ``first`` has now, ``first`` among them."""
    now = datetime.datetime.now(datetime.timezone.utc)
    offset = now.astimezone(ZoneInfo(first)).utcoffset()
    same = [first] + [z for z in SPREAD if z != first and now.astimezone(ZoneInfo(z)).utcoffset() == offset]
    return same[:count]


def sandbox_accepted(sandbox):
    return json.load(urllib.request.urlopen(f"{sandbox}/sandbox/stats"))["accepted"]


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m herald_load.bench.scheduled", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--api", default="127.0.0.1:8080")
    p.add_argument("--sandbox", default="http://127.0.0.1:9090")
    p.add_argument("--app", default="bench")
    p.add_argument("--key", required=True, help="API key of the app")
    p.add_argument("--count", type=int, default=100_000)
    p.add_argument("--zone", default="Europe/Paris", help="the (first) zone of the devices")
    p.add_argument("--zones", type=int, default=1, help="spread the devices over this many zones of the same offset")
    p.add_argument("--ahead", type=float, default=60, help="seconds from now to the local due time")
    p.add_argument("--topic", default=f"morning-{int(time.time())}")
    p.add_argument("--poll", type=float, default=0.01, help="seconds between sandbox polls")
    p.add_argument("--timeout", type=float, default=300)
    p.add_argument("--no-warm-up", dest="warm_up", action="store_false",
                   help="skip the immediate send that opens the gateway's provider connection first")
    a = p.parse_args(argv)
    host, port = a.api.split(":")
    port = int(port)
    auth = {"Authorization": f"Bearer {a.key}"}
    zones = zones_for(a.zone, a.zones)

    # 1. Register the audience (not measured).
    t = time.monotonic()

    def register(i):
        status, body = request(host, port, "PUT", f"/v1/apps/{a.app}/devices/{a.topic}-{i}",
                               {"channel": "fcm", "token": f"{a.topic}-token-{i}", "topics": [a.topic],
                                "timeZone": zones[i % len(zones)]}, auth)
        if status not in (200, 201):
            raise SystemExit(f"device registration failed: {status} {body}")

    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        list(pool.map(register, range(a.count), chunksize=500))
    print(f"registered {a.count} devices on topic '{a.topic}' in {time.monotonic() - t:.1f} s, "
          f"zones: {', '.join(zones)}", flush=True)

    # 2. Warm up: one immediate send, so the gateway holds its provider connection and OAuth token as
    # a platform that has been running does (a first send ever pays for both).
    if a.warm_up:
        status, body = request(host, port, "POST", f"/v1/apps/{a.app}/messages",
                               {"to": {"tokens": [{"channel": "fcm", "token": f"{a.topic}-warm-up"}]}, "title": "warm-up"}, auth)
        if status != 202:
            raise SystemExit(f"warm-up send failed: {status} {body}")
        until = time.monotonic() + 60
        while not request(host, port, "GET", f"/v1/apps/{a.app}/messages/{body['id']}", headers=auth)[1].get("completedAt"):
            if time.monotonic() > until:
                raise SystemExit("warm-up send did not complete within 60 s")
            time.sleep(0.05)

    # 3. Schedule at the local time a minute ahead (whole seconds, as a person would).
    local = (datetime.datetime.now(ZoneInfo(zones[0])) + datetime.timedelta(seconds=a.ahead)).replace(microsecond=0)
    due = local.timestamp()
    naive = local.replace(tzinfo=None).isoformat()
    urllib.request.urlopen(urllib.request.Request(f"{a.sandbox}/sandbox/reset", method="POST")).read()
    status, body = request(host, port, "POST", f"/v1/apps/{a.app}/messages",
                           {"to": {"topic": a.topic}, "title": "Good morning", "body": "Time to water your plants",
                            "ttl": 3600, "sendAtLocalTime": naive}, auth)
    if status != 202:
        raise SystemExit(f"send failed: {status} {body}")
    message_id = body["id"]
    if not any(abs(parse_instant(d) - due) < 0.001 for d in body.get("dueAt", [])):
        raise SystemExit(f"the platform did not schedule a group at {local.isoformat()}: {body}")
    print(f"scheduled {message_id} for {naive} local ({len(body['dueAt'])} zone groups; this one due "
          f"{datetime.datetime.fromtimestamp(due, datetime.timezone.utc).isoformat()})", flush=True)

    # 4. Watch the sandbox from before the due time until the last receipt.
    first = last = None
    deadline = due + a.timeout
    early = 0
    while last is None:
        now = time.time()
        if now > deadline:
            raise SystemExit(f"timed out: {sandbox_accepted(a.sandbox)} of {a.count} received")
        accepted = sandbox_accepted(a.sandbox)
        if accepted and first is None:
            first = now
            early = accepted if now < due else 0
        if accepted >= a.count:
            last = now
        time.sleep(a.poll)  # the observer's polling interval, not part of the measured system
    _, final = request(host, port, "GET", f"/v1/apps/{a.app}/messages/{message_id}", headers=auth)
    stats = json.load(urllib.request.urlopen(f"{a.sandbox}/sandbox/stats"))
    print(f"07:00 benchmark: {a.count} devices in {len(zones)} zone(s), due {naive} local"
          f"{'' if a.warm_up else ' (no warm-up send)'}")
    print(f"  due -> first receipt   {first - due:8.3f} s   (target <= 1 s)")
    print(f"  due -> last receipt    {last - due:8.3f} s   (target <= 10 s)")
    print(f"  receipts before due    {early}")
    print(f"  sandbox accepted       {stats['accepted']} (duplicates {stats.get('duplicates', 'n/a')})")
    print(f"  message status         {final['state']} {final['targets']}")
    print(f"  resolution             +/- {a.poll * 1000:.0f} ms (sandbox polling)")
    return 0 if early == 0 and stats.get("duplicates", 0) == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
