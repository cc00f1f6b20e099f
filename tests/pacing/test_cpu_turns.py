"""Whose step runs next when several requests are in progress, on a fake clock.

The turn order (pacing/turns.py) alone, then with the engine's window schedule and the
decoder's timing model (machine_model.py): what each client hears.
"""

from __future__ import annotations

import asyncio
import logging

import pytest
from decoder_model import CUT, FRAME_S, FakeClock
from machine_model import FRONT_END_S, Request, play, two_sentences
from swinging_speed import CASES, runs, silent

from wyoming_hayakoe.pacing.scheduler import NOBODY, Others, PlaybackClock
from wyoming_hayakoe.pacing.turns import (
    FIRST_SOUND_WORK_S,
    RESCUE_AGE_S,
    CpuTurns,
    Demand,
    TurnOrder,
)
from wyoming_hayakoe.pacing.windows import WINDOW_OVERHEAD_S

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


# ----- with the window schedule: what the clients hear -----


def test_one_request_alone_is_served_as_before() -> None:
    """Through the turn order, alone: the windows the single-request schedule plans."""
    shared = play([Request(0.0, two_sentences())], speed=4.5)[0]
    alone = play([Request(0.0, two_sentences())], speed=4.5, order=_AloneOrder())[0]
    assert shared.windows == alone.windows
    assert shared.first_sound == pytest.approx(alone.first_sound)
    assert shared.longest_silence == 0.0


class _AloneOrder(TurnOrder):
    """The turn order of a machine nobody else uses."""

    def others(self, demand: Demand) -> Others:
        return NOBODY


def test_four_at_once_all_play_without_a_gap() -> None:
    """Four two-sentence announcements at once, on a machine that decodes 6 times faster than
    real time: each first sound in the order they came, and no silence once playing."""
    heard = play([Request(0.0, two_sentences(frames)) for frames in (150, 140, 160, 150)], 6.0)
    firsts = [h.first_sound for h in heard]
    assert all(first is not None for first in firsts)
    assert firsts == sorted(firsts)  # type: ignore[type-var]
    assert max(h.longest_silence for h in heard) <= 0.05
    # No later than each front-end and first window one after the other, plus the audio the
    # ones before need to last through them.
    assert firsts[-1] < 4 * (FRONT_END_S + 0.2)  # type: ignore[operator]


def test_four_at_once_are_heard_close_together() -> None:
    """Their first steps run first, then each pre-roll: the four first sounds within half a
    second of each other (one after the other, front-end and pre-roll each, they spread over
    0.87 s), the last sooner than one after the other, and no silence."""
    heard = play(CASES["4 at once"](), 6.0)
    firsts = [h.first_sound or 0.0 for h in heard]
    assert max(firsts) - min(firsts) < 0.5
    assert max(firsts) < 1.15
    assert max(h.longest_silence for h in heard) <= 0.05


@pytest.mark.parametrize("case", ["4 at once", "4, 0.1 s apart"])
def test_four_rarely_fall_silent_on_a_decoder_whose_speed_swings(case: str) -> None:
    """The speed drawn anew every 0.1 s (15 % spread around 5.5 times real time), ten seeded
    runs: at most one with a silence inside a sentence (running each pre-roll right after its
    own first step, 5 and 8 of ten)."""
    heard = runs(CASES[case], 5.5, range(10))
    assert sum(map(silent, heard)) <= 1


def test_a_request_arriving_while_others_play_neither_waits_long_nor_silences_them() -> None:
    heard = play([Request(0.0, [300]), Request(1.0, [300]), Request(1.2, two_sentences())], 6.0)
    assert max(h.longest_silence for h in heard) <= 0.05
    assert all(h.first_sound is not None and h.first_sound < 0.5 for h in heard)


def test_no_request_starves() -> None:
    """A long answer plays while a new announcement arrives every 0.4 s (the machine busy
    two thirds of the time): everyone is served, every first sound within a second, and the
    long answer keeps playing."""
    requests = [Request(0.0, [400] * 8)]
    requests += [Request(0.3 + 0.4 * i, [100]) for i in range(12)]
    heard = play(requests, 6.0)
    assert all(h.finished > 0 for h in heard)
    assert all(h.first_sound is not None and h.first_sound < 1.0 for h in heard)
    assert heard[0].longest_silence <= 0.05


def test_eight_at_once_hear_the_shortage_before_and_between_sentences() -> None:
    """Eight at once are more than this machine can keep playing: each sentence sounds once it
    is whole, and those sounding finish first, so the shortage is heard as later first sounds
    and longer pauses, never inside a sentence (planned as if alone and sounded as they came,
    each fell silent for about a second in its first sentence). Each is heard in the order
    they came, no later than every first sentence's work before it and the second sentences'
    front-ends."""
    heard = play([Request(0.0, two_sentences()) for _ in range(8)], 6.0)
    firsts = [h.first_sound for h in heard]
    assert all(first is not None for first in firsts)
    assert firsts == sorted(firsts)  # type: ignore[type-var]
    assert max(h.longest_silence for h in heard) == 0.0
    assert max(max(h.stretches) for h in heard) > 0.5
    whole = sum((w + CUT) * FRAME_S / 6.0 + WINDOW_OVERHEAD_S for w in (128, 22))
    assert firsts[-1] < 8 * (2 * FRONT_END_S + whole)  # type: ignore[operator]


@pytest.mark.parametrize(("apart", "speed"), [(0.2, 4.5), (0.2, 6.0), (0.5, 4.5), (0.5, 6.0)])
def test_arriving_one_after_another_on_a_machine_that_cannot_keep_up(
    apart: float, speed: float
) -> None:
    """Six or eight three-sentence announcements, one every ``apart`` seconds, more than the
    machine keeps playing once a few have come: those that started on a machine that kept up
    finish their sentences before the newcomers' sound (before, silences of 0.5-1.0 s inside
    sentences)."""
    count = 6 if apart < 0.5 else 8
    heard = play([Request(apart * i, [150, 200, 150]) for i in range(count)], speed)
    assert all(h.first_sound is not None for h in heard)
    assert max(h.longest_silence for h in heard) <= 0.1


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


def test_a_machine_that_cannot_serve_everyone_says_so_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Eight at once on a decoder of 6x real time: more than it can play without gaps. The
    log says so once, with the demand and the speed, and once more when it keeps up again."""
    with caplog.at_level(logging.INFO, "wyoming_hayakoe.pacing.windows"):
        play([Request(0.0, two_sentences()) for _ in range(8)] + [Request(30.0, [150])], 6.0)
    said = [r.getMessage() for r in caplog.records]
    (overload,) = [m for m in said if "syntheses at once" in m]
    assert overload.startswith("8 syntheses at once need 8 times real time") and "6.0x" in overload
    assert said[-1] == "The machine keeps up with its listeners again"
