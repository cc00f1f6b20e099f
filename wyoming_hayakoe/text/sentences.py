"""Splitting text into the sentences that are synthesized one by one.

Long inputs synthesized whole lose their intonation, so each sentence is synthesized alone
(see pauses.py for the pause restored between them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SPLIT_AFTER = re.compile(r"(?<=[。！？!?\n])")
# A fragment with none of these makes no sound of its own and joins a neighbour.
_SPEAKABLE = re.compile(r"[ぁ-ゖァ-ヶ一-鿿々〆〇a-zA-Z0-9０-９Ａ-Ｚａ-ｚｦ-ﾟ]")


def is_speakable(text: str) -> bool:
    """True if the text has at least one character that makes sound (kana, kanji, Latin
    letters, digits); text without any is only punctuation and joins a neighbour."""
    return _SPEAKABLE.search(text) is not None


@dataclass(frozen=True)
class Sentence:
    """One sentence of the input."""

    text: str
    """What is synthesized: the stripped fragments, as the reference joins them."""
    source: str
    """The raw slice of the input it came from, with the whitespace up to the next sentence;
    the sources of all sentences concatenate back to the whole input."""


def split_text(text: str) -> list[Sentence]:
    """Split after 。！？!? and newlines; fragments with nothing to say join a neighbour."""
    texts: list[str] = []
    sources: list[str] = []
    leading_text = leading_source = ""  # what comes before the first speakable fragment
    for piece in _SPLIT_AFTER.split(text):
        fragment = piece.strip()
        if fragment and is_speakable(fragment):
            texts.append(leading_text + fragment)
            sources.append(leading_source + piece)
            leading_text = leading_source = ""
        elif texts:
            texts[-1] += fragment
            sources[-1] += piece
        else:
            leading_text += fragment
            leading_source += piece
    if leading_text:
        if texts:
            texts[-1] += leading_text
            sources[-1] += leading_source
        else:
            texts.append(leading_text)
            sources.append(leading_source)
    return [Sentence(t, s) for t, s in zip(texts, sources, strict=True)]


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text``, as synthesized one by one."""
    return [sentence.text for sentence in split_text(text)]


def split_long(sentence: Sentence, max_chars: int) -> list[Sentence]:
    """Cut a sentence longer than ``max_chars`` at its last comma or space before the limit.

    BERT was trained on at most 512 tokens and attention cost grows with the square of the
    length, so an unpunctuated wall of text is read in pieces rather than in one pass.
    """
    pieces: list[Sentence] = []
    rest = sentence.text
    while len(rest) > max_chars:
        window = rest[:max_chars]
        cut = max(window.rfind(mark) for mark in ("、", "，", ",", " ", "　"))
        cut = cut + 1 if cut > 0 else max_chars
        pieces.append(Sentence(rest[:cut], rest[:cut]))
        rest = rest[cut:]
    tail = sentence.source[len(sentence.source.rstrip()) :]
    pieces.append(Sentence(rest, rest + tail))
    return pieces
