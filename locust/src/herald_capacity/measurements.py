"""Measured points (throughput at N replicas) and scaling efficiency."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

__all__ = ["Efficiency", "Point", "efficiency"]


@dataclass(frozen=True)
class Point:
    """Saturation throughput measured at ``n`` replicas.

    ``spread`` is the interquartile range of the plateau samples (requests/s) when the point
    comes from a Locust history; ``source`` says where it came from (a folder, a CSV line);
    ``drift`` is how much the rate changed within the plateau, (second half - first half) / whole,
    where it was measured (a steady point has nearly none).
    """

    n: float
    throughput: float
    spread: float | None = None
    samples: int | None = None
    source: str | None = None
    drift: float | None = None


@dataclass(frozen=True)
class Efficiency:
    """Scaling efficiency at ``n``: (X(N)/N) / (X(base)/base), i.e. X(N)/(N·X(1)) for base 1."""

    n: float
    throughput: float
    efficiency: float
    base_n: float

    @property
    def superlinear(self) -> bool:
        """Efficiency above 1: more than linear scaling, which needs investigating."""
        return self.efficiency > 1.0


def efficiency(n: Sequence[float], x: Sequence[float]) -> list[Efficiency]:
    """Efficiency X(N)/(N·X(1)) of each point, sorted by N.

    Relative to the smallest measured N when N = 1 was not measured (``base_n`` says which);
    repeated measurements at the base N are averaged.
    """
    n_arr = np.asarray(n, dtype=float)
    x_arr = np.asarray(x, dtype=float)
    if n_arr.size == 0:
        return []
    if n_arr.shape != x_arr.shape:
        raise ValueError(f"got {n_arr.size} replica counts but {x_arr.size} throughputs")
    base = float(n_arr.min())
    per_replica_base = float(np.mean(x_arr[n_arr == base])) / base
    order = np.argsort(n_arr, kind="stable")
    return [Efficiency(float(n_arr[i]), float(x_arr[i]),
                       float(x_arr[i] / (n_arr[i] * per_replica_base)), base) for i in order]
