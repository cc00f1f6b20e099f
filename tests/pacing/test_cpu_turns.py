"""Whose step runs next when several requests are in progress, on a fake clock: the turn
order (pacing/turns.py) alone, then handed out to asyncio tasks. What each client hears with
the engine's window schedule is in test_listeners_heard.py.
"""

from __future__ import annotations

import asyncio

import pytest
from decoder_model import FakeClock

from wyoming_hayakoe.pacing.margins import FIRST_SOUND_WORK_S, RESCUE_AGE_S
from wyoming_hayakoe.pacing.scheduler import PlaybackClock
from wyoming_hayakoe.pacing.turns import CpuTurns, Demand, TurnOrder

# ----- the order alone -----


def _playing(
    clock: FakeClock, lead: float, arrived: float = 0.0, step: float = 0.05, inside: bool = True
) -> Demand:
    """A request that plays ``lead`` seconds more, inside a sentence or between two."""
    demand = Demand(arrived, PlaybackClock())
    demand.playback.sent(lead, clock.now)
    demand.pacing.between_sentences = not inside
    demand.last_step = step
    return demand


def test_a_new_request_goes_ahead_of_one_that_still_has_lead() -> None:
    clock = FakeClock()
    clock.now = 10.0
    order = TurnOrder(now=clock)
    playing = _playing(clock, lead=2.0, arrived=9.0)
    new = Demand(10.0, PlaybackClock())
    assert order.choose([playing, new]) is new


def test_the_playing_request_that_runs_out_first_goes_first() -> None:
    clock = FakeClock()
    order = TurnOrder(now=clock)
    later, sooner = _playing(clock, lead=0.8), _playing(clock, lead=0.5)
    assert order.choose([later, sooner]) is sooner


def test_new_requests_are_served_in_the_order_they_came() -> None:
    clock = FakeClock()
    clock.now = 5.0
    order = TurnOrder(now=clock)
    requests = [Demand(arrived, PlaybackClock()) for arrived in (4.9, 4.7, 4.8)]
    assert order.choose(requests) is requests[1]


def test_a_request_about_to_fall_silent_goes_before_a_young_new_one() -> None:
    clock = FakeClock()
    clock.now = 3.0
    order = TurnOrder(now=clock)
    playing = _playing(clock, lead=0.1)  # less than the new request's first steps
    new = Demand(3.0, PlaybackClock())
    assert order.choose([new, playing]) is playing


def test_a_new_request_ages_past_those_it_waited_for() -> None:
    """Once it has waited RESCUE_AGE_S, a new request goes before a playing one between two
    sentences, however close that one is to running out: its wait is a longer pause."""
    clock = FakeClock()
    order = TurnOrder(now=clock)
    new = Demand(0.0, PlaybackClock())
    clock.now = RESCUE_AGE_S
    playing = _playing(clock, lead=0.05, arrived=-1.0, inside=False)
    assert order.choose([playing, new]) is new


def test_a_request_inside_a_sentence_goes_before_any_that_has_not_sounded_its_own() -> None:
    """A request about to run dry inside a sentence goes first, however long a new request
    has waited and before a playing one whose next sentence has not sounded yet (their waits
    are heard as pauses, its own as a cut word); one with audio to spare does not."""
    clock = FakeClock()
    order = TurnOrder(now=clock)
    new = Demand(0.0, PlaybackClock())
    clock.now = 10 * RESCUE_AGE_S
    between = _playing(clock, lead=0.0, arrived=-2.0, inside=False)
    inside = _playing(clock, lead=0.05, arrived=-1.0)
    assert order.choose([new, between, inside]) is inside
    assert order.choose([between, inside]) is inside
    spare = _playing(clock, lead=2.0, arrived=-1.0)
    assert order.choose([new, between, spare]) is new
    assert order.choose([between, spare]) is between


def test_requests_not_started_go_before_the_pre_roll_of_those_that_have() -> None:
    """Arrived together, the second runs its first step (front-end) before the first's
    pre-roll windows: both are planned knowing the other's first step is done."""
    clock = FakeClock()
    order = TurnOrder(now=clock)
    started, unstarted = Demand(0.0, PlaybackClock()), Demand(0.0, PlaybackClock())
    clock.now = 0.12
    order.stepped(started, 0.12, was_sounding=False)
    assert order.choose([started, unstarted]) is unstarted
    # Once the earliest has waited RESCUE_AGE_S, it goes first whatever the others' state.
    clock.now = RESCUE_AGE_S
    assert order.choose([started, unstarted]) is started


def test_among_requests_not_started_the_older_goes_first() -> None:
    clock = FakeClock()
    clock.now = 0.2
    order = TurnOrder(now=clock)
    requests = [Demand(arrived, PlaybackClock()) for arrived in (0.1, 0.0, 0.05)]
    order.stepped(requests[1], 0.1, was_sounding=False)
    assert order.choose(requests) is requests[2]


def test_what_a_request_sees_of_the_others() -> None:
    clock = FakeClock()
    order = TurnOrder(now=clock)
    mine = _playing(clock, lead=1.0)
    sooner = _playing(clock, lead=0.5, step=0.07)
    later = _playing(clock, lead=3.0)
    new = Demand(0.0, PlaybackClock())
    for demand in (mine, sooner, later, new):
        order.join(demand)
    sharing = order.others(mine).sharing(mine.deadline())
    assert sharing.requests == 4
    # Due before this one's audio runs out: the one that runs out sooner, and the new one
    # (all the work before its first sound).
    assert sharing.reserve == pytest.approx(0.07 + FIRST_SOUND_WORK_S)
    order.leave(later)
    assert order.others(mine).sharing(mine.deadline()).requests == 3


async def test_a_granted_step_is_handed_what_its_request_sees_of_the_others() -> None:
    """The engine plans a step's windows on what the turn order handed over when it granted
    the turn, not by calling back into the order from the synthesis thread."""
    clock = FakeClock()
    order = TurnOrder(now=clock)
    turns = CpuTurns(order)
    mine = _playing(clock, lead=1.0)
    sooner = _playing(clock, lead=0.5, step=0.07)
    later = _playing(clock, lead=3.0)
    for demand in (mine, sooner, later):
        order.join(demand)
    async with turns.turn(mine):
        seen = mine.pacing.others
        order.leave(later)  # leaves while the step runs: seen at the next turn
        assert mine.pacing.others is seen
    sharing = seen.sharing(mine.deadline())
    assert (sharing.requests, sharing.reserve) == (3, pytest.approx(0.07))
    async with turns.turn(mine):
        assert mine.pacing.others.sharing(mine.deadline()).requests == 2


def test_the_work_before_a_first_sound_is_learned() -> None:
    clock = FakeClock()
    order = TurnOrder(now=clock)
    demand = Demand(0.0, PlaybackClock())
    order.stepped(demand, 0.3, was_sounding=False)  # front-end: no sound yet
    assert order.expected_step(demand) == pytest.approx(0.3)  # at least its last step
    demand.playback.sent(0.5, 0.4)
    order.stepped(demand, 0.1, was_sounding=False)  # its first window sounded
    assert order.first_sound_work > FIRST_SOUND_WORK_S
    assert order.expected_step(demand) == pytest.approx(0.1)


# ----- the turns, handed out to tasks -----


async def test_steps_never_overlap_and_the_earliest_deadline_goes_next() -> None:
    order = TurnOrder()
    turns = CpuTurns(order)
    running: list[str] = []
    served: list[str] = []

    async def step(name: str, demand: Demand) -> None:
        async with turns.turn(demand):
            running.append(name)
            assert len(running) == 1, "two steps at once"
            served.append(name)
            await asyncio.sleep(0.01)
            running.remove(name)

    first = Demand(0.0, PlaybackClock())
    late = _playing(FakeClock(), lead=1e6)  # plenty of lead: it can wait
    urgent = Demand(1.0, PlaybackClock())
    holder = asyncio.create_task(step("first", first))
    await asyncio.sleep(0)
    waiting = [asyncio.create_task(step("late", late)), asyncio.create_task(step("urgent", urgent))]
    await asyncio.gather(holder, *waiting)
    assert served == ["first", "urgent", "late"]


async def test_a_waiter_that_goes_away_does_not_hold_up_the_others() -> None:
    turns = CpuTurns(TurnOrder())
    release = asyncio.Event()

    async def hold() -> None:
        async with turns.turn(Demand(0.0, PlaybackClock())):
            await release.wait()

    async def take(demand: Demand) -> str:
        async with turns.turn(demand):
            return "served"

    holder = asyncio.create_task(hold())
    await asyncio.sleep(0)
    gone = asyncio.create_task(take(Demand(0.1, PlaybackClock())))
    stays = asyncio.create_task(take(Demand(0.2, PlaybackClock())))
    await asyncio.sleep(0)
    gone.cancel()
    release.set()
    assert await asyncio.wait_for(stays, 5) == "served"
    await holder
    with pytest.raises(asyncio.CancelledError):
        await gone
