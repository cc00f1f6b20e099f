"""Expected readings as phonemes: katakana with the marks the model sees, turned into phonemes
mora by mora (not by OpenJTalk, which would cut katakana into dictionary words: ハツカ as 薄荷
ハッカ, ヨンヘーホー as ヨン + particle ヘ)."""

from __future__ import annotations

import re

from wyoming_hayakoe.text.kana import kana_to_phonemes
from wyoming_hayakoe.text.symbols import PUNCTUATIONS

_MARKS = re.escape("".join(PUNCTUATIONS))
_RUNS = re.compile(f"[{_MARKS}]|[^{_MARKS}]+")


def reading_phonemes(reading: str) -> list[str]:
    """Phonemes of a katakana reading with punctuation marks (each mark is its own phoneme)."""
    phonemes: list[str] = []
    for run in _RUNS.findall(reading):
        phonemes.extend([run] if run in PUNCTUATIONS else kana_to_phonemes(run))
    return phonemes
