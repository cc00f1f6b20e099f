"""The natural pause after each sentence, restored from the duration predictor.

Splitting a text into sentences loses the pause SBV2 makes after a sentence-ending mark: that
pause is the duration the model predicts for the mark and the blanks beside it. So the duration
predictor runs once on the text around the boundaries, each boundary takes the frames of its own
mark, and after a sentence only the silence still missing is added.

Differences from the reference, on purpose: a boundary is matched to the mark run that ends its
own sentence (the reference takes the n-th run of the whole text, so a 「…」 inside a sentence
shifts every later pause), and long texts are predicted in overlapping groups of sentences
instead of one pass over the whole text (BERT was trained on at most 512 tokens).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

import numpy as np

from ..inference.params import SynthesisParams
from ..text.frontend import Phonemes
from ..text.symbols import SYMBOLS
from .prepared import PreparedSentence
from .voice import Voice

Features = Callable[[Phonemes], np.ndarray]
"""BERT features of phonemized text, ``[hidden, phones]``."""

_LOGGER = logging.getLogger(__name__)

MIN_PAUSE_SECONDS = 0.08
"""Silence always kept between sentences, and the pause used without a duration predictor."""

GROUP_CHARS = 300
"""Source characters per duration-prediction pass (consecutive groups share one sentence)."""

_MAX_BERT_TOKENS = 512
_BLANK_ID = 0
_BOUNDARY_IDS = frozenset(SYMBOLS.index(mark) for mark in (".", "!", "?"))
_SILENCE_WINDOW_SECONDS = 0.01
_SILENCE_RELATIVE_LEVEL = 0.02


def boundary_mark_positions(phone_ids: Sequence[int]) -> list[int]:
    """Positions of sentence-ending marks; a run of marks joined by blanks counts once, last."""
    positions: list[int] = []
    for index, phone in enumerate(phone_ids):
        if phone not in _BOUNDARY_IDS:
            continue
        if positions and all(p == _BLANK_ID for p in phone_ids[positions[-1] + 1 : index]):
            positions[-1] = index
        else:
            positions.append(index)
    return positions


def _mark_pause(
    durations: np.ndarray, phone_ids: Sequence[int], position: int, hop: int, rate: int
) -> float:
    """A mark's pause: its own predicted frames plus those of the blanks either side of it."""
    frames = float(durations[position])
    if position > 0 and phone_ids[position - 1] == _BLANK_ID:
        frames += float(durations[position - 1])
    if position + 1 < len(phone_ids) and phone_ids[position + 1] == _BLANK_ID:
        frames += float(durations[position + 1])
    return frames * hop / rate  # this order of operations gives the reference's samples


def trailing_silence_seconds(audio: np.ndarray, sample_rate: int) -> float:
    """Length of the quiet tail: 10 ms windows whose peak stays under 2 % of the audio's peak."""
    window = max(1, int(sample_rate * _SILENCE_WINDOW_SECONDS))
    if len(audio) < window:
        return 0.0
    peak = float(np.abs(audio).max())
    if peak == 0.0:
        return len(audio) / sample_rate
    threshold = peak * _SILENCE_RELATIVE_LEVEL
    end = len(audio)
    while end >= window and float(np.abs(audio[end - window : end]).max()) <= threshold:
        end -= window
    return (len(audio) - end) / sample_rate


def missing_silence_samples(
    trailing_seconds: float, target_seconds: float, sample_rate: int
) -> int:
    """Samples of silence to add so the pause reaches its target (never under 80 ms)."""
    target = max(target_seconds, MIN_PAUSE_SECONDS)
    if trailing_seconds >= target:
        return 0
    return int(sample_rate * (target - trailing_seconds))


class PausePlanner:
    """Pause targets for the boundaries of one request, predicted lazily group by group."""

    def __init__(
        self,
        voice: Voice,
        sentences: Sequence[PreparedSentence],
        style_vector: np.ndarray,
        params: SynthesisParams,
        phonemize: Callable[[str], Phonemes],
        features: Features,
    ) -> None:
        self._phonemize = phonemize
        self._features = features
        self._voice = voice
        self._sentences = sentences
        self._style_vector = style_vector
        self._params = params
        self._targets: dict[int, float] = {}
        self._group_starts = _group_starts([len(s.source) for s in sentences])

    def pause_before(self, index: int) -> float:
        """Target pause in seconds between sentence ``index - 1`` and sentence ``index``."""
        boundary = index - 1
        if boundary not in self._targets:
            self._targets.update(self._predict_group(self._group_of(boundary)))
        return self._targets.get(boundary, MIN_PAUSE_SECONDS)

    def _group_of(self, boundary: int) -> tuple[int, int]:
        start = max(s for s in self._group_starts if s <= boundary)
        later = [s for s in self._group_starts if s > start]
        end = later[0] if later else len(self._sentences) - 1
        return start, max(end, boundary + 1)

    def _predict_group(self, group: tuple[int, int]) -> dict[int, float]:
        start, end = group
        fallback = {b: MIN_PAUSE_SECONDS for b in range(start, end)}
        if self._voice.duration_predictor is None:
            return fallback
        members = self._sentences[start : end + 1]
        phonemes = self._phonemize("".join(s.source for s in members))
        if len(phonemes.bert_text) + 2 > _MAX_BERT_TOKENS:
            _LOGGER.debug("Group %s too long for pause prediction: 80 ms pauses", group)
            return fallback
        durations = self._voice.predict_durations(
            phonemes,
            self._features(phonemes),
            self._style_vector,
            self._params,
        )
        if durations is None:
            return fallback
        positions = boundary_mark_positions(phonemes.phone_ids)
        runs_before = 0
        targets = dict(fallback)
        for offset, sentence in enumerate(members[:-1]):
            runs = len(boundary_mark_positions(sentence.phonemes.phone_ids))
            runs_before += runs
            if runs and runs_before - 1 < len(positions):
                position = positions[runs_before - 1]
                targets[start + offset] = _mark_pause(
                    durations,
                    phonemes.phone_ids,
                    position,
                    self._voice.config.hop_length,
                    self._voice.sample_rate,
                )
        return targets


def _group_starts(lengths: Sequence[int]) -> list[int]:
    """First sentence of each group: groups of about GROUP_CHARS, overlapping by one sentence."""
    starts = [0]
    total = 0
    for index, length in enumerate(lengths):
        if index > starts[-1] + 1 and total + length > GROUP_CHARS:
            starts.append(index - 1)
            total = lengths[index - 1]
        total += length
    return starts
