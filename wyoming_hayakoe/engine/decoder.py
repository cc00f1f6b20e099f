"""Decoding a sentence's latent window by window, so its first sound plays early.

The decoder (a HiFi-GAN-like generator) is a stack of convolutions: an output sample depends
only on latent frames within its receptive field. Each window is decoded with that many frames of
context on either side and only its own samples are kept, so the stitched audio equals decoding
the whole latent at once. A small first window gets sound out quickly; later windows grow so the
extra work of the overlaps stays small.

Each cut costs twice the context of extra decoding (26 frames, about 10 % of a 3 s sentence),
so only the first sentence of a request is cut: later sentences are decoded while the ones
before them play. It pays for the listener even so: the sound starts after the first window
instead of the whole sentence, and the rest is decoded while it plays, so a client playing
chunks as they arrive finishes sooner (BENCHMARKS.md, "listening ends"). On a machine that
decodes slower than real time the listener may hear a short pause after the first window.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import onnxruntime as ort

FIRST_WINDOW_FRAMES = 24
"""About 0.28 s of audio at 44.1 kHz / hop 512."""
WINDOW_GROWTH = 4
MIN_WINDOWED_FRAMES = 96
"""Shorter latents (about 1.1 s of audio) are decoded whole: they are over before a cut helps."""


@dataclass(frozen=True)
class Decoder:
    """The decoder half of a split synthesizer."""

    session: ort.InferenceSession
    latent_name: str
    condition_name: str
    context: int
    """Frames of context decoded on each side of a window."""

    def windows(
        self, latent: np.ndarray, condition: np.ndarray, early: bool
    ) -> Iterator[np.ndarray]:
        """Float audio of ``latent`` ([1, channels, frames]); in windows if ``early`` sound
        is wanted and the latent is long, else in one piece."""
        frames = latent.shape[2]
        start, size = 0, FIRST_WINDOW_FRAMES if early and frames >= MIN_WINDOWED_FRAMES else frames
        while start < frames:
            end = min(frames, start + size)
            if frames - end < size // 2:  # no tiny last window: its overlap would cost more
                end = frames
            low, high = max(0, start - self.context), min(frames, end + self.context)
            audio = self.session.run(
                None,
                {
                    self.latent_name: np.ascontiguousarray(latent[:, :, low:high]),
                    self.condition_name: condition,
                },
            )[0].reshape(-1)
            hop = len(audio) // (high - low)
            yield audio[(start - low) * hop : (end - low) * hop]
            start, size = end, size * WINDOW_GROWTH
