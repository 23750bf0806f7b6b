"""The backlog feeders' accounting (herald_load.scenario.FeedBacklog), on a clock the test moves."""

from herald_load.scenario import FeedBacklog


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_what_arrives_frees_room_and_a_moving_backlog_is_never_written_off():
    clock = Clock()
    backlog = FeedBacklog(stall_s=10, clock=clock)
    backlog.sent += 40
    assert backlog.outstanding() == 40

    for arrived in (10, 20, 30):
        clock.now += 9                      # arrivals keep coming, each within the stall time
        backlog.arrived(arrived)
        assert backlog.write_off_if_stalled(full_at=5) == 0
    assert backlog.outstanding() == 10
    backlog.arrived(25)                     # a total never goes back
    assert backlog.outstanding() == 10


def test_a_full_backlog_that_stopped_moving_is_written_off_once_and_feeding_goes_on():
    clock = Clock()
    backlog = FeedBacklog(stall_s=10, clock=clock)
    backlog.sent += 30
    backlog.arrived(12)                     # 18 outstanding; say 6 are stuck for good

    clock.now += 9.9
    assert backlog.write_off_if_stalled(full_at=15) == 0    # not yet stalled for 10 s
    clock.now += 0.2
    assert backlog.write_off_if_stalled(full_at=20) == 0    # not full: the feeder is not waiting
    assert backlog.write_off_if_stalled(full_at=15) == 18
    assert backlog.outstanding() == 0 and backlog.written_off == 18
    assert backlog.write_off_if_stalled(full_at=-1) == 0    # the clock restarted at the write-off

    backlog.sent += 10
    backlog.arrived(20)                     # late arrivals of what was written off count as room
    assert backlog.outstanding() == 2
