"""Errors raised by the capacity model, with messages written for whoever plans capacity.

A target that cannot be reached by adding replicas is *not* an error: it is a normal answer
(:class:`herald_capacity.models.ReplicaEstimate` with a reason). Errors are for input that
cannot support the question asked: too few points, malformed run folders, no plateau.
"""

from __future__ import annotations


class CapacityError(Exception):
    """Base class of every error of this package; ``str(error)`` is a complete explanation."""


class InsufficientDataError(CapacityError):
    """Too few measured points to fit a model *and* estimate its error.

    Attributes name the model, how many points (and distinct replica counts) were given and how
    many the model needs, so callers can decide what to do instead (measure more N, or use
    :func:`herald_capacity.models.exact_two_point_amdahl` for exactly two points).
    """

    def __init__(self, model: str, points: int, distinct: int, required_points: int,
                 required_distinct: int, advice: str) -> None:
        self.model = model
        self.points = points
        self.distinct = distinct
        self.required_points = required_points
        self.required_distinct = required_distinct
        super().__init__(
            f"{model} fit refused: it needs at least {required_points} measured points at "
            f"{required_distinct} or more distinct replica counts to estimate an error bar, "
            f"got {points} point{'s' if points != 1 else ''} at {distinct} distinct N. {advice}")


class ModelDoesNotApplyError(CapacityError):
    """The measurements contradict the model (e.g. superlinear scaling for an exact Amdahl)."""


class RunFormatError(CapacityError):
    """A run folder, ``meta.json`` or Locust CSV is missing or not in the expected format."""


class PlateauError(CapacityError):
    """A Locust history has no usable saturation plateau (too short, never reached max users)."""
