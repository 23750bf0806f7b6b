"""The load shapes' schedules (the Locust wrappers run in the smoke tests: importing locust
here would gevent-patch the test process)."""

from __future__ import annotations

from herald_load.schedules import RampSchedule, StepSchedule


def test_step_schedule_adds_a_step_of_users_per_interval_then_stops():
    schedule = StepSchedule(step_users=10, step_s=30, steps=3)

    assert [schedule.users_at(t) for t in (0, 29.9, 30, 61, 89.9)] == [10, 10, 20, 30, 30]
    assert schedule.users_at(90) is None


def test_ramp_schedule_ramps_linearly_then_holds_full_load_then_stops():
    schedule = RampSchedule(users=100, ramp_s=10, hold_s=20)

    assert schedule.users_at(0) == 1
    assert schedule.users_at(5) == 50
    assert schedule.users_at(10) == 100
    assert schedule.users_at(29.9) == 100
    assert schedule.users_at(30) is None
    assert schedule.spawn_rate == 10


def test_schedules_read_their_parameters_from_the_environment():
    step = StepSchedule.from_env({"HERALD_STEP_USERS": "7", "HERALD_STEPS": "2",
                                  "HERALD_STEP_SECONDS": "5"})
    ramp = RampSchedule.from_env({"HERALD_RAMP_USERS": "40", "HERALD_RAMP_SECONDS": "4",
                                  "HERALD_HOLD_SECONDS": "6"})

    assert (step.users_at(6), step.users_at(11)) == (14, None)
    assert (ramp.users_at(2), ramp.users_at(9), ramp.users_at(10)) == (20, 40, None)
