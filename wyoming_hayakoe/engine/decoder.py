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

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnxruntime as ort

FIRST_WINDOW_FRAMES = 24
"""About 0.28 s of audio at 44.1 kHz / hop 512."""
WINDOW_GROWTH = 4
MIN_WINDOWED_FRAMES = 96
"""Shorter latents (about 1.1 s of audio) are decoded whole: they are over before a cut helps."""

# SBV2's generator: conv_pre and conv_post are fixed 7-tap convolutions.
_PRE_KERNEL = 7
_POST_KERNEL = 7


@dataclass(frozen=True)
class DecoderShape:
    """What bounds the decoder's receptive field (the ``model`` section of config.json)."""

    upsample_rates: Sequence[int] = (8, 8, 2, 2, 2)
    upsample_kernel_sizes: Sequence[int] = (16, 16, 8, 2, 2)
    resblock: str = "1"
    resblock_kernel_sizes: Sequence[int] = (3, 7, 11)
    resblock_dilation_sizes: Sequence[Sequence[int]] = ((1, 3, 5), (1, 3, 5), (1, 3, 5))

    @classmethod
    def from_config(cls, model: dict[str, Any]) -> DecoderShape:
        known = {name: model[name] for name in cls.__dataclass_fields__ if name in model}
        if "resblock" in known:
            known["resblock"] = str(known["resblock"])
        return cls(**known)

    def context_frames(self) -> int:
        """How many latent frames either side an output sample can depend on, exactly.

        Walks the generator backwards, turning the span of samples one output sample reads
        into the span it reads one layer earlier, down to the latent; the widest span over
        every sample of a frame decides (13 frames for the published configuration).
        """
        total_rate = math.prod(self.upsample_rates)
        spread = self._resblock_spread()
        reach = max(
            frame
            for sample in range(total_rate)
            for frame in self._frames_read(sample, total_rate, spread)
        )
        return int(reach)

    def _frames_read(self, sample: int, total_rate: int, spread: int) -> tuple[int, int]:
        """Latent frames before and after the frame of ``sample`` that it reads, given the
        generator's total upsampling and the samples either side a residual stage reads."""
        # Far from the edges, so that padding never clips the span.
        out = sample + 64 * total_rate
        low, high = out - (_POST_KERNEL - 1) // 2, out + (_POST_KERNEL - 1) // 2
        for rate, kernel in reversed(
            list(zip(self.upsample_rates, self.upsample_kernel_sizes, strict=False))
        ):
            low, high = low - spread, high + spread
            # ConvTranspose1d(kernel, rate, padding=(kernel - rate) // 2): output n reads
            # inputs m with n = m * rate - padding + j, 0 <= j < kernel.
            padding = (kernel - rate) // 2
            low = -((-(low + padding - kernel + 1)) // rate)  # ceiling division
            high = (high + padding) // rate
        low, high = low - (_PRE_KERNEL - 1) // 2, high + (_PRE_KERNEL - 1) // 2
        frame = out // total_rate
        return frame - low, high - frame

    def _resblock_spread(self) -> int:
        """Samples either side that the widest residual block reads (the blocks are summed)."""
        spreads = []
        for kernel, dilations in zip(
            self.resblock_kernel_sizes, self.resblock_dilation_sizes, strict=False
        ):
            spread = sum((kernel - 1) * d // 2 for d in dilations)
            if self.resblock == "1":  # each dilated conv is followed by an undilated one
                spread += len(dilations) * ((kernel - 1) // 2)
            spreads.append(spread)
        return max(spreads, default=0)


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
