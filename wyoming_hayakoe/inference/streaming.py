"""Decoding one sentence's latent in the windows its schedule sizes as they come due
(pacing/sentence.py), and timing the decoder when a voice loads."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator

import numpy as np

from ..pacing.margins import HELD_WINDOW_FRAMES
from ..pacing.scheduler import Scheduler
from ..pacing.sentence import SentenceDecode
from ..pacing.windows import DecodeSpeed, busy_seconds
from .decoder import Decoder, decode_steps

_LOGGER = logging.getLogger(__name__)


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
) -> Iterator[np.ndarray | None]:
    """``latent`` decoded in the windows the scheduler plans, one window per step: the audio
    to send after each (None while it is held back), gap-free if it can be."""
    sentence = SentenceDecode(scheduler, decoder, latent.shape[2], sample_rate)
    try:
        yield from decode_steps(decoder.stream(latent, condition), sentence, scheduler.now)
    finally:
        scheduler.decoded.append(sentence.windows)
