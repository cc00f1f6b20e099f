"""Proof that a voice's prepared models speak like its published synthesizer.

Every speed-up of the prepared path (the synthesizer split at the decoder, attention on its
band, decoding in windows) is exact in principle and proven on synthetic voices only. Once per
voice and machine, when its models are prepared, a fixed calibration sentence is synthesized at
zero noise through the published ``synthesizer.onnx`` whole and through the prepared path, one
step at a time so that a difference can be named:

1. split: the front as exported, its latent decoded whole, against the whole graph;
2. band attention: the served front against the exported one, both decoded whole;
3. windows: the served front's latent decoded in the windows requests use, against whole.

The result (steps used, each difference and the overall one relative to the audio's peak, the
audio length) is kept in the cache beside the prepared models; a voice that fails is served by
its whole graph, with one warning.

Tolerance: ``RELATIVE_TOLERANCE`` = 1e-5 of the peak. A sound preparation only reorders float32
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

import json
import logging
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort

_LOGGER = logging.getLogger(__name__)

RELATIVE_TOLERANCE = 1e-5
"""Largest difference from the whole graph, relative to its peak, that rounding explains."""
CHECK_VERSION = "1"
"""Changes with the calibration input or the comparison, so cached results are redone."""

# The calibration sentence, こんにちは。今日は良い天気ですね、お出かけにぴったりです。, as the
# synthesizer's symbol ids and JP tones of its phonemes (fixed by the SBV2 symbol table; a test
# checks them against the front-end). Blanks (add_blank) are put between them below.
_CALIBRATION_PHONES = (
    0, 57, 65, 5, 62, 40, 22, 40, 97, 8, 107, 58, 65, 65, 97, 8, 99, 65, 40, 78, 26, 5, 57,
    40, 23, 26, 76, 82, 62, 26, 106, 65, 23, 26, 57, 8, 57, 26, 62, 40, 71, 40, 73, 78, 8, 74,
    40, 23, 26, 76, 82, 107, 0,
)  # fmt: skip
_CALIBRATION_TONES = (
    6, 6, 6, 7, 7, 7, 7, 7, 7, 7, 6, 7, 7, 6, 6, 6, 7, 7, 6, 7, 7, 6, 6, 6, 6, 6, 6, 6, 6, 6,
    6, 6, 7, 7, 7, 7, 7, 7, 7, 7, 6, 6, 7, 7, 7, 6, 6, 6, 6, 6, 6, 6, 6,
)  # fmt: skip
_JP = 1
_BERT_CHANNELS = 1024

Decode = Callable[[np.ndarray, np.ndarray, bool], Iterable[np.ndarray]]
"""The decoder as requests use it: (latent, condition, in windows?) -> audio pieces."""


@dataclass(frozen=True)
class StepDifference:
    step: str
    """``split``, ``band attention`` or ``windows``."""
    difference: float
    """Largest absolute difference relative to the peak (inf when the lengths differ)."""
    detail: str = ""


@dataclass(frozen=True)
class SelfCheckResult:
    """What a voice's prepared path was checked with and how close it came to the whole graph."""

    voice: str
    split: bool
    band_layers: int
    """Attention layers of the front computed on their band (0: as exported)."""
    windows: tuple[int, ...]
    """Latent frames of each window of the calibration sentence (one entry: no cut)."""
    context_frames: int
    """Frames of context decoded either side of a window."""
    steps: tuple[StepDifference, ...]
    max_difference: float
    """Whole graph against the prepared path as served, relative to the peak."""
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

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1) + "\n"

    @classmethod
    def from_json(cls, text: str) -> SelfCheckResult | None:
        """The stored result, or None if it is unreadable or from another check version."""
        try:
            raw: dict[str, Any] = json.loads(text)
            if raw.get("version") != CHECK_VERSION:
                return None
            raw["windows"] = tuple(int(w) for w in raw["windows"])
            raw["steps"] = tuple(StepDifference(**s) for s in raw["steps"])
            return cls(**raw)
        except (ValueError, TypeError, KeyError):
            return None


def calibration_feeds(style_vector: np.ndarray, speaker_id: int) -> dict[str, np.ndarray]:
    """Synthesizer inputs of the calibration sentence at zero noise.

    Its BERT features are a fixed smooth pattern rather than the BERT's: the check compares
    graphs, and the voice's models are prepared without loading the shared BERT.
    """
    phones = np.zeros(2 * len(_CALIBRATION_PHONES) + 1, dtype=np.int64)
    phones[1::2] = _CALIBRATION_PHONES
    tones = np.zeros_like(phones)
    tones[1::2] = _CALIBRATION_TONES
    languages = np.zeros_like(phones)
    languages[1::2] = _JP
    count = len(phones)
    channel = np.arange(_BERT_CHANNELS, dtype=np.float64)[:, np.newaxis]
    position = np.arange(count, dtype=np.float64)[np.newaxis, :]
    bert = 0.5 * np.sin(0.37 * channel + 0.21 * position * (1 + channel % 7))

    def scalar(value: float) -> np.ndarray:
        return np.array([value], dtype=np.float32)

    return {
        "x": phones[np.newaxis],
        "x_lengths": np.array([count], dtype=np.int64),
        "sid": np.array([speaker_id], dtype=np.int64),
        "tone": tones[np.newaxis],
        "language": languages[np.newaxis],
        "bert": bert.astype(np.float32)[np.newaxis],
        "style_vec": np.asarray(style_vector, dtype=np.float32).reshape(1, -1),
        "noise_scale": scalar(0.0),
        "length_scale": scalar(1.0),
        "noise_scale_w": scalar(0.0),
        "sdp_ratio": scalar(0.0),
    }


@dataclass(frozen=True)
class PreparedPath:
    """The prepared models of a voice as requests use them."""

    front: ort.InferenceSession
    decode: Decode
    latent: str
    condition: str
    band_layers: int
    context_frames: int


def whole_audio(session: ort.InferenceSession, feeds: dict[str, np.ndarray]) -> np.ndarray:
    """Output 0 of the whole synthesizer on ``feeds``, flattened."""
    names = {i.name for i in session.get_inputs()}
    inputs = {k: v for k, v in feeds.items() if k in names}
    audio: np.ndarray = session.run([session.get_outputs()[0].name], inputs)[0]
    return audio.reshape(-1)


def front_outputs(
    session: ort.InferenceSession, feeds: dict[str, np.ndarray], latent: str, condition: str
) -> tuple[np.ndarray, np.ndarray]:
    """The latent and the speaker conditioning a front computes from ``feeds``."""
    names = {i.name for i in session.get_inputs()}
    outputs = session.run([latent, condition], {k: v for k, v in feeds.items() if k in names})
    return outputs[0], outputs[1]


def run_self_check(
    voice: str,
    reference: np.ndarray,
    exported: tuple[np.ndarray, np.ndarray] | None,
    prepared: PreparedPath,
    feeds: dict[str, np.ndarray],
    sample_rate: int,
) -> SelfCheckResult:
    """Compare the whole graph's audio ``reference`` with the prepared path step by step.

    ``exported``: latent and conditioning of the front before the band rewrite; None when
    nothing was rewritten (the served front is the exported one). Both are computed by the
    caller, so that the whole graph and that front need not be in memory together.
    """
    peak = float(np.max(np.abs(reference))) if reference.size else 0.0

    def decoded(latent: np.ndarray, condition: np.ndarray, windows: bool) -> list[np.ndarray]:
        return [np.asarray(p).reshape(-1) for p in prepared.decode(latent, condition, windows)]

    latent, condition = front_outputs(prepared.front, feeds, prepared.latent, prepared.condition)
    band_whole = np.concatenate(decoded(latent, condition, False))
    pieces = decoded(latent, condition, True)
    split_whole = band_whole if exported is None else np.concatenate(decoded(*exported, False))
    windowed = np.concatenate(pieces)
    per_frame = max(1, len(band_whole) // max(1, latent.shape[2]))
    steps = (
        _difference("split", reference, split_whole, peak),
        _difference("band attention", split_whole, band_whole, peak),
        _difference("windows", band_whole, windowed, peak),
    )
    return SelfCheckResult(
        voice=voice,
        split=True,
        band_layers=prepared.band_layers,
        windows=tuple(len(p) // per_frame for p in pieces),
        context_frames=prepared.context_frames,
        steps=steps,
        max_difference=_difference("overall", reference, windowed, peak).difference,
        peak=peak,
        audio_seconds=len(reference) / sample_rate,
    )


def _difference(step: str, expected: np.ndarray, got: np.ndarray, peak: float) -> StepDifference:
    if expected.shape != got.shape:
        return StepDifference(step, float("inf"), f"{got.size} samples instead of {expected.size}")
    largest = float(np.max(np.abs(expected - got))) if expected.size else 0.0
    if peak > 0:
        return StepDifference(step, largest / peak)
    return StepDifference(step, 0.0 if largest == 0 else float("inf"), "silent whole graph")


def read_result(path: Path) -> SelfCheckResult | None:
    try:
        return SelfCheckResult.from_json(path.read_text(encoding="utf-8"))
    except OSError:
        return None


def report(result: SelfCheckResult) -> None:
    """Log the result: one INFO line when it passed, one WARNING naming the step when not."""
    failed = result.failed_step
    if failed is None and result.passed:
        _LOGGER.info("Voice %s passed its self-check: %s", result.voice, result.describe())
        return
    step = failed.step if failed is not None else "overall"
    difference = failed.difference if failed is not None else result.max_difference
    _LOGGER.warning(
        "Voice %s failed its self-check at step '%s': its prepared models differ from the "
        "published synthesizer by %.1e of the peak (tolerance %.0e)%s; serving the whole "
        "synthesizer instead, so long sentences start to sound only when finished. (%s)",
        result.voice,
        step,
        difference,
        result.tolerance,
        f", {failed.detail}" if failed is not None and failed.detail else "",
        result.describe(),
    )
