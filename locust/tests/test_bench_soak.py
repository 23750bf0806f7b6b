"""The soak's trend test (no servers started)."""

from __future__ import annotations

import random

from herald_load.bench.soak import Tolerance, unbounded_growth

HEAP = Tolerance(16, 0.20)


def _noisy(level: float, count: int, spread: float, seed: int = 7) -> list[float]:
    rng = random.Random(seed)
    return [level + rng.uniform(-spread, spread) for _ in range(count)]


def test_a_flat_noisy_series_is_bounded():
    assert unbounded_growth(_noisy(120, 30, 10), HEAP, warmup=5) is None


def test_a_warm_up_then_a_plateau_is_bounded():
    values = [40, 60, 80, 100] + _noisy(120, 26, 5)
    assert unbounded_growth(values, HEAP, warmup=5) is None


def test_a_pool_filling_once_mid_run_is_bounded_by_its_step():
    values = _noisy(100, 15, 2) + _noisy(110, 15, 2, seed=8)
    assert unbounded_growth(values, HEAP, warmup=2) is None


def test_a_steady_climb_grows_without_bound():
    values = [100 + 3 * minute for minute in range(30)]
    why = unbounded_growth(values, HEAP, warmup=5)
    assert why is not None and "rose from" in why


def test_a_slow_leak_under_noise_is_found():
    values = [v + 2.5 * minute for minute, v in enumerate(_noisy(150, 30, 8))]
    assert unbounded_growth(values, HEAP, warmup=5) is not None


def test_too_few_samples_are_not_judged():
    assert unbounded_growth([1, 2, 3, 400, 500, 600, 700], HEAP, warmup=2) is None
