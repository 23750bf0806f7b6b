"""Figures of the report, as PNG bytes (matplotlib, the optional ``[report]`` extra).

Uses matplotlib's object API with the Agg canvas: no pyplot, no global backend switch.
"""

from __future__ import annotations

import io
import math

import numpy as np

from .analysis import Analysis
from .models import CeilingKind, Model

__all__ = ["available", "efficiency_png", "scaling_png"]

_COLOURS = {Model.USL: "#1f77b4", Model.AMDAHL: "#ff7f0e"}


def available() -> bool:
    """True when matplotlib is installed (``pip install 'herald-capacity[report]'``)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _figure():
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(7.5, 4.5), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def _png(figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()


def _n_range(analysis: Analysis) -> float:
    top = analysis.max_measured_n * 1.5
    for r in analysis.results:
        if r.fit is None:
            continue
        c = r.fit.ceiling()
        if c.kind is CeilingKind.PEAK and c.n_star <= 3 * analysis.max_measured_n:
            top = max(top, c.n_star * 1.2)
    return max(top, 2.0)


def scaling_png(analysis: Analysis) -> bytes:
    """Measured throughput per N with the fitted curves and their confidence bands."""
    figure = _figure()
    ax = figure.add_subplot()
    grid = np.linspace(1.0, _n_range(analysis), 300)
    for r in analysis.results:
        if r.fit is None:
            continue
        colour = _COLOURS[r.model]
        curve, low, high = r.fit.band(grid)
        if r.fit.exact:
            ax.plot(grid, curve, "--", color=colour,
                    label=f"{r.model.title} through 2 points (no error bar)")
        else:
            ax.plot(grid, curve, color=colour, label=f"{r.model.title} fit")
            ax.fill_between(grid, low, high, color=colour, alpha=0.2,
                            label=f"{r.model.title} {analysis.confidence:.0%} band")
        c = r.fit.ceiling()
        if c.kind is CeilingKind.PEAK and c.n_star <= grid[-1]:
            ax.plot([c.at_n], [c.throughput], "v", color=colour,
                    label=f"{r.model.title} X_max at N = {c.at_n}")
        elif c.kind is CeilingKind.ASYMPTOTE and c.throughput <= 1.5 * float(np.max(curve)):
            ax.axhline(c.throughput, color=colour, linestyle=":",
                       label=f"{r.model.title} asymptote λ/σ")
    n = [p.n for p in analysis.points]
    x = [p.throughput for p in analysis.points]
    spread = [(p.spread or 0.0) / 2.0 for p in analysis.points]
    ax.errorbar(n, x, yerr=spread if any(spread) else None, fmt="o", color="black",
                label="measured plateau" + (" (bars: IQR)" if any(spread) else ""), zorder=5)
    shown = [t for t in analysis.targets if t <= ax.get_ylim()[1]]
    for i, t in enumerate(shown):
        ax.axhline(t, color="grey", linestyle="-.", linewidth=0.8,
                   label="target" + ("s" if len(shown) > 1 else "") if i == 0 else None)
    ax.set_xlabel("replicas N")
    ax.set_ylabel("throughput X(N), requests/s")
    ax.set_xlim(0, grid[-1])
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small", loc="lower right")
    return _png(figure)


def efficiency_png(analysis: Analysis) -> bytes:
    """Efficiency X(N)/(N·X(1)) per measured N (superlinear points in red)."""
    figure = _figure()
    ax = figure.add_subplot()
    e = analysis.efficiency
    base = e[0].base_n
    colours = ["#d62728" if row.superlinear else "black" for row in e]
    ax.scatter([row.n for row in e], [row.efficiency for row in e], c=colours, zorder=5,
               label="measured (red: above 1)")
    grid = np.linspace(base, _n_range(analysis), 300)
    # Fitted curves in the same units as the points: relative to the *measured* base throughput.
    per_replica = e[0].throughput / (e[0].efficiency * base)
    for r in analysis.results:
        if r.fit is None:
            continue
        ax.plot(grid, r.fit.throughput(grid) / (grid * per_replica), color=_COLOURS[r.model],
                linestyle="--" if r.fit.exact else "-", label=f"{r.model.title} fit")
    ax.axhline(1.0, color="grey", linewidth=0.8)
    label = "X(N) / (N·X(1))" if base == 1 else f"X(N)·{base:g} / (N·X({base:g}))"
    ax.set_xlabel("replicas N")
    ax.set_ylabel(f"efficiency {label}")
    top = max(1.1, max(row.efficiency for row in e) * 1.05)
    ax.set_ylim(0, top if math.isfinite(top) else 1.1)
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    return _png(figure)
