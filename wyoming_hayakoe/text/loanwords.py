"""Latin-letter words to katakana, before the rest of normalization sees them.

Each run of ASCII letters is replaced by a katakana reading: OpenJTalk's own reading when its
dictionary knows the word (``the`` ザ, ``AI`` エーアイ, ``Netflix`` ネットフリックス), else the
reading from the loanword table (``data/english_katakana.tsv.gz``, see ``data/README.md``),
else the word stays and OpenJTalk later spells it letter by letter.

Replacing the word by its reading here, rather than leaving it to OpenJTalk, keeps word
boundaries: normalization deletes spaces, and "This is a pen" would otherwise become one
unknown word.
"""

from __future__ import annotations

import functools
import gzip
import logging
import re
import unicodedata
from array import array
from bisect import bisect_left
from pathlib import Path

from . import jtalk

_LOGGER = logging.getLogger(__name__)

_WORD = re.compile(r"[A-Za-z]+")
_TABLE_PATH = Path(__file__).parent / "data" / "english_katakana.tsv.gz"
_UNKNOWN_POS = "フィラー"
"""OpenJTalk tags a word it does not know as a filler and reads it letter by letter."""
_DEVOICING_MARK = "’"
"""Accent-nucleus mark inside OpenJTalk readings; left in, it would later become a quote."""


class LoanwordTable:
    """Sorted ``word<TAB>reading`` lines kept as one bytes object, searched by bisection.

    About 6 MB, against some 40 MB for the same entries in a dict.
    """

    def __init__(self, blob: bytes) -> None:
        self._blob = blob
        starts = array("I", [0])
        starts.extend(match.end() for match in re.finditer(b"\n", blob))
        starts.pop()  # the position after the final newline starts no line
        self._starts = starts

    def __len__(self) -> int:
        return len(self._starts)

    def _key(self, index: int) -> bytes:
        start = self._starts[index]
        return self._blob[start : self._blob.index(b"\t", start)]

    def get(self, word: str) -> str | None:
        """The reading of ``word`` (lower-case ASCII letters), or None."""
        key = word.encode("ascii")
        index = bisect_left(range(len(self._starts)), key, key=self._key)
        if index == len(self._starts) or self._key(index) != key:
            return None
        start = self._starts[index] + len(key) + 1
        return self._blob[start : self._blob.index(b"\n", start)].decode("utf-8")


@functools.cache
def loanword_table() -> LoanwordTable:
    """The loanword table, read on first use (it is never needed for Japanese-only text)."""
    table = LoanwordTable(gzip.decompress(_TABLE_PATH.read_bytes()))
    _LOGGER.debug("Loaded %d loanword readings from %s", len(table), _TABLE_PATH)
    return table


def native_reading(word: str) -> str | None:
    """OpenJTalk's katakana reading of ``word``, or None when its dictionary lacks the word."""
    if len(word) > jtalk.MAX_CHARS:  # no such English word; too long for OpenJTalk anyway
        return None
    features = jtalk.run_frontend(word)
    if any(feature["pos"] == _UNKNOWN_POS for feature in features):
        return None
    reading = "".join(feature["pron"] for feature in features).replace(_DEVOICING_MARK, "")
    return reading or None


class EnglishReader:
    """Replaces Latin-letter words by katakana; one per front-end (it caches readings).

    ``keep_words`` are user-dictionary surfaces: such a word stays as written, so that
    OpenJTalk applies the user's reading and accent to it later.
    """

    def __init__(self, keep_words: frozenset[str] = frozenset(), cache_size: int = 4096) -> None:
        # The text is NFKC-normalized before the lookup, so the surfaces must be too.
        self._keep_words = frozenset(unicodedata.normalize("NFKC", w) for w in keep_words)
        self._native = functools.lru_cache(maxsize=cache_size)(native_reading)

    def replace(self, text: str) -> str:
        return _WORD.sub(self._reading, text)

    def _reading(self, match: re.Match[str]) -> str:
        word = match.group()
        if word in self._keep_words:
            return word
        native = self._native(word)
        if native is not None:
            return native
        return loanword_table().get(word.lower()) or word
