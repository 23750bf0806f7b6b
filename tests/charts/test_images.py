"""Jib assembles each service's image without Docker (`mvn ... jib:buildTar`). No registry is
reachable here, so the base is the Java 25 runtime image built here by scripts/k8s/images.sh (the
production base, eclipse-temurin:25-jre, comes from the root pom.xml); that takes root (debootstrap),
so without root the base is `scratch` and the tests that run images are skipped. Checked: each
image's name, the non-root user and the entrypoint; the base's java on PATH and its user 65532;
and that the images run under Debian's runc with the charts' security context (runc_container.py):
java -version prints 25, the pause image ends on SIGTERM, and the provider sandbox starts, answers
its health endpoint on loopback in a network namespace of its own and stops on SIGTERM."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from herald_load.processes import module_dir
from releases import ROOT
from runc_container import image_config, layer_names, network_namespace, read_file, running
from testbed import run

MODULES = ["dispatcher", "gateway", "provider-sandbox", "connection-manager"]
IMAGES_SH = ROOT / "scripts/k8s/images.sh"
AS_ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(not AS_ROOT, reason="the base image (debootstrap) and runc need root")


def built_image(which: str) -> Path:
    """scripts/k8s/images.sh's tarball of `base` or `pause` (cached; built on first use)."""
    return Path(run(["bash", str(IMAGES_SH), which]).split()[1])


@pytest.fixture(scope="module")
def base_image() -> Path | None:
    return built_image("base") if AS_ROOT else None


@pytest.fixture(scope="module")
def images(base_image) -> dict[str, str]:
    """Module -> its image tarball, built by Jib in one reactor run."""
    flags = ["-B", "-q"] + (["--no-transfer-progress"] if os.environ.get("CI") == "true" else [])
    base = f"tar://{base_image}" if base_image else "scratch"
    run(["mvn", *flags, "-pl", ",".join(f":{m}" for m in MODULES), "-am", "package", "jib:buildTar",
         "-DskipTests", f"-Djib.from.image={base}"], cwd=ROOT)
    return {module: module_dir(module, ROOT) / "target/jib-image.tar" for module in MODULES}


@pytest.mark.parametrize("module", MODULES)
def test_image_runs_java_as_user_65532(images, module):
    manifest, image = image_config(images[module])
    config = image["config"]
    assert manifest["RepoTags"] == [f"herald-{module}:latest"]
    assert config["User"] == "65532:65532"
    assert config["Entrypoint"][0] == "java"


@needs_root
def test_base_has_java_on_path_and_user_65532(base_image):
    _, image = image_config(base_image)
    config = image["config"]
    path = next(entry.removeprefix("PATH=") for entry in config["Env"] if entry.startswith("PATH="))
    files = {name for layer in layer_names(base_image) for name in layer}
    assert any(f"{folder.strip('/')}/java" in files for folder in path.split(":")), path
    assert config["User"] == "65532:65532"
    passwd = read_file(base_image, "etc/passwd").decode()
    assert "nonroot:x:65532:65532:" in passwd
    assert "etc/ssl/certs/ca-certificates.crt" in files
    assert not {"bin/sh", "usr/bin/sh", "usr/bin/bash"} & files, "the base has a shell"


@needs_root
@pytest.mark.parametrize("module", MODULES)
def test_service_image_is_the_base_plus_the_service(images, base_image, module):
    base_layers = image_config(base_image)[1]["rootfs"]["diff_ids"]
    assert image_config(images[module])[1]["rootfs"]["diff_ids"][:len(base_layers)] == base_layers


@needs_root
def test_java_runs_in_the_base_image(base_image, tmp_path):
    with running(base_image, tmp_path / "java", args=["java", "-version"]) as container:
        rc = container.wait(timeout=60)
        output = container.logs()
    print(f"runc, java -version in the base image (exit {rc}):\n{output}")
    assert rc == 0, output
    assert 'version "25' in output, output


@needs_root
def test_pause_image_sleeps_until_sigterm(tmp_path):
    with running(built_image("pause"), tmp_path / "pause") as container:
        with pytest.raises(subprocess.TimeoutExpired):
            container.wait(timeout=1)  # still asleep
        container.signal("TERM")
        assert container.wait(timeout=10) == 0, container.logs()


@needs_root
def test_provider_sandbox_image_starts_answers_health_and_stops_on_sigterm(images, tmp_path):
    health = "http://127.0.0.1:9090/actuator/health"
    with network_namespace() as netns, \
            running(images["provider-sandbox"], tmp_path / "sandbox", netns=netns) as container:
        deadline = time.monotonic() + 120
        answer = None
        while time.monotonic() < deadline and container.process.poll() is None:
            probe = subprocess.run(["ip", "netns", "exec", netns, "curl", "-sf", "--max-time", "2", health],
                                   capture_output=True, text=True)
            if probe.returncode == 0:
                answer = json.loads(probe.stdout)
                break
            time.sleep(0.5)  # polling interval of the readiness check, like a kubelet's probe period
        assert answer is not None, f"no health answer within 120 s:\n{container.logs()}"
        assert answer["status"] == "UP"
        print(f"runc, provider sandbox in network namespace {netns}: {health} answered {answer}")
        container.signal("TERM")
        rc = container.wait(timeout=30)
        output = container.logs()
        print(f"after SIGTERM it exited with {rc}; its last lines:\n" + "\n".join(output.splitlines()[-3:]))
    # The JVM ran its shutdown hooks (128 + SIGTERM), it was not killed.
    assert rc == 143, output
