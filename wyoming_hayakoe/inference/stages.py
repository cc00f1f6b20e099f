"""The decoder's compiled stages opened (see compiling/graphs/decoder_stages.py): how far each
stage's outputs reach into its input, from the generator's configuration, and what one input
sample of each stage and one cut cost, in latent frames through the whole decoder."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from ..errors import ModelFileError
from ..runtime.sessions import RuntimeSettings
from ..voices.config import DecoderShape
from .decoder import Decoder, Stage

# SBV2's generator: conv_pre and conv_post are fixed 7-tap convolutions.
_EDGE_KERNEL = 7


def stage_reaches(shape: DecoderShape) -> list[tuple[int, int, int]]:
    """(rate, before, after) of every stage, from the generator's configuration."""
    edge = (_EDGE_KERNEL - 1) // 2
    reaches = [(1, edge, edge)]
    spread = shape.resblock_spread()
    steps = list(zip(shape.upsample_rates, shape.upsample_kernel_sizes, strict=True))
    for index, (rate, kernel) in enumerate(steps):
        if (kernel - rate) % 2:
            raise ModelFileError(f"upsampling kernel {kernel} at rate {rate} is not symmetric")
        padding = (kernel - rate) // 2
        reach = spread + (edge if index == len(steps) - 1 else 0)  # conv_post on the last
        # ConvTranspose output n reads inputs m with n = m * rate - padding + j, 0 <= j < kernel.
        before = (reach + kernel - 1 - padding) // rate
        after = (rate - 1 + reach + padding) // rate
        reaches.append((rate, before, after))
    return reaches


def open_decoder(
    stages: Sequence[Path],
    signal_inputs: Sequence[str],
    names: tuple[str, str],
    shape: DecoderShape,
    settings: RuntimeSettings,
    context: int | None = None,
) -> Decoder:
    """The decoder's compiled stages (see compiling/graphs/decoder_stages.py), opened; ``names`` are
    the latent's and the condition's, ``context`` the whole decoder's reach if known from its
    graph."""
    latent, condition = names
    reaches = stage_reaches(shape)
    if len(reaches) != len(stages):
        raise ModelFileError(
            f"{stages[0].parent}: {len(stages)} decoder stages, but config.json describes "
            f"{len(reaches)}"
        )
    opened = []
    for index, (path, signal, (rate, before, after)) in enumerate(
        zip(stages, signal_inputs, reaches, strict=True)
    ):
        session = settings.open(path, f"Decoder stage {index}", optimized=True)
        reads = condition in {i.name for i in session.get_inputs()}
        opened.append(Stage(session, signal, condition if reads else None, rate, before, after))
    hop = math.prod(stage.rate for stage in opened)
    weights = [_weight_bytes(path) for path in stages]
    reach = shape.context_frames() if context is None else context
    costs = sample_costs(opened, weights)
    return Decoder(opened, latent, condition, hop, reach, cut_cost(opened, weights), costs)


def _weight_bytes(stage: Path) -> int:
    """A compiled stage's size: its graph and the weights beside it (``stageN.data``)."""
    data = stage.with_suffix(".data")
    return stage.stat().st_size + (data.stat().st_size if data.is_file() else 0)


def sample_costs(stages: Sequence[Stage], weights: Sequence[int]) -> tuple[float, ...]:
    """The work of one input sample of each stage, in latent frames through the whole
    decoder. A stage's work per latent frame is about its weights times its output rate."""
    rate, per_frame = 1, []
    for stage, weight in zip(stages, weights, strict=True):
        per_frame.append(weight * rate * stage.rate)
        rate *= stage.rate
    work = sum(per_frame)
    if not work:
        return tuple(0.0 for _ in stages)
    return tuple(weight * stage.rate / work for stage, weight in zip(stages, weights, strict=True))


def cut_cost(stages: Sequence[Stage], weights: Sequence[int]) -> float:
    """Frames decoded again per cut: a cut makes each stage read ``before + after`` of its
    inputs again."""
    costs = sample_costs(stages, weights)
    return sum((s.before + s.after) * cost for s, cost in zip(stages, costs, strict=True))
