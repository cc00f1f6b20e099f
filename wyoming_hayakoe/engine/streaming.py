"""Decoding one sentence on its schedule, sizing each window as the decoder shows its speed.

Every window is sized when it is due: as large as the audio still to play allows on the speed
measured so far, so a machine that slows down mid-sentence gets smaller windows before it runs
dry. Below real time the sound must wait (pre-roll). Rather than decode one large first window
on the assumed speed, the sentence is decoded in small windows whose audio is held back; after
each, the rest of the sentence is planned on the speed measured so far in this sentence, and
the held audio goes out as soon as the rest can follow without a gap. A machine faster than
assumed thus starts sooner, one slower than assumed waits longer instead of stopping.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Iterator

import numpy as np

from .decoder import Decoder
from .schedule import (
    MIN_WINDOW_FRAMES,
    SPEED_MARGIN,
    DecodeSpeed,
    Scheduler,
    busy_seconds,
    next_window,
    plan_windows,
)

_LOGGER = logging.getLogger(__name__)

HELD_WINDOW_FRAMES = 48
"""Windows decoded while the sound is held back, or once it has run dry: about 0.56 s of audio
each, so a late machine makes one short pause rather than a stutter."""


def warm_up(
    decoder: Decoder,
    sample_rate: int,
    speed: DecodeSpeed,
    now: Callable[[], float] = time.monotonic,
) -> None:
    """Decode a window of silence twice when the voice loads and let the second tell
    ``speed`` how fast this machine decodes. The first run pages the weights in and is slow:
    a first request timed on it held most of a short sentence back (pre-roll) and took the
    largest windows, so the first announcement after a start came late."""
    silence = decoder.silence(HELD_WINDOW_FRAMES)
    if silence is None:
        return
    for _ in decoder.decode(*silence, [HELD_WINDOW_FRAMES]):
        pass
    started = now()
    for _ in decoder.decode(*silence, [HELD_WINDOW_FRAMES]):
        pass
    took = busy_seconds(now() - started)
    seconds = HELD_WINDOW_FRAMES * decoder.hop / sample_rate
    speed.observe(seconds, took)
    _LOGGER.debug("Decoder warmed up: %.2fx real time", seconds / max(took, 1e-6))


def decode_scheduled(
    decoder: Decoder,
    latent: np.ndarray,
    condition: np.ndarray,
    sample_rate: int,
    scheduler: Scheduler,
) -> Iterator[np.ndarray]:
    """Float audio of ``latent`` in the windows the scheduler plans, gap-free if it can be."""
    frames = latent.shape[2]
    frame_seconds = decoder.hop / sample_rate
    cut = decoder.cut_frames
    plan = scheduler.plan(frames, frame_seconds, lambda k: decoder.audible_frames(k, frames), cut)
    holding = plan.hold > plan.windows[0]
    held: list[np.ndarray] = []
    known = 0
    work, started = 0.0, scheduler.now()
    last_speed = math.inf
    decoded: list[int] = []

    def live_size() -> int:
        left = frames - known
        if not decoded and not holding:
            return min(plan.windows[0], left)
        if holding:
            return min(HELD_WINDOW_FRAMES, left)
        lead = scheduler.clock.lead(scheduler.now())
        # The last window tells first when the machine slows down (another process woke up).
        speed = min(scheduler.speed.assumed(), last_speed * SPEED_MARGIN)
        if lead * speed < (MIN_WINDOW_FRAMES + cut) * frame_seconds:  # already behind
            return min(HELD_WINDOW_FRAMES, left)
        return next_window(lead, speed, frame_seconds, cut, left, last_speed)

    def sizes() -> Iterator[int]:
        nonlocal known
        while known < frames:
            size = live_size()
            known = min(frames, known + size)
            decoded.append(size)
            yield size

    pieces = decoder.decode(latent, condition, sizes())
    try:
        while True:
            piece_started, known_before, windows_before = scheduler.now(), known, len(decoded)
            piece = next(pieces, None)
            if piece is None:
                break
            # Work in seconds of audio the latent frames stand for: a window's audio lags
            # its frames by the decoder's reach, so the audio out would understate it.
            done = known - known_before + cut * (len(decoded) - windows_before)
            took = busy_seconds(scheduler.now() - piece_started, len(decoded) - windows_before)
            scheduler.speed.observe(done * frame_seconds, took)
            last_speed = done * frame_seconds / max(took, 1e-6)
            work += done * frame_seconds
            if not holding:
                yield piece
                continue
            held.append(piece)
            rest = frames - known
            if rest == 0:
                break
            busy = busy_seconds(scheduler.now() - started, len(decoded))
            speed = work / max(busy, 1e-6) * SPEED_MARGIN
            lead = sum(len(p) for p in held) / sample_rate
            assumed = min(speed, scheduler.speed.assumed() * 1.5)
            audible = _rest_audible(decoder, known, frames)
            if plan_windows(rest, frame_seconds, assumed, lead, audible, cut).hold == 0:
                holding = False
                yield np.concatenate(held)
                held = []
        if held:
            yield np.concatenate(held)
    finally:
        scheduler.decoded.append(decoded)


def _rest_audible(decoder: Decoder, done: int, frames: int) -> Callable[[int], float]:
    """Frames of audio out from the rest of a sentence once ``k`` more latent frames are in."""
    base = decoder.audible_frames(done, frames)
    return lambda k: decoder.audible_frames(done + k, frames) - base
