"""An image tarball (docker-save style, as Jib and scripts/k8s/images.sh write them) run without
Kubernetes: its layers unpacked into a root filesystem and run by Debian's runc with the charts'
security context (the image's user, read-only root filesystem, no capabilities, no new privileges,
an empty /tmp as the charts' emptyDir gives), optionally in a network namespace the test made."""

from __future__ import annotations

import json
import secrets
import shutil
import subprocess
import tarfile
from contextlib import contextmanager
from pathlib import Path


def image_config(tarball: Path) -> tuple[dict, dict]:
    """The tarball's manifest entry and its config JSON."""
    with tarfile.open(tarball) as image:
        manifest = json.load(image.extractfile("manifest.json"))[0]
        return manifest, json.load(image.extractfile(manifest["Config"]))


def layer_names(tarball: Path) -> list[list[str]]:
    """Each layer's entry names (without the leading ./), base layer first."""
    manifest, _ = image_config(tarball)
    names = []
    with tarfile.open(tarball) as image:
        for layer in manifest["Layers"]:
            with tarfile.open(fileobj=image.extractfile(layer)) as content:
                names.append([name.removeprefix("./") for name in content.getnames()])
    return names


def read_file(tarball: Path, path: str) -> bytes:
    """A file of the image, as the last layer holding it has it."""
    manifest, _ = image_config(tarball)
    found = None
    with tarfile.open(tarball) as image:
        for layer in manifest["Layers"]:
            with tarfile.open(fileobj=image.extractfile(layer)) as content:
                for member in content.getmembers():
                    if member.name.removeprefix("./") == path and member.isfile():
                        found = content.extractfile(member).read()
    if found is None:
        raise FileNotFoundError(path)
    return found


@contextmanager
def network_namespace():
    """A network namespace of the test's own with only loopback, up; deleted afterwards."""
    name = f"herald-image-{secrets.token_hex(4)}"
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        subprocess.run(["ip", "netns", "exec", name, "ip", "link", "set", "lo", "up"], check=True)
        yield name
    finally:
        subprocess.run(["ip", "netns", "delete", name], check=True)


class Container:
    """One runc container of an image; `folder` holds its bundle, runc's state and its output."""

    def __init__(self, tarball: Path, folder: Path, args: list[str] | None = None, netns: str | None = None,
                 env: dict[str, str] | None = None, writable: tuple[str, ...] = ()):
        self.folder = folder
        self.id = f"herald-image-{secrets.token_hex(4)}"
        self.state = folder / "runc-state"
        self.output = folder / "output.log"
        self.process: subprocess.Popen | None = None
        rootfs = folder / "rootfs"
        rootfs.mkdir(parents=True)
        manifest, config = image_config(tarball)
        unpacked = folder / "image"
        unpacked.mkdir()
        subprocess.run(["tar", "-xf", str(tarball), "-C", str(unpacked)], check=True)
        for layer in manifest["Layers"]:  # in order, as the runtime stacks them (no whiteouts in these images)
            subprocess.run(["tar", "--warning=no-unknown-keyword", "-xf", str(unpacked / layer), "-C", str(rootfs)],
                           check=True)
        shutil.rmtree(unpacked)
        subprocess.run(["runc", "spec", "--bundle", str(folder)], check=True)
        self._write_spec(config["config"], args, netns, env or {}, writable)

    def _write_spec(self, image: dict, args: list[str] | None, netns: str | None, env: dict[str, str],
                    writable: tuple[str, ...]) -> None:
        spec_file = self.folder / "config.json"
        spec = json.loads(spec_file.read_text())
        self.user = image["User"]
        uid, gid = (int(part) for part in image["User"].split(":"))
        process = spec["process"]
        process["args"] = args or image.get("Entrypoint", []) + (image.get("Cmd") or [])
        process["env"] = image.get("Env", []) + [f"{name}={value}" for name, value in env.items()]
        process["cwd"] = image.get("WorkingDir") or "/"
        process["user"] = {"uid": uid, "gid": gid}
        process["terminal"] = False
        process["noNewPrivileges"] = True
        process["capabilities"] = {kind: [] for kind in ("bounding", "effective", "inheritable", "permitted", "ambient")}
        spec["root"]["readonly"] = True
        # /tmp and the `writable` folders: empty, as the charts' (or an operator's) emptyDirs give them
        for destination in ("/tmp", *writable):
            spec["mounts"].append({"destination": destination, "type": "tmpfs", "source": "tmpfs",
                                   "options": ["nosuid", "nodev", "mode=1777", "size=64m"]})
        if netns:
            spec["linux"]["namespaces"] = [
                {"type": "network", "path": f"/var/run/netns/{netns}"} if namespace["type"] == "network" else namespace
                for namespace in spec["linux"]["namespaces"]]
        spec_file.write_text(json.dumps(spec, indent=1))

    def start(self) -> None:
        with self.output.open("wb") as output:
            self.process = subprocess.Popen(["runc", "--root", str(self.state), "run", "--bundle", str(self.folder),
                                             self.id], stdin=subprocess.DEVNULL, stdout=output,
                                            stderr=subprocess.STDOUT)

    def wait(self, timeout: float) -> int:
        return self.process.wait(timeout=timeout)

    def logs(self) -> str:
        return self.output.read_text(errors="replace")

    def exec(self, *command: str, timeout: float = 120) -> subprocess.CompletedProcess:
        """`command` run in the container as the image's user."""
        return subprocess.run(["runc", "--root", str(self.state), "exec", "--user", self.user, self.id, *command],
                              capture_output=True, text=True, timeout=timeout)

    def signal(self, name: str) -> None:
        subprocess.run(["runc", "--root", str(self.state), "kill", self.id, name], check=True)

    def remove(self) -> None:
        """Kills what still runs, deletes the container and its root filesystem (keeps its output)."""
        if self.process and self.process.poll() is None:
            subprocess.run(["runc", "--root", str(self.state), "kill", self.id, "KILL"], check=False)
            self.process.wait(timeout=30)
        subprocess.run(["runc", "--root", str(self.state), "delete", "--force", self.id], check=False,
                       capture_output=True)
        shutil.rmtree(self.folder / "rootfs", ignore_errors=True)


@contextmanager
def running(tarball: Path, folder: Path, args: list[str] | None = None, netns: str | None = None,
            env: dict[str, str] | None = None, writable: tuple[str, ...] = ()):
    """A started container, removed afterwards."""
    container = Container(tarball, folder, args, netns, env, writable)
    try:
        container.start()
        yield container
    finally:
        container.remove()
