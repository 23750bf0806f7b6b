"""Load shapes for the Herald scenarios (Locust ``LoadTestShape``: ``tick()`` returns
``(users, spawn_rate)`` or ``None`` to stop).

A locustfile picks one with ``HERALD_SHAPE`` (``step`` or ``ramp``; unset: Locust's own
``-u/-r/-t``) through :func:`selected_shape`; Locust uses the shape class it finds in the
locustfile's namespace. Parameters come from the environment so the same locustfile serves a
seconds-long smoke run and a long measurement (:mod:`herald_load.schedules`):

- ``step``: ``HERALD_STEP_USERS`` more users every ``HERALD_STEP_SECONDS``, ``HERALD_STEPS``
  times, then stop: the throughput per step shows where it stops growing.
- ``ramp``: linear ramp to ``HERALD_RAMP_USERS`` over ``HERALD_RAMP_SECONDS``, then hold
  ``HERALD_HOLD_SECONDS`` at full load (the saturation plateau the capacity model reads).
"""

from __future__ import annotations

import os

from locust import LoadTestShape

from .schedules import RampSchedule, StepSchedule

__all__ = ["RampToSaturationShape", "StepShape", "selected_shape"]


class _ScheduleShape(LoadTestShape):
    abstract = True   # only the concrete alias a locustfile defines is used
    schedule_type: type = StepSchedule

    def __init__(self):
        super().__init__()
        self.schedule = self.schedule_type.from_env()

    def tick(self):
        users = self.schedule.users_at(self.get_run_time())
        return None if users is None else (users, self.schedule.spawn_rate)


class StepShape(_ScheduleShape):
    abstract = True
    schedule_type = StepSchedule


class RampToSaturationShape(_ScheduleShape):
    abstract = True
    schedule_type = RampSchedule


def selected_shape(environ=os.environ) -> type[LoadTestShape] | None:
    """The shape class ``HERALD_SHAPE`` names, as a concrete subclass Locust will pick up."""
    name = environ.get("HERALD_SHAPE", "").strip().lower()
    if not name:
        return None
    bases = {"step": StepShape, "ramp": RampToSaturationShape}
    if name not in bases:
        raise ValueError(f"HERALD_SHAPE={name!r}: use one of {sorted(bases)} or leave it unset")
    return type(f"Herald{bases[name].__name__}", (bases[name],), {"abstract": False})
