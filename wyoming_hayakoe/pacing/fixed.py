"""Windows fixed in advance: the schedule's mode for decoding without a listener.

The self-check, the gain calibration, the decoder's warm-up and the measurements decode in
windows known before the first one, so their audio can be compared bit for bit. They go
through the same decode loop as requests (``Decoder.steps``), with this in place of
:class:`~.sentence.SentenceDecode`: nothing is held back and nothing is learned.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from .margins import FIRST_WINDOW_FRAMES, MAX_WINDOW_FRAMES, MIN_WINDOWED_FRAMES, WINDOW_GROWTH


class WindowSchedule(Protocol):
    """What the decode loop asks of a schedule, window by window."""

    @property
    def done(self) -> bool:
        """Whether every frame is decoded."""

    def next_window(self) -> int:
        """The size of the window due now."""

    def decoded(
        self, size: int, took: float, audio: np.ndarray | None, work: float
    ) -> np.ndarray | None:
        """A window of ``size`` frames took ``took`` seconds for ``work`` latent frames'
        worth of decoding and made ``audio`` exact; the audio to send now, if any."""


class FixedWindows:
    """``frames`` decoded in the windows ``sizes``; frames left after the last one in one
    more window. Each window's audio goes out as it comes."""

    def __init__(self, frames: int, sizes: Sequence[int]) -> None:
        self.frames = frames
        self.sizes = list(sizes)
        self.known = 0
        """Latent frames decoded so far."""
        self.count = 0
        """Windows decoded so far."""

    @classmethod
    def growing(cls, frames: int, early: bool) -> FixedWindows:
        """One piece (what the self-check compares with) unless ``early`` sound is wanted and
        the latent is long; then a small first window and growing ones, none larger than
        MAX_WINDOW_FRAMES, as larger ones decode slower."""
        if not early or frames < MIN_WINDOWED_FRAMES:
            return cls(frames, [frames])
        sizes, start, size = [], 0, FIRST_WINDOW_FRAMES
        while start < frames:
            sizes.append(min(size, frames - start))
            start, size = start + size, min(size * WINDOW_GROWTH, MAX_WINDOW_FRAMES)
        return cls(frames, sizes)

    @property
    def done(self) -> bool:
        return self.known >= self.frames

    def next_window(self) -> int:
        if self.count < len(self.sizes):
            return self.sizes[self.count]
        return self.frames - self.known

    def decoded(
        self, size: int, took: float, audio: np.ndarray | None, work: float
    ) -> np.ndarray | None:
        self.known = min(self.frames, self.known + size)
        self.count += 1
        return audio
