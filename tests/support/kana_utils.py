"""Expected readings as phonemes: katakana with the marks the model sees, turned into phonemes
mora by mora (not by OpenJTalk, which would cut katakana into dictionary words: ハツカ as 薄荷
ハッカ, ヨンヘーホー as ヨン + particle ヘ); the hand-written corpora they are checked on."""

from __future__ import annotations

import csv
import re
from pathlib import Path

from tools import kana_readings
from wyoming_hayakoe.text.frontend import TextFrontend
from wyoming_hayakoe.text.kana import kana_to_phonemes
from wyoming_hayakoe.text.symbols import PAD, PUNCTUATIONS

_MARKS = re.escape("".join(PUNCTUATIONS))
_RUNS = re.compile(f"[{_MARKS}]|[^{_MARKS}]+")


_LONG = {("o", "u"): "o", ("e", "i"): "e"}
"""A long vowel written with its second vowel (リョウ) or with ー (リョー): one sound. OpenJTalk's
dictionaries write it either way (液量: エキリョウ in one build, エキリョー in another)."""


_TEN_BEFORE = {"h", "f"}
"""十 before a counter in h or f is said ジュッ or ジュー alike (ジュッヘルツ, ジューフィート)."""


def sounds_alike(phonemes: list[str]) -> list[str]:
    """``phonemes`` with long vowels and 十 before h or f written one way, for comparing
    readings."""
    out: list[str] = []
    for index, phoneme in enumerate(phonemes):
        following = phonemes[index + 1] if index + 1 < len(phonemes) else ""
        if phoneme == "q" and out[-2:] == ["j", "u"] and following in _TEN_BEFORE:
            phoneme = "u"
        out.append(_LONG.get((out[-1], phoneme), phoneme) if out else phoneme)
    return out


def reading_phonemes(reading: str) -> list[str]:
    """Phonemes of a katakana reading with punctuation marks (each mark is its own phoneme),
    long vowels written one way (:func:`sounds_alike`)."""
    phonemes: list[str] = []
    for run in _RUNS.findall(reading):
        phonemes.extend([run] if run in PUNCTUATIONS else kana_to_phonemes(run))
    return sounds_alike(phonemes)


DATA = Path(__file__).parents[1] / "data"
CORPUS_HEADER = ["category", "text", "reading"]


def corpus_rows(name: str, header: list[str] = CORPUS_HEADER) -> list[tuple[str, ...]]:
    """The rows of the tab-separated corpus ``tests/data/<name>``: ``#`` comment lines, then
    ``header``, then rows."""
    with (DATA / name).open(encoding="utf-8", newline="") as file:
        lines = [line for line in file if not line.startswith("#")]
    rows = list(csv.reader(lines, delimiter="\t", quoting=csv.QUOTE_NONE))
    assert rows[0] == header, rows[0]
    return [tuple(row) for row in rows[1:]]


def spoken_phonemes(frontend: TextFrontend, text: str) -> list[str]:
    """The phonemes ``frontend`` gives ``text``, without the padding, long vowels written one
    way (:func:`sounds_alike`)."""
    return sounds_alike([phone for phone in frontend.phonemize(text).phones if phone != PAD])


def corpus_ids(rows: list[tuple[str, ...]]) -> list[str]:
    """Test ids for corpus rows: the row's number and category."""
    return [f"{index:02d}-{row[0]}" for index, row in enumerate(rows)]


def assert_reads(frontend: TextFrontend, text: str, reading: str, category: str = "") -> None:
    """``text`` is spoken as one of the readings of a corpus line (its slots spelled by
    tools/kana_readings.py)."""
    expected = kana_readings.expand(reading)
    assert spoken_phonemes(frontend, text) in [reading_phonemes(e) for e in expected], (
        f"{category}: {text!r} became {frontend.rewrite(text)!r}; expected {expected}"
    )
