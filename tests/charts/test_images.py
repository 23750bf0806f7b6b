"""Jib assembles each service's image without Docker (`mvn ... jib:buildTar`). No registry is
reachable here, so the base is `scratch` (the real base, eclipse-temurin:25-jre, comes from the root
pom.xml); what is checked is the image Jib writes: its name, the non-root user and the entrypoint."""

from __future__ import annotations

import json
import os
import tarfile

import pytest

from herald_load.processes import module_dir
from releases import ROOT
from testbed import run

MODULES = ["dispatcher", "gateway", "provider-sandbox", "connection-manager"]


@pytest.fixture(scope="module")
def images() -> dict[str, str]:
    """Module -> its image tarball, built by Jib in one reactor run."""
    flags = ["-B", "-q"] + (["--no-transfer-progress"] if os.environ.get("CI") == "true" else [])
    run(["mvn", *flags, "-pl", ",".join(f":{m}" for m in MODULES), "-am", "package", "jib:buildTar",
         "-DskipTests", "-Djib.from.image=scratch"], cwd=ROOT)
    return {module: module_dir(module, ROOT) / "target/jib-image.tar" for module in MODULES}


@pytest.mark.parametrize("module", MODULES)
def test_image_runs_java_as_user_65532(images, module):
    with tarfile.open(images[module]) as image:
        manifest = json.load(image.extractfile("manifest.json"))[0]
        config = json.load(image.extractfile(manifest["Config"]))["config"]
    assert manifest["RepoTags"] == [f"herald-{module}:latest"]
    assert config["User"] == "65532:65532"
    assert config["Entrypoint"][0] == "java"
