"""Generates a chart's values.schema.json from its annotated values.yaml (the file helm-docs reads).

    python3 scripts/k8s/chart_schema.py CHART_DIR [OUT_FILE]

What a value's schema is made of:
- its type, from its default (boolean, integer, number, string, array, object);
- a mapping documented as a whole (a `# --` comment on its key, as helm-docs reads it) is one value,
  a free-form object; an undocumented mapping is a group whose keys are listed and closed
  (additionalProperties: false), so a misspelt key is refused;
- `description`: the `# --` comment;
- `# @schema {...}` lines in the comment above the key, before its `# --` line (where helm-docs does
  not look): JSON objects merged into the generated schema, in order (objects merge key by key,
  anything else replaces).
A dependency imported into the chart's top level (Chart.yaml `import-values: [{child: X, parent: .}]`,
from a `file://` repository) contributes the schema of its values under X first; the chart's own
values are merged over it. So the shared part (herald-lib's) is written once and composed into each
service chart's schema. Helm adds `global` and one key per dependency to the values: both are allowed.

Needs PyYAML (its node tree gives each key's line, so the comment above it can be read).
"""

import copy
import json
import re
import sys
from pathlib import Path

import yaml

SCHEMA_MARK = "# @schema "
DOC_MARK = "# --"


def merge(base, override):
    """base with override merged in: objects key by key, anything else replaced (copies, no aliasing)."""
    if not (isinstance(base, dict) and isinstance(override, dict)):
        return copy.deepcopy(override)
    merged = copy.deepcopy(base)
    for key, value in override.items():
        merged[key] = merge(merged[key], value) if key in merged else copy.deepcopy(value)
    return merged


def comment_above(lines, key_node):
    """The comment lines (stripped) directly above a key that starts its line; [] otherwise."""
    line, column = key_node.start_mark.line, key_node.start_mark.column
    if lines[line][:column].strip():
        return []  # a key inside a flow mapping: the comment above belongs to the enclosing key
    block = []
    i = line - 1
    while i >= 0 and lines[i].strip().startswith("#"):
        block.insert(0, lines[i].strip())
        i -= 1
    return block


def parse_comment(block, where):
    """(description or None, [annotation objects]) of a comment block."""
    annotations, description = [], None
    for n, text in enumerate(block):
        if text.startswith(DOC_MARK):
            doc = [text[len(DOC_MARK):]] + [t.lstrip("#") for t in block[n + 1:]]
            description = " ".join(" ".join(doc).split())
            # helm-docs' type hint, "(int) ...", for a value whose default (null) shows no type
            description = re.sub(r"^\([a-z]+\) ", "", description)
            break
        if text.startswith(SCHEMA_MARK):
            try:
                annotation = json.loads(text[len(SCHEMA_MARK):])
            except json.JSONDecodeError as e:
                raise ValueError(f"{where}: # @schema is not JSON: {e}") from e
            if not isinstance(annotation, dict):
                raise ValueError(f"{where}: # @schema must be a JSON object")
            annotations.append(annotation)
    return description, annotations


def scalar_type(value):
    if isinstance(value, bool):
        return {"type": "boolean"}
    if isinstance(value, int):
        return {"type": "integer"}
    if isinstance(value, float):
        return {"type": "number"}
    if isinstance(value, str):
        return {"type": "string"}
    return {}  # null: any type


def value_schema(node, value, lines, path, documented):
    if isinstance(node, yaml.MappingNode):
        if documented:
            return {"type": "object"}
        return mapping_schema(node, value, lines, path)
    if isinstance(node, yaml.SequenceNode):
        return {"type": "array"}
    return scalar_type(value)


def mapping_schema(node, value, lines, path):
    properties = {}
    for key_node, child_node in node.value:
        key = key_node.value
        where = f"{path}.{key}" if path else key
        description, annotations = parse_comment(comment_above(lines, key_node), where)
        schema = value_schema(child_node, value[key], lines, where, description is not None)
        if description:
            schema["description"] = description
        for annotation in annotations:
            schema = merge(schema, annotation)
        properties[key] = schema
    return {"type": "object", "properties": properties, "additionalProperties": False}


def values_schema(values_file):
    """The schema of a values file's top-level mapping (without the document keywords)."""
    text = Path(values_file).read_text()
    node = yaml.compose(text)
    value = yaml.safe_load(text)
    if node is None:
        return {"type": "object", "properties": {}, "additionalProperties": False}
    return mapping_schema(node, value, text.splitlines(), "")


def imported_schemas(chart_dir, chart):
    """Schemas of the values that dependencies import into the chart's top level."""
    for dep in chart.get("dependencies") or []:
        for spec in dep.get("import-values") or []:
            if not (isinstance(spec, dict) and spec.get("parent") == "."):
                raise ValueError(f"{chart_dir}: only import-values {{child: X, parent: .}} is supported")
            repository = dep.get("repository", "")
            if not repository.startswith("file://"):
                raise ValueError(f"{chart_dir}: {dep['name']} imports values but is not a file:// dependency")
            dep_dir = (Path(chart_dir) / repository[len("file://"):]).resolve()
            schema = values_schema(dep_dir / "values.yaml")
            for key in spec["child"].split("."):
                schema = schema["properties"][key]
            yield schema


def chart_schema(chart_dir):
    chart_dir = Path(chart_dir)
    chart = yaml.safe_load((chart_dir / "Chart.yaml").read_text())
    schema = {"type": "object", "properties": {}, "additionalProperties": False}
    for imported in imported_schemas(chart_dir, chart):
        schema = merge(schema, imported)
    schema = merge(schema, values_schema(chart_dir / "values.yaml"))
    helm_keys = {"global": {"type": "object", "description": "Helm's global values"}}
    for dep in chart.get("dependencies") or []:
        helm_keys[dep["name"]] = {"type": "object", "description": f"values of the {dep['name']} chart"}
    schema["properties"] = merge(helm_keys, schema["properties"])
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": f"Values of the Herald {chart['name']} chart (generated from values.yaml by scripts/k8s/chart_schema.py)",
        **schema,
    }


def render(chart_dir):
    return json.dumps(chart_schema(chart_dir), indent=2) + "\n"


def main(argv):
    if len(argv) not in (2, 3):
        sys.exit(f"usage: {argv[0]} CHART_DIR [OUT_FILE]")
    out = Path(argv[2]) if len(argv) == 3 else Path(argv[1]) / "values.schema.json"
    out.write_text(render(argv[1]))


if __name__ == "__main__":
    main(sys.argv)
