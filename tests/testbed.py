"""The test control plane of scripts/k8s/testbed.sh as the pytest suites under tests/ use it (the
chart tests in tests/charts, the KEDA scenario in tests/autoscaling): its tools on PATH, one started
and stopped in a folder of its own, and a small client of its API server.

Standard library only: the suites' venv (scripts/k8s/test-venv.sh) needs nothing else for it.
"""

from __future__ import annotations

import base64
import json
import os
import shlex
import signal
import ssl
import subprocess
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path


def run(command: list[str], **kwargs) -> str:
    """Runs a command to completion; its output on failure is in the exception."""
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        raise RuntimeError(f"{shlex.join(command)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    return result.stdout


def tear_down_on_sigterm() -> None:
    """.ci/run ends a run that outlives it with SIGTERM to the test's process group. Servers that a
    suite starts in process groups of their own (so that each can be stopped with its children) would
    outlive it: SIGTERM (or Ctrl-C) becomes an interrupt, so that the fixtures' teardown stops them.
    Once it has, further SIGTERMs and Ctrl-Cs are only reported: a second one used to abort the
    teardown half-way and leave etcd and the API server running. (A handler, not SIG_IGN, so that the
    commands the teardown starts still stop on SIGTERM; SIGKILL still ends this process.)"""
    interrupted = []

    def interrupt(signum, frame):
        if interrupted:
            print(f"signal {signum} ignored: the teardown is under way", file=sys.stderr, flush=True)
            return
        interrupted.append(signum)
        raise KeyboardInterrupt(f"signal {signum}")

    for each in (signal.SIGTERM, signal.SIGINT):
        signal.signal(each, interrupt)


def use_tools(root: Path) -> dict[str, Path]:
    """Puts the testbed's cached kubectl, helm, kwok and control-plane binaries first on PATH for the
    rest of the run; returns the cache's folders (HERALD_K8S_BIN, HERALD_K8S_CRDS)."""
    printed = run(["bash", str(root / "scripts/k8s/testbed.sh"), "env"])
    folders = {name: Path(value) for name, value in (line.split("=", 1) for line in printed.splitlines())}
    binaries = folders["HERALD_K8S_BIN"]
    if not (binaries / "helm").is_file() or not (binaries / "kubectl").is_file():
        raise RuntimeError(f"no helm or kubectl in {binaries}: run scripts/k8s/testbed.sh build first")
    if os.environ.get("PATH", "").split(os.pathsep)[0] != str(binaries):
        os.environ["PATH"] = f"{binaries}{os.pathsep}{os.environ.get('PATH', '')}"
    return folders


class Kube:
    """A small client of the test API server (token auth from the testbed's kubeconfig)."""

    def __init__(self, kubeconfig: Path):
        self.kubeconfig = kubeconfig
        config = json.loads(run(["kubectl", "config", "view", "--raw", "-o", "json", "--kubeconfig", str(kubeconfig)]))
        cluster = config["clusters"][0]["cluster"]
        user = config["users"][0]["user"]
        self.server = cluster["server"].rstrip("/")
        self.token = user.get("token")
        self.context = ssl.create_default_context()
        if cluster.get("certificate-authority-data"):
            self.context.load_verify_locations(cadata=base64.b64decode(cluster["certificate-authority-data"]).decode())
        elif cluster.get("certificate-authority"):
            self.context.load_verify_locations(cafile=cluster["certificate-authority"])
        else:
            self.context.check_hostname = False
            self.context.verify_mode = ssl.CERT_NONE

    def get(self, path: str, timeout: float = 5) -> dict | None:
        """GET an API path; None if it does not exist (404)."""
        request = urllib.request.Request(self.server + path, headers={"Authorization": f"Bearer {self.token}"})
        try:
            with urllib.request.urlopen(request, timeout=timeout, context=self.context) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as error:
            if error.code == 404:
                return None
            raise RuntimeError(f"GET {path}: HTTP {error.code}: {error.read().decode(errors='replace')[:500]}") from None

    def kubectl(self, *args: str, stdin: str | None = None) -> str:
        return run(["kubectl", "--kubeconfig", str(self.kubeconfig), *args], input=stdin)

    def helm(self, *args: str) -> str:
        return run(["helm", "--kubeconfig", str(self.kubeconfig), *args])

    def apply(self, objects: list[dict]) -> None:
        self.kubectl("apply", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))


@dataclass
class ControlPlane:
    """scripts/k8s/testbed.sh up/down in `directory`; `settings` are its HERALD_K8S_* variables
    (node count, bind address, extra API server flags, ...)."""

    root: Path
    directory: Path
    settings: dict[str, str] = field(default_factory=dict)

    def up(self) -> Kube:
        run(["bash", str(self.root / "scripts/k8s/testbed.sh"), "up", str(self.directory)],
            env=dict(os.environ, **self.settings))
        use_tools(self.root)
        return Kube(self.directory / "kubeconfig")

    def down(self) -> None:
        subprocess.run(["bash", str(self.root / "scripts/k8s/testbed.sh"), "down", str(self.directory)],
                       capture_output=True)
