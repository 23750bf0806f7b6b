"""Efficiency per N and the residual bootstrap."""

from __future__ import annotations

import math

import pytest

from herald_capacity import (InsufficientDataError, bootstrap, efficiency,
                             exact_two_point_amdahl, fit_usl)


def test_efficiency_is_x_over_n_times_x1(golden):
    rows = efficiency(*golden)

    assert rows[0].efficiency == 1.0
    assert rows[1].efficiency == pytest.approx(1878.91 / (2 * 955.16))
    assert rows[31].efficiency == pytest.approx(12074.39 / (32 * 955.16))
    assert not any(r.superlinear for r in rows)


def test_efficiency_above_one_is_flagged():
    rows = efficiency([1, 2, 4], [1000, 2100, 3900])

    assert [r.superlinear for r in rows] == [False, True, False]


def test_efficiency_without_n1_is_relative_to_the_smallest_n():
    rows = efficiency([4, 2, 8], [3600, 2000, 6400])

    assert [r.n for r in rows] == [2, 4, 8]
    assert rows[0].base_n == 2
    assert [r.efficiency for r in rows] == pytest.approx([1.0, 0.9, 0.8])


def test_bootstrap_intervals_bracket_the_estimates_and_are_reproducible(golden):
    fit = fit_usl(*golden)

    first = bootstrap(fit, resamples=150, seed=3)
    again = bootstrap(fit, resamples=150, seed=3)

    assert (first.samples == again.samples).all()
    for name in ("lambda", "sigma", "kappa"):
        interval = first.parameter(name)
        assert interval.low < interval.value < interval.high
        # Same order of magnitude as the covariance interval.
        cov = fit.interval(name)
        assert 0.5 < (interval.high - interval.low) / (cov.high - cov.low) < 2
    ceiling = first.ceiling()
    assert ceiling.low < 12341 < ceiling.high
    assert first.peak_n().low < 35.57 < first.peak_n().high


def test_bootstrap_replicas_near_the_peak_are_sometimes_out_of_reach(golden):
    result = bootstrap(fit_usl(*golden), resamples=150, seed=1)

    easy = result.replicas(10_000)
    near_peak = result.replicas(12_300)

    assert easy.unreachable_fraction == 0 and easy.low <= 17 <= easy.high
    assert 0 < near_peak.unreachable_fraction < 1
    assert math.isinf(near_peak.high)


def test_bootstrap_refuses_an_exact_fit():
    with pytest.raises(InsufficientDataError, match="no residuals"):
        bootstrap(exact_two_point_amdahl([1, 3], [2700, 6700]))
