"""Amdahl and USL: golden values, intervals, ceilings, replicas and refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from herald_capacity import (CeilingKind, InsufficientDataError, Model, ModelDoesNotApplyError,
                             Unreachable, exact_two_point_amdahl, fit_amdahl, fit_usl,
                             usl_throughput)

# Published USL fit of the golden data (free nonlinear least squares); usl4j allows 0.02 %.
PUBLISHED = {"lambda": 995.6486, "sigma": 0.02671591, "kappa": 7.690945e-4}
USL4J_RTOL = 2e-4


# -- golden data set -----------------------------------------------------------------------


def test_usl_fit_reproduces_the_published_coefficients(golden):
    fit = fit_usl(*golden)

    assert fit.lam == pytest.approx(PUBLISHED["lambda"], rel=USL4J_RTOL)
    assert fit.sigma == pytest.approx(PUBLISHED["sigma"], rel=USL4J_RTOL)
    assert fit.kappa == pytest.approx(PUBLISHED["kappa"], rel=USL4J_RTOL)


def test_usl_peak_is_at_35_replicas_with_x_max_about_12341(golden):
    ceiling = fit_usl(*golden).ceiling()

    assert ceiling.kind is CeilingKind.PEAK
    assert ceiling.n_star == pytest.approx(35.57, abs=0.01)
    assert ceiling.at_n == 35
    assert ceiling.throughput == pytest.approx(12341, rel=0.005)
    assert "N = 35" in ceiling.describe()


def test_usl_fit_leaves_lambda_free_instead_of_fixing_it_to_x1(golden):
    fit = fit_usl(*golden)

    # Fixing λ = X(1) = 955.16 is the known bias (it moves N* to 33).
    assert abs(fit.lam - golden[1][0]) > 30
    assert fit.ceiling().at_n != 33


def test_golden_fit_is_contention_limited_and_says_where_coherency_takes_over(golden):
    ceiling = fit_usl(*golden).ceiling()

    assert ceiling.limited_by == "contention"  # σ = 0.0267 > κ = 0.00077
    assert ceiling.crossover_n == pytest.approx(PUBLISHED["sigma"] / PUBLISHED["kappa"], rel=1e-3)
    assert "Contention-limited" in ceiling.describe()


def test_coherency_limited_when_kappa_exceeds_sigma():
    n = np.arange(1, 9)
    x = usl_throughput(n, 100.0, 0.001, 0.01)

    ceiling = fit_usl(n, x).ceiling()

    assert ceiling.limited_by == "coherency"


def test_usl_intervals_follow_the_covariance_with_t_on_n_minus_p_dof(golden):
    fit = fit_usl(*golden)
    n, x = np.asarray(golden[0], float), np.asarray(golden[1], float)
    theta = np.array([fit.lam, fit.sigma, fit.kappa])
    # Independent check: finite-difference Jacobian, s² = RSS/(n − p), t quantile on 29 dof.
    jac = np.empty((n.size, 3))
    for j in range(3):
        step = np.zeros(3)
        step[j] = theta[j] * 1e-6
        jac[:, j] = (usl_throughput(n, *(theta + step)) - usl_throughput(n, *(theta - step))) / (
            2 * step[j])
    rss = float(np.sum((x - usl_throughput(n, *theta)) ** 2))
    cov = rss / (n.size - 3) * np.linalg.inv(jac.T @ jac)
    t = stats.t.ppf(0.975, n.size - 3)

    assert fit.dof == 29
    for i, name in enumerate(("lambda", "sigma", "kappa")):
        interval = fit.interval(name)
        half = t * math.sqrt(cov[i, i])
        assert interval.low == pytest.approx(theta[i] - half, rel=1e-4)
        assert interval.high == pytest.approx(theta[i] + half, rel=1e-4)


def test_prediction_interval_is_narrow_inside_the_data_and_wider_beyond(golden):
    fit = fit_usl(*golden)

    inside = fit.predict(16).throughput
    beyond = fit.predict(64).throughput

    assert inside.low < inside.value < inside.high
    assert inside.value == pytest.approx(float(usl_throughput(16, fit.lam, fit.sigma, fit.kappa)))
    assert (beyond.high - beyond.low) > 3 * (inside.high - inside.low)
    assert fit.predict(64).extrapolation == 2.0


def test_amdahl_fit_on_golden_data_quotes_the_asymptote(golden):
    fit = fit_amdahl(*golden)
    ceiling = fit.ceiling()

    assert fit.kappa == 0
    assert ceiling.kind is CeilingKind.ASYMPTOTE
    assert ceiling.throughput == pytest.approx(fit.lam / fit.sigma)
    assert ceiling.at_n is None
    assert "asymptote" in ceiling.describe() and "never reached" in ceiling.describe()


def test_fit_recovers_known_coefficients_from_noisy_data():
    rng = np.random.default_rng(7)
    n = np.array([1, 2, 4, 6, 8, 12, 16, 24, 32])
    x = usl_throughput(n, 500.0, 0.05, 0.001) * (1 + 0.01 * rng.standard_normal(n.size))

    fit = fit_usl(n, x)

    for name, truth in (("lambda", 500.0), ("sigma", 0.05), ("kappa", 0.001)):
        interval = fit.interval(name)
        assert interval.low <= truth <= interval.high, name


# -- the motivating two-point example ------------------------------------------------------


@pytest.fixture
def two_point():
    return exact_two_point_amdahl([1, 3], [2700, 6700])


def test_two_point_amdahl_matches_the_worked_example(two_point):
    assert two_point.lam == pytest.approx(2700)
    assert round(two_point.sigma, 5) == 0.10448
    assert round(two_point.parallel_fraction, 4) == 0.8955
    assert round(two_point.throughput(10)) == 13915
    assert round(two_point.throughput(30), -2) == 20100
    assert round(two_point.ceiling().throughput) == 25843


def test_two_point_amdahl_needs_254_point_2_replicas_for_25k(two_point):
    estimate = two_point.replicas_for(25_000)

    # Continuous N = 25000·(1−σ)/(2700 − 25000·σ) = 254.237...; the doc's "about 254".
    assert estimate.n_exact == pytest.approx(254.2373, abs=1e-4)
    assert round(estimate.n_exact) == 254
    # Whole replicas: 254 gives 24,999.6, short of the target; 255 gives 25,002.4.
    assert estimate.replicas == 255
    assert two_point.throughput(254) < 25_000 <= estimate.throughput


def test_two_point_amdahl_has_no_error_bar(two_point):
    assert two_point.exact
    assert two_point.covariance is None
    assert not two_point.interval("sigma").has_error_bar
    assert not two_point.predict(10).throughput.has_error_bar
    assert two_point.residual_standard_error is None


def test_two_point_amdahl_refuses_superlinear_points():
    with pytest.raises(ModelDoesNotApplyError, match="superlinear"):
        exact_two_point_amdahl([1, 2], [1000, 2100])


def test_two_point_amdahl_refuses_points_that_do_not_scale():
    with pytest.raises(ModelDoesNotApplyError, match="did not rise"):
        exact_two_point_amdahl([1, 4], [1000, 900])


def test_two_point_amdahl_takes_exactly_two_points():
    with pytest.raises(ValueError, match="exactly two points"):
        exact_two_point_amdahl([1, 2, 3], [1, 2, 3])


# -- replicas and out-of-reach answers -----------------------------------------------------


def test_usl_replicas_take_the_smaller_root_on_the_rising_side(golden):
    fit = fit_usl(*golden)

    estimate = fit.replicas_for(12_000)

    assert estimate.reachable
    assert fit.throughput(estimate.n_exact) == pytest.approx(12_000)
    assert estimate.n_exact < fit.ceiling().n_star
    assert estimate.replicas == 27
    assert fit.throughput(26) < 12_000 <= fit.throughput(27)


def test_usl_target_above_x_max_is_out_of_reach(golden):
    estimate = fit_usl(*golden).replicas_for(13_000)

    assert not estimate.reachable
    assert estimate.unreachable is Unreachable.ABOVE_PEAK
    assert estimate.replicas is None
    assert "above the peak" in estimate.message and "12,341.7" in estimate.message


def test_amdahl_target_at_or_above_the_asymptote_is_out_of_reach(two_point):
    for target in (25_843, 30_000):
        estimate = two_point.replicas_for(target)

        assert estimate.unreachable is Unreachable.ABOVE_ASYMPTOTE
        assert "asymptote" in estimate.message and "25,842.9" in estimate.message


def test_target_below_one_replica_needs_one_replica(two_point):
    estimate = two_point.replicas_for(1000)

    assert estimate.replicas == 1


def test_usl_target_between_whole_counts_past_the_peak_is_out_of_reach():
    n = np.arange(1, 7)
    fit = fit_usl(n, usl_throughput(n, 100.0, 0.0, 0.03))  # N* = 5.77, X(5) < X(6) > X(7)
    c = fit.ceiling()
    # A target just below the continuous peak but above every whole count's throughput.
    peak = fit.throughput(c.n_star)
    target = (peak + c.best_throughput) / 2

    estimate = fit.replicas_for(target)

    assert target > max(fit.throughput(5), fit.throughput(6))
    assert estimate.unreachable is Unreachable.ABOVE_PEAK
    assert "between whole counts" in estimate.message


def test_replicas_reject_a_non_positive_target(two_point):
    with pytest.raises(ValueError, match="positive"):
        two_point.replicas_for(0)


# -- refusals ------------------------------------------------------------------------------


def test_amdahl_fit_with_two_points_refuses_and_points_to_the_exact_form():
    with pytest.raises(InsufficientDataError) as refused:
        fit_amdahl([1, 3], [2700, 6700])

    assert refused.value.required_points == 3
    assert "exact_two_point_amdahl" in str(refused.value)
    assert "no error bar" in str(refused.value)


def test_usl_fit_with_three_points_refuses():
    with pytest.raises(InsufficientDataError, match="at least 4 measured points") as refused:
        fit_usl([1, 2, 4], [100, 190, 350])

    assert refused.value.model == "USL" and refused.value.points == 3


def test_usl_fit_refuses_repeats_at_too_few_distinct_n():
    with pytest.raises(InsufficientDataError, match="3 or more distinct"):
        fit_usl([1, 1, 2, 2], [100, 101, 190, 191])


def test_amdahl_fits_with_three_points_and_one_degree_of_freedom():
    fit = fit_amdahl([1, 2, 4], [100, 190, 340])

    assert fit.dof == 1
    assert fit.interval("sigma").has_error_bar


def test_usl_fits_with_four_points():
    fit = fit_usl([1, 2, 4, 8], [100, 190, 340, 520])

    assert fit.model is Model.USL and fit.dof == 1


@pytest.mark.parametrize("n, x, message", [
    ([1, 2, 3], [100, 0, 300], "throughputs must be > 0"),
    ([0, 2, 3], [100, 200, 300], "replica counts must be ≥ 1"),
    ([1, 2], [100, 200, 300], "2 replica counts but 3 throughputs"),
])
def test_fit_rejects_invalid_input(n, x, message):
    with pytest.raises(ValueError, match=message):
        fit_amdahl(n, x)


def test_parameters_at_their_bound_are_exactly_zero_so_ceilings_make_sense():
    n = [1, 2, 3, 4, 5]

    linear = fit_usl(n, [1000.0 * k for k in n])
    amdahl_shaped = fit_usl(n, usl_throughput(np.array(n), 1000.0, 0.1, 0.0))

    assert linear.sigma == 0 and linear.kappa == 0
    assert set(linear.at_bound) == {"sigma", "kappa"}
    assert linear.ceiling().kind is CeilingKind.NONE
    assert linear.replicas_for(50_000).replicas == 50
    assert amdahl_shaped.kappa == 0 and "kappa" in amdahl_shaped.at_bound
    assert amdahl_shaped.ceiling().kind is CeilingKind.ASYMPTOTE
    assert amdahl_shaped.ceiling().throughput == pytest.approx(10_000)
