"""Timing the decoder when a voice loads, so the first request's windows are sized on this
machine's speed (a request's windows: pacing/sentence.py sizes them, the render loop in
engine/rendering.py decodes them)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from ..pacing.margins import HELD_WINDOW_FRAMES
from ..pacing.windows import DecodeSpeed, busy_seconds
from .decoder import Decoder

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
