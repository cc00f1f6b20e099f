"""Decoder weights whose outer kernel taps carry weight, so that distant latent frames count.

The reference initializes the generator's convolutions with N(0, 0.01): every residual branch
adds almost nothing to its input, and an output sample hardly depends on latent frames more
than a few frames away. A trained decoder is not like that, and with such weights decoding in
windows with too little context looks exact (5 frames instead of 13 changed the full synthetic
voice's audio by 2e-5 at a peak of 0.086). Here every decoder convolution is redrawn at unit
gain with its first and last taps ``EDGE_TAP`` times as large as the others, and the residual
branches at ``RESIDUAL_GAIN``, so that one frame too little context changes the audio clearly.
The stage and output scaling that follows (synth_model) keeps the output far from tanh's knee.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator, Sequence
from typing import Any

import torch
from torch import nn

_LOGGER = logging.getLogger(__name__)

EDGE_TAP = 3.0
"""First and last tap of every kernel of 3 or more taps, relative to the inner taps."""
RESIDUAL_GAIN = 3.0
"""Gain of each residual-block convolution: the branches outweigh the skip connection, so the
longest path through the dilated taps is not drowned by the identity."""
MIN_SHORT_CONTEXT_RATIO = 20.0
"""One frame too little context must change the audio this many times more than exact context
(float rounding) does, or the weights do not do their job."""
WINDOW_FRAMES = 24


def decoder_convolutions(dec: Any) -> Iterator[tuple[nn.Conv1d | nn.ConvTranspose1d, float]]:
    """Every convolution on the decoder's signal path, with the gain it is drawn at."""
    yield dec.conv_pre, 1.0
    yield from ((up, 1.0) for up in dec.ups)
    for block in dec.resblocks:
        for conv in [*getattr(block, "convs1", []), *getattr(block, "convs2", [])]:
            yield conv, RESIDUAL_GAIN
        for conv in getattr(block, "convs", []):  # ResBlock2
            yield conv, RESIDUAL_GAIN
    yield dec.conv_post, 1.0


def _tap_envelope(kernel: int) -> torch.Tensor:
    """Per-tap scale of unit mean square: edges ``EDGE_TAP`` times the inner taps."""
    envelope = torch.ones(kernel)
    if kernel >= 3:
        envelope[0] = envelope[-1] = EDGE_TAP
    return envelope / envelope.pow(2).mean().sqrt()


def spread_taps(dec: Any, seed: int) -> None:
    """Redraw the decoder's convolution weights (biases stay); deterministic for ``seed``."""
    gen = torch.Generator().manual_seed(seed)
    for conv, gain in decoder_convolutions(dec):
        weight: torch.Tensor = conv.weight
        kernel = int(weight.shape[-1])
        if isinstance(conv, nn.ConvTranspose1d):
            # weight [in, out, kernel]: an output sample reads kernel / stride taps per input
            fan_in = weight.shape[0] * kernel / conv.stride[0]
        else:
            fan_in = weight.shape[1] * kernel
        draw = torch.randn(weight.shape, generator=gen)
        weight.copy_(draw * _tap_envelope(kernel) * (gain / math.sqrt(fan_in)))


def receptive_context(dec: nn.Module, g: torch.Tensor, channels: int, hop: int) -> int:
    """Latent frames either side an output sample depends on, found by changing one frame."""
    frames, poked = 64, 32
    gen = torch.Generator().manual_seed(1)
    latent = torch.randn(1, channels, frames, generator=gen)
    changed_latent = latent.clone()
    changed_latent[:, :, poked] += 1.0
    diff = (dec(latent, g=g) != dec(changed_latent, g=g)).reshape(-1).nonzero()
    first, last = int(diff.min()) // hop, int(diff.max()) // hop
    return max(poked - first, last - poked)


def window_errors(
    dec: nn.Module, z: torch.Tensor, g: torch.Tensor, contexts: Sequence[int], hop: int
) -> dict[int, float]:
    """Largest difference between decoding ``z`` whole and in windows of WINDOW_FRAMES with
    ``context`` frames either side, relative to the whole audio's peak, for each context."""
    whole = dec(z, g=g).reshape(-1)
    peak = float(whole.abs().max())
    frames = z.shape[-1]
    errors = {}
    for context in contexts:
        parts = []
        for start in range(0, frames, WINDOW_FRAMES):
            end = min(frames, start + WINDOW_FRAMES)
            low, high = max(0, start - context), min(frames, end + context)
            audio = dec(z[:, :, low:high], g=g).reshape(-1)
            parts.append(audio[(start - low) * hop : (end - low) * hop])
        errors[context] = float((torch.cat(parts) - whole).abs().max()) / peak
    return errors


def check_context(dec: nn.Module, z: torch.Tensor, g: torch.Tensor, hop: int) -> dict[int, float]:
    """Log how much too little context changes the audio; refuse weights where it does not."""
    exact = receptive_context(dec, g, z.shape[1], hop)
    errors = window_errors(dec, z, g, [exact, exact - 1, 8, 5], hop)
    _LOGGER.info(
        "Decoder context %d frames; windowed vs whole (relative to the peak): %s",
        exact,
        ", ".join(f"{context} frames {error:.1e}" for context, error in errors.items()),
    )
    rounding = max(errors[exact], 1e-7)
    if errors[exact - 1] < MIN_SHORT_CONTEXT_RATIO * rounding:
        raise ValueError(
            f"decoding with {exact - 1} frames of context differs by only "
            f"{errors[exact - 1]:.1e} of the peak ({errors[exact]:.1e} with {exact})"
        )
    return errors
