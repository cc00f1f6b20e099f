"""How a variant's audio sounds against the FP32 decoder's, sentence by sentence: PESQ-WB and
STOI, computed apart from the product, beside the product's own log-mel distance.

PESQ-WB (ITU-T P.862.2) is defined at 16 kHz: both signals are resampled from the voice's
rate by a polyphase filter (22,050 -> 16,000 is 320/441). It scores identical audio 4.64.
STOI takes the voice's rate (it resamples to 10 kHz itself). The log-mel distance is the one
the product gates on (wyoming_hayakoe/compiling/fast_decoder/quality.py), called, not copied:
what is being checked is that it tracks PESQ.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from math import gcd
from typing import Any

import numpy as np

from wyoming_hayakoe.compiling.fast_decoder.quality import log_mel_distance

PESQ_RATE = 16000
IDENTICAL_PESQ = 4.64
"""PESQ-WB of a signal against itself: its scale's top."""


@dataclass(frozen=True)
class SentenceScore:
    pesq: float
    """PESQ-WB, 1.0 (bad) to 4.64 (identical)."""
    stoi: float
    """Short-time objective intelligibility, 0 to 1 (identical)."""
    log_mel_db: float
    """The product's distance: 0 for identical audio."""


@dataclass(frozen=True)
class Scores:
    """A variant's sentences of one set."""

    sentences: tuple[SentenceScore, ...]

    def _values(self, name: str) -> np.ndarray:
        return np.array([getattr(s, name) for s in self.sentences])

    @property
    def pesq_mean(self) -> float:
        return float(self._values("pesq").mean())

    @property
    def pesq_worst(self) -> float:
        return float(self._values("pesq").min())

    @property
    def stoi_mean(self) -> float:
        return float(self._values("stoi").mean())

    @property
    def stoi_worst(self) -> float:
        return float(self._values("stoi").min())

    @property
    def log_mel_mean(self) -> float:
        return float(self._values("log_mel_db").mean())

    @property
    def log_mel_worst(self) -> float:
        return float(self._values("log_mel_db").max())

    def as_list(self) -> list[dict[str, Any]]:
        return [asdict(sentence) for sentence in self.sentences]

    @classmethod
    def from_list(cls, raw: Sequence[dict[str, Any]]) -> Scores:
        return cls(tuple(SentenceScore(**sentence) for sentence in raw))


def to_pesq_rate(audio: np.ndarray, sample_rate: int) -> np.ndarray:
    from scipy.signal import resample_poly

    common = gcd(PESQ_RATE, sample_rate)
    return np.asarray(resample_poly(audio, PESQ_RATE // common, sample_rate // common))


def sentence_score(reference: np.ndarray, candidate: np.ndarray, sample_rate: int) -> SentenceScore:
    from pesq import pesq
    from pystoi import stoi

    reference = np.asarray(reference, np.float64).reshape(-1)
    candidate = np.asarray(candidate, np.float64).reshape(-1)
    length = min(len(reference), len(candidate))
    reference, candidate = reference[:length], candidate[:length]
    wideband = pesq(
        PESQ_RATE, to_pesq_rate(reference, sample_rate), to_pesq_rate(candidate, sample_rate), "wb"
    )
    return SentenceScore(
        pesq=float(wideband),
        stoi=float(stoi(reference, candidate, sample_rate, extended=False)),
        log_mel_db=log_mel_distance(reference, candidate, sample_rate),
    )


def scores(
    references: Sequence[np.ndarray], candidates: Sequence[np.ndarray], sample_rate: int
) -> Scores:
    return Scores(
        tuple(
            sentence_score(r, c, sample_rate) for r, c in zip(references, candidates, strict=True)
        )
    )
