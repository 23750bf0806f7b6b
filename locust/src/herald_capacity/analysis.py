"""From measured points to planning answers: both models, intervals, replicas and caveats.

:func:`analyse` never raises for too few points: a model that cannot be fitted with an error
estimate is *refused* with the reason (shown in the report), and two points get the exact
Amdahl curve, marked as having no error bar.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from .bootstrap import BootstrapResult, ReplicaInterval, bootstrap
from .errors import CapacityError
from .measurements import Efficiency, Point, efficiency
from .models import (Model, Prediction, ReplicaEstimate, ScalabilityFit, exact_two_point_amdahl,
                     fit)

__all__ = ["Analysis", "ModelResult", "analyse", "FEW_POINTS", "FAR_EXTRAPOLATION", "UNSTEADY_DRIFT"]

# Below this many points the fit is weakly supported (Go usl refuses to fit fewer than 6).
FEW_POINTS = 6
# Answers at more than this multiple of the largest measured N are flagged as far extrapolation.
FAR_EXTRAPOLATION = 2.0
# A plateau whose second half ran this much faster or slower than its first is not a steady
# state: under a small CPU limit the JIT was still compiling (gateways at 50m took 10-15 min).
UNSTEADY_DRIFT = 0.10


@dataclass(frozen=True)
class ModelResult:
    """One model's answers, or why it was refused (``fit`` None, ``refusal`` set)."""

    model: Model
    fit: ScalabilityFit | None
    refusal: str | None
    bootstrap: BootstrapResult | None
    replicas: tuple[ReplicaEstimate, ...]
    replica_intervals: tuple[ReplicaInterval | None, ...]
    predictions: tuple[Prediction, ...]

    @property
    def status(self) -> str:
        """"fitted", "exact" (two-point Amdahl, no error bar) or "refused"."""
        if self.fit is None:
            return "refused"
        return "exact" if self.fit.exact else "fitted"


@dataclass(frozen=True)
class Analysis:
    points: tuple[Point, ...]
    efficiency: tuple[Efficiency, ...]
    usl: ModelResult
    amdahl: ModelResult
    targets: tuple[float, ...]
    confidence: float
    caveats: tuple[str, ...]

    @property
    def results(self) -> tuple[ModelResult, ModelResult]:
        return (self.usl, self.amdahl)

    @property
    def max_measured_n(self) -> float:
        return max(p.n for p in self.points)


def _model_result(model: Model, n: list[float], x: list[float], targets: Sequence[float],
                  predict_at: Sequence[float], confidence: float, resamples: int,
                  seed: int | None) -> ModelResult:
    try:
        fitted = fit(model, n, x, confidence=confidence)
    except CapacityError as refused:
        if not (model is Model.AMDAHL and len(n) == 2 and len(set(n)) == 2):
            return ModelResult(model, None, str(refused), None, (), (), ())
        try:
            fitted = exact_two_point_amdahl(n, x)
        except CapacityError as does_not_apply:
            return ModelResult(model, None, str(does_not_apply), None, (), (), ())
    boot = None
    if not fitted.exact and resamples > 0:
        boot = bootstrap(fitted, resamples, seed)
    replicas = tuple(fitted.replicas_for(t) for t in targets)
    intervals = tuple(boot.replicas(t) if boot else None for t in targets)
    predictions = tuple(fitted.predict(k) for k in predict_at)
    return ModelResult(model, fitted, None, boot, replicas, intervals, predictions)


def analyse(points: Sequence[Point], *, targets: Sequence[float] = (),
            predict_at: Sequence[float] = (), confidence: float = 0.95,
            bootstrap_resamples: int = 1000, seed: int | None = 0,
            extra_caveats: Sequence[str] = ()) -> Analysis:
    """Fit USL and Amdahl to ``points`` and answer the planning questions.

    ``targets`` are throughputs (requests/s) to find replica counts for; ``predict_at`` replica
    counts to predict throughput at. ``bootstrap_resamples`` = 0 skips the bootstrap (the
    covariance intervals remain). ``extra_caveats`` (e.g. from the run) are listed first.
    """
    if not points:
        raise CapacityError("no measured points: nothing to analyse")
    for t in targets:
        if not (math.isfinite(t) and t > 0):
            raise ValueError(f"targets must be positive throughputs, got {t!r}")
    points = tuple(sorted(points, key=lambda p: p.n))
    n = [float(p.n) for p in points]
    x = [float(p.throughput) for p in points]
    eff = tuple(efficiency(n, x))
    usl = _model_result(Model.USL, n, x, targets, predict_at, confidence, bootstrap_resamples,
                        seed)
    amdahl = _model_result(Model.AMDAHL, n, x, targets, predict_at, confidence,
                           bootstrap_resamples, seed)
    caveats = list(extra_caveats) + _caveats(points, eff, (usl, amdahl))
    return Analysis(points, eff, usl, amdahl, tuple(float(t) for t in targets), confidence,
                    tuple(caveats))


def _caveats(points: tuple[Point, ...], eff: tuple[Efficiency, ...],
             results: tuple[ModelResult, ...]) -> list[str]:
    notes = []
    max_n = max(p.n for p in points)
    distinct = len({p.n for p in points})
    if len(points) < FEW_POINTS:
        notes.append(
            f"Only {len(points)} measured point{'s' if len(points) != 1 else ''} "
            f"({distinct} distinct N): with fewer than {FEW_POINTS} the fit is weakly supported "
            f"(Go usl refuses to fit fewer than 6) and its intervals are wide.")
    base = eff[0].base_n
    if base != 1:
        notes.append(f"N = 1 was not measured: efficiency is relative to N = {base:g}, and λ "
                     f"(throughput of one replica) is extrapolated by the fit.")
    unsteady = [p for p in points if p.drift is not None and abs(p.drift) > UNSTEADY_DRIFT]
    if unsteady:
        listed = ", ".join(f"N = {p.n:g} ({p.drift:+.0%})" for p in unsteady)
        notes.append(
            f"Not steady within the plateau at {listed} (the rate's change from the plateau's "
            f"first half to its second, more than {UNSTEADY_DRIFT:.0%}): JIT warm-up under a small "
            f"CPU limit, a load still ramping, or starved pods. Measure those N again with a "
            f"longer warm-up or plateau before trusting the fit.")
    superlinear = [e for e in eff if e.superlinear]
    if superlinear:
        listed = ", ".join(f"N = {e.n:g} ({e.efficiency:.3f})" for e in superlinear)
        notes.append(
            f"Efficiency above 1 at {listed}: superlinear scaling needs investigating (was the "
            f"base run saturated? the same load per replica? caching or warm-up effects?) before "
            f"trusting the fit.")
    for r in results:
        if r.fit is None:
            continue
        title = r.model.title
        if r.fit.exact:
            notes.append(f"{title} is drawn exactly through two points: nothing is left to "
                         f"estimate an error from, so none of its numbers has an error bar. "
                         f"Measure a third replica count.")
        for name in r.fit.at_bound:
            if name == "kappa":
                notes.append(f"{title}: κ was fitted at its bound 0 (no coherency cost visible in "
                             f"the measured range); the USL reduces to Amdahl here.")
            elif name == "sigma":
                notes.append(f"{title}: σ was fitted at a bound ({r.fit.sigma:g}); its interval is "
                             f"one-sided.")
            else:
                notes.append(f"{title}: {name} was fitted at a bound ({r.fit.parameters[name]:g}).")
        if r.bootstrap is not None and r.bootstrap.failed:
            notes.append(f"{title}: {r.bootstrap.failed} bootstrap refits failed and were left "
                         f"out.")
        for estimate in r.replicas:
            if estimate.replicas is not None and estimate.replicas > FAR_EXTRAPOLATION * max_n:
                notes.append(
                    f"{title}: {estimate.replicas} replicas for {estimate.target:,.0f} requests/s "
                    f"is {estimate.replicas / max_n:.3g}× the largest measured N ({max_n:g}): far "
                    f"beyond the data, the model's form rather than the measurements decides it.")
        for p in r.predictions:
            if p.extrapolation > FAR_EXTRAPOLATION:
                notes.append(f"{title}: the prediction at N = {p.n:g} is {p.extrapolation:.3g}× "
                             f"the largest measured N: far extrapolation.")
        ceiling = r.fit.ceiling()
        if (ceiling.at_n is not None and ceiling.n_star is not None
                and ceiling.n_star > FAR_EXTRAPOLATION * max_n):
            notes.append(f"{title}: the peak at N* = {ceiling.n_star:.3g} lies far beyond the "
                         f"largest measured N ({max_n:g}).")
    return notes
