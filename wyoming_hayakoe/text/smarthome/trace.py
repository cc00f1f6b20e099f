"""Which rule rewrote which words: what the reading check shows, recorded only when asked.

Every rule of the smart-home layer substitutes through :func:`substitute` (a ``pattern.sub``
that also names the rule) or :func:`normalize_width` (NFKC). Outside :func:`recording` that is
all they do. Inside it, each substitution is also applied to a list of :class:`Piece`: stretches
of the original text with what they became and the rules that made it. A piece rewritten again
(by a later rule, or in a later round) keeps its source and gathers the rules; pieces a
substitution spans are merged. So ``50%OFF`` ends as two pieces, ``50%`` → 五十パーセント by
``unit: %`` and ``OFF`` kept, and ``１０ｋｍ`` as one, by ``NFKC`` and ``unit: km``.

A rule works on the whole text or on a stretch of it (the text between user-dictionary
words): :func:`stretch` says where the stretch starts. If what a rule is handed does not match
the record (a rule that bypassed :func:`substitute`), the record gives up and reports the whole
text as one piece (:attr:`Recording.complete` is False) rather than a wrong attribution.
"""

from __future__ import annotations

import contextlib
import contextvars
import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass

__all__ = ["Piece", "Recording", "Rule", "normalize_width", "note", "recording", "stretch"]


@dataclass(frozen=True)
class Rule:
    """One rule or table entry: ``kind`` (``unit``, ``time``, ``brand``...) and which one."""

    kind: str
    detail: str = ""
    line: int = 0
    """The line of the file the entry is on, where known (a user-dictionary word's)."""

    def __str__(self) -> str:
        if self.line:
            return f"{self.kind} line {self.line}"
        return f"{self.kind}: {self.detail}" if self.detail else self.kind

    def as_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "detail": self.detail, "line": self.line, "label": str(self)}


USER_DICTIONARY = "user dictionary"
"""The kind of rule of a user-dictionary word (which the layer leaves to OpenJTalk)."""
WIDTH = Rule("NFKC")
"""Full-width letters and digits made plain, ``㎞`` spelled ``km`` (Unicode NFKC)."""


@dataclass(frozen=True)
class Piece:
    """A stretch of the original text (``source``) and what it became (``text``)."""

    source: str
    text: str
    rules: tuple[Rule, ...] = ()

    @property
    def plain(self) -> bool:
        """Untouched by any rule: it can be cut anywhere."""
        return not self.rules and self.source == self.text


RuleFor = Rule | Callable[[re.Match[str]], Rule]


class Recording:
    """The pieces of one text while the rules rewrite it."""

    def __init__(self, text: str) -> None:
        self.pieces: list[Piece] = [Piece(text, text)] if text else []
        self.complete = True
        self._original = text
        self._offset = 0

    @property
    def text(self) -> str:
        return "".join(piece.text for piece in self.pieces)

    def result(self) -> list[Piece]:
        """The pieces, neighbours with the same rules merged (``ＡＢ`` is one NFKC piece)."""
        merged: list[Piece] = []
        for piece in self.pieces:
            last = merged[-1] if merged else None
            if last is not None and last.rules == piece.rules:
                merged[-1] = Piece(last.source + piece.source, last.text + piece.text, last.rules)
            else:
                merged.append(piece)
        return merged

    def apply(self, text: str, edits: list[tuple[int, int, str, Rule]]) -> None:
        """Record ``edits`` (start, end, replacement, rule; in ``text``, ascending) of the
        stretch ``text`` that starts at the current offset."""
        if not self.complete:
            return
        if self.text[self._offset : self._offset + len(text)] != text:
            self._give_up()
            return
        for start, end, replacement, rule in reversed(edits):
            self._replace(self._offset + start, self._offset + end, replacement, rule)

    def _give_up(self) -> None:
        self.complete = False
        self.pieces = [Piece(self._original, self.text, (Rule("rewritten"),))]

    def _replace(self, start: int, end: int, replacement: str, rule: Rule) -> None:
        before: list[Piece] = []
        touched: list[Piece] = []
        after: list[Piece] = []
        head = tail = ""  # text of changed pieces outside [start, end), kept around the new
        position = 0
        for piece in self.pieces:
            first, last = position, position + len(piece.text)
            position = last
            if last < start or (last == start and (first < last or start < end)):
                before.append(piece)
            elif first > end or (first == end and (first < last or start < end)):
                after.append(piece)
            elif piece.plain:
                cut_start, cut_end = max(start, first) - first, min(end, last) - first
                if cut_start:
                    before.append(Piece(piece.text[:cut_start], piece.text[:cut_start]))
                touched.append(Piece(piece.text[cut_start:cut_end], ""))
                if cut_end < len(piece.text):
                    after.append(Piece(piece.text[cut_end:], piece.text[cut_end:]))
            else:
                head += piece.text[: max(0, start - first)] if not touched else ""
                tail = piece.text[max(0, end - first) :] if end < last else ""
                touched.append(piece)
        rules = tuple(dict.fromkeys([*(r for piece in touched for r in piece.rules), rule]))
        source = "".join(piece.source for piece in touched)
        merged = Piece(source, head + replacement + tail, rules)
        self.pieces = [*before, merged, *after]

    @contextlib.contextmanager
    def _at(self, offset: int) -> Iterator[None]:
        previous, self._offset = self._offset, offset
        try:
            yield
        finally:
            self._offset = previous


_CURRENT: contextvars.ContextVar[Recording | None] = contextvars.ContextVar(
    "smarthome_recording", default=None
)


@contextlib.contextmanager
def recording(text: str) -> Iterator[Recording]:
    """Record the rules' substitutions on ``text`` in this thread until the block ends."""
    record = Recording(text)
    token = _CURRENT.set(record)
    try:
        yield record
    finally:
        _CURRENT.reset(token)


@contextlib.contextmanager
def stretch(offset: int) -> Iterator[None]:
    """The rules in this block work on the stretch of the text that starts at ``offset``."""
    record = _CURRENT.get()
    if record is None:
        yield
        return
    with record._at(offset):
        yield


def substitute(
    pattern: re.Pattern[str],
    replacement: str | Callable[[re.Match[str]], str],
    text: str,
    rule: RuleFor,
) -> str:
    """``pattern.sub(replacement, text)``, recorded as the work of ``rule`` (a :class:`Rule`,
    or a function of the match giving one) when a :func:`recording` is under way."""
    record = _CURRENT.get()
    if record is None:
        return pattern.sub(replacement, text)
    edits: list[tuple[int, int, str, Rule]] = []

    def recorded(match: re.Match[str]) -> str:
        new = replacement(match) if callable(replacement) else match.expand(replacement)
        if new != match.group():
            which = rule(match) if callable(rule) else rule
            edits.append((match.start(), match.end(), new, which))
        return new

    result = pattern.sub(recorded, text)
    record.apply(text, edits)
    return result


def note(text: str, replacement: str, rule: Rule) -> str:
    """``replacement`` in place of the whole stretch ``text``, recorded as ``rule`` even when
    nothing changes (a user-dictionary word the layer leaves as it is)."""
    record = _CURRENT.get()
    if record is not None:
        record.apply(text, [(0, len(text), replacement, rule)])
    return replacement


_COMBINING = re.compile(r".[\u0300-\u036f\u3099\u309a\uff9e\uff9f]*", re.DOTALL)
"""A character and the marks NFKC may join to it (accents, dakuten)."""


def normalize_width(text: str) -> str:
    """NFKC, recorded character by character (with the marks joined to it)."""
    normalized = unicodedata.normalize("NFKC", text)
    record = _CURRENT.get()
    if record is None or normalized == text:
        return normalized
    edits = []
    for match in _COMBINING.finditer(text):
        new = unicodedata.normalize("NFKC", match.group())
        if new != match.group():
            edits.append((match.start(), match.end(), new, WIDTH))
    if "".join(unicodedata.normalize("NFKC", m.group()) for m in _COMBINING.finditer(text)) != (
        normalized
    ):
        edits = [(0, len(text), normalized, WIDTH)]  # composed across characters (Hangul)
    record.apply(text, edits)
    return normalized
