"""Residual bootstrap of a fit: intervals for what the covariance cannot describe well.

The covariance (delta method) gives symmetric intervals, which suit the parameters and the
fitted curve near the data. Derived planning numbers (the ceiling, N*, replicas for a target)
are strongly nonlinear in σ and κ: the bootstrap refits the model to the fitted curve plus
resampled residuals many times and reports percentiles of each number over the refits, including
how often a target came out unreachable.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .errors import InsufficientDataError
from .models import (Interval, ScalabilityFit, _ceiling, _replicas_for, _snap_to_bounds, _solve,
                     usl_throughput)

__all__ = ["BootstrapResult", "ReplicaInterval", "bootstrap"]


@dataclass(frozen=True)
class ReplicaInterval:
    """Bootstrap percentiles of the whole replica count needed for ``target``.

    ``high`` is ``math.inf`` when more refits than the upper tail allows found the target out of
    reach; ``unreachable_fraction`` is the share of refits that did.
    """

    target: float
    low: float
    high: float
    unreachable_fraction: float
    confidence: float


@dataclass(frozen=True, eq=False)
class BootstrapResult:
    """Refitted parameters (rows λ, σ, κ) of a residual bootstrap of ``fit``."""

    fit: ScalabilityFit
    samples: np.ndarray
    failed: int
    confidence: float

    @property
    def resamples(self) -> int:
        return int(self.samples.shape[0])

    def _bounds(self, values: np.ndarray) -> tuple[float, float]:
        tail = (1.0 - self.confidence) / 2.0
        low, high = np.quantile(values, [tail, 1.0 - tail], method="inverted_cdf")
        return float(low), float(high)

    def _interval(self, value: float, values) -> Interval:
        low, high = self._bounds(np.asarray(values, dtype=float))
        return Interval(value, low, high, self.confidence)

    def parameter(self, name: str) -> Interval:
        i = ("lambda", "sigma", "kappa").index(name)
        return self._interval(self.fit.parameters[name], self.samples[:, i])

    def predict(self, n: float) -> Interval:
        values = [usl_throughput(n, *row) for row in self.samples]
        return self._interval(float(self.fit.throughput(n)), values)

    def ceiling(self) -> Interval:
        """Percentiles of the ceiling throughput (``inf`` in refits without a ceiling)."""
        def value(row):
            c = _ceiling(self.fit.model, *row)
            return math.inf if c.throughput is None else c.throughput
        point = self.fit.ceiling().throughput
        return self._interval(math.inf if point is None else point,
                              [value(row) for row in self.samples])

    def peak_n(self) -> Interval:
        """Percentiles of N* = sqrt((1−σ)/κ) (``inf`` in refits where κ = 0)."""
        point = self.fit.ceiling().n_star
        return self._interval(math.inf if point is None else point,
                              [_ceiling(self.fit.model, *row).n_star for row in self.samples])

    def replicas(self, target: float) -> ReplicaInterval:
        counts = []
        for row in self.samples:
            estimate = _replicas_for(self.fit.model, *row, target)
            counts.append(math.inf if estimate.replicas is None else estimate.replicas)
        counts = np.asarray(counts, dtype=float)
        low, high = self._bounds(counts)
        return ReplicaInterval(target, low, high, float(np.mean(np.isinf(counts))),
                               self.confidence)


def bootstrap(fit: ScalabilityFit, resamples: int = 1000, seed: int | None = 0,
              confidence: float | None = None) -> BootstrapResult:
    """Residual bootstrap: refit to fitted + resampled (centred, dof-rescaled) residuals.

    Needs a real fit (not :func:`exact_two_point_amdahl`). ``seed`` makes it reproducible.
    """
    if fit.exact:
        raise InsufficientDataError(
            fit.model.title, len(fit.n), len(set(fit.n)), fit.model.min_points,
            len(fit.model.parameter_names),
            "An exact determination leaves no residuals to resample: there is no error bar.")
    if resamples < 1:
        raise ValueError(f"resamples must be ≥ 1, got {resamples}")
    model = fit.model
    n = np.asarray(fit.n, dtype=float)
    fitted = fit.fitted
    residuals = fit.residuals
    residuals = (residuals - residuals.mean()) * math.sqrt(n.size / fit.dof)
    theta = np.array([fit.parameters[name] for name in model.parameter_names])
    rng = np.random.default_rng(seed)
    rows, failed = [], 0
    for _ in range(resamples):
        x = fitted + rng.choice(residuals, size=n.size, replace=True)
        if np.any(x <= 0):
            failed += 1
            continue
        result = _solve(model, n, x, [theta], tolerance=1e-10)
        if not result.success:
            failed += 1
            continue
        theta_b = _snap_to_bounds(model, result.x, result.active_mask, float(n.max()))
        lam, sigma = theta_b[0], theta_b[1]
        kappa = theta_b[2] if theta_b.size > 2 else 0.0
        rows.append((lam, sigma, kappa))
    if not rows:
        raise InsufficientDataError(model.title, n.size, len(set(fit.n)), model.min_points,
                                    len(model.parameter_names),
                                    "Every bootstrap refit failed: the data cannot support an "
                                    "error estimate.")
    return BootstrapResult(fit, np.asarray(rows, dtype=float), failed,
                           fit.confidence if confidence is None else confidence)
