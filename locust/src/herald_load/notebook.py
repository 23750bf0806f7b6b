"""Executes the scale-out notebook headless (nbconvert) into an HTML report without code cells,
and writes the capacity package's own report (HTML + JSON) beside it.

The notebook reads its parameters from the environment (HERALD_REPORT_*), so it runs the same
under Jupyter and here; the committed notebook carries no outputs.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "scale-out.ipynb"

__all__ = ["NOTEBOOK", "execute_report"]


def execute_report(run_dir: Path, *, out_dir: Path | None = None, targets: Sequence[float] = (),
                   predict: int | None = None, fit_max_n: int | None = None,
                   warmup_s: float = 90.0, timeout_s: int = 300) -> Path:
    """Runs the notebook on ``run_dir``; returns the HTML report's path."""
    import nbformat
    from nbconvert import HTMLExporter
    from nbconvert.preprocessors import ExecutePreprocessor

    from herald_capacity import PlateauSettings, build_report, load_run

    run_dir = Path(run_dir).resolve()
    out_dir = Path(out_dir or run_dir / "report").resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    env = {"HERALD_REPORT_RUN": str(run_dir),
           "HERALD_REPORT_TARGETS": ",".join(f"{t:g}" for t in targets),
           "HERALD_REPORT_PREDICT": "" if predict is None else str(predict),
           "HERALD_REPORT_FIT_MAX_N": "" if fit_max_n is None else str(fit_max_n),
           "HERALD_REPORT_WARMUP": f"{warmup_s:g}"}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)     # the kernel inherits this process's environment
    try:
        notebook = nbformat.read(NOTEBOOK, as_version=4)
        ExecutePreprocessor(timeout=timeout_s, kernel_name="python3").preprocess(
            notebook, {"metadata": {"path": str(NOTEBOOK.parent)}})
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    exporter = HTMLExporter(exclude_input=True, exclude_input_prompt=True,
                            exclude_output_prompt=True)
    body, _ = exporter.from_notebook_node(notebook)
    html = out_dir / "scale-out.html"
    html.write_text(body, encoding="utf-8")

    run = load_run(run_dir, PlateauSettings(warmup_s=warmup_s))
    points = [p for p in run.points if fit_max_n is None or p.n <= fit_max_n]
    predict_at = sorted({p.n for p in run.points if fit_max_n is not None and p.n > fit_max_n} |
                        ({predict} if predict else set()))
    title = f"Herald scale-out report: {run.run_id}" + (
        f" (fit on N ≤ {fit_max_n})" if fit_max_n is not None else "")
    source = run_dir if fit_max_n is None else points   # a run folder keeps the run's caveats
    build_report(source, targets=targets, predict_at=predict_at, title=title,
                 plateau_settings=PlateauSettings(warmup_s=warmup_s)).write(
        out_dir / "capacity.html", out_dir / "capacity.json")
    return html
