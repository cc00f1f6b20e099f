"""Phonemes with accents (0 low, 1 high) from OpenJTalk's full-context labels.

The labels lose the punctuation (``、``, ``！`` and ``？？？`` all become one pause), so this list
has none; :mod:`.g2p` puts the marks back. Pitch rises and falls are read as in ESPnet's
``pyopenjtalk_g2p_prosody`` (Kurihara et al. 2021, "Prosodic features control by symbols as
input of sequence-to-sequence acoustic modeling for neural TTS"): within an accent phrase the
pitch starts at 0, a rise makes it 1 higher, a fall 1 lower. Each phrase is then squeezed to
0/1: a phoneme is high (1) when its pitch is above the phrase's lowest.
"""

from __future__ import annotations

import re

_A1 = re.compile(r"/A:([0-9\-]+)\+")
_A2 = re.compile(r"\+(\d+)\+")
_A3 = re.compile(r"\+(\d+)/")
_E3 = re.compile(r"!(\d+)_")
_F1 = re.compile(r"/F:(\d+)_")
_MISSING = -50

_SILENCE = "sil"
_PAUSE = "pau"
_UNVOICED_VOWELS = "AEIOU"
_MORA_ENDS = "aeiouAEIOUNcl"
"""Phonemes that can end a mora. Tested as substrings, as the reference does."""
_GEMINATE = "cl"
"""OpenJTalk's ``っ``; SBV2 calls it ``q``."""


def _field(pattern: re.Pattern[str], label: str) -> int:
    match = pattern.search(label)
    return int(match.group(1)) if match else _MISSING


def _phoneme(label: str) -> str:
    """The current phoneme: between the first ``-`` and the following ``+``."""
    return label.split("-", 1)[1].split("+", 1)[0]


def accent_phrase_phonemes(labels: list[str]) -> list[list[tuple[str, int]]]:
    """Phonemes (unvoiced vowels as voiced ones, ``っ`` as ``q``) with their 0/1 accent, by
    accent phrase (none is empty).

    As in the reference, the last accent phrase is only kept when the final silence says
    whether the utterance is a question or not (E3 0 or 1); otherwise its phonemes are left
    out and the G2P gives them tone 0.
    """
    result: list[list[tuple[str, int]]] = []
    phrase: list[tuple[str, int]] = []
    pitch = 0
    last = len(labels) - 1

    for index, label in enumerate(labels):
        phoneme = _phoneme(label)
        if phoneme in _UNVOICED_VOWELS:
            phoneme = phoneme.lower()
        if phoneme == _SILENCE and index == 0:
            continue
        if phoneme == _SILENCE and index == last:
            if _field(_E3, label) in (0, 1):
                _close(result, phrase)
            break
        if phoneme in (_SILENCE, _PAUSE):
            # A pause closes the accent phrase (OpenJTalk puts no silence inside; if it did,
            # it would be one more pause).
            _close(result, phrase)
            phrase, pitch = [], 0
            continue
        phrase.append(("q" if phoneme == _GEMINATE else phoneme, pitch))
        if index == last:  # OpenJTalk always ends on a silence; without one, keep the phrase
            _close(result, phrase)
            break
        a1, a2, a3 = _field(_A1, label), _field(_A2, label), _field(_A3, label)
        next_a2 = _field(_A2, labels[index + 1])
        if a3 == 1 and next_a2 == 1 and phoneme in _MORA_ENDS:
            # Last mora of an accent phrase, the next phrase starts here.
            _close(result, phrase)
            phrase, pitch = [], 0
        elif a1 == 0 and next_a2 == a2 + 1 and a2 != _field(_F1, label):
            pitch -= 1  # the accent nucleus: the pitch falls after this mora
        elif a2 == 1 and next_a2 == 2:
            pitch += 1  # the pitch rises after the first mora
    return result


def _close(phrases: list[list[tuple[str, int]]], phrase: list[tuple[str, int]]) -> None:
    if phrase:
        phrases.append(_squeeze(phrase))


def _squeeze(phrase: list[tuple[str, int]]) -> list[tuple[str, int]]:
    lowest = min(pitch for _, pitch in phrase)
    return [(phoneme, 1 if pitch > lowest else 0) for phoneme, pitch in phrase]
