"""Proof that a voice's compiled models speak like its published synthesizer.

Every speed-up of the compiled path (the synthesizer split at the decoder, attention on its
band, decoding in windows) is exact in principle and proven on synthetic voices only. Once per
voice and machine, when its models are compiled, the calibration sentences (calibration.py:
the same inputs the voice's loudness is measured on) are synthesized at zero noise through the
published synthesizer whole and through the compiled path, one step at a time so that a
difference can be named:

1. split: the front as exported, its latent decoded whole, against the whole graph;
2. band attention: the served front against the exported one, both decoded whole;
3. windows: the served front's latent decoded in the windows requests use, against whole.

The result (steps used, each difference and the overall one relative to the audio's peak, the
audio length) is kept in the cache beside the compiled models; a voice that fails is served by
its whole graph, with one warning. The sentences are compared one at a time, so that no
buffer of the whole graph is larger than one sentence needs.

Tolerance: ``RELATIVE_TOLERANCE`` = 1e-5 of the peak. A sound compilation only reorders float32
sums (fused kernels, the band instead of the full attention, the same convolutions over a
shorter input). Measured (x86_64, ONNX Runtime 1.32, 1 and 2 threads): the tiny voice differs
in no step at all (0); the full-size synthetic voice by 0 (split), 0 (band attention) and
6.9e-7 (windows). Defects measured: a context one frame short on the tiny voice whose outer
kernel taps carry weight, 2.2e-3 (two frames short: 1.9e-2); a DC blocker over the output
(windows), 1.0e-2; relative-key logits scaled beyond 16 phones (band attention), 8.1e-2. So
1e-5 sits more than ten times above the largest rounding seen and two hundred times below the
smallest defect, and under one step of the 16-bit PCM the server sends (1/32768 = 3.1e-5 of a
peak normalized to full scale): whatever passes cannot be seen in the output. An absolute
threshold such as 1e-4 would not do: a quiet voice passes it whatever happens.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

_LOGGER = logging.getLogger(__name__)

RELATIVE_TOLERANCE = 1e-5
"""Largest difference from the whole graph, relative to its peak, that rounding explains."""
CHECK_VERSION = "2"
"""Changes with the calibration input or the comparison, so cached results are redone."""

Audio = Callable[[dict[str, np.ndarray]], np.ndarray]
"""A sentence's audio from its synthesizer inputs (by our names)."""
Latent = Callable[[dict[str, np.ndarray]], tuple[np.ndarray, np.ndarray]]
"""A front: a sentence's latent and speaker conditioning from its synthesizer inputs."""
Decode = Callable[[np.ndarray, np.ndarray, bool], Iterable[np.ndarray]]
"""The decoder in fixed windows (Decoder.growing): (latent, condition, in windows?) -> audio
pieces."""


@dataclass(frozen=True)
class StepDifference:
    step: str
    """``split``, ``band attention`` or ``windows``."""
    difference: float
    """Largest absolute difference relative to the peak (inf when the lengths differ)."""
    detail: str = ""


@dataclass(frozen=True)
class SelfCheckResult:
    """What a voice's compiled path was checked with and how close it came to the whole graph."""

    voice: str
    split: bool
    band_layers: int
    """Attention layers of the front computed on their band (0: as exported)."""
    windows: tuple[int, ...]
    """Latent frames of each window of the calibration sentences, one after the other."""
    context_frames: int
    """Frames of context decoded either side of a window."""
    steps: tuple[StepDifference, ...]
    max_difference: float
    """Whole graph against the compiled path as served, relative to the peak."""
    peak: float
    audio_seconds: float
    tolerance: float = RELATIVE_TOLERANCE
    version: str = field(default=CHECK_VERSION)

    @property
    def passed(self) -> bool:
        return self.failed_step is None and self.max_difference <= self.tolerance

    @property
    def failed_step(self) -> StepDifference | None:
        """The first step over the tolerance."""
        return next((s for s in self.steps if not s.difference <= self.tolerance), None)

    def describe(self) -> str:
        """One line: what was used and how far it was from the whole graph."""
        band = f"{self.band_layers} band attention layers" if self.band_layers else "no band"
        cuts = "/".join(str(w) for w in self.windows)
        steps = ", ".join(
            f"{s.step} {s.difference:.1e}{f' ({s.detail})' if s.detail else ''}" for s in self.steps
        )
        return (
            f"split, {band}, windows of {cuts} frames with {self.context_frames} frames of "
            f"context; {self.audio_seconds:.2f} s of audio, peak {self.peak:.3f}; differences "
            f"relative to the peak: {steps}; overall {self.max_difference:.1e} "
            f"(tolerance {self.tolerance:.0e})"
        )

    def as_dict(self) -> dict[str, Any]:
        """For the compiled voice's record (JSON)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> SelfCheckResult | None:
        """The stored result, or None if it is unreadable or from another check version."""
        try:
            if raw.get("version") != CHECK_VERSION:
                return None
            fields = {**raw, "windows": tuple(int(w) for w in raw["windows"])}
            fields["steps"] = tuple(StepDifference(**s) for s in raw["steps"])
            return cls(**fields)
        except (ValueError, TypeError, KeyError):
            return None


@dataclass(frozen=True)
class CompiledPath:
    """The compiled models of a voice as requests use them."""

    front: Latent
    decode: Decode
    band_layers: int
    context_frames: int


def run_self_check(
    voice: str,
    references: list[np.ndarray],
    exported: list[tuple[np.ndarray, np.ndarray]] | None,
    compiled: CompiledPath,
    feeds: list[dict[str, np.ndarray]],
    sample_rate: int,
) -> tuple[SelfCheckResult, np.ndarray]:
    """Compare the whole graph's audio of each sentence, ``references``, with the compiled
    path step by step; also returns the compiled path's audio in windows, as served.

    ``exported``: latent and conditioning of each sentence from the front before the band
    rewrite; None when nothing was rewritten (the served front is the exported one). Both are
    computed by the caller, so that the whole graph and that front need not be in memory
    together.
    """
    columns: dict[str, list[np.ndarray]] = {"split": [], "band": [], "windows": []}
    windows: list[int] = []
    for index, sentence in enumerate(feeds):
        latent, condition = compiled.front(sentence)
        band_whole = _joined(compiled.decode(latent, condition, False))
        pieces = [np.asarray(p).reshape(-1) for p in compiled.decode(latent, condition, True)]
        split_whole = (
            band_whole if exported is None else _joined(compiled.decode(*exported[index], False))
        )
        per_frame = max(1, len(band_whole) // max(1, latent.shape[2]))
        windows += [len(p) // per_frame for p in pieces]
        columns["split"].append(split_whole)
        columns["band"].append(band_whole)
        columns["windows"].append(_joined(pieces))
    reference = _joined(references)
    peak = float(np.max(np.abs(reference))) if reference.size else 0.0
    split_whole, band_whole, windowed = (_joined(columns[k]) for k in ("split", "band", "windows"))
    steps = (
        _difference("split", reference, split_whole, peak),
        _difference("band attention", split_whole, band_whole, peak),
        _difference("windows", band_whole, windowed, peak),
    )
    result = SelfCheckResult(
        voice=voice,
        split=True,
        band_layers=compiled.band_layers,
        windows=tuple(windows),
        context_frames=compiled.context_frames,
        steps=steps,
        max_difference=_difference("overall", reference, windowed, peak).difference,
        peak=peak,
        audio_seconds=len(reference) / sample_rate,
    )
    return result, windowed


def _joined(pieces: Iterable[np.ndarray]) -> np.ndarray:
    parts = [np.asarray(piece).reshape(-1) for piece in pieces]
    return np.concatenate(parts) if parts else np.zeros(0, np.float32)


def _difference(step: str, expected: np.ndarray, got: np.ndarray, peak: float) -> StepDifference:
    if expected.shape != got.shape:
        return StepDifference(step, float("inf"), f"{got.size} samples instead of {expected.size}")
    largest = float(np.max(np.abs(expected - got))) if expected.size else 0.0
    if peak > 0:
        return StepDifference(step, largest / peak)
    return StepDifference(step, 0.0 if largest == 0 else float("inf"), "silent whole graph")


def report(result: SelfCheckResult) -> None:
    """Log the result: one INFO line when it passed, one WARNING naming the step when not."""
    failed = result.failed_step
    if failed is None and result.passed:
        _LOGGER.info("Voice %s passed its self-check: %s", result.voice, result.describe())
        return
    step = failed.step if failed is not None else "overall"
    difference = failed.difference if failed is not None else result.max_difference
    _LOGGER.warning(
        "Voice %s failed its self-check at step '%s': its compiled models differ from the "
        "published synthesizer by %.1e of the peak (tolerance %.0e)%s; serving the whole "
        "synthesizer instead, so long sentences start to sound only when finished. (%s)",
        result.voice,
        step,
        difference,
        result.tolerance,
        f", {failed.detail}" if failed is not None and failed.detail else "",
        result.describe(),
    )
