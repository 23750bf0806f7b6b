"""The seed-style sender: what the field notes' plant-care team first built (a fixed pool of 50
threads, a blocking HTTP client, one request per notification), pointed at the same provider
sandbox as Herald, so the fan-out's rate can be printed as a multiple of it.

Each thread keeps one HTTP/1.1 connection (``http.client``) and sends one FCM v1 request per
notification to a distinct token, waiting for each answer. It gets its access token from the
sandbox's token endpoint with an assertion under a key id of its own (the sandbox checks the
signature of its demo key only). Its rate is bounded by threads / latency (50 / 50 ms = 1,000/s)
however fast the machine is: that is the design being compared, not Python. Standard library only.
"""
import argparse
import base64
import http.client
import json
import os
import resource
import sys
import threading
import time
import urllib.parse
import urllib.request

PROJECT = "seed-sender"


def _b64(data):
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


def access_token(sandbox):
    now = int(time.time())
    assertion = ".".join((_b64({"alg": "RS256", "typ": "JWT", "kid": "seed-sender"}),
                          _b64({"iss": "seed@seed-sender.iam.gserviceaccount.com", "aud": f"{sandbox}/token",
                                "scope": "https://www.googleapis.com/auth/firebase.messaging",
                                "iat": now, "exp": now + 3600}),
                          base64.urlsafe_b64encode(b"unchecked").rstrip(b"=").decode()))
    form = urllib.parse.urlencode({"grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer",
                                   "assertion": assertion}).encode()
    with urllib.request.urlopen(urllib.request.Request(f"{sandbox}/token", data=form), timeout=30) as answer:
        return json.load(answer)["access_token"]


def run(argv=None):
    """Sends ``--count`` notifications; returns ``rate`` (notifications/s), ``elapsed`` (s), ``cpu_us``
    (this process's CPU per notification) and ``failed``."""
    p = argparse.ArgumentParser(prog="python -m herald_load.bench.seed", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sandbox", default="http://127.0.0.1:9090")
    p.add_argument("--count", type=int, default=10_000)
    p.add_argument("--threads", type=int, default=50)
    a = p.parse_args(argv)
    target = urllib.parse.urlsplit(a.sandbox)
    headers = {"Authorization": f"Bearer {access_token(a.sandbox)}", "Content-Type": "application/json"}
    path = f"/v1/projects/{PROJECT}/messages:send"
    next_index = iter(range(a.count))
    claim = threading.Lock()
    failed = []

    def sender():
        connection = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
        while True:
            with claim:
                i = next(next_index, None)
            if i is None:
                connection.close()
                return
            body = json.dumps({"message": {"token": f"seed-token-{i}",
                                           "notification": {"title": "Good morning", "body": "Time to water your plants"}}})
            connection.request("POST", path, body=body, headers=headers)
            answer = connection.getresponse()
            answer.read()
            if answer.status != 200:
                failed.append(answer.status)

    threads = [threading.Thread(target=sender, daemon=True) for _ in range(a.threads)]
    cpu_before, t0 = resource.getrusage(resource.RUSAGE_SELF), time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed, cpu_after = time.monotonic() - t0, resource.getrusage(resource.RUSAGE_SELF)
    cpu = (cpu_after.ru_utime + cpu_after.ru_stime) - (cpu_before.ru_utime + cpu_before.ru_stime)
    result = {"rate": a.count / elapsed, "elapsed": elapsed, "cpu_us": cpu / a.count * 1e6, "failed": len(failed)}
    print(f"seed-style sender: {a.count} notifications, {a.threads} threads, blocking HTTP/1.1, one request each")
    print(f"  elapsed                   {elapsed:8.2f} s   ({result['rate']:.0f} notifications/s; bound "
          f"{a.threads} threads / sandbox latency)")
    print(f"  its own CPU               {result['cpu_us']:8.1f} µs/notification   failed {len(failed)}")
    print(f"  machine: {os.cpu_count()} cores, load average {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    return result


if __name__ == "__main__":
    sys.exit(1 if run()["failed"] else 0)
