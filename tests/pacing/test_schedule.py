"""The window schedule against simulated playback: a fake clock, fake decode speeds."""

from __future__ import annotations

import pytest
from decoder_model import CUT, FRAME_S, REACH, audible

from wyoming_hayakoe.pacing.margins import MAX_WINDOW_FRAMES, MIN_WINDOW_FRAMES, WINDOW_OVERHEAD_S
from wyoming_hayakoe.pacing.plan import plan_windows
from wyoming_hayakoe.pacing.scheduler import PlaybackClock
from wyoming_hayakoe.pacing.windows import DecodeSpeed


def play(
    windows: list[int],
    frames: int,
    true_speed: float,
    lead: float = 0.0,
    cut: float = 0.0,
    hold: int = 0,
) -> tuple[float, float, float]:
    """Decode ``windows`` at ``true_speed`` on a fake clock while a client plays every chunk
    on arrival (the audio of the first ``hold`` frames sent at once); returns (first sound,
    longest gap after it, end of listening)."""
    heard = audible(frames)
    now, known, sent, clock = 0.0, 0, 0.0, PlaybackClock()
    if lead:
        clock.sent(lead, 0.0)
    first, longest = None, 0.0
    for size in windows:
        now += (size + cut) * FRAME_S / true_speed + WINDOW_OVERHEAD_S
        known += size
        audio = heard(known) - sent
        if known < hold or audio <= 0:
            continue
        sent += audio
        if clock.played_until is not None and (first is not None or lead):
            longest = max(longest, now - clock.played_until)
        first = now if first is None else first
        clock.sent(audio * FRAME_S, now)
    assert known >= frames
    assert first is not None and clock.played_until is not None
    return first, longest, clock.played_until


@pytest.mark.parametrize("cut", [0.0, CUT])
@pytest.mark.parametrize("speed", [0.5, 0.8, 1.0, 1.2, 2.0, 5.0])
@pytest.mark.parametrize("frames", [40, 120, 600, 2331])
def test_no_gap_when_the_machine_decodes_as_fast_as_assumed(
    speed: float, frames: int, cut: float
) -> None:
    plan = plan_windows(frames, FRAME_S, speed, 0.0, audible(frames), cut)
    assert sum(plan.windows) == frames
    assert all(size >= MIN_WINDOW_FRAMES or size == frames for size in plan.windows[:-1])
    assert max(plan.windows) < MAX_WINDOW_FRAMES + MIN_WINDOW_FRAMES
    first, gap, _ = play(plan.windows, frames, speed, cut=cut, hold=plan.hold)
    assert gap <= 1e-9
    assert first == pytest.approx(plan.first_sound)


@pytest.mark.parametrize("speed", [1.2, 2.0, 5.0])
def test_above_real_time_the_first_window_is_small(speed: float) -> None:
    plan = plan_windows(2331, FRAME_S, speed, 0.0, audible(2331))
    assert plan.windows[0] <= REACH + 2 * MIN_WINDOW_FRAMES
    assert plan.hold <= plan.windows[0], "the first window is sent as it comes"
    growing = plan.windows[1:-1]
    assert growing == sorted(growing), "after the first, windows only grow"
    assert plan.first_sound < 0.5


@pytest.mark.parametrize("speed", [0.5, 0.8])
def test_below_real_time_the_sound_waits_just_long_enough(speed: float) -> None:
    frames = 600
    plan = plan_windows(frames, FRAME_S, speed, 0.0, audible(frames))
    decoding = frames * FRAME_S / speed
    audio = frames * FRAME_S
    ideal = decoding - audio  # no schedule can start sooner without a gap
    assert ideal <= plan.first_sound <= ideal + 0.5
    assert plan.hold > plan.windows[0], "held back over several windows, none too large"
    # The same windows sent as they come and the client would run dry.
    assert play(plan.windows, frames, speed)[1] > 0


def test_a_slower_machine_than_assumed_is_what_the_margin_is_for() -> None:
    frames = 600
    speed = DecodeSpeed()
    for _ in range(10):
        speed.observe(1.0, 1.0 / 1.5)  # windows decoded at 1.5 x real time
    assumed = speed.assumed()
    assert assumed < 1.5
    plan = plan_windows(frames, FRAME_S, assumed, 0.0, audible(frames))
    late = play(plan.windows, frames, 1.35, hold=plan.hold)
    assert late[1] <= 1e-9, "10 % slower than measured: no gap"


def test_the_lead_of_the_sentence_before_is_slack() -> None:
    frames = 300
    cold = plan_windows(frames, FRAME_S, 1.5, 0.0, audible(frames))
    warm = plan_windows(frames, FRAME_S, 1.5, 5.0, audible(frames))
    # 5 s still to play: the largest windows that still decode fast, sent as they come.
    assert warm.hold == 0 and warm.windows == [MAX_WINDOW_FRAMES, MAX_WINDOW_FRAMES, 44]
    assert play(warm.windows, frames, 1.5, lead=5.0)[1] <= 1e-9
    assert len(cold.windows) > 1
    short_lead = plan_windows(frames, FRAME_S, 1.5, 0.3, audible(frames))
    assert play(short_lead.windows, frames, 1.5, lead=0.3)[1] <= 1e-9


def test_a_lead_too_short_below_real_time_lengthens_the_pause_not_the_sentence() -> None:
    frames, speed, lead = 600, 0.6, 0.5
    plan = plan_windows(frames, FRAME_S, speed, lead, audible(frames))
    assert plan.hold > 0, "the sound is held back, as at the start of a request"
    first, longest, _ = play(plan.windows, frames, speed, lead=lead, hold=plan.hold)
    assert longest == pytest.approx(max(0.0, first - lead)), "silence only before the sentence"


def test_speed_is_learned_conservatively() -> None:
    speed = DecodeSpeed(initial=1.0)
    assert speed.assumed() == 1.0
    for value in [2.0, 2.1, 1.9, 2.2, 0.5, 2.0, 2.05, 1.95, 2.1, 2.0]:
        speed.observe(value, 1.0)
    assert speed.assumed() <= 0.85 * 1.95
    assert speed.observed == 10


def test_playback_clock_models_a_client_playing_on_arrival() -> None:
    clock = PlaybackClock()
    assert clock.lead(0.0) == 0.0
    clock.sent(2.0, now=1.0)
    assert clock.lead(1.5) == pytest.approx(1.5)
    clock.sent(1.0, now=4.0)  # it ran dry at 3.0 and starts again at 4.0
    assert clock.played_until == pytest.approx(5.0)
