"""The speed a plan is made on does not shrink after a short request: a window's
work is what the decoder's stages ran, so the first window of a latent (no context before it)
and its last (every stage's held-back samples) teach the same speed as any other."""

from __future__ import annotations

import numpy as np
import pytest
from decoder_model import FRAME_S, SAMPLE_RATE, FakeClock, decode_scheduled, stage_timed_decoder

from wyoming_hayakoe.inference.warm_up import warm_up
from wyoming_hayakoe.pacing.margins import SPEED_MARGIN, STEADY_RANGE
from wyoming_hayakoe.pacing.scheduler import Scheduler
from wyoming_hayakoe.pacing.windows import DecodeSpeed

SPEED = 1.9
"""The reference decoder of the full-size voice on a 2-core machine, as measured."""


def _request(clock: FakeClock, decoder: object, speed: DecodeSpeed, frames: int) -> Scheduler:
    """One sentence of ``frames`` decoded on its schedule, as a request does."""
    scheduler = Scheduler(speed, now=clock)
    latent = np.zeros((1, 1, frames), np.float32)
    for audio in decode_scheduled(decoder, latent, latent, SAMPLE_RATE, scheduler):  # type: ignore[arg-type]
        if audio is not None:
            scheduler.mark_sent(len(audio) / SAMPLE_RATE)
    return scheduler


def _warmed() -> tuple[FakeClock, object, DecodeSpeed]:
    clock = FakeClock()
    decoder = stage_timed_decoder(clock, SPEED)
    speed = DecodeSpeed()
    warm_up(decoder, SAMPLE_RATE, speed, now=clock)  # type: ignore[arg-type]
    return clock, decoder, speed


@pytest.mark.parametrize("short", [12, 30, 60])
def test_a_short_request_leaves_the_next_plan_as_it_was(short: int) -> None:
    clock, decoder, speed = _warmed()
    alone = _request(clock, decoder, speed, 220)
    clock, decoder, speed = _warmed()
    _request(clock, decoder, speed, short)  # 「はい。」
    after = _request(clock, decoder, speed, 220)
    plan, before = after.plans[0], alone.plans[0]
    assert (plan.windows, plan.hold) == (before.windows, before.hold)
    assert plan.speed == pytest.approx(before.speed, rel=1e-9)
    assert after.decoded == alone.decoded


def test_every_window_teaches_the_same_speed() -> None:
    clock, decoder, speed = _warmed()
    for frames in (12, 30, 220, 500):
        _request(clock, decoder, speed, frames)
    # the model's speed, less the margin, whatever the windows were; as steady as it is, a
    # held-back start keeps the least margin
    assert speed.assumed() == pytest.approx(SPEED * SPEED_MARGIN, rel=1e-6)
    assert speed.assumed(steady=True) == pytest.approx(SPEED * STEADY_RANGE[1], rel=1e-6)
    assert speed.observed > 10


def test_a_window_counts_what_its_stages_ran() -> None:
    clock = FakeClock()
    decoder = stage_timed_decoder(clock, SPEED)
    latent = np.zeros((1, 1, 100), np.float32)
    stream = decoder.stream(latent, latent)
    works = []
    for size in (24, 40, 36):
        stream.feed(size)
        works.append(stream.work)
    # the first window ran less than its frames and a cut, the last more; together: every
    # frame once and what the two cuts decoded again
    assert works[0] < 24 + decoder.cut_frames and works[2] > 36 + decoder.cut_frames
    assert sum(works) == pytest.approx(100 + 2 * decoder.cut_frames, rel=0.02)
    assert FRAME_S > 0
