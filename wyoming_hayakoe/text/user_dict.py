"""The user dictionary: words the voice must read the user's way, from a file in the data dir.

File format (``user_dict.csv``, UTF-8, comma-separated; ``#`` starts a comment line)::

    surface,reading,accent
    玄関,ゲンカン,1
    Sonos,ソノス,1
    HayaKoe,ハヤコエ,0

- ``surface``: the word as it is written in the text (Latin letters, kana, kanji; no commas);
  a name with spaces (``Living Room``) is matched as written.
- ``reading``: its pronunciation in katakana (hiragana is accepted), e.g. ``ハヤコエ``.
- ``accent``: the accent nucleus, the mora after which the pitch falls: ``0`` for a flat word
  (heiban), ``1`` for a fall after the first mora (``ソ\\ノス``), up to the number of morae.

The header line is optional. A bad line is logged with its line number and skipped; the
other lines still load. Entries are compiled with OpenJTalk's MeCab dictionary compiler into
a temporary file (written, then renamed into place) and loaded through pyopenjtalk's user
dictionary support (``update_global_jtalk_with_user_dict``). Each entry wins over OpenJTalk's
own words for the same characters.

Thread safety: pyopenjtalk keeps one OpenJTalk instance per process, so the dictionary is
process-wide. :meth:`UserDictionary.refresh` compiles and swaps under a process-wide lock, so
refreshes never interleave. pyopenjtalk installs the new instance with one assignment while
holding the old instance's lock, and every call of it (``run_frontend``) runs whole under the
lock of the instance it started with: an analysis never sees half a dictionary. A request
already being read when another one reloads may read its later sentences with the new words;
after a ``refresh()`` that returned True the caller rebuilds its front-end with
:meth:`~wyoming_hayakoe.text.frontend.TextFrontend.with_keep_words` (:attr:`surfaces`).
"""

from __future__ import annotations

import contextlib
import csv
import logging
import tempfile
import threading
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from ..errors import HayakoeError
from . import jtalk
from .kana import KanaError, kana_to_phonemes
from .loanwords import EnglishReader
from .normalize import normalize_text
from .smarthome import reference_keep_words

_LOGGER = logging.getLogger(__name__)

_APPLY_LOCK = threading.Lock()
"""pyopenjtalk's dictionary is one per process: so is the lock around changing it."""

_EMPTY_SURFACE = "\ue000"
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


def parse_entries(text: str, source: str) -> list[Entry]:
    """The entries of a user dictionary file; bad lines are logged (with their number) and
    skipped. A surface given twice keeps its last line."""
    entries: dict[str, Entry] = {}
    header_allowed = True
    for number, line in enumerate(text.removeprefix("\ufeff").splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = [field.strip() for field in next(csv.reader([line]))]
        if header_allowed and tuple(f.lower() for f in fields) == HEADER:
            header_allowed = False
            continue
        header_allowed = False
        try:
            entry = _entry(fields, number)
        except ValueError as err:
            _LOGGER.warning("%s line %d: %s; line skipped: %r", source, number, err, line)
            continue
        earlier = entries.pop(entry.surface, None)
        if earlier is not None:
            _LOGGER.warning(
                "%s line %d: %r was already on line %d; the later line wins",
                source, number, entry.surface, earlier.line,
            )  # fmt: skip
        entries[entry.surface] = entry
    return list(entries.values())


def make_entry(surface: str, reading: str, accent: str, line: int = 0) -> Entry:
    """The entry these fields make, as a file line would; ValueError says what is wrong."""
    return _entry([surface.strip(), reading.strip(), accent.strip()], line)


def _entry(fields: list[str], line: int) -> Entry:
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
    reading = _katakana(fields[1])
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


def _katakana(text: str) -> str:
    """Hiragana to katakana (the reading may be written in either)."""
    return "".join(chr(ord(c) + 0x60) if "ぁ" <= c <= "ゖ" else c for c in text)


def mecab_surface(surface: str) -> str:
    """The surface as MeCab will meet it in the text: normalized by the front-end (digits as
    kanji, spaces gone, its Latin letters kept) and in full-width characters."""
    joined = "".join(surface.split())  # as the smart-home layer passes it on
    normalized = normalize_text(joined, EnglishReader(reference_keep_words([joined])))
    return normalized.translate(_TO_FULL_WIDTH)


def mecab_rows(entries: tuple[Entry, ...], empty_surface: str = "") -> list[list[str]]:
    """MeCab dictionary rows (OpenJTalk's 15 columns) of the entries."""
    rows = [(mecab_surface(e.surface), e.reading, f"{e.accent}/{e.morae}") for e in entries]
    rows = rows or [(empty_surface, "ア", "0/1")]
    context = str(_CONTEXT_ID)
    return [
        [surface, context, context, str(_COST), *_PROPER_NOUN, surface, reading, reading, acc, "*"]
        for surface, reading, acc in rows
    ]


def user_dictionary_path(data_dir: Path, name: str) -> Path:
    """``data_dir / name``, refusing any name that would lead out of the data dir."""
    if not name or Path(name).name != name or name in (".", ".."):
        raise HayakoeError(f"User dictionary name {name!r} must be a plain file name")
    path = data_dir / name
    _check_inside(path, data_dir)
    return path


def _check_inside(path: Path, data_dir: Path) -> None:
    resolved, root = path.resolve(), data_dir.resolve()
    if resolved != root and root not in resolved.parents:
        raise HayakoeError(f"User dictionary {path} leads out of the data dir {data_dir}")


@dataclass(frozen=True)
class _Signature:
    """What changes when the file is edited, replaced or removed."""

    exists: bool
    mtime_ns: int = 0
    size: int = 0
    inode: int = 0
    error: str = ""


class UserDictionary:
    """The user dictionary file of one data dir, applied to pyopenjtalk and kept current.

    Create it with :func:`user_dictionary_path`; call :meth:`refresh` at start-up and before
    each synthesis (it only stats the file unless it changed). A missing file means no user
    words. Use one instance per process: pyopenjtalk holds a single dictionary.
    """

    def __init__(self, path: Path, work_dir: Path | None = None) -> None:
        self.path = path
        self._data_dir = path.parent
        self._own_dir = None if work_dir else tempfile.TemporaryDirectory(prefix="hayakoe-dict-")
        self._work_dir = work_dir or Path(self._own_dir.name)  # type: ignore[union-attr]
        self._signature: _Signature | None = None
        self._entries: tuple[Entry, ...] = ()
        self._generation = 0
        self._current: Path | None = None

    @property
    def entries(self) -> tuple[Entry, ...]:
        """The entries in effect (bad lines left out)."""
        return self._entries

    @property
    def surfaces(self) -> frozenset[str]:
        """The surfaces in effect, to pass as ``keep_words`` to the text front-end."""
        return frozenset(entry.surface for entry in self._entries)

    def refresh(self) -> bool:
        """Reload if the file changed since the last call; True if the words in effect changed."""
        with _APPLY_LOCK:
            signature = self._stat()
            if signature == self._signature:
                return False
            self._signature = signature
            if signature.error:
                _LOGGER.error("Cannot use the user dictionary %s: %s", self.path, signature.error)
            entries = self._read() if signature.exists else ()
            if entries == self._entries:
                return False
            try:
                self._apply(entries)
            except HayakoeError as err:
                _LOGGER.error("%s; keeping the words loaded before", err)
                return False
            self._entries = entries
            _LOGGER.info("User dictionary %s: %d words in effect", self.path, len(entries))
            return True

    def close(self) -> None:
        """Delete the compiled files (the words stay in effect until the process ends)."""
        if self._own_dir is not None:
            self._own_dir.cleanup()

    def _stat(self) -> _Signature:
        try:
            _check_inside(self.path, self._data_dir)
            stat = self.path.stat()
        except FileNotFoundError:
            return _Signature(False)
        except (OSError, HayakoeError) as err:
            return _Signature(False, error=str(err))
        return _Signature(True, stat.st_mtime_ns, stat.st_size, stat.st_ino)

    def _read(self) -> tuple[Entry, ...]:
        try:
            raw = self.path.read_bytes()
        except OSError as err:
            _LOGGER.error("Cannot read the user dictionary %s: %s", self.path, err)
            return self._entries
        # A line that is not UTF-8 gets U+FFFD characters and is reported on its own.
        text = raw.decode("utf-8-sig", errors="replace")
        return tuple(parse_entries(text, str(self.path)))

    def _apply(self, entries: tuple[Entry, ...]) -> None:
        self._generation += 1
        csv_path = self._work_dir / f"user-{self._generation}.csv"
        dic_path = self._work_dir / f"user-{self._generation}.dic"
        rows = mecab_rows(entries, empty_surface=_EMPTY_SURFACE)
        with csv_path.open("w", encoding="utf-8", newline="") as file:
            csv.writer(file, lineterminator="\n").writerows(rows)
        try:
            jtalk.compile_user_dictionary(csv_path, dic_path)
            jtalk.use_user_dictionary(dic_path)
        except (OSError, RuntimeError) as err:
            raise HayakoeError(f"Cannot load the compiled user dictionary: {err}") from err
        finally:
            csv_path.unlink(missing_ok=True)
        previous, self._current = self._current, dic_path
        if previous is not None:
            with contextlib.suppress(OSError):  # POSIX: OpenJTalk keeps what it has open
                previous.unlink()
