"""The gateway pods' lives as the API server reports them (a watch): when each pod appeared, became
Ready, was told to stop (its deletionTimestamp: the kubelet sends its container SIGTERM then), how its
container exited, and when it was gone. The kubelet reports the exit status in the pod's status before
the pod object goes, so a scale-down's graceful stops (exit 143 after SIGTERM) are seen here."""

from __future__ import annotations

import json
import threading
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field

from testbed import Kube


@dataclass
class PodLife:
    name: str
    seen: float                      # time.monotonic() of each event
    ready: float | None = None
    stopping: float | None = None    # first seen with a deletionTimestamp
    exit_code: int | None = None     # the container's, once terminated
    gone: float | None = None


@dataclass
class PodWatch:
    kube: Kube
    namespace: str
    selector: str
    pods: dict[str, PodLife] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    _halt: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> "PodWatch":
        self._thread = threading.Thread(target=self._loop, name="pod-watch", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._halt.set()
        if self._thread is not None:
            self._thread.join(70)

    def _path(self, **query: str) -> str:
        return (f"/api/v1/namespaces/{self.namespace}/pods?"
                + urllib.parse.urlencode({"labelSelector": self.selector, **query}))

    def _loop(self) -> None:
        version = None
        while not self._halt.is_set():
            try:
                if version is None:
                    listed = self.kube.get(self._path())
                    for pod in listed["items"]:
                        self._record("ADDED", pod)
                    version = listed["metadata"]["resourceVersion"]
                version = self._watch(version)
            except Exception as error:  # noqa: BLE001 - noted; a fresh list catches up
                self.errors.append(f"{time.monotonic():.0f}: {error}")
                version = None
                self._halt.wait(1)

    def _watch(self, resource_version: str) -> str | None:
        """One short watch (stop() is never kept waiting long) from `resource_version`; returns the
        version to go on from, None when the API server says to list again."""
        request = urllib.request.Request(
            self.kube.server + self._path(watch="1", resourceVersion=resource_version, timeoutSeconds="5"),
            headers={"Authorization": f"Bearer {self.kube.token}"})
        with urllib.request.urlopen(request, timeout=30, context=self.kube.context) as stream:
            for line in stream:
                event = json.loads(line)
                if event["type"] == "ERROR":
                    return None
                self._record(event["type"], event["object"])
                resource_version = event["object"]["metadata"]["resourceVersion"]
        return resource_version

    def _record(self, kind: str, pod: dict) -> None:
        now = time.monotonic()
        name = pod["metadata"]["name"]
        life = self.pods.setdefault(name, PodLife(name, now))
        conditions = pod.get("status", {}).get("conditions", [])
        if life.ready is None and any(c["type"] == "Ready" and c["status"] == "True" for c in conditions):
            life.ready = now
        if life.stopping is None and pod["metadata"].get("deletionTimestamp"):
            life.stopping = now
        for status in pod.get("status", {}).get("containerStatuses", []):
            terminated = status.get("state", {}).get("terminated")
            if terminated is not None:
                life.exit_code = terminated["exitCode"]
        if kind == "DELETED" and life.gone is None:
            life.gone = now

    def stopped_since(self, since: float) -> list[PodLife]:
        """The pods told to stop after `since` (a time.monotonic())."""
        return sorted((p for p in self.pods.values() if p.stopping is not None and p.stopping >= since),
                      key=lambda p: p.stopping)
