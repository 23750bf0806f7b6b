"""Sends the dispatcher accepts must be sends its document accepts: a fixed check before the fuzzing.

The fuzzing phase finds a disagreement only when its random seed happens to build the body that
shows it (seed 1423957620 sent ``"throttle": null``, which the API takes and the document's
``oneOf`` refused: null matched all three branches). This check sends one body per optional
form of a send (each nullable field as null, each branch of ``to`` and ``throttle``) every run,
and fails unless the dispatcher answers 202 and the served document's SendRequest schema is
satisfied too.

Run by fuzz.py with schemathesis' venv (it has jsonschema_rs and PyYAML); the environment is
fuzz.py's: HERALD_FUZZ_URL, HERALD_FUZZ_APP, HERALD_FUZZ_APP_KEY.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.request

import jsonschema_rs
import yaml

NULLABLE = ["title", "data", "ttl", "collapseKey", "priority", "overrides", "throttle", "sendAt",
            "sendAtLocalTime"]
TOKENS = [{"channel": "mqtt", "token": "agreement-token"}]
BASE = {"to": {"tokens": TOKENS}, "body": "agreement"}
BODIES = ([{**BASE, field: None} for field in NULLABLE]
          + [{**BASE, "to": {"tokens": TOKENS, "devices": None, "topic": None}},
             {**BASE, "to": {"devices": ["d"], "tokens": None}},
             {**BASE, "to": {"topic": "news", "devices": None}},
             {**BASE, "throttle": {"perMinute": 60}},
             {**BASE, "throttle": {"perMinute": 60, "spreadMinutes": None}},
             {**BASE, "throttle": {"spreadMinutes": 5}},
             {**BASE, "throttle": {"spreadMinutes": 5, "perMinute": None}}])


def send_schema(url: str) -> jsonschema_rs.Validator:
    """The served document's SendRequest, its references resolved within the document."""
    with urllib.request.urlopen(f"{url}/openapi.yaml", timeout=10) as response:
        document = yaml.safe_load(response.read())
    return jsonschema_rs.Draft202012Validator(
        {"$ref": "#/components/schemas/SendRequest", "components": document["components"]})


def status_of(url: str, app: str, key: str, body: dict) -> int:
    request = urllib.request.Request(f"{url}/v1/apps/{app}/messages", data=json.dumps(body).encode(),
                                     headers={"Authorization": f"Bearer {key}",
                                              "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as refused:
        return refused.code


def main() -> int:
    url, app, key = (os.environ[name] for name in ("HERALD_FUZZ_URL", "HERALD_FUZZ_APP", "HERALD_FUZZ_APP_KEY"))
    schema = send_schema(url)
    disagreements = []
    for body in BODIES:
        status = status_of(url, app, key, body)
        errors = [error.message for error in schema.iter_errors(body)]
        if status != 202 or errors:
            disagreements.append(f"{json.dumps(body)}: HTTP {status}, document: {errors or 'valid'}")
    print(f"==> the API and its document agree on {len(BODIES) - len(disagreements)} of {len(BODIES)} sends",
          flush=True)
    for line in disagreements:
        print(f"    {line}", file=sys.stderr)
    return 1 if disagreements else 0


if __name__ == "__main__":
    sys.exit(main())
