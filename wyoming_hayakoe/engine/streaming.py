"""Decoding one sentence on its schedule, planning again as the decoder shows its speed.

Below real time the sound must wait (pre-roll). Rather than decode one large first window on
the assumed speed, the sentence is decoded in small windows whose audio is held back; after
each, the rest of the sentence is planned on the speed measured so far in this sentence, and
the held audio goes out as soon as the rest can follow without a gap. A machine faster than
assumed thus starts sooner, one slower than assumed waits longer instead of stopping.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterator

import numpy as np

from .decoder import Decoder
from .schedule import LEAD_USE, Scheduler, plan_windows

HELD_WINDOW_FRAMES = 48
"""Windows decoded while the sound is held back: about 0.56 s of audio each."""


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
    queue = deque(plan.windows)
    holding = len(plan.windows) > 1 and plan.windows[0] > HELD_WINDOW_FRAMES + decoder.context
    held: list[np.ndarray] = []
    known = 0
    work, started = 0.0, time.monotonic()

    def sizes() -> Iterator[int]:
        nonlocal known
        while known < frames:
            size = min(HELD_WINDOW_FRAMES, frames - known) if holding else queue.popleft()
            known = min(frames, known + size)
            yield size

    pieces = decoder.decode(latent, condition, sizes())
    while True:
        piece_started = time.monotonic()
        piece = next(pieces, None)
        if piece is None:
            break
        audio = len(piece) / sample_rate
        scheduler.speed.observe(audio + cut * frame_seconds, time.monotonic() - piece_started)
        work += audio + cut * frame_seconds
        if not holding:
            yield piece
            continue
        held.append(piece)
        rest = frames - known
        if rest == 0:
            break
        speed = work / max(time.monotonic() - started, 1e-6) * LEAD_USE
        lead = sum(len(p) for p in held) / sample_rate
        assumed = min(speed, scheduler.speed.assumed() * 1.5)
        audible = _rest_audible(decoder, known, frames)
        rest_plan = plan_windows(rest, frame_seconds, assumed, lead, audible, cut)
        if rest_plan.gapless:
            holding = False
            queue = deque(rest_plan.windows)
            yield np.concatenate(held)
            held = []
    if held:
        yield np.concatenate(held)


def _rest_audible(decoder: Decoder, done: int, frames: int) -> Callable[[int], float]:
    """Frames of audio out from the rest of a sentence once ``k`` more latent frames are in."""
    base = decoder.audible_frames(done, frames)
    return lambda k: decoder.audible_frames(done + k, frames) - base
