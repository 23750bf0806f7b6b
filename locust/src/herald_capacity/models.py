"""Scale-out models: Amdahl's law and the Universal Scalability Law (USL).

Throughput X at N replicas:

- Amdahl: ``X(N) = λN / (1 + σ(N−1))``; σ is the serial (contended) fraction, P = 1 − σ the
  parallel one. Ceiling: the asymptote ``λ/σ``, approached as N grows and never reached.
- USL (Gunther): ``X(N) = λN / (1 + σ(N−1) + κN(N−1))``; κ is the coherency (crosstalk) cost.
  With κ > 0 the curve peaks at ``N* = sqrt((1−σ)/κ)`` and falls beyond it; the ceiling quoted
  is ``X_max = X(floor(N*))``, a throughput at a stated replica count (as usl4j and Go usl do).

Fitting follows the reference implementations: nonlinear least squares on the throughputs with
λ, σ, κ all free and bounded (λ, κ ≥ 0, 0 ≤ σ ≤ 1; σ is a fraction). λ is *not* fixed to X(1):
that biases the fit (on the published data set it moves N* from 35 to 33). Intervals come from
the fit's covariance with a t-distribution on n − p degrees of freedom; a fit that leaves no
degree of freedom is refused (:class:`InsufficientDataError`) rather than shown with a false
precision. Two points determine Amdahl exactly: :func:`exact_two_point_amdahl` says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from typing import Sequence

import numpy as np
from scipy import optimize, stats

from .errors import InsufficientDataError, ModelDoesNotApplyError

__all__ = [
    "Ceiling",
    "CeilingKind",
    "Interval",
    "Model",
    "Prediction",
    "ReplicaEstimate",
    "ScalabilityFit",
    "Unreachable",
    "amdahl_throughput",
    "exact_two_point_amdahl",
    "fit",
    "fit_amdahl",
    "fit_usl",
    "usl_throughput",
]

# Relative tolerance when checking that a whole replica count reaches a target (float noise).
_REACH_RTOL = 1e-9


class Model(Enum):
    """Which scale-out model a fit uses."""

    AMDAHL = "amdahl"
    USL = "usl"

    @property
    def title(self) -> str:
        return "Amdahl" if self is Model.AMDAHL else "USL"

    @property
    def parameter_names(self) -> tuple[str, ...]:
        return ("lambda", "sigma") if self is Model.AMDAHL else ("lambda", "sigma", "kappa")

    @property
    def min_points(self) -> int:
        """Points needed for an error estimate: one more than the parameters (n − p ≥ 1)."""
        return len(self.parameter_names) + 1


def usl_throughput(n, lam: float, sigma: float, kappa: float = 0.0):
    """X(N) of the USL (Amdahl when ``kappa`` is 0); a float for a scalar N, else an array."""
    n_arr = np.asarray(n, dtype=float)
    x = lam * n_arr / (1.0 + sigma * (n_arr - 1.0) + kappa * n_arr * (n_arr - 1.0))
    return float(x) if x.ndim == 0 else x


def amdahl_throughput(n, lam: float, sigma: float):
    """X(N) of Amdahl's law; a float for a scalar N, else an array."""
    return usl_throughput(n, lam, sigma, 0.0)


def _gradient(model: Model, n: np.ndarray, lam: float, sigma: float, kappa: float) -> np.ndarray:
    """∂X/∂θ at each N (rows) for the model's free parameters (columns)."""
    d = 1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0)
    cols = [n / d, -lam * n * (n - 1.0) / d**2]
    if model is Model.USL:
        cols.append(-lam * n * n * (n - 1.0) / d**2)
    return np.column_stack(cols)


def _params(model: Model, theta: Sequence[float]) -> tuple[float, float, float]:
    """(λ, σ, κ) from a model's parameter vector (κ = 0 for Amdahl)."""
    if model is Model.AMDAHL:
        return float(theta[0]), float(theta[1]), 0.0
    return float(theta[0]), float(theta[1]), float(theta[2])


# --------------------------------------------------------------------------------------------
# Results


@dataclass(frozen=True)
class Interval:
    """A value with its confidence interval; ``low``/``high`` are None when no error exists."""

    value: float
    low: float | None
    high: float | None
    confidence: float | None

    @property
    def has_error_bar(self) -> bool:
        return self.low is not None and self.high is not None


@dataclass(frozen=True)
class Prediction:
    """Predicted throughput at ``n`` replicas, with the confidence interval of the fitted curve.

    The interval is for the model's mean curve (delta method on the fit's covariance), not for a
    single future measurement. ``extrapolation`` is ``n`` divided by the largest measured N.
    """

    n: float
    throughput: Interval
    extrapolation: float


class CeilingKind(Enum):
    """What a quoted "ceiling" is, so that a report always says which one it quotes."""

    ASYMPTOTE = "asymptote"  # λ/σ: approached as N grows, never reached at a finite N
    PEAK = "peak"  # X(floor(N*)) at N* = sqrt((1−σ)/κ): throughput falls beyond N*
    NONE = "none"  # σ = κ = 0: linear within the fit, no ceiling


@dataclass(frozen=True)
class Ceiling:
    """The throughput ceiling of a fitted model.

    ``throughput`` is λ/σ for an asymptote and X(``at_n``) for a peak (``at_n`` = floor(N*));
    None when there is no ceiling. ``limited_by`` (USL only) is "contention" when σ > κ and
    "coherency" otherwise; ``crossover_n`` = σ/κ is where the coherency term κN(N−1) overtakes
    the contention term σ(N−1). Following usl4j and Go usl, the peak quoted is X(floor(N*));
    ``best_n``/``best_throughput`` give the better of floor(N*) and ceil(N*), which can be a
    hair higher when N* is closer to the next whole number.
    """

    model: Model
    kind: CeilingKind
    throughput: float | None
    at_n: int | None
    n_star: float | None
    limited_by: str | None
    crossover_n: float | None
    best_n: int | None = None
    best_throughput: float | None = None

    def describe(self) -> str:
        if self.kind is CeilingKind.NONE:
            return ("no ceiling: the fitted curve is linear (σ = κ = 0); this says nothing "
                    "beyond the measured range")
        if self.kind is CeilingKind.ASYMPTOTE:
            return (f"asymptote λ/σ = {_fmt_x(self.throughput)} requests/s: approached as "
                    f"replicas are added, never reached at any finite N")
        text = (f"peak X(N) = {_fmt_x(self.throughput)} requests/s at N = {self.at_n} replicas "
                f"(floor of N* = {self.n_star:.4g}); beyond N* adding replicas lowers throughput")
        if self.best_n is not None and self.best_n != self.at_n:
            text += (f" (X({self.best_n}) = {_fmt_x(self.best_throughput)} is marginally higher, "
                     f"N* being nearer {self.best_n})")
        if self.limited_by is not None:
            rel = "σ > κ" if self.limited_by == "contention" else "κ ≥ σ"
            text += f". {self.limited_by.capitalize()}-limited ({rel})"
            if self.crossover_n is not None and 1 <= self.crossover_n < math.inf:
                text += (f"; the coherency term overtakes contention beyond N = σ/κ ≈ "
                         f"{self.crossover_n:.3g}")
        return text


class Unreachable(Enum):
    """Why a target throughput cannot be reached by adding replicas."""

    ABOVE_ASYMPTOTE = "above_asymptote"
    ABOVE_PEAK = "above_peak"


@dataclass(frozen=True)
class ReplicaEstimate:
    """Replicas needed for a target throughput, or why no number of replicas reaches it.

    ``n_exact`` solves X(N) = target on the continuous curve; ``replicas`` is the smallest whole
    replica count whose predicted throughput (``throughput``) reaches the target.
    """

    model: Model
    target: float
    n_exact: float | None
    replicas: int | None
    throughput: float | None
    unreachable: Unreachable | None
    message: str

    @property
    def reachable(self) -> bool:
        return self.unreachable is None


# --------------------------------------------------------------------------------------------
# The fit


@dataclass(frozen=True, eq=False)
class ScalabilityFit:
    """A fitted (or, for two points, exactly determined) scale-out model.

    ``covariance`` is None for an exact determination: such a fit has no error bars, and every
    interval it returns says so (``low``/``high`` None).
    """

    model: Model
    lam: float
    sigma: float
    kappa: float
    n: tuple[float, ...]
    x: tuple[float, ...]
    covariance: np.ndarray | None
    dof: int
    confidence: float
    at_bound: tuple[str, ...] = ()

    # -- basics

    @property
    def exact(self) -> bool:
        """True when the points determine the model exactly: no error can be estimated."""
        return self.covariance is None

    @property
    def parameters(self) -> dict[str, float]:
        values = {"lambda": self.lam, "sigma": self.sigma, "kappa": self.kappa}
        return {name: values[name] for name in self.model.parameter_names}

    @property
    def parallel_fraction(self) -> float:
        """P = 1 − σ (Amdahl's parallel fraction)."""
        return 1.0 - self.sigma

    def throughput(self, n):
        """Point prediction X(N) (float for a scalar N, array otherwise)."""
        return usl_throughput(n, self.lam, self.sigma, self.kappa)

    @property
    def fitted(self) -> np.ndarray:
        return np.asarray(self.throughput(np.asarray(self.n, dtype=float)), dtype=float)

    @property
    def residuals(self) -> np.ndarray:
        """Measured minus fitted throughput at each point."""
        return np.asarray(self.x, dtype=float) - self.fitted

    @property
    def residual_standard_error(self) -> float | None:
        """sqrt(RSS / (n − p)), in requests/s; None for an exact fit."""
        if self.exact:
            return None
        return float(math.sqrt(float(np.sum(self.residuals**2)) / self.dof))

    @property
    def max_measured_n(self) -> float:
        return max(self.n)

    def _t(self, confidence: float | None) -> float:
        level = self.confidence if confidence is None else confidence
        return float(stats.t.ppf(0.5 + level / 2.0, self.dof))

    # -- intervals

    def standard_error(self, name: str) -> float | None:
        if self.exact:
            return None
        i = self.model.parameter_names.index(name)
        return float(math.sqrt(max(self.covariance[i, i], 0.0)))

    def interval(self, name: str, confidence: float | None = None) -> Interval:
        """Confidence interval of a parameter ("lambda", "sigma", "kappa"), clipped to bounds."""
        if name not in self.model.parameter_names:
            raise KeyError(f"{self.model.title} has no parameter {name!r}")
        value = self.parameters[name]
        if self.exact:
            return Interval(value, None, None, None)
        half = self._t(confidence) * self.standard_error(name)
        high = value + half
        if name == "sigma":
            high = min(high, 1.0)
        return Interval(value, max(value - half, 0.0), high,
                        self.confidence if confidence is None else confidence)

    def predict(self, n: float, confidence: float | None = None) -> Prediction:
        """X(n) with the confidence interval of the fitted curve (delta method)."""
        n = float(n)
        value = float(self.throughput(n))
        extrapolation = n / self.max_measured_n
        if self.exact:
            return Prediction(n, Interval(value, None, None, None), extrapolation)
        g = _gradient(self.model, np.array([n]), self.lam, self.sigma, self.kappa)[0]
        se = float(math.sqrt(max(float(g @ self.covariance @ g), 0.0)))
        half = self._t(confidence) * se
        level = self.confidence if confidence is None else confidence
        return Prediction(n, Interval(value, max(value - half, 0.0), value + half, level),
                          extrapolation)

    def band(self, n: Sequence[float], confidence: float | None = None):
        """(x, low, high) arrays of the fitted curve and its confidence band over ``n``."""
        n_arr = np.asarray(n, dtype=float)
        x = np.asarray(self.throughput(n_arr), dtype=float)
        if self.exact:
            return x, None, None
        g = _gradient(self.model, n_arr, self.lam, self.sigma, self.kappa)
        se = np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", g, self.covariance, g), 0.0))
        half = self._t(confidence) * se
        return x, np.maximum(x - half, 0.0), x + half

    # -- planning answers

    def ceiling(self) -> Ceiling:
        return _ceiling(self.model, self.lam, self.sigma, self.kappa)

    def replicas_for(self, target: float) -> ReplicaEstimate:
        """Replicas needed to reach ``target`` requests/s, or why it is out of reach."""
        return _replicas_for(self.model, self.lam, self.sigma, self.kappa, target)


# --------------------------------------------------------------------------------------------
# Planning maths (shared with the bootstrap)


def _ceiling(model: Model, lam: float, sigma: float, kappa: float) -> Ceiling:
    limited_by = None
    crossover = None
    if model is Model.USL:
        limited_by = "contention" if sigma > kappa else "coherency"
        crossover = sigma / kappa if kappa > 0 else math.inf
    if kappa > 0:
        n_star = math.sqrt(max(1.0 - sigma, 0.0) / kappa)
        at_n = max(1, math.floor(n_star))
        x_at_n = float(usl_throughput(at_n, lam, sigma, kappa))
        x_next = float(usl_throughput(at_n + 1, lam, sigma, kappa))
        best_n, best_x = (at_n + 1, x_next) if x_next > x_at_n else (at_n, x_at_n)
        return Ceiling(model, CeilingKind.PEAK, x_at_n, at_n, n_star, limited_by, crossover,
                       best_n, best_x)
    if sigma > 0:
        return Ceiling(model, CeilingKind.ASYMPTOTE, lam / sigma, None, math.inf, limited_by,
                       crossover)
    return Ceiling(model, CeilingKind.NONE, None, None, math.inf, limited_by, crossover)


def _smaller_root(a: float, b: float, c: float) -> float | None:
    """Smaller real root of aN² + bN + c = 0 (a > 0), computed without cancellation."""
    disc = b * b - 4.0 * a * c
    if disc < 0:
        return None
    q = -0.5 * (b + math.copysign(math.sqrt(disc), b))
    roots = [q / a]
    if q != 0:
        roots.append(c / q)
    return min(roots)


def _replicas_for(model: Model, lam: float, sigma: float, kappa: float,
                  target: float) -> ReplicaEstimate:
    target = float(target)
    if not (math.isfinite(target) and target > 0):
        raise ValueError(f"target throughput must be a positive number, got {target!r}")

    def x_at(k: float) -> float:
        return float(usl_throughput(k, lam, sigma, kappa))

    def unreachable(kind: Unreachable, n_exact: float | None, message: str) -> ReplicaEstimate:
        return ReplicaEstimate(model, target, n_exact, None, None, kind, message)

    if kappa > 0:
        # T·D(N) = λN  ⇔  Tκ N² + (Tσ − Tκ − λ) N + T(1 − σ) = 0; the rising side of the
        # curve gives the smaller root.
        root = _smaller_root(target * kappa, target * sigma - target * kappa - lam,
                             target * (1.0 - sigma))
        if root is None or root <= 0:
            c = _ceiling(model, lam, sigma, kappa)
            peak = x_at(c.n_star) if c.n_star and c.n_star >= 1 else lam
            return unreachable(
                Unreachable.ABOVE_PEAK, None,
                f"{_fmt_x(target)} requests/s is out of reach: it is above the peak of the fitted "
                f"{model.title} curve (X_max = X({c.at_n}) = {_fmt_x(c.throughput)}; "
                f"{_fmt_x(peak)} at the continuous N* = {c.n_star:.4g}). Adding replicas cannot "
                f"reach it, and beyond N* it lowers throughput: reduce contention (σ) or "
                f"coherency cost (κ) per replica instead.")
        n_exact = root
    elif sigma > 0:
        asymptote = lam / sigma
        if target >= asymptote:
            return unreachable(
                Unreachable.ABOVE_ASYMPTOTE, None,
                f"{_fmt_x(target)} requests/s is out of reach: it is at or above the {model.title} "
                f"asymptote λ/σ = {_fmt_x(asymptote)}, which throughput approaches as replicas are "
                f"added but never reaches. Reduce the serial fraction σ = {sigma:.4g} instead.")
        n_exact = target * (1.0 - sigma) / (lam - target * sigma)
    else:
        if lam <= 0:
            return unreachable(Unreachable.ABOVE_PEAK, None,
                               "out of reach: the fitted throughput per replica λ is 0")
        n_exact = target / lam

    k = max(1, math.ceil(n_exact))
    if k > 1 and x_at(k - 1) >= target * (1.0 - _REACH_RTOL):
        k -= 1  # n_exact a hair above a whole number through float noise
    x_k = x_at(k)
    if x_k < target * (1.0 - _REACH_RTOL):
        # Only possible beyond the USL peak: the continuous curve touches T between two whole
        # replica counts, and the next whole count is already past N*.
        c = _ceiling(model, lam, sigma, kappa)
        return unreachable(
            Unreachable.ABOVE_PEAK, n_exact,
            f"{_fmt_x(target)} requests/s is out of reach with whole replicas: the fitted curve "
            f"reaches it only at N = {n_exact:.4g}, between whole counts, just before its peak; "
            f"the best whole count gives X({c.best_n}) = {_fmt_x(c.best_throughput)}.")
    return ReplicaEstimate(
        model, target, n_exact, k, x_k, None,
        f"{_fmt_x(target)} requests/s needs {k} replicas by {model.title} "
        f"(N = {n_exact:.5g} on the continuous curve; X({k}) = {_fmt_x(x_k)}).")


# --------------------------------------------------------------------------------------------
# Fitting


def _validate(model_title: str, n, x) -> tuple[np.ndarray, np.ndarray]:
    n_arr = np.asarray(n, dtype=float).ravel()
    x_arr = np.asarray(x, dtype=float).ravel()
    if n_arr.shape != x_arr.shape:
        raise ValueError(f"{model_title}: got {n_arr.size} replica counts but {x_arr.size} "
                         f"throughputs")
    if not (np.all(np.isfinite(n_arr)) and np.all(np.isfinite(x_arr))):
        raise ValueError(f"{model_title}: replica counts and throughputs must be finite numbers")
    if np.any(n_arr < 1):
        raise ValueError(f"{model_title}: replica counts must be ≥ 1, got "
                         f"{sorted(n_arr.tolist())}")
    if np.any(x_arr <= 0):
        raise ValueError(f"{model_title}: throughputs must be > 0 (a point at 0 means the run "
                         f"measured nothing), got {x_arr.tolist()}")
    return n_arr, x_arr


def _initial_guesses(model: Model, n: np.ndarray, x: np.ndarray) -> list[np.ndarray]:
    """Starting points: the linearised fit N/X = (1 + σ(N−1) + κN(N−1))/λ, plus a generic one."""
    cols = [np.ones_like(n), n - 1.0]
    if model is Model.USL:
        cols.append(n * (n - 1.0))
    coef, _ = optimize.nnls(np.column_stack(cols), n / x)
    lam0 = 1.0 / coef[0] if coef[0] > 0 else float(np.max(x / n))
    linear = [lam0, min(coef[1] * lam0, 1.0)]
    generic = [float(x[np.argmin(n)] / np.min(n)), 0.05]
    if model is Model.USL:
        linear.append(coef[2] * lam0)
        generic.append(1e-4)
    return [np.array(linear), np.array(generic)]


def _solve(model: Model, n: np.ndarray, x: np.ndarray, starts: list[np.ndarray],
           tolerance: float = 1e-15):
    """Bounded nonlinear least squares from each start; the result with the lowest cost."""
    p = len(model.parameter_names)
    lower = np.zeros(p)
    upper = np.full(p, np.inf)
    upper[1] = 1.0  # σ is a fraction

    def residuals(theta):
        return usl_throughput(n, *_params(model, theta)) - x

    def jacobian(theta):
        return _gradient(model, n, *_params(model, theta))

    best = None
    for start in starts:
        start = np.clip(start, lower, upper)
        result = optimize.least_squares(
            residuals, start, jac=jacobian, bounds=(lower, upper), method="trf",
            x_scale="jac", xtol=tolerance, ftol=tolerance, gtol=tolerance, max_nfev=2000)
        if best is None or result.cost < best.cost:
            best = result
    return best


def _snap_to_bounds(model: Model, theta: np.ndarray, active_mask: np.ndarray,
                    n_max: float) -> np.ndarray:
    """σ and κ that the solver left at (or negligibly above) a bound, set exactly to it.

    The trust-region solver keeps iterates strictly inside the bounds, so "κ = 0" comes back as
    κ ≈ 1e-19, which would put N* at 10⁹ instead of saying "no peak".
    """
    theta = theta.copy()
    weight = (None, n_max - 1.0, n_max * (n_max - 1.0))  # σ's and κ's terms at the largest N
    for i in range(1, theta.size):
        if active_mask[i] < 0 or theta[i] * weight[i] < 1e-9:
            theta[i] = 0.0
        elif active_mask[i] > 0:  # only σ has an upper bound
            theta[i] = 1.0
    return theta


def fit(model: Model, n: Sequence[float], x: Sequence[float], *,
        confidence: float = 0.95) -> ScalabilityFit:
    """Fit ``model`` to throughputs ``x`` measured at replica counts ``n``.

    Raises :class:`InsufficientDataError` when the points cannot support an error estimate:
    Amdahl needs ≥ 3 points at ≥ 2 distinct N, the USL ≥ 4 points at ≥ 3 distinct N.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    n_arr, x_arr = _validate(model.title, n, x)
    p = len(model.parameter_names)
    distinct = len(np.unique(n_arr))
    if n_arr.size < model.min_points or distinct < p:
        if model is Model.AMDAHL and n_arr.size == 2 and distinct == 2:
            advice = ("Two points determine Amdahl exactly and leave nothing to estimate an error "
                      "from: use exact_two_point_amdahl() and treat its numbers as having no error "
                      "bar, or measure a third replica count.")
        else:
            advice = (f"Measure more replica counts (e.g. N = 1, 2, 4, 8, ...) before planning "
                      f"with the {model.title}.")
        raise InsufficientDataError(model.title, int(n_arr.size), distinct, model.min_points, p,
                                    advice)

    result = _solve(model, n_arr, x_arr, _initial_guesses(model, n_arr, x_arr))
    theta = _snap_to_bounds(model, result.x, result.active_mask, float(n_arr.max()))
    dof = int(n_arr.size - p)
    jac = _gradient(model, n_arr, *_params(model, theta))
    rss = float(np.sum((usl_throughput(n_arr, *_params(model, theta)) - x_arr) ** 2))
    s2 = rss / dof
    covariance = s2 * np.linalg.pinv(jac.T @ jac)
    names = model.parameter_names
    at_bound = tuple(names[i] for i in range(p)
                     if result.active_mask[i] != 0 or (i > 0 and theta[i] in (0.0, 1.0)))
    lam, sigma, kappa = _params(model, theta)
    return ScalabilityFit(model, lam, sigma, kappa, tuple(map(float, n_arr)),
                          tuple(map(float, x_arr)), covariance, dof, confidence, at_bound)


def fit_usl(n: Sequence[float], x: Sequence[float], *, confidence: float = 0.95) -> ScalabilityFit:
    """Fit the USL (λ, σ, κ free, bounded); needs ≥ 4 points at ≥ 3 distinct N."""
    return fit(Model.USL, n, x, confidence=confidence)


def fit_amdahl(n: Sequence[float], x: Sequence[float], *,
               confidence: float = 0.95) -> ScalabilityFit:
    """Fit Amdahl (λ, σ free, bounded); needs ≥ 3 points at ≥ 2 distinct N."""
    return fit(Model.AMDAHL, n, x, confidence=confidence)


def exact_two_point_amdahl(n: Sequence[float], x: Sequence[float]) -> ScalabilityFit:
    """The Amdahl curve through exactly two points, e.g. ``([1, 3], [2700, 6700])``.

    Two points determine λ and σ exactly (1/X = σ/λ + (1−σ)/(λN) is a line in 1/N), so there
    is nothing left to estimate an error from: the returned fit has ``exact == True`` and no
    intervals. Raises :class:`ModelDoesNotApplyError` when the points scale superlinearly
    (σ < 0) or throughput does not rise with N (σ ≥ 1).
    """
    n_arr, x_arr = _validate("Amdahl (two points)", n, x)
    if n_arr.size != 2 or n_arr[0] == n_arr[1]:
        raise ValueError(f"exact_two_point_amdahl takes exactly two points at different N, got "
                         f"N = {n_arr.tolist()}; with more points use fit_amdahl()")
    order = np.argsort(n_arr)
    (n1, n2), (x1, x2) = n_arr[order], x_arr[order]
    slope = (1.0 / x1 - 1.0 / x2) / (1.0 / n1 - 1.0 / n2)  # (1 − σ)/λ
    intercept = 1.0 / x1 - slope / n1  # σ/λ
    lam = 1.0 / (intercept + slope)
    sigma = intercept * lam
    if sigma < 0:
        raise ModelDoesNotApplyError(
            f"The two points scale superlinearly: per-replica throughput rose from "
            f"{_fmt_x(x1 / n1)} at N = {n1:g} to {_fmt_x(x2 / n2)} at N = {n2:g} (efficiency > 1), "
            f"so Amdahl's serial fraction would be negative (σ = {sigma:.4g}). Check the "
            f"measurements (was N = {n1:g} saturated? the same load per replica?) before planning.")
    if sigma >= 1:
        raise ModelDoesNotApplyError(
            f"Throughput did not rise with replicas ({_fmt_x(x1)} at N = {n1:g}, {_fmt_x(x2)} at "
            f"N = {n2:g}): Amdahl's serial fraction would be σ = {sigma:.4g} ≥ 1, i.e. adding "
            f"replicas does not help. Check the measurements before planning.")
    return ScalabilityFit(Model.AMDAHL, float(lam), float(sigma), 0.0, (float(n1), float(n2)),
                          (float(x1), float(x2)), None, 0, 0.0)


def _fmt_x(value: float | None) -> str:
    """A throughput for messages: thousands separators, one decimal."""
    if value is None:
        return "n/a"
    if not math.isfinite(value):
        return "∞"
    return f"{value:,.1f}"
