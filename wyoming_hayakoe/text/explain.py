"""What the server will say for a text, and why: the one computation of the reading check.

``python -m wyoming_hayakoe.commands.reading`` and the web page's reading tab both show
:func:`read_text`: the text as the smart-home layer rewrote it, cut into pieces that each name
the rule or table entry that made them (``unit: %``, ``brand: Nature Remo``, ``time``, ``user
dictionary line 4``: so a user knows whether to fix a word in the dictionary), then each
sentence as the engine speaks it (the same split, the same front-end): its normalized text,
phonemes and katakana reading (the page draws its accent phrases from the VOICEVOX API).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from .frontend import Phonemes, TextFrontend
from .g2p import g2p
from .mecab_dictionary import Entry
from .sentences import split_for_synthesis
from .smarthome.trace import USER_DICTIONARY, WIDTH, Piece, Recording, Rule, recording

_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class Rewrite:
    """A piece of the text (``source``), what it became (``text``) and the rules that made it
    (none: the piece is as written)."""

    source: str
    text: str
    rules: tuple[Rule, ...] = ()

    def as_dict(self) -> dict[str, object]:
        return {"from": self.source, "to": self.text, "rules": [r.as_dict() for r in self.rules]}


@dataclass(frozen=True)
class SentenceReading:
    """One sentence as the engine synthesizes it."""

    text: str
    """The rewritten sentence the engine is given."""
    phonemes: Phonemes
    kana: str
    """The katakana reading, punctuation as the marks the model sees."""


@dataclass(frozen=True)
class TextReading:
    text: str
    rewritten: str
    rewrites: list[Rewrite]
    sentences: list[SentenceReading]

    @property
    def normalized(self) -> str:
        return "".join(sentence.phonemes.normalized for sentence in self.sentences)

    @property
    def kana(self) -> str:
        return "".join(sentence.kana for sentence in self.sentences)


def read_text(frontend: TextFrontend, text: str, dictionary: Iterable[Entry] = ()) -> TextReading:
    """How ``frontend`` reads ``text``; ``dictionary``: the user dictionary's entries in effect,
    to name the line of each of its words."""
    with recording(text) as record:
        rewritten = frontend.rewrite(text)
    return TextReading(
        text=text,
        rewritten=rewritten,
        rewrites=_rewrites(record, text, rewritten, _lines(dictionary)),
        sentences=[_sentence(frontend, s.text) for s in split_for_synthesis(rewritten)],
    )


def _sentence(frontend: TextFrontend, text: str) -> SentenceReading:
    phonemes = frontend.phonemize(text)
    kana = "".join(g2p(phonemes.normalized).readings)
    return SentenceReading(text, phonemes, kana)


def _lines(dictionary: Iterable[Entry]) -> dict[str, int]:
    """Each surface as the smart-home layer names it (NFKC, no spaces), with its line."""
    return {
        _SPACES.sub("", unicodedata.normalize("NFKC", entry.surface)): entry.line
        for entry in dictionary
    }


def _rewrites(record: Recording, text: str, rewritten: str, lines: dict[str, int]) -> list[Rewrite]:
    if not record.complete:
        return [Rewrite(text, rewritten, record.result()[0].rules)]
    pieces = record.result()
    if rewritten == text:
        # Nothing but NFKC changed, and the layer handed on the text as written: so do the
        # pieces (only a user-dictionary word keeps its rule).
        pieces = [Piece(p.source, p.source, _without_width(p.rules)) for p in pieces]
    rewrites: list[Rewrite] = []
    for piece in pieces:
        rules = tuple(_label(rule, lines) for rule in piece.rules)
        if rewrites and rewrites[-1].rules == rules:
            last = rewrites.pop()
            piece = Piece(last.source + piece.source, last.text + piece.text)
        rewrites.append(Rewrite(piece.source, piece.text, rules))
    return rewrites


def _without_width(rules: tuple[Rule, ...]) -> tuple[Rule, ...]:
    return tuple(rule for rule in rules if rule != WIDTH)


def _label(rule: Rule, lines: dict[str, int]) -> Rule:
    if rule.kind == USER_DICTIONARY and rule.detail in lines:
        return Rule(rule.kind, rule.detail, lines[rule.detail])
    return rule
