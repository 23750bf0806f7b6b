"""Self-contained HTML scale-out report and its JSON summary.

The report says what was measured (N, plateau throughput, spread, efficiency), the USL and
Amdahl fits with their intervals (or why a fit was refused), the ceiling of each model and which
kind it is (an asymptote, or X at a stated N), the replicas needed for each target (or why it is
out of reach), and caveats. Figures are embedded as base64 PNG when matplotlib is installed.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as _dt
import html
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from . import plots
from .analysis import Analysis, ModelResult, analyse
from .measurements import Point
from .models import CeilingKind, Interval, Model
from .runs import PlateauSettings, Run, load_run, read_points_csv

__all__ = ["Report", "build_report"]


@dataclass(frozen=True)
class Report:
    """An analysis plus where it came from; renders to HTML and to a JSON-ready dict."""

    analysis: Analysis
    title: str
    source: str
    run: Run | None = None
    generated_at: str = ""

    # ---------------------------------------------------------------------------------- JSON

    def summary(self) -> dict[str, Any]:
        a = self.analysis
        eff = {e.n: e for e in a.efficiency}
        points = []
        for p in a.points:
            points.append({"n": p.n, "throughput": p.throughput, "spread_iqr": p.spread,
                           "samples": p.samples, "efficiency": eff[p.n].efficiency,
                           "superlinear": eff[p.n].superlinear, "source": p.source})
        run = None
        if self.run is not None:
            run = {
                "run_id": self.run.run_id,
                "path": str(self.run.path),
                "plateau_settings": dataclasses.asdict(self.run.settings),
                "measurements": [{
                    "n": m.n, "history": str(m.history), "meta": m.meta,
                    "plateau": {"median": m.plateau.median, "q1": m.plateau.q1,
                                "q3": m.plateau.q3, "samples": m.plateau.samples,
                                "start": m.plateau.start, "end": m.plateau.end,
                                "max_users": m.plateau.max_users, "ramp_end": m.plateau.ramp_end,
                                "failures_per_s": m.plateau.failures_per_s,
                                "drift": m.plateau.drift, "stable": m.plateau.stable},
                } for m in self.run.measurements],
            }
        return _clean({
            "title": self.title,
            "source": self.source,
            "generated_at": self.generated_at,
            "confidence": a.confidence,
            "run": run,
            "points": points,
            "targets": list(a.targets),
            "models": {r.model.value: _model_summary(r) for r in a.results},
            "caveats": list(a.caveats),
        })

    def to_json(self) -> str:
        return json.dumps(self.summary(), indent=2, ensure_ascii=False, allow_nan=False)

    # ---------------------------------------------------------------------------------- HTML

    def html(self, with_plots: bool = True) -> str:
        a = self.analysis
        parts = [f"<h1>{_e(self.title)}</h1>", self._header()]
        parts.append("<h2>Answer</h2>" + self._answer())
        parts.append("<h2>What was measured</h2>" + self._measured())
        parts.append("<h2>Fits</h2>" + "".join(self._fit_section(r) for r in a.results))
        if a.targets:
            parts.append("<h2>Replicas for the targets</h2>" + self._replicas())
        if any(r.predictions for r in a.results):
            parts.append("<h2>Predictions</h2>" + self._predictions())
        parts.append("<h2>Figures</h2>" + (self._figures() if with_plots else
                                           "<p>Figures not requested.</p>"))
        parts.append("<h2>Caveats</h2>" + (
            "<ul>" + "".join(f"<li>{_e(c)}</li>" for c in a.caveats) + "</ul>"
            if a.caveats else "<p>None raised.</p>"))
        parts.append("<h2>Method</h2>" + self._method())
        body = "\n".join(parts)
        return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                f"<title>{_e(self.title)}</title><style>{_CSS}</style></head>\n"
                f"<body>\n{body}\n</body></html>\n")

    def write(self, html_path: str | Path, json_path: str | Path | None = None,
              with_plots: bool = True) -> None:
        Path(html_path).write_text(self.html(with_plots), encoding="utf-8")
        if json_path is not None:
            Path(json_path).write_text(self.to_json() + "\n", encoding="utf-8")

    # -- sections

    def _header(self) -> str:
        rows = [("Source", self.source), ("Generated", self.generated_at),
                ("Confidence level", f"{self.analysis.confidence:.0%}")]
        if self.run is not None:
            metas = [m.meta for m in self.run.measurements]
            for key, label in (("scenario", "Scenario"), ("git_revision", "Git revision"),
                               ("machine", "Machine"), ("settings", "Settings")):
                values = {json.dumps(m.get(key), sort_keys=True) for m in metas if key in m}
                if values:
                    rows.append((label, " | ".join(sorted(values))))
            starts = [m["started_at"] for m in metas if "started_at" in m]
            ends = [m["ended_at"] for m in metas if "ended_at" in m]
            if starts and ends:
                rows.append(("Measured", f"{min(starts)} to {max(ends)}"))
        return _table(["", ""], rows, header=False)

    def _answer(self) -> str:
        items = []
        for r in self.analysis.results:
            if r.fit is None:
                items.append(f"<li><b>{r.model.title}</b>: {_e(r.refusal)}</li>")
                continue
            exact = " <b>(exact through two points: no error bar)</b>" if r.fit.exact else ""
            text = f"<b>{r.model.title}</b>{exact}: ceiling: {_e(r.fit.ceiling().describe())}."
            for est in r.replicas:
                text += f" {_e(est.message)}"
            items.append(f"<li>{text}</li>")
        return "<ul>" + "".join(items) + "</ul>"

    def _measured(self) -> str:
        a = self.analysis
        eff = {e.n: e for e in a.efficiency}
        plateaus = {m.n: m.plateau for m in self.run.measurements} if self.run else {}
        base = a.efficiency[0].base_n
        eff_label = "Efficiency X(N)/(N·X(1))" if base == 1 else f"Efficiency (vs N = {base:g})"
        head = ["N", "Plateau X (median, req/s)", "Spread (IQR, req/s)", "Samples", eff_label]
        if plateaus:
            head += ["Window (s)", "Users", "Failures/s", "Stable"]
        rows = []
        for p in a.points:
            e = eff[p.n]
            flag = " ⚠ &gt; 1" if e.superlinear else ""
            row = [f"{p.n:g}", _x(p.throughput),
                   "–" if p.spread is None else f"{_x(p.spread)} ({p.spread / p.throughput:.1%})",
                   "–" if p.samples is None else str(p.samples),
                   _Raw(f"{e.efficiency:.3f}{flag}", "warn" if e.superlinear else "")]
            plat = plateaus.get(p.n)
            if plat is not None:
                row += [f"{plat.end - plat.start:g}", str(plat.max_users),
                        f"{plat.failures_per_s:,.2f}",
                        "yes" if plat.stable else f"no (drift {plat.drift:+.0%})"]
            rows.append(row)
        return _table(head, rows)

    def _fit_section(self, r: ModelResult) -> str:
        title = f"<h3>{r.model.title}: X(N) = {_FORMULA[r.model]}</h3>"
        if r.fit is None:
            return title + f"<p class=\"refused\">{_e(r.refusal)}</p>"
        f = r.fit
        level = f"{self.analysis.confidence:.0%}"
        if f.exact:
            rows = [[_label(name), _g(value), "none (exact)"]
                    for name, value in f.parameters.items()]
            note = ("<p class=\"warn\">Determined exactly by two points: there is no error bar, "
                    "and no number below should be read as more precise than the two "
                    "measurements.</p>")
            rows.append(["P = 1 − σ", _g(f.parallel_fraction), "none (exact)"])
            return title + note + _table(["Parameter", "Value", "Interval"], rows) + \
                self._ceiling(r)
        head = ["Parameter", "Estimate", f"{level} CI (covariance, t, {f.dof} dof)"]
        if r.bootstrap is not None:
            head.append(f"{level} bootstrap ({r.bootstrap.resamples} refits)")
        rows = []
        for name, value in f.parameters.items():
            row = [_label(name), _g(value), _ci(f.interval(name), _g)]
            if r.bootstrap is not None:
                row.append(_ci(r.bootstrap.parameter(name), _g))
            rows.append(row)
        if r.model is Model.AMDAHL:
            rows.append(["P = 1 − σ", _g(f.parallel_fraction), ""] +
                        ([""] if r.bootstrap is not None else []))
        stats = (f"<p>Residual standard error {_x(f.residual_standard_error)} req/s on {f.dof} "
                 f"degrees of freedom ({len(f.n)} points, {len(f.parameters)} parameters). "
                 f"R² is not reported: it is not valid for nonlinear regression.</p>")
        return title + _table(head, rows) + stats + self._ceiling(r)

    def _ceiling(self, r: ModelResult) -> str:
        c = r.fit.ceiling()
        kind = {CeilingKind.ASYMPTOTE: "asymptote λ/σ (never reached)",
                CeilingKind.PEAK: f"X at N = {c.at_n} (floor of N*)",
                CeilingKind.NONE: "none"}[c.kind]
        text = f"<p><b>Ceiling quoted: {kind}.</b> {_e(c.describe())}."
        if r.bootstrap is not None and c.kind is not CeilingKind.NONE:
            text += (f" Bootstrap {self.analysis.confidence:.0%} range: "
                     f"{_ci(r.bootstrap.ceiling(), _x)} req/s")
            if c.kind is CeilingKind.PEAK:
                text += f"; N* {_ci(r.bootstrap.peak_n(), _n)}"
            text += "."
        return text + "</p>"

    def _replicas(self) -> str:
        head = ["Target (req/s)", "Model", "Replicas", "N (continuous)", "Predicted X at replicas",
                "Bootstrap replicas", "× largest measured N", "Notes"]
        rows = []
        max_n = self.analysis.max_measured_n
        for i, target in enumerate(self.analysis.targets):
            for r in self.analysis.results:
                if r.fit is None:
                    rows.append([_x(target), r.model.title, "–", "–", "–", "–", "–",
                                 "model refused (see Fits)"])
                    continue
                est = r.replicas[i]
                boot = r.replica_intervals[i]
                boot_text = "–" if boot is None else _replica_range(boot)
                if not est.reachable:
                    rows.append([_x(target), r.model.title,
                                 _Raw("out of reach", "warn"), "–", "–", boot_text, "–",
                                 est.message])
                    continue
                predicted = r.fit.predict(est.replicas)
                note = "exact two-point Amdahl: no error bar" if r.fit.exact else ""
                rows.append([_x(target), r.model.title, str(est.replicas), f"{est.n_exact:.5g}",
                             _ci(predicted.throughput, _x, with_value=True), boot_text,
                             f"{est.replicas / max_n:.3g}", note])
        return _table(head, rows)

    def _predictions(self) -> str:
        head = ["N", "Model", f"X(N) with {self.analysis.confidence:.0%} CI (req/s)",
                "× largest measured N"]
        rows = []
        for r in self.analysis.results:
            for p in r.predictions:
                rows.append([f"{p.n:g}", r.model.title, _ci(p.throughput, _x, with_value=True),
                             f"{p.extrapolation:.3g}"])
        return _table(head, rows)

    def _figures(self) -> str:
        if not plots.available():
            return ("<p>Figures omitted: matplotlib is not installed "
                    "(<code>pip install 'herald-capacity[report]'</code>).</p>")
        out = []
        for caption, render in (
                ("Measured plateau throughput and fitted curves with their confidence bands.",
                 plots.scaling_png),
                ("Scaling efficiency per N; above 1 (red) needs investigating.",
                 plots.efficiency_png)):
            data = base64.b64encode(render(self.analysis)).decode("ascii")
            out.append(f"<figure><img alt=\"{_e(caption)}\" src=\"data:image/png;base64,{data}\">"
                       f"<figcaption>{_e(caption)}</figcaption></figure>")
        return "".join(out)

    def _method(self) -> str:
        items = [
            "Throughput per N is the saturation plateau of Locust's Requests/s (Aggregated rows "
            "of *_stats_history.csv): rows at the maximum user count, after a warm-up and before "
            "a cool-down; median and interquartile range. Never the whole-run average.",
            "Both models are fitted by bounded nonlinear least squares (scipy least_squares, "
            "trust region reflective) with λ, σ, κ all free (λ, κ ≥ 0, 0 ≤ σ ≤ 1); λ is not "
            "fixed to X(1).",
            "Intervals: covariance of the fit with a t-distribution on n − p degrees of freedom "
            "(parameters, fitted curve); residual bootstrap percentiles for the parameters, the "
            "ceiling, N* and replicas. A fit that leaves no degree of freedom is refused.",
            "Replicas: Amdahl N = T(1−σ)/(λ−Tσ) while T < λ/σ; USL the smaller root of "
            "Tκ N² + (Tσ − Tκ − λ) N + T(1−σ) = 0; then the smallest whole N with X(N) ≥ T.",
        ]
        if self.run is not None:
            s = self.run.settings
            tail = "all of it" if s.tail_s is None else f"the last {s.tail_s:g} s"
            items.insert(1, f"Plateau settings: warm-up {s.warmup_s:g} s, cool-down "
                            f"{s.cooldown_s:g} s, tail: {tail}, "
                            f"at least {s.min_samples} samples, unstable if the halves differ by "
                            f"more than {s.max_drift:.0%}.")
        return "<ul>" + "".join(f"<li>{_e(i)}</li>" for i in items) + "</ul>"


def build_report(source: str | Path | Sequence[Point], *, targets: Sequence[float] = (),
                 predict_at: Sequence[float] = (), confidence: float = 0.95,
                 bootstrap_resamples: int = 1000, seed: int | None = 0,
                 plateau_settings: PlateauSettings | None = None,
                 title: str | None = None) -> Report:
    """Analyse a run folder (``runs/<run-id>/``), a points CSV, or a sequence of points."""
    run = None
    if isinstance(source, (str, Path)):
        path = Path(source)
        if path.is_dir():
            run = load_run(path, plateau_settings or PlateauSettings())
            points = run.points
            label = str(path)
            default_title = f"Herald scale-out report: {run.run_id}"
        else:
            points = read_points_csv(path)
            label = str(path)
            default_title = f"Herald scale-out report: {path.stem}"
    else:
        points = list(source)
        label = f"{len(points)} points given directly"
        default_title = "Herald scale-out report"
    analysis = analyse(points, targets=targets, predict_at=predict_at, confidence=confidence,
                       bootstrap_resamples=bootstrap_resamples, seed=seed,
                       extra_caveats=run.caveats() if run else ())
    generated = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()
    return Report(analysis, title or default_title, label, run, generated)


# -------------------------------------------------------------------------------------------
# Helpers

_FORMULA = {Model.AMDAHL: "λN / (1 + σ(N−1))", Model.USL: "λN / (1 + σ(N−1) + κN(N−1))"}
_GREEK = {"lambda": "λ", "sigma": "σ", "kappa": "κ"}

_CSS = """
body { font-family: system-ui, sans-serif; max-width: 70rem; margin: 2rem auto; padding: 0 1rem;
       color: #222; line-height: 1.4; }
table { border-collapse: collapse; margin: 0.5rem 0 1rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.6rem; text-align: right; vertical-align: top; }
th { background: #f3f3f3; }
td:first-child, th:first-child { text-align: left; }
.warn { color: #a40000; font-weight: bold; }
.refused { color: #a40000; }
figure { margin: 1rem 0; } img { max-width: 100%; }
"""


class _Raw(str):
    """Trusted HTML for a table cell, optionally with a CSS class."""

    def __new__(cls, value: str, css: str = ""):
        obj = super().__new__(cls, value)
        obj.css = css
        return obj


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _cell(value: Any, tag: str) -> str:
    if isinstance(value, _Raw):
        cls = f' class="{value.css}"' if value.css else ""
        return f"<{tag}{cls}>{value}</{tag}>"
    return f"<{tag}>{_e(value)}</{tag}>"


def _table(head: Sequence[str], rows: Sequence[Sequence[Any]], header: bool = True) -> str:
    out = ["<table>"]
    if header:
        out.append("<tr>" + "".join(_cell(h, "th") for h in head) + "</tr>")
    for row in rows:
        out.append("<tr>" + "".join(_cell(v, "td") for v in row) + "</tr>")
    out.append("</table>")
    return "".join(out)


def _x(value: float | None) -> str:
    """A throughput: thousands separators, one decimal."""
    if value is None:
        return "–"
    if not math.isfinite(value):
        return "∞"
    return f"{value:,.1f}"


def _n(value: float) -> str:
    """A continuous replica count such as N*."""
    return "∞" if math.isinf(value) else f"{value:.3g}"


def _g(value: float) -> str:
    """A model parameter: six significant digits."""
    return f"{value:.6g}"


def _ci(interval: Interval, fmt, with_value: bool = False) -> str:
    prefix = f"{fmt(interval.value)} " if with_value else ""
    if not interval.has_error_bar:
        return prefix + "(no error bar)"
    return f"{prefix}[{fmt(interval.low)}, {fmt(interval.high)}]"


def _replica_range(boot) -> str:
    high = "out of reach" if math.isinf(boot.high) else f"{boot.high:g}"
    low = "out of reach" if math.isinf(boot.low) else f"{boot.low:g}"
    text = f"[{low}, {high}]"
    if boot.unreachable_fraction > 0:
        text += f"; unreachable in {boot.unreachable_fraction:.0%} of refits"
    return text


def _label(name: str) -> str:
    return f"{_GREEK[name]} ({name})"


def _interval_summary(interval: Interval) -> dict[str, Any]:
    return {"value": interval.value, "low": interval.low, "high": interval.high}


def _model_summary(r: ModelResult) -> dict[str, Any]:
    out: dict[str, Any] = {"model": r.model.value, "status": r.status, "refusal": r.refusal}
    if r.fit is None:
        return out
    f = r.fit
    c = f.ceiling()
    params = {}
    for name in f.parameters:
        entry = _interval_summary(f.interval(name))
        if r.bootstrap is not None:
            b = r.bootstrap.parameter(name)
            entry["bootstrap_low"], entry["bootstrap_high"] = b.low, b.high
        params[name] = entry
    ceiling = {"kind": c.kind.value, "throughput": c.throughput, "at_n": c.at_n,
               "n_star": c.n_star, "best_n": c.best_n, "best_throughput": c.best_throughput,
               "limited_by": c.limited_by, "description": c.describe()}
    if r.bootstrap is not None and c.kind is not CeilingKind.NONE:
        b = r.bootstrap.ceiling()
        ceiling["bootstrap_low"], ceiling["bootstrap_high"] = b.low, b.high
    replicas = []
    for est, boot in zip(r.replicas, r.replica_intervals, strict=True):
        entry = {"target": est.target, "reachable": est.reachable, "replicas": est.replicas,
                 "n_exact": est.n_exact, "throughput": est.throughput,
                 "unreachable": est.unreachable.value if est.unreachable else None,
                 "message": est.message}
        if boot is not None:
            entry["bootstrap"] = {"low": boot.low, "high": boot.high,
                                  "unreachable_fraction": boot.unreachable_fraction}
        replicas.append(entry)
    out.update({
        "exact": f.exact,
        "parameters": params,
        "parallel_fraction": f.parallel_fraction,
        "at_bound": list(f.at_bound),
        "dof": f.dof,
        "residual_standard_error": f.residual_standard_error,
        "bootstrap_resamples": r.bootstrap.resamples if r.bootstrap else 0,
        "ceiling": ceiling,
        "replicas": replicas,
        "predictions": [{"n": p.n, **_interval_summary(p.throughput),
                         "extrapolation": p.extrapolation} for p in r.predictions],
    })
    return out


def _clean(value: Any) -> Any:
    """JSON-safe: non-finite floats become None (JSON has no infinity)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        return _clean(value.item())
    return value
