"""The user count over time of the load shapes (:mod:`herald_load.shapes`), without Locust, so
it can be tested in a process that must not be gevent-patched (importing locust patches)."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

__all__ = ["RampSchedule", "StepSchedule"]


def _env(environ, name: str, default: float) -> float:
    return float(environ.get(name, default))


@dataclass(frozen=True)
class StepSchedule:
    """``step_users`` more users every ``step_s`` seconds, ``steps`` times, then stop."""

    step_users: int = 10
    step_s: float = 30.0
    steps: int = 5

    @classmethod
    def from_env(cls, environ=os.environ) -> "StepSchedule":
        return cls(int(_env(environ, "HERALD_STEP_USERS", 10)),
                   _env(environ, "HERALD_STEP_SECONDS", 30), int(_env(environ, "HERALD_STEPS", 5)))

    def users_at(self, t: float) -> int | None:
        step = math.floor(t / self.step_s)
        return None if step >= self.steps else self.step_users * (step + 1)

    @property
    def spawn_rate(self) -> float:
        return float(self.step_users)


@dataclass(frozen=True)
class RampSchedule:
    """Linear ramp to ``users`` over ``ramp_s``, hold ``hold_s`` at full load, then stop."""

    users: int = 50
    ramp_s: float = 30.0
    hold_s: float = 120.0

    @classmethod
    def from_env(cls, environ=os.environ) -> "RampSchedule":
        return cls(int(_env(environ, "HERALD_RAMP_USERS", 50)),
                   _env(environ, "HERALD_RAMP_SECONDS", 30), _env(environ, "HERALD_HOLD_SECONDS", 120))

    def users_at(self, t: float) -> int | None:
        if t >= self.ramp_s + self.hold_s:
            return None
        if t >= self.ramp_s or self.ramp_s <= 0:
            return self.users
        return max(1, math.ceil(self.users * t / self.ramp_s))

    @property
    def spawn_rate(self) -> float:
        # Fast enough to follow the ramp each second.
        return max(1.0, self.users / max(self.ramp_s, 1.0))
