"""User-dictionary words as OpenJTalk reads them: entries, their MeCab dictionary rows, and
the compiled dictionary put in effect for the whole process, with the brand lexicon.

An entry (surface, katakana reading, accent nucleus) becomes a row of OpenJTalk's MeCab
dictionary: a proper noun (名詞,固有名詞,一般) cheap enough to win over OpenJTalk's own words
for the same characters. Every dictionary installed also holds the brand lexicon, after the
user's words: brand names OpenJTalk would cut into pieces (リモミニ as リ|モ|ミニ), read as one
word with the accent of ``text/data/brands.tsv`` (:func:`.smarthome.brands.lexicon`); a user
word of the same surface wins. Compiling runs in a child process (``jtalk``); pyopenjtalk holds
one dictionary per process, so installing takes a process-wide lock (see :mod:`.user_dict`).
"""

from __future__ import annotations

import csv
import functools
import logging
import tempfile
import threading
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from ..errors import HayakoeError
from . import jtalk
from .kana import KanaError, kana_to_phonemes, to_katakana
from .loanwords import EnglishReader
from .normalize import normalize_text
from .smarthome import reference_keep_words
from .smarthome.brands import lexicon

_LOGGER = logging.getLogger(__name__)

APPLY_LOCK = threading.Lock()
"""pyopenjtalk's dictionary is one per process: so is the lock around changing it."""

EMPTY_SURFACE = "\ue000"
"""A private-use character: the normalizer deletes it, so this entry can never match. An
empty dictionary cannot be compiled; this one stands for "no user words"."""

HEADER = ("surface", "reading", "accent")
_PROPER_NOUN = ("名詞", "固有名詞", "一般", "*", "*", "*")
_CONTEXT_ID = 1348
"""Left and right context id of 名詞,固有名詞,一般 in OpenJTalk's dictionary (left-id.def)."""
_COST = -1000
"""Low enough to beat OpenJTalk's own words for the same characters (今日 needs below ~4000)."""
_SMALL_KANA = frozenset("ァィゥェォャュョヮ")
"""Kana that join the mora before them (ッ, ン and ー are morae of their own)."""
_TO_FULL_WIDTH: dict[int, int] = {
    **{code: code + 0xFEE0 for code in range(0x21, 0x7F)},
    ord("-"): 0x2212,
    ord("'"): 0x2019,
}
"""OpenJTalk turns ASCII into full-width characters before MeCab sees the text (``-`` into
the minus sign, ``'`` into the right single quotation mark)."""


@dataclass(frozen=True)
class Entry:
    """One word of the user dictionary."""

    surface: str
    """As written in the file (NFKC): what the text front-end must leave alone."""
    reading: str
    """Katakana."""
    accent: int
    line: int

    @property
    def morae(self) -> int:
        return sum(1 for char in self.reading if char not in _SMALL_KANA)


def make_entry(surface: str, reading: str, accent: str, line: int = 0) -> Entry:
    """The entry these fields make, as a file line would; ValueError says what is wrong."""
    return entry_of([surface.strip(), reading.strip(), accent.strip()], line)


def entry_of(fields: list[str], line: int) -> Entry:
    """The entry of a file line's fields; ValueError says what is wrong."""
    if len(fields) != len(HEADER):
        raise ValueError(f"expected 3 fields (surface,reading,accent), found {len(fields)}")
    surface = unicodedata.normalize("NFKC", fields[0])
    if "\ufffd" in "".join(fields):
        raise ValueError("not valid UTF-8")
    if not surface:
        raise ValueError("the surface is empty")
    if any(char in surface for char in ',"'):
        raise ValueError("the surface must not hold a comma or a double quote")
    if not mecab_surface(surface):
        raise ValueError(f"nothing readable in the surface {surface!r}")
    reading = to_katakana(fields[1])
    try:
        if not reading or reading[0] in _SMALL_KANA or reading[0] == "ー":
            raise KanaError("it must start with a full-size kana")
        kana_to_phonemes(reading)
    except KanaError as err:
        raise ValueError(f"the reading {fields[1]!r} is not katakana: {err}") from err
    entry = Entry(surface, reading, 0, line)
    try:
        accent = int(fields[2])
    except ValueError:
        raise ValueError(f"the accent {fields[2]!r} is not a whole number") from None
    if not 0 <= accent <= entry.morae:
        raise ValueError(f"the accent {accent} is not between 0 and {entry.morae} (the morae)")
    return Entry(surface, reading, accent, line)


def mecab_surface(surface: str) -> str:
    """The surface as MeCab will meet it in the text: normalized by the front-end (digits as
    kanji, spaces gone, its Latin letters kept) and in full-width characters."""
    joined = "".join(surface.split())  # as the smart-home layer passes it on
    normalized = normalize_text(joined, EnglishReader(reference_keep_words([joined])))
    return normalized.translate(_TO_FULL_WIDTH)


def mecab_rows(entries: tuple[Entry, ...], empty_surface: str = "") -> list[list[str]]:
    """MeCab dictionary rows (OpenJTalk's 15 columns) of the entries, then of the brand
    lexicon where no entry has the same surface."""
    rows = [_row(entry) for entry in entries]
    taken = {surface for surface, _, _ in rows}
    rows += [row for row in map(_row, _lexicon_entries()) if row[0] not in taken]
    rows = rows or [(empty_surface, "ア", "0/1")]
    context = str(_CONTEXT_ID)
    return [
        [surface, context, context, str(_COST), *_PROPER_NOUN, surface, reading, reading, acc, "*"]
        for surface, reading, acc in rows
    ]


def _row(entry: Entry) -> tuple[str, str, str]:
    return mecab_surface(entry.surface), entry.reading, f"{entry.accent}/{entry.morae}"


@functools.cache
def _lexicon_entries() -> tuple[Entry, ...]:
    return tuple(make_entry(b.reading, b.reading, b.accent) for b in lexicon())


@dataclass
class _Lexicon:
    """Whether a dictionary of ours (all hold the brand lexicon) is in effect."""

    installed: bool = False


_LEXICON = _Lexicon()


def install_brand_lexicon() -> None:
    """Put the brand lexicon in effect unless a dictionary of ours already is: once per
    process, a MeCab compile in a child process (0.3 s)."""
    with APPLY_LOCK:
        if _LEXICON.installed:
            return
        _LEXICON.installed = True  # a failure is logged once, not retried at every front-end
        # Deleted once loaded: OpenJTalk keeps the file it opened (POSIX), and a server that
        # is killed leaves nothing behind.
        with tempfile.TemporaryDirectory(prefix="hayakoe-lexicon-") as name:
            csv_path, dic_path = Path(name) / "lexicon.csv", Path(name) / "lexicon.dic"
            try:
                install(mecab_rows((), EMPTY_SURFACE), csv_path, dic_path)
            except HayakoeError as err:
                _LOGGER.error("%s; brand names are read as OpenJTalk cuts them", err)


def install(rows: list[list[str]], csv_path: Path, dic_path: Path) -> None:
    """Compile ``rows`` (through ``csv_path``) into ``dic_path`` and put it in effect."""
    compile_rows(rows, csv_path, dic_path)
    try:
        jtalk.use_user_dictionary(dic_path)
    except (OSError, RuntimeError) as err:
        raise HayakoeError(f"Cannot load the compiled user dictionary: {err}") from err
    _LEXICON.installed = True


def compile_rows(rows: list[list[str]], csv_path: Path, dic_path: Path) -> None:
    """Compile ``rows`` (through ``csv_path``, removed after) into ``dic_path``."""
    with csv_path.open("w", encoding="utf-8", newline="") as file:
        csv.writer(file, lineterminator="\n").writerows(rows)
    try:
        jtalk.compile_user_dictionary(csv_path, dic_path)
    finally:
        csv_path.unlink(missing_ok=True)
