"""The charts' generated files are what their annotated values.yaml generate, and the schema
generator (scripts/k8s/chart_schema.py) does what its docstring says.

Needs no cluster: bash, PyYAML in this interpreter, and helm-docs, which scripts/k8s/chart-docs.sh
builds once from the Go module proxy (go) into ~/.cache/herald/k8s/<version>/bin/.
"""

import difflib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
REGENERATE = "scripts/k8s/chart-docs.sh"
GENERATED = [
    "herald-lib/README.md",
    *(f"{chart}/{name}" for chart in ("push-platform", "dispatcher", "gateway", "connection-manager", "provider-sandbox")
      for name in ("README.md", "values.schema.json")),
]


def load_generator():
    spec = importlib.util.spec_from_file_location("chart_schema", ROOT / "scripts/k8s/chart_schema.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


chart_schema = load_generator()


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory):
    """A copy of charts/ with every generated file generated afresh."""
    charts = tmp_path_factory.mktemp("generated") / "charts"
    shutil.copytree(ROOT / "charts", charts, symlinks=True,
                    ignore=shutil.ignore_patterns("*.tgz", *(Path(f).name for f in GENERATED)))
    subprocess.run(["bash", str(ROOT / REGENERATE), str(charts)], check=True,
                   env={**os.environ, "PYTHON": sys.executable})
    return charts


@pytest.mark.parametrize("generated", GENERATED)
def test_committed_file_is_what_the_values_generate(regenerated, generated):
    committed = (ROOT / "charts" / generated).read_text()
    fresh = (regenerated / generated).read_text()
    if committed != fresh:
        diff = "".join(difflib.unified_diff(
            committed.splitlines(keepends=True), fresh.splitlines(keepends=True),
            f"charts/{generated} (committed)", f"charts/{generated} (generated)", n=1))
        pytest.fail(f"charts/{generated} is stale or edited by hand; regenerate it with {REGENERATE} "
                    f"(edit values.yaml comments or the README.md.gotmpl, not the output):\n{diff[:4000]}")


# ------------------------------------------------------------------ the schema generator


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def test_types_come_from_the_defaults_and_groups_are_closed(tmp_path):
    values = write(tmp_path / "values.yaml", """
        count: 2
        ratio: 0.5
        name: x
        enabled: true
        nothing:
        ports: [1, 2]
        group:
          inner: 1
        """)
    schema = chart_schema.values_schema(values)
    assert schema["additionalProperties"] is False
    props = schema["properties"]
    assert props["count"] == {"type": "integer"}
    assert props["ratio"] == {"type": "number"}
    assert props["name"] == {"type": "string"}
    assert props["enabled"] == {"type": "boolean"}
    assert props["nothing"] == {}
    assert props["ports"] == {"type": "array"}
    assert props["group"] == {"type": "object", "properties": {"inner": {"type": "integer"}},
                              "additionalProperties": False}


def test_a_documented_mapping_is_one_free_form_value_with_its_description(tmp_path):
    values = write(tmp_path / "values.yaml", """
        # -- Pod security context,
        #    on two lines.
        podSecurityContext:
          runAsUser: 1
        # -- A probe.
        probe: {periodSeconds: 2}
        """)
    props = chart_schema.values_schema(values)["properties"]
    assert props["podSecurityContext"] == {"type": "object", "description": "Pod security context, on two lines."}
    # The keys of a flow mapping do not take the comment above the line as theirs.
    assert props["probe"] == {"type": "object", "description": "A probe."}


def test_schema_annotations_before_the_description_merge_into_the_generated_schema(tmp_path):
    values = write(tmp_path / "values.yaml", """
        # @schema {"minimum": 0}
        # @schema {"type": ["integer", "string"]}
        # -- Pods.
        replicas: 2
        # @schema {"properties": {"runAsNonRoot": {"const": true}}}
        # -- Context.
        context:
          runAsNonRoot: true
        """)
    props = chart_schema.values_schema(values)["properties"]
    assert props["replicas"] == {"type": ["integer", "string"], "description": "Pods.", "minimum": 0}
    assert props["context"]["properties"] == {"runAsNonRoot": {"const": True}}


def test_an_annotation_that_is_not_a_json_object_is_an_error_naming_the_value(tmp_path):
    values = write(tmp_path / "values.yaml", """
        group:
          # @schema minimum: 0
          count: 1
        """)
    with pytest.raises(ValueError, match="group.count"):
        chart_schema.values_schema(values)


def test_a_chart_schema_composes_the_values_it_imports_under_its_own(tmp_path):
    write(tmp_path / "lib/Chart.yaml", "apiVersion: v2\nname: lib\ntype: library\nversion: 0.1.0\n")
    write(tmp_path / "lib/values.yaml", """
        # @schema {"properties": {"port": {"type": "integer", "maximum": 65535}}}
        defaults:
          # @schema {"minimum": 0}
          # -- Pods.
          replicas: 2
          image:
            # -- Tag.
            tag: ""
        unrelated: 1
        """)
    write(tmp_path / "app/Chart.yaml", """
        apiVersion: v2
        name: app
        version: 0.1.0
        dependencies:
          - name: lib
            version: 0.1.0
            repository: file://../lib
            import-values:
              - child: defaults
                parent: .
        """)
    write(tmp_path / "app/values.yaml", """
        # -- Pods of the app.
        replicas: 3
        image:
          # -- Repository.
          repository: app
        port: 8080
        """)
    schema = chart_schema.chart_schema(tmp_path / "app")
    props = schema["properties"]
    assert schema["additionalProperties"] is False
    assert list(props)[:2] == ["global", "lib"]
    assert "unrelated" not in props
    assert props["replicas"] == {"type": "integer", "description": "Pods of the app.", "minimum": 0}
    assert set(props["image"]["properties"]) == {"tag", "repository"}
    assert props["image"]["additionalProperties"] is False
    assert props["port"] == {"type": "integer", "maximum": 65535}
    json.dumps(schema)  # serialisable as written


def test_merge_joins_objects_and_replaces_anything_else_without_aliasing():
    base = {"a": {"x": 1, "l": [1]}, "b": 1}
    merged = chart_schema.merge(base, {"a": {"y": 2, "l": [2]}, "b": {"c": 3}})
    assert merged == {"a": {"x": 1, "l": [2], "y": 2}, "b": {"c": 3}}
    merged["a"]["x"] = 9
    assert base["a"]["x"] == 1
