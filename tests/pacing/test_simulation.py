"""The one simulation every plan is tried on: a listener runs out when it says, a pause between
sentences may grow by PAUSE_STRETCH_S and no more, a held-back start is not a gap."""

from __future__ import annotations

import pytest
from decoder_model import CUT, FRAME_S, audible

from wyoming_hayakoe.pacing.margins import PAUSE_STRETCH_S, WINDOW_OVERHEAD_S
from wyoming_hayakoe.pacing.simulation import Decoding, SimulatedSentence, simulate

FAST = Decoding(FRAME_S, speed=20.0, cut_frames=CUT)


def two_sentences(front_seconds: float) -> list[SimulatedSentence]:
    """Two 100-frame sentences; the second's front-end takes ``front_seconds``."""
    return [
        SimulatedSentence(100, audible(100)),
        SimulatedSentence(100, audible(100), front_seconds=front_seconds),
    ]


def test_a_pause_grows_by_the_stretch_and_no_more() -> None:
    # The first sentence's last audio arrives long before the listener runs out of it, so
    # the second sentence's front-end is what the pause waits for.
    first = simulate(two_sentences(0.0)[:1], FAST, runs_out=0.0)
    heard_until = first.first_sound + 100 * FRAME_S
    front_left = heard_until - sum(FAST.seconds(size) for size in first.windows)
    within = simulate(two_sentences(front_left + PAUSE_STRETCH_S - 0.1), FAST, runs_out=0.0)
    beyond = simulate(two_sentences(front_left + PAUSE_STRETCH_S + 0.1), FAST, runs_out=0.0)
    assert not within.gap and beyond.gap


def test_a_slow_machine_starts_late_and_a_hold_keeps_the_rest_gapless() -> None:
    slow = Decoding(FRAME_S, speed=0.5, cut_frames=CUT)
    sentence = [SimulatedSentence(300, audible(300))]
    as_they_come = simulate(sentence, slow, runs_out=0.0)
    assert as_they_come.gap  # below real time the windows fall behind the listener
    held = simulate(sentence, slow, runs_out=0.0, hold=300)
    assert not held.gap and held.late_start
    assert held.first_sound == pytest.approx(sum(slow.seconds(size) for size in held.windows))


def test_while_waiting_for_a_start_no_window_ends_after_it() -> None:
    start = 0.3
    run = simulate([SimulatedSentence(300, audible(300))], FAST, runs_out=start, start=start)
    ends, now = [], 0.0
    for size in run.windows:
        now += FAST.seconds(size)
        ends.append(now)
    waiting = [
        end for end, size in zip(ends, run.windows, strict=True) if end - FAST.seconds(size) < start
    ]
    assert waiting and all(end <= start + WINDOW_OVERHEAD_S for end in waiting[:-1])
    assert not run.late_start and not run.gap
