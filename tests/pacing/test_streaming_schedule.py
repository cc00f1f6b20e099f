"""Windows sized as the audio comes out, on a fake clock: a machine that slows down in the
middle of a sentence gets smaller windows before its client runs dry.

The decoder here is the timing model of decoder_model.py: it advances the fake clock by each
window's frames at the speed of that moment.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from decoder_model import FRAME_S, SAMPLE_RATE, FakeClock, TimedDecoder, decode_scheduled

from wyoming_hayakoe.pacing.margins import MAX_WINDOW_FRAMES, SPEED_MARGIN
from wyoming_hayakoe.pacing.scheduler import Pacing, PlaybackClock, Scheduler
from wyoming_hayakoe.pacing.windows import DecodeSpeed


def listen(
    frames: int, speed_at: Callable[[float], float], learned: float
) -> tuple[Scheduler, float, float]:
    """One sentence decoded on its schedule while a client plays each piece on arrival;
    returns the scheduler, the first sound and the longest silence after it."""
    clock = FakeClock()
    speed = DecodeSpeed()
    for _ in range(10):
        speed.observe(learned, 1.0)
    scheduler = Scheduler(speed, Pacing(PlaybackClock()), now=clock)
    decoder = TimedDecoder(clock, speed_at)
    latent = np.zeros((1, 2, frames), dtype=np.float32)
    first, longest, playing = None, 0.0, PlaybackClock()
    pieces = decode_scheduled(decoder, latent, latent, SAMPLE_RATE, scheduler)  # type: ignore[arg-type]
    for piece in pieces:
        if piece is None:
            continue  # a window whose audio is held back
        if first is None:
            first = clock.now
        elif playing.played_until is not None:
            longest = max(longest, clock.now - playing.played_until)
        seconds = len(piece) / SAMPLE_RATE
        playing.sent(seconds, clock.now)
        scheduler.mark_sent(seconds)
    assert first is not None
    return scheduler, first, longest


def test_a_machine_that_slows_down_mid_sentence_is_not_heard() -> None:
    # Learned at 2x real time; after 3 s another process takes 40 % of the CPU.
    def speed_at(now: float) -> float:
        return 2.0 if now < 3.0 else 1.2

    scheduler, first, longest = listen(2400, speed_at, learned=2.0)
    assert first < 0.5
    assert longest <= 0.05
    decoded = scheduler.decoded[0]
    assert sum(decoded) == 2400
    assert max(decoded) <= MAX_WINDOW_FRAMES + 8


@pytest.mark.parametrize("true_speed", [0.7, 1.0, 1.6, 4.0])
def test_as_fast_as_learned_no_silence_and_no_huge_window(true_speed: float) -> None:
    scheduler, first, longest = listen(1200, lambda _now: true_speed, learned=true_speed)
    assert longest <= 0.05
    assert max(scheduler.decoded[0]) <= MAX_WINDOW_FRAMES + 8
    audio = 1200 * FRAME_S
    decoding = 1200 * FRAME_S / true_speed
    # No schedule starts sooner than this without a gap; planning on a share of the speed
    # measured (the margins) costs some pre-roll, and no more.
    assert first >= decoding - audio - 1e-9
    assert first <= max(0.0, decoding / SPEED_MARGIN**2 - audio) + 0.4


def test_the_debug_line_says_speed_pre_roll_and_windows() -> None:
    scheduler, _first, _longest = listen(600, lambda _now: 0.8, learned=0.8)
    line = scheduler.summary()
    plan = scheduler.plans[0]
    assert f"speed {plan.speed:.2f}x real time" in line
    assert f"first sound planned {plan.first_sound:.2f} s" in line
    assert f"hold {plan.hold}: " + "+".join(map(str, scheduler.decoded[0])) in line
    assert plan.hold > 0, "below real time the sound is held back"


@pytest.mark.parametrize("true_speed", [0.8, 3.0])
def test_the_speed_learned_is_the_speed_the_plan_assumes(true_speed: float) -> None:
    """Windows that take what the planner expects of them (their frames at the true speed
    plus the fixed cost of a window) teach exactly the true speed, whatever their size: a
    small window's fixed cost is not mistaken for slow decoding."""
    scheduler, _first, _longest = listen(600, lambda _now: true_speed, learned=true_speed)
    assert len(scheduler.decoded[0]) >= 3, "windows of several sizes were timed"
    learned = scheduler.speed.assumed() / SPEED_MARGIN
    assert learned == pytest.approx(true_speed, rel=1e-6)


def test_a_sentence_is_between_sentences_until_it_sounds_and_again_once_all_of_it_is_out() -> None:
    """What the turn order reads of a request (Pacing.between_sentences): from the moment a
    sentence begins until its first audio goes out, and again once its last audio is out,
    a wait for its next step is heard as a pause; in between it is inside the sentence."""
    clock = FakeClock()
    speed = DecodeSpeed()
    for _ in range(10):
        speed.observe(3.0, 1.0)
    pacing = Pacing(PlaybackClock())
    scheduler = Scheduler(speed, pacing, now=clock)
    assert pacing.between_sentences
    scheduler.begin_sentence(75)
    decoder = TimedDecoder(clock, lambda _now: 3.0)
    latent = np.zeros((1, 2, 300), dtype=np.float32)
    states = []
    for piece in decode_scheduled(decoder, latent, latent, SAMPLE_RATE, scheduler):  # type: ignore[arg-type]
        if piece is not None:
            scheduler.mark_sent(len(piece) / SAMPLE_RATE)
            states.append(pacing.between_sentences)
    assert len(states) >= 3
    assert states[-1] and not any(states[:-1])
    scheduler.begin_sentence(75)
    assert pacing.between_sentences
