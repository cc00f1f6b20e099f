"""The pitch accent of a normalized text, per accent phrase, for people to look at.

OpenJTalk's full-context labels say, for every phoneme, which accent phrase it belongs to
(``/I:`` breath group and ``/F:`` phrase position), its mora position in the phrase (``/A:``)
and the phrase's accent type (``/F:``). A phrase of accent type ``n`` is high from its second
mora up to mora ``n`` (type 1: only the first mora is high; a flat phrase, which OpenJTalk
writes as type = its mora count: from the second mora to the end), which is what
:mod:`.prosody` gives the synthesizer as tones (``tests/test_accent.py`` checks they agree).
Nothing here changes the phonemes: this reads the same analysis the G2P reads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import jtalk
from .kana import MORA_PHONEMES

_BREATH_GROUP = re.compile(r"/I:[0-9x]+-[0-9x]+@(\d+)\+")
_PHRASE = re.compile(r"/F:(\d+)_(\d+)#[0-9x]+_[0-9x]+@(\d+)_")
_MORA_POSITION = re.compile(r"/A:[0-9\-x]+\+(\d+)\+")
_SMALL_KANA = frozenset("ァィゥェォャュョヮ")
_NOT_MORAE = frozenset("、？’")
_PHONEMES_TO_KANA = {phonemes: kana for kana, phonemes in reversed(MORA_PHONEMES.items())}
_UNVOICED = {"A": "a", "I": "i", "U": "u", "E": "e", "O": "o", "cl": "q"}


@dataclass(frozen=True)
class AccentPhrase:
    """One accent phrase: its morae in katakana, which are high, and the accent nucleus."""

    morae: list[str]
    high: list[bool]
    nucleus: int
    """The 1-based mora after which the pitch falls inside the phrase; 0 if it does not fall
    (a flat phrase, or one whose fall comes only after its last mora: the same tones)."""


@dataclass
class _Phrase:
    accent_type: int
    mora_count: int
    phonemes: list[list[str]]  # per mora


def accent_phrases(normalized: str) -> list[AccentPhrase]:
    """The accent phrases of a text produced by the normalizer, in reading order."""
    phrases: list[AccentPhrase] = []
    for start in range(0, len(normalized), jtalk.MAX_CHARS):
        phrases.extend(_chunk_phrases(normalized[start : start + jtalk.MAX_CHARS]))
    return phrases


def _chunk_phrases(text: str) -> list[AccentPhrase]:
    features = jtalk.run_frontend(text)
    kana = [mora for feature in features for mora in _split_morae(feature["pron"])]
    if not kana:
        return []  # no mora: OpenJTalk makes no labels
    parsed = _parse_labels(jtalk.make_label(features))
    total = sum(len(phrase.phonemes) for phrase in parsed)
    use_kana = len(kana) == total  # else spell each mora from its phonemes
    result: list[AccentPhrase] = []
    position = 0
    for phrase in parsed:
        count = len(phrase.phonemes)
        if use_kana:
            morae = kana[position : position + count]
        else:
            morae = [_PHONEMES_TO_KANA.get(tuple(p), "".join(p)) for p in phrase.phonemes]
        position += count
        # OpenJTalk writes a flat phrase as accent type = its mora count: no fall inside it.
        nucleus = 0 if phrase.accent_type >= count else phrase.accent_type
        result.append(AccentPhrase(morae, _pitch(nucleus, count), nucleus))
    return result


def _parse_labels(labels: list[str]) -> list[_Phrase]:
    phrases: list[_Phrase] = []
    current_key: tuple[int, int] | None = None
    current_mora = -1
    for label in labels:
        phoneme = label.split("-", 1)[1].split("+", 1)[0]
        breath = _BREATH_GROUP.search(label)
        phrase = _PHRASE.search(label)
        mora = _MORA_POSITION.search(label)
        if phoneme in ("sil", "pau") or not (breath and phrase and mora):
            current_key = None
            continue
        key = (int(breath.group(1)), int(phrase.group(3)))
        if key != current_key:
            phrases.append(_Phrase(int(phrase.group(2)), int(phrase.group(1)), []))
            current_key, current_mora = key, -1
        if int(mora.group(1)) != current_mora:
            phrases[-1].phonemes.append([])
            current_mora = int(mora.group(1))
        phrases[-1].phonemes[-1].append(_UNVOICED.get(phoneme, phoneme))
    return phrases


def _pitch(accent_type: int, count: int) -> list[bool]:
    if accent_type == 1:
        return [index == 0 for index in range(count)]
    end = count if accent_type == 0 else accent_type
    return [0 < index < end for index in range(count)]


def _split_morae(pron: str) -> list[str]:
    """Katakana reading to morae (small kana join the mora before; marks are no morae)."""
    morae: list[str] = []
    for char in pron:
        if char in _NOT_MORAE:
            continue
        if char in _SMALL_KANA and morae:
            morae[-1] += char
        else:
            morae.append(char)
    return morae
