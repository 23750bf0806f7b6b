"""Property-based fuzzing of the dispatcher's API from its OpenAPI document (schemathesis).

Starts Redis, RabbitMQ and one dispatcher on free loopback ports (herald_load.local), makes an
app, checks that the API and the document agree on every optional form of a send (agreement.py),
and runs schemathesis with every check on against the document the dispatcher serves:
admin operations with the admin token, app operations with the app's key, and the extensions in
hooks.py (the device import's NDJSON serializer and its check). Exits non-zero on any
failure. The seed is printed first; replay a failing run with ``HERALD_FUZZ_SEED=<seed>``.

Run by scripts/test.sh with the locust/ venv (it needs herald_load and the dispatcher's jar);
schemathesis lives in a venv of its own (``~/.cache/herald/venv-fuzz``), pinned below.

Environment: HERALD_FUZZ_SEED (default: random), HERALD_FUZZ_EXAMPLES (per operation and
phase, default 40), HERALD_FUZZ_REPORT_DIR (schemathesis' JUnit report; default: dropped).
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

from herald_load.local import LocalPlatform
from herald_load.processes import service_jar
from herald_load.servers import RabbitMQ, Redis

SCHEMATHESIS = "schemathesis==4.32.5"
HERE = Path(__file__).resolve().parent
APP, ADMIN_APP = "fuzz", "fuzz-admin"


def schemathesis_venv() -> Path:
    """The venv holding the pinned schemathesis, made or updated when the pin changed."""
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "herald" / "venv-fuzz"
    stamp = cache / ".herald-stamp"
    if not (cache / "bin" / "python").exists() or not stamp.exists() or stamp.read_text() != SCHEMATHESIS:
        print(f"==> installing {SCHEMATHESIS} into {cache}", flush=True)
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(cache)], check=True)
        subprocess.run([str(cache / "bin" / "python"), "-m", "pip", "install", "-q",
                        "--disable-pip-version-check", SCHEMATHESIS], check=True)
        stamp.write_text(SCHEMATHESIS)
    return cache


def print_errors(log: Path, context: int = 12) -> None:
    """The ERROR lines of a service's log, each with the start of its stack trace."""
    lines = log.read_text(errors="replace").splitlines() if log.exists() else []
    for index, line in enumerate(lines):
        if " ERROR " in line:
            print("\n".join(lines[index:index + context]), file=sys.stderr)


def main() -> int:
    seed = int(os.environ.get("HERALD_FUZZ_SEED") or random.SystemRandom().randrange(2**31))
    examples = int(os.environ.get("HERALD_FUZZ_EXAMPLES", "40"))
    print(f"==> API fuzzing seed {seed} (replay: HERALD_FUZZ_SEED={seed}), "
          f"{examples} examples per operation and phase", flush=True)
    venv = schemathesis_venv()
    service_jar("dispatcher")   # a clear error, not a time-out, when the build did not run
    with tempfile.TemporaryDirectory(prefix="herald-fuzz-") as work, \
            LocalPlatform(Path(work), log=lambda line: print(line, flush=True)) as platform:
        workdir = Path(work)
        platform.redis = Redis(workdir / "redis", workdir / "logs" / "redis.log").start()
        platform.rabbit = RabbitMQ(workdir / "rabbitmq", workdir / "logs" / "rabbitmq.log").start()
        platform.redis.await_ready(30)
        platform.rabbit.await_ready(120)
        platform.start_dispatchers(1)
        for app in (ADMIN_APP, APP):   # the key of the last one is the app operations'
            status, created = platform.dispatcher_api("POST", "/v1/apps", {"id": app, "name": "API fuzzing"})
            if status != 201:
                print(f"creating app {app} failed: HTTP {status} {created}", file=sys.stderr)
                return 1
        url = platform.dispatcher_urls[0]
        env = {**os.environ, "SCHEMATHESIS_HOOKS": str(HERE / "hooks.py"), "HERALD_FUZZ_URL": url, "HERALD_FUZZ_APP": APP, "HERALD_FUZZ_ADMIN_APP": ADMIN_APP,
               "HERALD_FUZZ_ADMIN_TOKEN": platform.admin_token,
               "HERALD_FUZZ_APP_KEY": created["apiKey"]["key"]}
        agreement = subprocess.run([str(venv / "bin" / "python"), str(HERE / "agreement.py")], env=env, timeout=120)
        if agreement.returncode != 0:
            print("the dispatcher and its document disagree on a send (above)", file=sys.stderr)
            return agreement.returncode
        command = [str(venv / "bin" / "schemathesis"), "--config-file", str(HERE / "schemathesis.toml"),
                   "run", f"{url}/openapi.yaml", "--seed", str(seed), "--max-examples", str(examples),
                   "--report", "junit", "--report-dir", os.environ.get("HERALD_FUZZ_REPORT_DIR", str(workdir / "report"))]
        result = subprocess.run(command, env=env, cwd=workdir, timeout=900)   # its cache stays in workdir
        if result.returncode != 0:
            print(f"API fuzzing failed (seed {seed}); the dispatcher's errors:", file=sys.stderr)
            print_errors(workdir / "logs" / "dispatcher-1.log")
        return result.returncode


if __name__ == "__main__":
    sys.exit(main())
