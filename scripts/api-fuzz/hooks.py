"""Schemathesis extensions for the dispatcher's API fuzzing (loaded by fuzz.py via SCHEMATHESIS_HOOKS).

The device import (``POST .../device-imports``) takes NDJSON, for which schemathesis has no
serializer: the document gives the schema of one line, so a generated value goes out as one JSON
line. The import answers 200 with a report even when a line is refused (the other lines go on),
so "schema-violating body refused" is checked here on the report instead of the status.
"""

from __future__ import annotations

import json

import schemathesis
from schemathesis.core.parameters import ParameterLocation

NDJSON = "application/x-ndjson"
IMPORT_PATH = "/v1/apps/{appId}/device-imports"


@schemathesis.serializer(NDJSON)
def ndjson(ctx: schemathesis.SerializationContext, value: object) -> bytes:
    """One device a line: the generated value is one line (the schema's), written as compact JSON."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


@schemathesis.check
def import_refuses_invalid_lines(ctx: schemathesis.CheckContext, response: schemathesis.Response,
                                 case: schemathesis.Case) -> bool | None:
    """A device import whose one line breaks the line schema reports that line as failed."""
    if case.operation.path != IMPORT_PATH or response.status_code != 200:
        return None
    if case.meta is None or not case.meta.is_negative_at(ParameterLocation.BODY):
        return None
    report = response.json()
    if report.get("failed", 0) < 1:
        raise AssertionError(f"a line that breaks the schema was imported: {report}")
    return True
