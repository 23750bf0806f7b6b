"""Markdown pieces of the scale-out notebook: a planner's wording of what
:mod:`herald_capacity` computed (no fitting here), plus what the run's meta.json recorded about
the machine (load average, CPU per process) so the reader can judge the measurement.
"""

from __future__ import annotations

import math
from typing import Sequence

from herald_capacity import Analysis, Point, Run
from herald_capacity.models import CeilingKind, Model

__all__ = ["describe_run", "fit_table", "held_out_table", "measured_table", "planning_answer",
           "replicas_table"]


def _x(value: float | None) -> str:
    return "–" if value is None or not math.isfinite(value) else f"{value:,.0f}"


def _interval(iv, fmt=_x) -> str:
    if iv is None or not iv.has_error_bar:
        return f"{fmt(iv.value)} (no error bar)" if iv is not None else "–"
    return f"{fmt(iv.value)} [{fmt(iv.low)} – {fmt(iv.high)}]"


def describe_run(run: Run, fit_max_n: int | None = None) -> str:
    first = run.measurements[0].meta
    ns = ", ".join(str(m.n) for m in run.measurements)
    settings = first.get("settings", {})
    machine = first.get("machine", {})
    lines = [
        f"**Run** `{run.run_id}`: service **{first.get('service', '?')}** at N = {ns} "
        f"replicas ({machine.get('mode', 'mode not recorded')}).",
        f"**Measured**: {first.get('measured', 'Locust Requests/s')} "
        f"(Locust entry `{first.get('throughput_row', 'Aggregated')}`).",
        "**Settings** (the same at every N): " +
        ", ".join(f"{k} = {v}" for k, v in settings.items() if k != "jvm_options") + ".",
        f"**Machine**: {machine.get('cpus', '?')} CPUs ({machine.get('cpu_model', '?')}), "
        f"{machine.get('memory_gib', '?')} GiB, host {machine.get('host', '?')}; "
        f"git revision {first.get('git_revision', '?')}.",
    ]
    if fit_max_n is not None:
        lines.append(f"**Fit** uses N ≤ {fit_max_n} only; larger N are held out to check the "
                     f"prediction against a measurement.")
    return "\n\n".join(lines)


def planning_answer(analysis: Analysis) -> str:
    out = []
    for r in (analysis.amdahl, analysis.usl):
        if r.fit is None:
            out.append(f"- **{r.model.title}**: not fitted. {r.refusal}")
            continue
        f = r.fit
        sigma = f.interval("sigma")
        if sigma.has_error_bar:
            p = (f"P = 1 − σ = {1 - sigma.value:.4f} "
                 f"[{1 - sigma.high:.4f} – {1 - sigma.low:.4f}] ({analysis.confidence:.0%})")
        else:
            p = f"P = {1 - sigma.value:.4f} (exact through two points: no error bar)"
        c = f.ceiling()
        kind = {CeilingKind.ASYMPTOTE: "the asymptote λ/σ, never reached",
                CeilingKind.PEAK: f"the peak, X at N = {c.at_n}",
                CeilingKind.NONE: "none"}[c.kind]
        text = (f"- **{r.model.title}**: λ (one replica) = {_interval(f.interval('lambda'))}/s, "
                f"{p}. Ceiling quoted: {kind}: {c.describe()}.")
        if r.model is Model.USL:
            text += f" κ = {_interval(f.interval('kappa'), lambda v: f'{v:.3g}')}."
        if r.bootstrap is not None and c.kind is not CeilingKind.NONE:
            b = r.bootstrap.ceiling()
            high = "unbounded (some refits had no ceiling)" if b.high is None or \
                not math.isfinite(b.high) else f"{_x(b.high)}/s"
            text += f" Bootstrap range of the ceiling: {_x(b.low)}/s – {high}."
        for est in r.replicas:
            text += f" {est.message}"
        out.append(text)
    return "\n".join(out)


def measured_table(run: Run) -> str:
    rows = ["| N | throughput/s (median) | IQR | samples | stable | load avg (1 min) during run "
            "| machine CPU % | CPU cores of the measured replicas | started (UTC) |",
            "|---:|---:|---:|---:|:---:|---:|---:|---:|---|"]
    for m in run.measurements:
        load = m.meta.get("load_during_run", {})
        l1 = load.get("load1", {})
        cpu = load.get("machine_cpu_pct", {})
        by_process = load.get("cpu_cores_by_process", {}) or {}
        service = m.meta.get("service", "")
        replicas = sum(v for k, v in by_process.items() if k.startswith(service) and v)
        rows.append(
            f"| {m.n} | {_x(m.plateau.median)} | {_x(m.plateau.iqr)} | {m.plateau.samples} | "
            f"{'yes' if m.plateau.stable else 'NO'} | "
            f"{l1.get('mean', '–')} (max {l1.get('max', '–')}) | {cpu.get('mean', '–')} | "
            f"{replicas:.2f} | {m.meta.get('started_at', '–')} |")
    return "\n".join(rows)


def fit_table(analysis: Analysis) -> str:
    rows = ["| model | status | λ | σ | κ | P = 1 − σ | residual std. error |",
            "|---|---|---:|---:|---:|---:|---:|"]
    for r in (analysis.amdahl, analysis.usl):
        if r.fit is None:
            rows.append(f"| {r.model.title} | refused: {r.refusal} | | | | | |")
            continue
        f = r.fit
        sigma = f.interval("sigma")
        kappa = _interval(f.interval("kappa"), lambda v: f"{v:.3g}") \
            if r.model is Model.USL else "–"
        rse = f.residual_standard_error
        rows.append(
            f"| {r.model.title} | {r.status} | {_interval(f.interval('lambda'))} | "
            f"{_interval(sigma, lambda v: f'{v:.4f}')} | {kappa} | {1 - sigma.value:.4f} | "
            f"{_x(rse) if rse is not None else '–'} |")
    rows.append("")
    rows.append(f"Intervals: {analysis.confidence:.0%}, from the fit's covariance "
                f"(t-distribution). No R²: it is not valid for nonlinear regression.")
    return "\n".join(rows)


def replicas_table(analysis: Analysis) -> str:
    if not analysis.targets:
        return "No target given (`--target`)."
    rows = ["| target/s | model | replicas | predicted X at those replicas | bootstrap range "
            "| note |", "|---:|---|---:|---:|---|---|"]
    for i, target in enumerate(analysis.targets):
        for r in (analysis.amdahl, analysis.usl):
            if r.fit is None:
                rows.append(f"| {_x(target)} | {r.model.title} | – | – | – | model refused |")
                continue
            est = r.replicas[i]
            boot = r.replica_intervals[i]
            boot_text = "–" if boot is None else (
                f"{boot.low:g} – {'out of reach' if math.isinf(boot.high) else f'{boot.high:g}'}"
                f" ({boot.unreachable_fraction:.0%} of refits: out of reach)")
            if not est.reachable:
                rows.append(f"| {_x(target)} | {r.model.title} | **out of reach** | – | "
                            f"{boot_text} | {est.message} |")
                continue
            predicted = r.fit.predict(est.replicas).throughput
            rows.append(f"| {_x(target)} | {r.model.title} | {est.replicas} | "
                        f"{_interval(predicted)} | {boot_text} | "
                        f"{est.replicas / analysis.max_measured_n:.2g}× the largest measured N |")
    return "\n".join(rows)


def held_out_table(analysis: Analysis, held_out: Sequence[Point]) -> str:
    if not held_out and not any(r.predictions for r in analysis.results):
        return "No N held out and no prediction asked for."
    measured = {p.n: p.throughput for p in held_out}
    rows = ["| N | model | predicted X (CI of the fitted curve) | measured | measured vs "
            "predicted |", "|---:|---|---:|---:|---:|"]
    for r in (analysis.amdahl, analysis.usl):
        for pred in r.predictions:
            got = measured.get(pred.n)
            diff = f"{(got - pred.throughput.value) / pred.throughput.value:+.1%}" \
                if got is not None else "–"
            inside = ""
            if got is not None and pred.throughput.has_error_bar:
                inside = " (inside the band)" if pred.throughput.low <= got <= pred.throughput.high \
                    else " (outside the band)"
            rows.append(f"| {pred.n:g} | {r.model.title} | {_interval(pred.throughput)} | "
                        f"{_x(got)} | {diff}{inside} |")
    return "\n".join(rows)
