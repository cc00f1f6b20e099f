"""The full-size voice's decoder as the schedule sees it: frame length, reach and cut cost,
and a decoder that takes its time on a fake clock instead of decoding.

Shared by the schedule's tests (test_schedule.py, test_streaming_schedule.py,
test_listeners_heard.py; test_cpu_turns.py takes its clock), which play its windows on the
fake clock. It has the real decoder's
interface for scheduling (its hop, the cost of a cut, the frames it holds back); the audio's
exactness is tested on the real stage-wise decoder in test_decoder_stages.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import numpy as np

from wyoming_hayakoe.inference.decoder import decode_steps
from wyoming_hayakoe.pacing.margins import WINDOW_OVERHEAD_S
from wyoming_hayakoe.pacing.scheduler import Scheduler
from wyoming_hayakoe.pacing.sentence import SentenceDecode

SAMPLE_RATE = 44100
HOP = 512
FRAME_S = HOP / SAMPLE_RATE
REACH = 13
"""Frames the decoder holds back until the latent after them is known."""
CUT = 4.65
"""Frames a cut decodes again (the full-size voice's stages)."""


def audible_frames(known: int, frames: int) -> float:
    """Frames of audio out once ``known`` of ``frames`` latent frames are decoded: the last
    REACH frames wait for more."""
    return float(frames if known >= frames else max(0, known - REACH))


def audible(frames: int) -> Callable[[int], float]:
    return lambda known: audible_frames(known, frames)


class FakeClock:
    """The time in seconds, advanced by hand (by the timed decoder)."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class TimedLatent:
    """A latent being "decoded": each window takes the time the decoder would need at the
    speed of that moment, and gives the audio that became exact (zeros)."""

    def __init__(self, decoder: TimedDecoder, frames: int) -> None:
        self.decoder, self.frames = decoder, frames
        self.known, self.out = 0, 0.0
        self.work = 0.0
        """The last window's frames and a cut: what this model takes its time for."""

    @property
    def done(self) -> bool:
        return self.known >= self.frames

    def feed(self, size: int) -> np.ndarray | None:
        size = min(size, self.frames - self.known)
        clock = self.decoder.clock
        speed = self.decoder.speed_at(clock.now)
        clock.now += (size + CUT) * FRAME_S / speed + WINDOW_OVERHEAD_S
        self.work = size + CUT
        self.known += size
        audible = audible_frames(self.known, self.frames)
        if audible <= self.out:
            return None
        piece = np.zeros(round((audible - self.out) * HOP), dtype=np.float32)
        self.out = audible
        return piece


class TimedDecoder:
    """Decodes nothing, but takes the time a decoder of ``speed_at(now)`` would take."""

    hop = HOP
    cut_frames = CUT
    context = REACH

    def __init__(self, clock: FakeClock, speed_at: Callable[[float], float]) -> None:
        self.clock, self.speed_at = clock, speed_at

    def audible_frames(self, known: int, frames: int) -> float:
        return audible_frames(known, frames)

    def stream(self, latent: np.ndarray, condition: np.ndarray) -> TimedLatent:
        return TimedLatent(self, latent.shape[2])


class _TimedStage:
    """A decoder stage's session that computes nothing (zeros of the right length) and takes
    the time its input's samples cost, on the fake clock: the work of each window is then
    what the stages really run, first and last windows included."""

    def __init__(self, clock: FakeClock, rate: int, cost: float, speed: float, fixed: float):
        self.clock, self.rate, self.cost, self.speed, self.fixed = clock, rate, cost, speed, fixed
        self.signal = ""

    def get_inputs(self) -> list[SimpleNamespace]:
        """What the warm-up reads to shape its silence: one channel of floats."""
        return [SimpleNamespace(name=self.signal, type="tensor(float)", shape=[1, 1, "n"])]

    def run(self, _outputs: object, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
        samples = next(iter(feeds.values())).shape[2]
        self.clock.now += samples * self.cost * FRAME_S / self.speed + self.fixed
        return [np.zeros((1, 1, samples * self.rate), np.float32)]


def stage_timed_decoder(clock: FakeClock, speed: float) -> Any:
    """The full-size voice's stage-wise decoder (its rates, reaches and shares of the work),
    run by the real streaming code on stages that only take their time: ``speed`` times real
    time through the whole decoder, and WINDOW_OVERHEAD_S per window (its first stage's run)."""
    from wyoming_hayakoe.inference.decoder import Decoder, Stage
    from wyoming_hayakoe.inference.stages import cut_cost, sample_costs

    reaches = [(1, 3, 3), (8, 8, 8), (8, 8, 8), (2, 32, 32), (2, 30, 30), (2, 32, 32)]
    weights = [3_400_000, 8_400_000, 2_100_000, 530_000, 130_000, 33_000]  # bytes, full voice
    plain = [Stage(None, f"s{i}", None, *reach) for i, reach in enumerate(reaches)]  # type: ignore[arg-type]
    costs = sample_costs(plain, weights)
    stages = []
    for index, (stage, cost) in enumerate(zip(plain, costs, strict=True)):
        session = _TimedStage(
            clock, stage.rate, cost, speed, WINDOW_OVERHEAD_S if index == 0 else 0.0
        )
        session.signal = stage.signal_input
        stages.append(
            Stage(session, stage.signal_input, None, stage.rate, stage.before, stage.after)
        )  # type: ignore[arg-type]
    return Decoder(stages, "z", "g", HOP, REACH, cut_cost(plain, weights), costs)


def decode_scheduled(
    decoder: Any, latent: np.ndarray, condition: np.ndarray, sample_rate: int, scheduler: Scheduler
) -> Iterator[np.ndarray | None]:
    """One sentence decoded in the windows its schedule sizes as they come due, one window
    per step, as the render loop decodes it (engine/rendering.py): the audio to send after
    each, None while it is held back."""
    schedule = SentenceDecode(scheduler, decoder, latent.shape[2], sample_rate)
    yield from decode_steps(decoder.stream(latent, condition), schedule, scheduler.now)
    scheduler.decoded.append(schedule.windows)
