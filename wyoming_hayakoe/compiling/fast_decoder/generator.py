"""The layers of a VITS-family generator in an ONNX graph, found by the names PyTorch's exporter
gives them.

Style-Bert-VITS2's decoder and Piper's are the same HiFi-GAN generator: ``conv_pre`` (plus
``cond``, the speaker conditioning, in a multi-speaker model), then per upsampling step ``N``
a transposed convolution ``ups.N`` followed by ``K`` residual blocks
``resblocks.{N*K} .. resblocks.{N*K+K-1}``, then ``conv_post`` and tanh. Precision is chosen per
group of these: conv_pre with cond, the residual blocks of each upsampling step (a *stage*,
running at that step's rate), conv_post. The names are matched as path segments, with or
without the ``dec/`` of a whole synthesizer's export.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from ...errors import ModelFileError

CONV_PRE = "conv_pre"
CONV_POST = "conv_post"

_LAYER = re.compile(
    r"(?:^|/)(?:dec/)?(?:(?P<edge>conv_pre|cond|conv_post)|resblocks\.(?P<block>\d+)|"
    r"ups\.(?P<up>\d+))/"
)


def stage_name(index: int) -> str:
    """The group of the residual blocks after upsampling step ``index``."""
    return f"stage {index}"


@dataclass(frozen=True)
class LayerGroup:
    """Convolutions whose precision is chosen together."""

    name: str
    """``conv_pre``, ``stage N`` or ``conv_post``."""
    convs: tuple[str, ...]
    """The names of its Conv nodes."""
    work: float
    """Multiply-adds per latent frame: what int8 can speed up."""
    rate: int
    """Samples per latent frame where it runs (1 for conv_pre; the audio rate for the last
    stage and conv_post)."""


@dataclass(frozen=True)
class Generator:
    """A generator graph's layer groups, from the latent to the audio."""

    groups: tuple[LayerGroup, ...]

    def group(self, name: str) -> LayerGroup:
        for group in self.groups:
            if group.name == name:
                return group
        raise KeyError(f"no layer group {name!r} (groups: {', '.join(self.names)})")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(group.name for group in self.groups)

    @property
    def audio_rate(self) -> tuple[str, ...]:
        """The groups that run at the audio rate: the last stage and conv_post. Measured on a
        real trained decoder, 8-bit activations there cost the most (docs/fast-decoder.md): the
        default split keeps them in float."""
        return tuple(g.name for g in self.groups if g.rate == self.groups[-1].rate)

    def convs(self, names: tuple[str, ...] | list[str]) -> list[str]:
        return [conv for name in names for conv in self.group(name).convs]

    @property
    def all_convs(self) -> list[str]:
        return self.convs(list(self.names))


def find_generator(model: Any) -> Generator:
    """The layer groups of the generator graph ``model``; ModelFileError if it is not one."""
    weights = {init.name: list(init.dims) for init in model.graph.initializer}
    upsampling: dict[int, int] = {}
    blocks: dict[str, list[tuple[int, Any]]] = {CONV_PRE: [], CONV_POST: []}
    by_block: dict[int, list[Any]] = {}
    for node in model.graph.node:
        match = _LAYER.search(node.name)
        if match is None:
            continue
        if match["up"] is not None and node.op_type == "ConvTranspose":
            upsampling[int(match["up"])] = _stride(node)
        elif node.op_type == "Conv" and match["block"] is not None:
            by_block.setdefault(int(match["block"]), []).append(node)
        elif node.op_type == "Conv" and match["edge"] is not None:
            edge = CONV_POST if match["edge"] == CONV_POST else CONV_PRE
            blocks[edge].append((0, node))
    steps = len(upsampling)
    if not steps or sorted(upsampling) != list(range(steps)) or not blocks[CONV_POST]:
        raise ModelFileError(
            "not a VITS generator graph: no ups.N upsampling steps or no conv_post (its nodes "
            "must keep the names PyTorch's exporter gives them, such as /dec/ups.0/ConvTranspose)"
        )
    if not by_block or len(by_block) % steps or sorted(by_block) != list(range(len(by_block))):
        raise ModelFileError(f"{len(by_block)} residual blocks for {steps} upsampling steps")
    per_step = len(by_block) // steps
    rates = [math.prod(upsampling[i] for i in range(step + 1)) for step in range(steps)]
    groups = [_group(CONV_PRE, [n for _, n in blocks[CONV_PRE]], 1, weights)]
    for step in range(steps):
        nodes = [n for b in range(step * per_step, (step + 1) * per_step) for n in by_block[b]]
        groups.append(_group(stage_name(step), nodes, rates[step], weights))
    groups.append(_group(CONV_POST, [n for _, n in blocks[CONV_POST]], rates[-1], weights))
    return Generator(tuple(groups))


def _group(name: str, nodes: list[Any], rate: int, weights: dict[str, list[int]]) -> LayerGroup:
    work = 0.0
    for node in nodes:
        shape = weights.get(node.input[1])
        if shape is None:
            raise ModelFileError(f"{node.name} has no constant weight")
        work += math.prod(shape) * rate  # out x in/groups x kernel, once per output sample
    return LayerGroup(name, tuple(node.name for node in nodes), work, rate)


def _stride(node: Any) -> int:
    for attribute in node.attribute:
        if attribute.name == "strides":
            return int(attribute.ints[0])
    return 1
