"""How far a decoder variant's audio is from the reference decoder's, in a measure a board can
afford: numpy only, a second per minute of audio.

The log-mel distance: both signals' power on 80 mel bands from 0 to 8 kHz (what PESQ-WB hears),
in 46 ms frames every 11.6 ms at any sample rate, in dB with a floor 80 dB below the
reference's loudest band; per frame the RMS over the bands of the difference, averaged over
the frames. Identical audio gives 0. Its thresholds come from PESQ-WB measured on a real trained
decoder of the same family against its own FP32 output (tools/decoder_quality, docs/fast-decoder.md:
27 variants, 1,944 sentences, rank correlation -0.95 per sentence): where
the distance is below them, PESQ stayed above the targets. A plain SNR would not do: it stays
about 20 dB where PESQ is 4.6 and where it is 2.5.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import cache
from typing import Any

import numpy as np

FRAME_SECONDS = 1024 / 22050
HOP_SECONDS = 256 / 22050
BANDS = 80
TOP_HZ = 8000.0
FLOOR_DB = 80.0

MEAN_THRESHOLD_DB = 1.6
"""Largest mean distance over the check sentences that passes: every variant of the real
decoder within it had mean PESQ-WB 4.2 or more (the closest under 4.2: 1.63 dB;
docs/fast-decoder.md)."""
WORST_THRESHOLD_DB = 1.5
"""Largest distance of any one check sentence that passes: every sentence within it had
PESQ-WB 4.0 or more (the closest under 4.0: 1.51 dB; docs/fast-decoder.md)."""


def log_mel_distance(reference: np.ndarray, candidate: np.ndarray, sample_rate: int) -> float:
    """The distance in dB between two signals of one sentence (the shorter sets the length)."""
    length = min(len(reference), len(candidate))
    ours = _log_mel(np.asarray(reference[:length], np.float64), sample_rate)
    theirs = _log_mel(np.asarray(candidate[:length], np.float64), sample_rate)
    floor = ours.max() - FLOOR_DB
    difference = np.maximum(ours, floor) - np.maximum(theirs, floor)
    return float(np.mean(np.sqrt(np.mean(difference**2, axis=1))))


def _log_mel(audio: np.ndarray, sample_rate: int) -> np.ndarray:
    frame = round(FRAME_SECONDS * sample_rate)
    hop = round(HOP_SECONDS * sample_rate)
    padded = np.pad(audio, (frame // 2, frame // 2 + frame))
    count = 1 + max(0, (len(padded) - frame)) // hop
    frames = np.lib.stride_tricks.as_strided(
        padded, (count, frame), (padded.strides[0] * hop, padded.strides[0]), writeable=False
    )
    power = np.abs(np.fft.rfft(frames * np.hanning(frame), axis=1)) ** 2
    return 10 * np.log10(power @ _mel_bank(frame, sample_rate).T + 1e-20)


@cache
def _mel_bank(frame: int, sample_rate: int) -> np.ndarray:
    """Triangular filters on the mel scale from 0 to TOP_HZ (or the Nyquist frequency)."""
    freqs = np.fft.rfftfreq(frame, 1 / sample_rate)
    top = min(TOP_HZ, sample_rate / 2)
    mels = np.linspace(0.0, 2595 * np.log10(1 + top / 700), BANDS + 2)
    points = 700 * (10 ** (mels / 2595) - 1)
    bank = np.zeros((BANDS, len(freqs)))
    for band in range(BANDS):
        low, centre, high = points[band : band + 3]
        rising = (freqs - low) / (centre - low)
        falling = (high - freqs) / (high - centre)
        bank[band] = np.clip(np.minimum(rising, falling), 0.0, None)
    return bank


@dataclass(frozen=True)
class QualityGate:
    """The fast variant against the reference on sentences its calibration never saw."""

    mean_db: float
    worst_db: float
    sentences: int
    audio_seconds: float
    mean_threshold_db: float = MEAN_THRESHOLD_DB
    worst_threshold_db: float = WORST_THRESHOLD_DB

    @property
    def passed(self) -> bool:
        return self.mean_db <= self.mean_threshold_db and self.worst_db <= self.worst_threshold_db

    def describe(self) -> str:
        verdict = "passed" if self.passed else "failed"
        return (
            f"{verdict} its quality gate: log-mel distance from the reference "
            f"{self.mean_db:.2f} dB on average (at most {self.mean_threshold_db:g}), "
            f"{self.worst_db:.2f} dB at worst "
            f"(at most {self.worst_threshold_db:g}) on {self.sentences} check sentences, "
            f"{self.audio_seconds:.1f} s"
        )

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> QualityGate:
        return cls(**raw)


def gate(
    references: Sequence[np.ndarray], candidates: Sequence[np.ndarray], sample_rate: int
) -> QualityGate:
    """The distances of each check sentence, and whether they pass."""
    distances = [
        log_mel_distance(r, c, sample_rate) for r, c in zip(references, candidates, strict=True)
    ]
    seconds = sum(len(r) for r in references) / sample_rate
    return QualityGate(float(np.mean(distances)), float(np.max(distances)), len(distances), seconds)
