"""The committed notebook carries no outputs, and executes headless into a report."""

from __future__ import annotations

import json
import re

import nbformat
import pytest

from conftest import write_run
from herald_load.notebook import NOTEBOOK, execute_report


def test_committed_notebook_has_no_outputs():
    notebook = nbformat.read(NOTEBOOK, as_version=4)

    code = [c for c in notebook.cells if c.cell_type == "code"]
    assert code, "the notebook has no code cells"
    for cell in code:
        assert cell.outputs == [], f"cell {cell.source[:40]!r} carries outputs"
        assert cell.execution_count is None


def test_notebook_only_calls_the_packages():
    source = "\n".join(c.source for c in nbformat.read(NOTEBOOK, as_version=4).cells
                       if c.cell_type == "code")

    assert "least_squares" not in source and "curve_fit" not in source
    assert "herald_capacity" in source


def test_notebook_executes_headless_into_a_report_a_planner_can_read(tmp_path):
    # Amdahl with lambda = 300/s, sigma = 0.05: measured N = 1..4, N = 5 held out.
    run_dir = write_run(tmp_path, {n: 300 * n / (1 + 0.05 * (n - 1)) for n in range(1, 6)},
                        noise=0.005)

    html = execute_report(run_dir, targets=[1500, 7000], fit_max_n=4, warmup_s=15).read_text()

    text = re.sub(r"<(style|script)\b.*?</\1>", " ", html, flags=re.S)
    text = re.sub(r"<[^>]+>", " ", text)
    assert "Traceback" not in text and "Error" not in text
    p = float(re.search(r"P = 1 − σ = (0\.\d+)", text).group(1))
    assert p == pytest.approx(0.95, abs=0.01)
    assert "Ceiling quoted: the asymptote" in text
    assert "out of reach" in text                       # 7000/s is above λ/σ = 6000/s
    assert re.search(r"\|?\s*5\s+Amdahl", text)          # the held-out N = 5 prediction
    assert "data:image/png;base64" in html               # measured vs fitted, efficiency
    summary = json.loads((run_dir / "report" / "capacity.json").read_text())
    assert summary["models"]["amdahl"]["parameters"]["sigma"]["value"] == pytest.approx(0.05, abs=0.01)
