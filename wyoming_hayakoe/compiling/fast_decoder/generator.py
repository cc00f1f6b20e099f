"""The layers of a VITS-family generator in an ONNX graph, found by the names PyTorch's exporter
gives them.

Style-Bert-VITS2's decoder and Piper's are the same HiFi-GAN generator: ``conv_pre`` (plus
``cond``, the speaker conditioning, in a multi-speaker model), then per upsampling step ``N``
a transposed convolution ``ups.N`` followed by ``K`` residual blocks
``resblocks.{N*K} .. resblocks.{N*K+K-1}``, then ``conv_post`` and tanh. Precision is chosen per
group of these: conv_pre with cond, the residual blocks of each upsampling step (a *stage*,
running at that step's rate), conv_post; and, where a whole stage costs too much, per residual
block of it (``block N``: on a real trained decoder one stage in int8 was over the search's
budget where two of its three blocks were within it). The names are matched as path segments,
with or without the ``dec/`` of a whole synthesizer's export.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...errors import ModelFileError

CONV_PRE = "conv_pre"
CONV_POST = "conv_post"

_LAYER = re.compile(
    r"(?:^|/)(?:dec/)?(?:(?P<edge>conv_pre|cond|conv_post)|resblocks\.(?P<block>\d+)|"
    r"ups\.(?P<up>\d+))/"
)


_SCOPE = re.compile(r"^.*?(?:^|/)(?:dec/)?(?:resblocks\.\d+|conv_post|conv_pre|cond)/")


def scope_of(name: str) -> str | None:
    """The layer scope a node or tensor name lies in (``/dec/resblocks.3/``), if any."""
    match = _SCOPE.match(name)
    return match.group(0) if match else None


def stage_name(index: int) -> str:
    """The group of the residual blocks after upsampling step ``index``."""
    return f"stage {index}"


def block_name(index: int) -> str:
    """The group of residual block ``index`` (``resblocks.{index}``) alone."""
    return f"block {index}"


@dataclass(frozen=True)
class LayerGroup:
    """Convolutions whose precision is chosen together."""

    name: str
    """``conv_pre``, ``stage N``, ``block N`` or ``conv_post``."""
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
    blocks: Mapping[str, tuple[LayerGroup, ...]] = field(default_factory=dict)
    """Each stage's residual blocks, a group each, by the stage's name."""

    def group(self, name: str) -> LayerGroup:
        """The group ``name``: one of ``groups``, or a block of a stage."""
        for group in (*self.groups, *(b for blocks in self.blocks.values() for b in blocks)):
            if group.name == name:
                return group
        raise KeyError(f"no layer group {name!r} (groups: {', '.join(self.names)}, or a "
                       "stage's 'block N')")  # fmt: skip

    def knows(self, name: str) -> bool:
        try:
            self.group(name)
        except KeyError:
            return False
        return True

    def scopes(self, names: tuple[str, ...] | list[str]) -> set[str]:
        """The layer scopes of ``names``' convolutions."""
        return {scope for conv in self.convs(names) if (scope := scope_of(conv)) is not None}

    def all_but(self, kept: Sequence[str]) -> tuple[str, ...]:
        """Every group but those ``kept`` (a stage whose blocks are kept gives the others)."""
        names: list[str] = []
        for group in self.groups:
            blocks = self.blocks.get(group.name, ())
            if group.name in kept:
                continue
            if any(block.name in kept for block in blocks):
                names += [block.name for block in blocks if block.name not in kept]
            else:
                names.append(group.name)
        return tuple(names)

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
    stage_blocks = {}
    for step in range(steps):
        indices = range(step * per_step, (step + 1) * per_step)
        nodes = [n for b in indices for n in by_block[b]]
        groups.append(_group(stage_name(step), nodes, rates[step], weights))
        stage_blocks[stage_name(step)] = tuple(
            _group(block_name(b), by_block[b], rates[step], weights) for b in indices
        )
    groups.append(_group(CONV_POST, [n for _, n in blocks[CONV_POST]], rates[-1], weights))
    return Generator(tuple(groups), stage_blocks)


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
