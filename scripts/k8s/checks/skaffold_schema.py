#!/usr/bin/env python3
"""Validates skaffold.yaml against skaffold's own JSON schema for its apiVersion.

Usage: skaffold_schema.py SKAFFOLD_YAML SCHEMAS_DIR
  SCHEMAS_DIR: docs-v2/content/en/schemas of the Go module github.com/GoogleContainerTools/skaffold/v2
Every document of the file is validated (profiles included, they are part of the document);
additionally the JSON Patch paths of the profiles must point into the document.
"""
import json
import pathlib
import sys

import jsonschema
import yaml


def main():
    docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
    schemas = pathlib.Path(sys.argv[2])
    errors = 0
    for doc in docs:
        version = doc.get("apiVersion", "")
        if not version.startswith("skaffold/"):
            print(f"not a skaffold config: apiVersion {version!r}", file=sys.stderr)
            return 1
        schema_file = schemas / f"{version.split('/', 1)[1]}.json"
        schema = json.loads(schema_file.read_text())
        validator = jsonschema.Draft7Validator(schema)
        for e in sorted(validator.iter_errors(doc), key=str):
            errors += 1
            print(f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message[:300]}", file=sys.stderr)
        for profile in doc.get("profiles", []):
            for patch in profile.get("patches", []):
                # the parent of each patched path must exist in the base document
                node = doc
                for part in patch["path"].strip("/").split("/")[:-1]:
                    node = node[int(part)] if isinstance(node, list) else node.get(part) if isinstance(node, dict) else None
                    if node is None:
                        errors += 1
                        print(f"profile {profile['name']}: patch path {patch['path']} does not exist", file=sys.stderr)
                        break
        print(f"{sys.argv[1]}: validated against {schema_file.name}, {errors} errors")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
