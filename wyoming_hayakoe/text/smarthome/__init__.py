"""Smart-home Japanese: the text layer that runs before the reference-compatible normalizer.

Home Assistant announcements hold what Style-Bert-VITS2's normalizer drops or misreads:
``7:30``, ``2026/11/29``, ``45%``, ``-3.5℃``, ``Wi-Fi``, markdown from LLM answers. This
layer rewrites such text into the Japanese an announcer would say, and leaves everything else
alone, so the reference normalizer (:mod:`wyoming_hayakoe.text.normalize`) sees it unchanged.

Order: ™-like marks, ``½`` and ``Ⅲ``, formulas with subscripts (``NO₂``: before NFKC turns
them into letters and digits), NFKC, markdown, emoji and kaomoji, an agent's prose (arithmetic,
comparisons, Latin abbreviations, e-mail addresses), then on each stretch outside the
user-dictionary words: numbers that name (telephone numbers, postal codes, room numbers) and
an earthquake's magnitude, formulas in plain digits, dates and times, quantities with units, ranges
of counted quantities, counts OpenJTalk misreads as kanji (counts.py), other numbers, colons,
English words (tech words first). If no rule
changes anything, the original text is returned as it came (not even NFKC-normalized).

The rules run until nothing changes, so a second pass changes nothing either
(:meth:`SmartHomeRewriter.rewrite` is idempotent). The engine applies it once per request,
to the whole text before splitting it into sentences.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from .counts import read_counts
from .dates import read_dates_and_times, read_minutes
from .english import EnglishRewriter
from .formulas import read_formulas, read_plain_formulas
from .identifiers import read_identifiers
from .markdown import strip_markdown, strip_marks
from .numbers import read_number_symbols, read_numbers
from .prose import read_prose
from .ranges import read_ranges
from .trace import USER_DICTIONARY, Rule, normalize_width, note, stretch, substitute
from .unit_table import LATIN_READINGS
from .units import read_quantities

__all__ = ["SmartHomeRewriter", "reference_keep_words"]

_LATIN_RUN = re.compile(r"[A-Za-z]+")
_SPACES = re.compile(r"\s+")
# Colons left after the clock times are read: 1:2 is a ratio (一たい二: OpenJTalk reads
# 一対二 イッツイニ); after a word (「状態: オン」) a pause. The reference deletes them,
# joining the words.
_RATIO = re.compile(r"(?<=[0-9]):(?=[0-9])")
_COLON = re.compile(r"\s*:\s*")
_RATIO_RULE = Rule("ratio")
_COLON_RULE = Rule("colon")
_MAX_ROUNDS = 4


def reference_keep_words(surfaces: Iterable[str]) -> frozenset[str]:
    """The words the reference English reader must leave alone for these surfaces.

    It replaces runs of Latin letters one by one, so besides each surface (NFKC, spaces
    removed: the rewriter joins ``Living Room`` into ``LivingRoom``) every letter run inside
    a surface is kept too (``Wi`` and ``Fi`` of ``Wi-Fi``); else OpenJTalk could not match it.
    """
    words: set[str] = set()
    for surface in surfaces:
        joined = _SPACES.sub("", unicodedata.normalize("NFKC", surface))
        words.add(joined)
        words.update(_LATIN_RUN.findall(joined))
    return frozenset(words)


class SmartHomeRewriter:
    """Rewrites smart-home text into readable Japanese; see the module docstring.

    ``keep_words`` are the user-dictionary surfaces: they pass through untouched (a surface
    written with spaces has them removed, as OpenJTalk will see it). Make a new rewriter when
    the dictionary changes. Safe to share between threads (the caches are thread-safe).
    """

    def __init__(self, keep_words: Iterable[str] = ()) -> None:
        surfaces = {unicodedata.normalize("NFKC", w).strip() for w in keep_words}
        surfaces |= {_SPACES.sub("", s) for s in surfaces}  # as a first round leaves them
        self._surfaces = sorted((s for s in surfaces if s), key=len, reverse=True)
        self._keep_pattern = (
            re.compile("|".join(re.escape(s) for s in self._surfaces)) if self._surfaces else None
        )
        self._keep_words = frozenset(self._surfaces)
        self._english = EnglishRewriter(reference_keep_words(self._surfaces) | LATIN_READINGS)

    def rewrite(self, text: str, english_model: bool = True) -> str:
        """``english_model``: the English model reads the English words no dictionary knows
        (english.py; else they are spelled)."""
        # A rule's output can be the context another rule waits for (0F¥0: once 0F is 零階,
        # ¥0 no longer follows a letter), so the rules run until nothing changes.
        result = text
        for _ in range(_MAX_ROUNDS):
            rewritten = self._round(result, english_model)
            if rewritten == result:
                break
            result = rewritten
        return text if result == unicodedata.normalize("NFKC", text) else result

    def _round(self, text: str, english_model: bool) -> str:
        text = read_formulas(read_number_symbols(strip_marks(text)), self._keep_words)
        text = read_prose(strip_markdown(normalize_width(text)))
        pieces: list[str] = []
        done = 0  # characters rewritten so far: where the next stretch starts
        position = 0
        for match in self._keep_pattern.finditer(text) if self._keep_pattern else ():
            for stretch_text, rewrite in (
                (text[position : match.start()], lambda t: self._rewrite_free(t, english_model)),
                (match.group(), _kept),
            ):
                with stretch(done):
                    pieces.append(rewrite(stretch_text))
                done += len(pieces[-1])
            position = match.end()
        with stretch(done):
            pieces.append(self._rewrite_free(text[position:], english_model))
        return "".join(pieces)

    def _rewrite_free(self, text: str, english_model: bool) -> str:
        if not text:
            return text
        text = read_dates_and_times(read_plain_formulas(read_identifiers(text)))
        text = read_counts(read_ranges(read_quantities(text)))
        text = read_minutes(read_numbers(text))
        text = substitute(_COLON, "、", substitute(_RATIO, "たい", text, _RATIO_RULE), _COLON_RULE)
        return self._english.rewrite(text, english_model)


def _kept(word: str) -> str:
    """A user-dictionary word, as OpenJTalk will meet it (spaces removed)."""
    kept = _SPACES.sub("", word)
    return note(word, kept, Rule(USER_DICTIONARY, kept))
