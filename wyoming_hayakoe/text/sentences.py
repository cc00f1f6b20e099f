"""Splitting text into the sentences that are synthesized one by one: one rule set for whole
texts and for text streamed in pieces, so a text sounds the same however it arrives.

Long inputs synthesized whole lose their intonation, so each sentence is synthesized alone
(the engine restores the pause between them). A sentence ends after 。！？!? (with the run of
marks and closing brackets that follows) and at a newline, as the reference splits; a sentence
over :data:`MAX_SENTENCE_CHARS` is cut at its last soft break within the limit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_SENTENCE_CHARS = 250
"""BERT was trained on at most 512 tokens and attention cost grows with the square of the
length, so an unpunctuated wall of text is read in pieces of at most this many characters."""

_ENDERS = frozenset("。！？!?")
# Characters that still belong to the sentence when they follow its final mark.
_CLOSERS = frozenset("」』）)】〕〉》”’\"'")
# Places where an overlong sentence may be cut without splitting a word.
_SOFT_BREAKS = ("、", "，", ",", " ", "　")

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


def split_for_synthesis(text: str, max_chars: int = MAX_SENTENCE_CHARS) -> list[Sentence]:
    """The pieces synthesized one by one: sentences, long ones cut at a soft break."""
    return [piece for s in split_text(text) for piece in split_long(s, max_chars)]


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


def split_long(sentence: Sentence, max_chars: int) -> list[Sentence]:
    """Cut a sentence longer than ``max_chars`` at its last soft break before the limit."""
    pieces: list[Sentence] = []
    rest = sentence.text
    while len(rest) > max_chars:
        cut = _soft_cut(rest, max_chars)
        pieces.append(Sentence(rest[:cut], rest[:cut]))
        rest = rest[cut:]
    tail = sentence.source[len(sentence.source.rstrip()) :]
    pieces.append(Sentence(rest, rest + tail))
    return pieces


def _soft_cut(text: str, max_chars: int) -> int:
    """Index just past the last soft break within ``max_chars``, or ``max_chars``."""
    cut = max(text[:max_chars].rfind(mark) for mark in _SOFT_BREAKS)
    return cut + 1 if cut > 0 else max_chars


class SentenceStream:
    """Collects streamed text (``synthesize-chunk``) and hands out sentences once final.

    Home Assistant streams an LLM answer a few characters at a time; audio can start as soon
    as the first sentence is complete. The stream applies :func:`split_for_synthesis` to what
    it has: a sentence is final once a later sentence has begun (until then a run of marks or
    a line with nothing to say may still join it), and a piece cut off a long sentence is
    final as soon as it is cut, since the cut depends only on the text before it. So the
    sentences handed out are exactly those of the whole text, however it was cut into chunks.
    """

    def __init__(self, max_chars: int = MAX_SENTENCE_CHARS) -> None:
        if max_chars < 1:
            raise ValueError("max_chars must be positive")
        self._max_chars = max_chars
        self._buffer = ""
        self._pieces_out = 0  # pieces of the buffer's first sentence already handed out

    def feed(self, chunk: str) -> list[str]:
        """Add a chunk of text; return the sentences it made final, in order."""
        self._buffer += chunk
        # The text after the last split point may still become a sentence of its own (once
        # it has something to say) or join the sentence before: leave it out until then.
        tail_start = max((m.end() for m in _SPLIT_AFTER.finditer(self._buffer)), default=0)
        settled = tail_start if not is_speakable(self._buffer[tail_start:]) else None
        sentences = split_text(self._buffer[:settled])
        out: list[str] = []
        for sentence in sentences[:-1]:
            out += self._take(split_long(sentence, self._max_chars))
            self._buffer = self._buffer[len(sentence.source) :]
        if sentences and is_speakable(sentences[-1].text):
            pieces = split_long(sentences[-1], self._max_chars)
            out += self._take(pieces[:-1])  # the last piece may still grow
            self._pieces_out = len(pieces) - 1
        return out

    def finish(self) -> list[str]:
        """End the stream: return the rest, if it has anything to say."""
        out = [
            piece
            for sentence in split_text(self._buffer)
            if is_speakable(sentence.text)
            for piece in self._take(split_long(sentence, self._max_chars))
        ]
        self._buffer = ""
        self._pieces_out = 0
        return out

    def _take(self, pieces: list[Sentence]) -> list[str]:
        """The pieces not handed out yet (the first ``_pieces_out`` of them were)."""
        # A piece with nothing to say makes no sound: the engine would skip it too.
        new = [p.text.strip() for p in pieces[self._pieces_out :] if is_speakable(p.text)]
        self._pieces_out = 0
        return new
