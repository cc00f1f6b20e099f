"""Several requests on one machine, on a fake clock: pacing's turn order and window schedule,
with the decoder's timing model (decoder_model.py) instead of ONNX.

Each request is a list of sentences, each a front-end step (front-end, BERT and text encoder:
its seconds) and a latent of some frames decoded in the windows the engine's scheduler plans.
One step runs at a time, chosen by :class:`TurnOrder` as the service chooses; every client
plays each piece as it arrives, and what it hears is noted (first sound, silences).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
from decoder_model import SAMPLE_RATE, FakeClock, TimedDecoder, decode_scheduled

from wyoming_hayakoe.pacing.scheduler import PlaybackClock, Scheduler
from wyoming_hayakoe.pacing.turns import Demand, TurnOrder
from wyoming_hayakoe.pacing.windows import DecodeSpeed

PAUSE_S = 0.3
"""Silence between two sentences of a request (restored from the duration predictor)."""
FRONT_END_S = 0.12
"""A short sentence's front-end, BERT and text encoder on the full-size voice (2 cores)."""


@dataclass(frozen=True)
class Request:
    arrival: float
    sentences: Sequence[int]
    """Latent frames of each sentence."""
    front_end: float = FRONT_END_S


@dataclass
class Heard:
    """What one client heard."""

    request: Request
    first_sound: float | None = None
    """Seconds from the request to its first audio."""
    longest_silence: float = 0.0
    """Longest wait for audio once it had started, pauses between sentences excluded."""
    stretches: list[float] = field(default_factory=list)
    """How much longer than restored each pause between two sentences was heard."""
    fronts: list[tuple[float, float]] = field(default_factory=list)
    """For each sentence, when its front-end started and how much audio of the sentences
    before it the client still had to play then."""
    finished: float = 0.0
    """When the last audio was made."""
    steps: list[float] = field(default_factory=list)
    """When each of its steps ended."""
    windows: list[list[int]] = field(default_factory=list)


def two_sentences(frames: int = 150) -> list[int]:
    """A two-sentence announcement: about 1.7 s of audio per sentence, 1 s of work at 4.5x."""
    return [frames, frames]


def play(
    requests: Sequence[Request],
    speed: float | Callable[[float], float] = 6.0,
    learned: float | None = None,
    order: TurnOrder | None = None,
) -> list[Heard]:
    """Run ``requests`` to the end on a decoder of ``speed`` (times real time, or a function
    of the time), planned on ``learned`` (default: the speed itself); what each client heard."""
    speed_at = speed if callable(speed) else (lambda _now, value=speed: value)
    clock = FakeClock()
    order = order or TurnOrder(now=clock)
    order.now = clock
    decode_speed = DecodeSpeed()
    for _ in range(10):
        decode_speed.observe(learned or speed_at(0.0), 1.0)
    decoder = TimedDecoder(clock, speed_at)
    heard = [Heard(request) for request in requests]
    demands = [Demand(request.arrival, PlaybackClock()) for request in requests]
    steps = [
        _steps(request, demand, heard_by, clock, decoder, decode_speed, order)
        for request, demand, heard_by in zip(requests, demands, heard, strict=True)
    ]
    running: dict[int, Demand] = {}
    pending = set(range(len(requests)))
    while pending or running:
        for index in sorted(pending):
            if requests[index].arrival <= clock.now:
                pending.discard(index)
                running[index] = demands[index]
                order.join(demands[index])
        if not running:
            clock.now = min(requests[index].arrival for index in pending)
            continue
        demand = order.choose(list(running.values()))
        order.granted(demand)
        index = demands.index(demand)
        started, was_sounding = clock.now, demand.sounding
        if next(steps[index], None) is _DONE:
            del running[index]
            order.leave(demand)
        order.stepped(demand, clock.now - started, was_sounding)
        heard[index].steps.append(clock.now)
    return heard


_DONE = object()


def _hear(
    pieces: list[tuple[float, bool]],
    heard: Heard,
    listening: PlaybackClock,
    clock: FakeClock,
    request: Request,
) -> None:
    """The client gets ``pieces`` (seconds, whether it starts after a pause) now."""
    for seconds, after_pause in pieces:
        if heard.first_sound is None:
            heard.first_sound = clock.now - request.arrival
        elif listening.played_until is not None and not after_pause:
            heard.longest_silence = max(heard.longest_silence, clock.now - listening.played_until)
        elif listening.played_until is not None:
            heard.stretches.append(max(0.0, clock.now - listening.played_until))
        listening.sent(seconds, clock.now)
        heard.finished = clock.now


def _steps(
    request: Request,
    demand: Demand,
    heard: Heard,
    clock: FakeClock,
    decoder: TimedDecoder,
    speed: DecodeSpeed,
    order: TurnOrder,
) -> Iterator[object]:
    scheduler = Scheduler(speed, demand.pacing, now=clock)
    listening = PlaybackClock()
    for index, frames in enumerate(request.sentences):
        # phonemes in proportion to frames, as a voice speaks them
        later = [f // 4 for f in request.sentences[index + 1 :]]
        scheduler.begin_sentence(frames // 4, later)
        _hear(scheduler.release(None), heard, listening, clock, request)
        heard.fronts.append((clock.now, listening.lead(clock.now)))
        clock.now += request.front_end
        yield None
        latent = np.zeros((1, 2, frames), dtype=np.float32)
        pause = PAUSE_S if index else 0.0
        made = decode_scheduled(decoder, latent, latent, SAMPLE_RATE, scheduler)  # type: ignore[arg-type]
        for piece in made:
            produced = None
            if piece is not None:
                produced = (len(piece) / SAMPLE_RATE + pause, pause > 0)
                pause = 0.0
            seconds = produced[0] if produced is not None else 0.0
            _hear(scheduler.release(produced, seconds), heard, listening, clock, request)
            yield None
    _hear(scheduler.flush(), heard, listening, clock, request)
    heard.windows = scheduler.decoded
    yield _DONE
