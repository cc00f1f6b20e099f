"""VOICEVOX's AquesTalk-like notation: a reading written as katakana with its accents.

The notation (VOICEVOX ENGINE's README, "AquesTalk 風記法"): katakana only; ``/`` ends an accent
phrase and ``、`` ends one with a pause; ``'`` follows the mora the pitch falls after, exactly
once per phrase; ``_`` before a kana devoices it; ``？`` (full-width) at the end of a phrase
makes it a question. The errors are VOICEVOX's (their names and Japanese messages): a client
shows them as they are. Here a pause is the ``,`` mark and a question the ``?`` mark the
synthesizer knows; devoicing is left to the voice (Style-Bert-VITS2 has no devoiced vowels).
Like VOICEVOX ENGINE's kana parser it belongs to the text pipeline: the VOICEVOX-compatible
API hands the notation over and gets accent phrases back.
"""

from __future__ import annotations

from typing import Any

from .accent import PhraseReading
from .kana import LONG_VOWEL_MARK, LONGEST_MORA, MORA_PHONEMES

_ACCENT = "'"
_DEVOICE = "_"
_PAUSE = "、"
_NO_PAUSE = "/"
_QUESTION = "？"

_MESSAGES = {
    "UNKNOWN_TEXT": "判別できない読み仮名があります: {text}",
    "ACCENT_TOP": "句頭にアクセントは置けません: {text}",
    "ACCENT_TWICE": "1つのアクセント句に二つ以上のアクセントは置けません: {text}",
    "ACCENT_NOTFOUND": "アクセントを指定していないアクセント句があります: {text}",
    "EMPTY_PHRASE": "{position}番目のアクセント句が空白です",
    "INTERROGATION_MARK_NOT_AT_END": "アクセント句末以外に「？」は置けません: {text}",
}


class AquesTalkError(ValueError):
    """The notation cannot be read; ``detail`` is VOICEVOX's ParseKanaBadRequest."""

    def __init__(self, name: str, **args: str) -> None:
        self.text = _MESSAGES[name].format(**args)
        super().__init__(self.text)
        self.detail: dict[str, Any] = {"text": self.text, "error_name": name, "error_args": args}


def parse_aquestalk(text: str) -> list[PhraseReading]:
    """The accent phrases written in ``text``."""
    if not text:
        raise AquesTalkError("EMPTY_PHRASE", position="1")
    phrases: list[PhraseReading] = []
    start = 0
    for index in range(len(text) + 1):
        if index < len(text) and text[index] not in (_PAUSE, _NO_PAUSE):
            continue
        phrase = text[start:index]
        if not phrase:
            raise AquesTalkError("EMPTY_PHRASE", position=str(len(phrases) + 1))
        start = index + 1
        question = phrase.endswith(_QUESTION)
        if _QUESTION in phrase[:-1]:
            raise AquesTalkError("INTERROGATION_MARK_NOT_AT_END", text=phrase)
        kana, accent = _phrase(phrase.removesuffix(_QUESTION))
        marks: tuple[str, ...] = ("?",) if question else ()
        if index < len(text) and text[index] == _PAUSE:
            marks += (",",)
        phrases.append(PhraseReading(kana + marks, accent))
    return phrases


def _phrase(phrase: str) -> tuple[tuple[str, ...], int]:
    morae: list[str] = []
    accent: int | None = None
    position = 0
    while position < len(phrase):
        char = phrase[position]
        if char == _ACCENT:
            if not morae:
                raise AquesTalkError("ACCENT_TOP", text=phrase)
            if accent is not None:
                raise AquesTalkError("ACCENT_TWICE", text=phrase)
            accent = len(morae)
            position += 1
            continue
        if char == _DEVOICE:
            position += 1
            continue
        mora = _longest_mora(phrase, position)
        if mora is None:
            raise AquesTalkError("UNKNOWN_TEXT", text=phrase[position:])
        morae.append(mora)
        position += len(mora)
    if accent is None:
        raise AquesTalkError("ACCENT_NOTFOUND", text=phrase)
    return tuple(morae), accent


def _longest_mora(text: str, position: int) -> str | None:
    if text[position] == LONG_VOWEL_MARK:
        return LONG_VOWEL_MARK
    for size in range(min(LONGEST_MORA, len(text) - position), 0, -1):
        if text[position : position + size] in MORA_PHONEMES:
            return text[position : position + size]
    return None
