"""Load shapes for the Herald scenarios (Locust ``LoadTestShape``: ``tick()`` returns
``(users, spawn_rate)`` or ``None`` to stop).

A locustfile picks one with ``HERALD_SHAPE`` (``step`` or ``ramp``; unset: Locust's own
``-u/-r/-t``) through :func:`selected_shape`; Locust uses the shape class it finds in the
locustfile's namespace. Parameters come from the environment so the same locustfile serves a
seconds-long smoke run and a long measurement:

- ``step``: ``HERALD_STEP_USERS`` more users every ``HERALD_STEP_SECONDS``, ``HERALD_STEPS``
  times, then stop: the throughput per step shows where it stops growing.
- ``ramp``: linear ramp to ``HERALD_RAMP_USERS`` over ``HERALD_RAMP_SECONDS``, then hold
  ``HERALD_HOLD_SECONDS`` at full load (the saturation plateau the capacity model reads).
"""

from __future__ import annotations

import math
import os

from locust import LoadTestShape

__all__ = ["RampToSaturationShape", "StepShape", "selected_shape"]


def _env(name: str, default: float) -> float:
    return float(os.environ.get(name, default))


class StepShape(LoadTestShape):
    """``step_users`` more users every ``step_s`` seconds, ``steps`` times, then stop."""

    abstract = True  # only the alias a locustfile defines is used

    def __init__(self, step_users: int | None = None, step_s: float | None = None,
                 steps: int | None = None, spawn_rate: float | None = None):
        super().__init__()
        self.step_users = int(step_users or _env("HERALD_STEP_USERS", 10))
        self.step_s = float(step_s or _env("HERALD_STEP_SECONDS", 30))
        self.steps = int(steps or _env("HERALD_STEPS", 5))
        self.spawn_rate = float(spawn_rate or _env("HERALD_SPAWN_RATE", self.step_users))

    def users_at(self, t: float) -> int | None:
        step = math.floor(t / self.step_s)
        if step >= self.steps:
            return None
        return self.step_users * (step + 1)

    def tick(self):
        users = self.users_at(self.get_run_time())
        return None if users is None else (users, self.spawn_rate)


class RampToSaturationShape(LoadTestShape):
    """Linear ramp to ``users`` over ``ramp_s``, hold ``hold_s`` at full load, then stop."""

    abstract = True

    def __init__(self, users: int | None = None, ramp_s: float | None = None,
                 hold_s: float | None = None):
        super().__init__()
        self.users = int(users or _env("HERALD_RAMP_USERS", 50))
        self.ramp_s = float(ramp_s or _env("HERALD_RAMP_SECONDS", 30))
        self.hold_s = float(hold_s or _env("HERALD_HOLD_SECONDS", 120))

    def users_at(self, t: float) -> int | None:
        if t >= self.ramp_s + self.hold_s:
            return None
        if t >= self.ramp_s or self.ramp_s <= 0:
            return self.users
        return max(1, math.ceil(self.users * t / self.ramp_s))

    def tick(self):
        users = self.users_at(self.get_run_time())
        if users is None:
            return None
        # Spawn fast enough to follow the ramp each second.
        return users, max(1.0, self.users / max(self.ramp_s, 1.0))


def selected_shape(environ=os.environ) -> type[LoadTestShape] | None:
    """The shape class ``HERALD_SHAPE`` names, as a concrete subclass Locust will pick up."""
    name = environ.get("HERALD_SHAPE", "").strip().lower()
    if not name:
        return None
    bases = {"step": StepShape, "ramp": RampToSaturationShape}
    if name not in bases:
        raise ValueError(f"HERALD_SHAPE={name!r}: use one of {sorted(bases)} or leave it unset")
    return type(f"Herald{bases[name].__name__}", (bases[name],), {"abstract": False})
