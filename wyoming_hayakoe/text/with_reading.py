"""A text together with the reading a client gave for it (VOICEVOX's AudioQuery).

The reading is the accent phrases of the whole text, as :meth:`TextFrontend.accent_phrases`
gave them sentence by sentence and the client edited them. The engine still speaks the text
sentence by sentence, so :func:`share_out` hands each sentence its own phrases back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .accent import MARKS, SENTENCE_END_MARKS, AccentPhrase, PhraseReading
from .aquestalk import AquesTalkError, parse_aquestalk
from .frontend import TextFrontend
from .kana import to_katakana
from .sentences import Sentence, split_for_synthesis

_MARKS_AS_TEXT = {".": "。", ",": "、", "!": "！", "?": "？"}
"""Marks as a sentence splitter and the normalizer see them in written text."""


@dataclass(frozen=True)
class TextWithReading:
    """What to say and how."""

    text: str
    """The text as written: what the BERT reads and the sentences are cut from."""
    phrases: tuple[PhraseReading, ...]

    @classmethod
    def from_phrases(cls, phrases: Sequence[PhraseReading]) -> TextWithReading:
        """A reading without its text: the text is the reading itself, in hiragana (the BERT
        reads kana-only text more naturally in hiragana, as AivisSpeech Engine found)."""
        text = "".join(
            _MARKS_AS_TEXT.get(kana, kana if kana in _MARKS_AS_TEXT.values() else _hiragana(kana))
            for phrase in phrases
            for kana in phrase.kana
        )
        return cls(text, tuple(phrases))

    @classmethod
    def of_query(cls, kana: str | None, phrases: Sequence[PhraseReading]) -> TextWithReading:
        """What a VOICEVOX query speaks: ``kana`` as written, with ``phrases`` as its
        reading, unless it is empty or VOICEVOX's AquesTalk-like notation (then the morae are
        the text)."""
        if not kana or not kana.strip():
            return cls.from_phrases(phrases)
        try:
            parse_aquestalk(kana)
        except AquesTalkError:
            return cls(kana, tuple(phrases))
        return cls.from_phrases(phrases)


def _hiragana(kana: str) -> str:
    katakana = to_katakana(kana)
    return "".join(chr(ord(c) - 0x60) if "ァ" <= c <= "ヶ" else c for c in katakana)


def sentence_phrases(
    frontend: TextFrontend, rewritten: str
) -> list[tuple[Sentence, list[AccentPhrase]]]:
    """The sentences the engine speaks one by one, each with its accent phrases."""
    return [(s, frontend.accent_phrases(s.text)) for s in split_for_synthesis(rewritten)]


def share_out(
    phrases: Sequence[PhraseReading], counts: Sequence[int]
) -> list[tuple[PhraseReading, ...]] | None:
    """The phrases of each sentence, given how many each sentence's own reading has.

    When the numbers add up, the phrases are taken in order. Otherwise (phrases were joined or
    split) they are cut after each phrase that ends a sentence (``.``, ``!``, ``?``), which
    works when that gives as many groups as there are sentences; else None.
    """
    if sum(counts) == len(phrases):
        groups: list[tuple[PhraseReading, ...]] = []
        start = 0
        for count in counts:
            groups.append(tuple(phrases[start : start + count]))
            start += count
        return groups
    cut: list[list[PhraseReading]] = []
    open_sentence = False
    for phrase in phrases:
        marks_only = all(kana in MARKS for kana in phrase.kana)
        if cut and (open_sentence or marks_only):  # marks alone end the sentence before
            cut[-1].append(phrase)
        else:
            cut.append([phrase])
        open_sentence = not (phrase.kana and phrase.kana[-1] in SENTENCE_END_MARKS)
    spoken = [c for c in counts if c]
    if len(cut) != len(spoken):
        return None
    shared = iter(cut)
    return [tuple(next(shared)) if count else () for count in counts]
