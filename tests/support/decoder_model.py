"""The full-size voice's decoder as the schedule sees it: frame length, reach and cut cost.

Shared by the schedule's tests (test_schedule.py, test_streaming_schedule.py), which play its
windows on a fake clock instead of decoding.
"""

from __future__ import annotations

from collections.abc import Callable

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
