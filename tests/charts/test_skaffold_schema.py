"""skaffold.yaml against skaffold's own JSON schema for its apiVersion. The schemas ship in skaffold's
Go module (docs-v2/content/en/schemas), fetched once into Go's module cache. Every document of the
file is validated, profiles included; the JSON Patch paths of the profiles must point into the
document."""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import yaml

from releases import ROOT
from testbed import run

SKAFFOLD_MODULE = "github.com/GoogleContainerTools/skaffold/v2@v2.16.1"


def schema_errors(doc: dict, schemas: Path) -> list[str]:
    version = doc.get("apiVersion", "")
    if not version.startswith("skaffold/"):
        return [f"not a skaffold config: apiVersion {version!r}"]
    schema = json.loads((schemas / f"{version.split('/', 1)[1]}.json").read_text())
    errors = [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message[:300]}"
              for e in sorted(jsonschema.Draft7Validator(schema).iter_errors(doc), key=str)]
    for profile in doc.get("profiles", []):
        for patch in profile.get("patches", []):
            # the parent of each patched path must exist in the base document
            node = doc
            for part in patch["path"].strip("/").split("/")[:-1]:
                node = node[int(part)] if isinstance(node, list) else node.get(part) if isinstance(node, dict) else None
                if node is None:
                    errors.append(f"profile {profile['name']}: patch path {patch['path']} does not exist")
                    break
    return errors


def test_skaffold_yaml_validates_against_skaffolds_schema(tmp_path):
    # `go mod download -json` of a bare module@version, from a folder outside any module.
    downloaded = run(["go", "mod", "download", "-json", SKAFFOLD_MODULE], cwd=tmp_path,
                     env=dict(os.environ, GOFLAGS="-mod=mod"))
    schemas = Path(json.loads(downloaded)["Dir"]) / "docs-v2/content/en/schemas"
    docs = [d for d in yaml.safe_load_all((ROOT / "skaffold.yaml").read_text()) if d]
    assert docs
    errors = [error for doc in docs for error in schema_errors(doc, schemas)]
    assert not errors, "\n".join(errors)
