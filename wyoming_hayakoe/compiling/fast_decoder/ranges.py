"""The range of every tensor that int8 will carry, from what the calibration latents make of it.

ONNX Runtime's histogram calibrators keep every intermediate output of every calibration input
in memory until the end and take absolute values, so their ranges are symmetric; after a
LeakyReLU (slope 0.1 below zero) a symmetric range wastes almost half of the 256 levels. Here
one histogram per tensor is filled as each calibration chunk runs, and dropped with the chunk:
memory is one chunk's activations, whatever the number of chunks. The range keeps a share of
the values out at each end apart (asymmetric percentiles): a conv's rare peaks, clipped, cost
less than the coarser steps that taking them in would give every other value (measured on a
real trained decoder: docs/fast-decoder.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

BINS = 4096
"""Bins over the histogram's span, which doubles when a value falls outside it: resolution at
least 1/2048 of the largest magnitude seen, far finer than one of 256 int8 steps."""

Feeds = dict[str, np.ndarray]


@dataclass
class TensorHistogram:
    """The values seen in one tensor, on a span ``[-half, half]`` that grows by doubling."""

    counts: np.ndarray = field(default_factory=lambda: np.zeros(BINS, np.int64))
    half: float = 0.0
    low: float = np.inf
    high: float = -np.inf

    def add(self, values: np.ndarray) -> None:
        flat = values.reshape(-1)
        low, high = float(flat.min()), float(flat.max())
        self.low, self.high = min(self.low, low), max(self.high, high)
        largest = max(abs(low), abs(high))
        if largest == 0.0 and self.half == 0.0:
            self.counts[BINS // 2] += flat.size
            return
        if self.half == 0.0:
            self.half = largest
        while largest > self.half:  # merge pairs of bins: the span doubles
            merged = self.counts.reshape(-1, 2).sum(axis=1)
            self.counts = np.concatenate(
                [np.zeros(BINS // 4, np.int64), merged, np.zeros(BINS // 4, np.int64)]
            )
            self.half *= 2
        index = ((flat + self.half) * (BINS / (2 * self.half))).astype(np.int64)
        self.counts += np.bincount(np.clip(index, 0, BINS - 1), minlength=BINS)

    def range(self, percentile: float) -> tuple[float, float]:
        """The range that leaves ``100 - percentile`` % of the values out at each end (0 is
        always inside it, as int8 must represent it exactly)."""
        if self.half == 0.0:
            return 0.0, 0.0
        share = (100.0 - percentile) / 100.0
        cumulative = np.cumsum(self.counts) / self.counts.sum()
        width = 2 * self.half / BINS
        low = -self.half + int(np.searchsorted(cumulative, share)) * width
        high = -self.half + (int(np.searchsorted(cumulative, 1.0 - share)) + 1) * width
        return min(max(low, self.low), 0.0), max(min(high, self.high), 0.0)

    def as_arrays(self) -> dict[str, np.ndarray]:
        return {"counts": self.counts, "span": np.array([self.half, self.low, self.high])}

    @classmethod
    def from_arrays(cls, counts: np.ndarray, span: np.ndarray) -> TensorHistogram:
        return cls(np.asarray(counts, np.int64), float(span[0]), float(span[1]), float(span[2]))


def conv_tensors(model: Any, convs: Sequence[str]) -> list[str]:
    """The activations int8 carries for the Conv nodes ``convs``: each one's input and
    output (a QLinearConv reads and writes int8)."""
    wanted = set(convs)
    tensors = [t for n in model.graph.node if n.name in wanted for t in (n.input[0], n.output[0])]
    return list(dict.fromkeys(tensors))


def collect(
    model: Any,
    folder: Path,
    chunks: Iterable[Feeds],
    tensors: Sequence[str],
    open_session: Any,
) -> dict[str, TensorHistogram]:
    """Histograms of ``tensors`` over the calibration ``chunks``, run through ``model`` (a
    graph whose weights live in ``folder``) with those tensors as extra outputs; one chunk's
    activations in memory at a time. ``open_session(path)`` opens a graph."""
    from onnx import TensorProto, helper

    augmented = type(model)()
    augmented.CopyFrom(model)
    present = {output.name for output in augmented.graph.output}
    for tensor in tensors:
        if tensor not in present:
            augmented.graph.output.append(
                helper.make_tensor_value_info(tensor, TensorProto.FLOAT, None)
            )
    path = folder / "calibrating.onnx"
    path.write_bytes(augmented.SerializeToString())
    del augmented
    try:
        session = open_session(path)
        histograms = {tensor: TensorHistogram() for tensor in tensors}
        for chunk in chunks:
            for tensor, values in zip(tensors, session.run(list(tensors), chunk), strict=True):
                histograms[tensor].add(values)
    finally:
        path.unlink(missing_ok=True)
    return histograms


def chunks_of(
    examples: Sequence[Feeds], timed: Sequence[str], frames: int, count: int, seed: int = 0
) -> list[Feeds]:
    """Up to ``count`` calibration chunks of ``frames`` latent frames, cut at seeded offsets
    from the ``examples`` in turn (varied speech, few frames each: the activations of one
    chunk bound the memory); inputs not in ``timed`` (the speaker conditioning) go whole."""
    rng = np.random.default_rng(seed)
    chunks: list[Feeds] = []
    rounds = 0
    while len(chunks) < count and rounds < count:
        rounds += 1
        for example in examples:
            length = min(example[name].shape[-1] for name in timed)
            start = int(rng.integers(0, max(1, length - frames + 1)))
            chunks.append(
                {
                    name: value[..., start : start + frames] if name in timed else value
                    for name, value in example.items()
                }
            )
            if len(chunks) == count:
                break
    return chunks
