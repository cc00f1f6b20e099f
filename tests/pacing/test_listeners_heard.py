"""What each client hears when several requests share the machine: the turn order
(pacing/turns.py) with the engine's window schedule and the decoder's timing model
(machine_model.py), on a fake clock.
"""

from __future__ import annotations

import logging

import pytest
from decoder_model import CUT, FRAME_S
from machine_model import FRONT_END_S, Request, play, two_sentences
from swinging_speed import CASES, runs, silent

from wyoming_hayakoe.pacing.margins import WINDOW_OVERHEAD_S
from wyoming_hayakoe.pacing.scheduler import NOBODY, Others
from wyoming_hayakoe.pacing.turns import Demand, TurnOrder


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
