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

The dictionary installed also holds the brand lexicon (:mod:`.mecab_dictionary`, which makes
the rows).

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

__all__ = [
    "HEADER",
    "Entry",
    "TriedDictionaries",
    "UserDictionary",
    "make_entry",
    "mecab_rows",
    "mecab_surface",
    "parse_entries",
    "user_dictionary_path",
]  # fmt: skip

import contextlib
import csv
import logging
import tempfile
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import HayakoeError
from . import jtalk
from .mecab_dictionary import (
    APPLY_LOCK,
    EMPTY_SURFACE,
    HEADER,
    Entry,
    compile_rows,
    entry_of,
    install,
    install_brand_lexicon,
    make_entry,
    mecab_rows,
    mecab_surface,
)

_LOGGER = logging.getLogger(__name__)


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
            entry = entry_of(fields, number)
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


class TriedDictionaries:
    """Dictionaries of words tried before they are saved (the page's Preview, the readings
    before the engine exists), compiled once per set of words: a compile takes about 0.3 s
    on the one text thread, where a request's text waits behind it, and the page asks again
    with the same words as the user types. The last KEPT stay compiled. One thread at a time
    (the text thread)."""

    KEPT = 4

    def __init__(self) -> None:
        self._folder = tempfile.TemporaryDirectory(prefix="hayakoe-dict-try-")
        self._compiled: OrderedDict[tuple[tuple[str, ...], ...], Path] = OrderedDict()
        self._made = 0

    @contextlib.contextmanager
    def reading_with(self, entries: Sequence[Entry]) -> Iterator[None]:
        """Analyses in this block, on this thread, read with ``entries`` (and the brand
        lexicon) as the user dictionary. The process's dictionary, in effect for every other
        analysis meanwhile, is untouched."""
        with jtalk.reading_with(self._compiled_with(entries)):
            yield

    @property
    def compiled(self) -> list[Path]:
        """The dictionaries kept, the most recently used last."""
        return list(self._compiled.values())

    def _compiled_with(self, entries: Sequence[Entry]) -> Path:
        rows = mecab_rows(tuple(entries), empty_surface=EMPTY_SURFACE)
        key = tuple(tuple(row) for row in rows)
        if (path := self._compiled.get(key)) is not None:
            self._compiled.move_to_end(key)
            return path
        self._made += 1
        folder = Path(self._folder.name)
        path = folder / f"try{self._made}.dic"
        compile_rows(rows, folder / f"try{self._made}.csv", path)
        self._compiled[key] = path
        while len(self._compiled) > self.KEPT:
            _key, oldest = self._compiled.popitem(last=False)
            oldest.unlink(missing_ok=True)
            oldest.with_suffix(".csv").unlink(missing_ok=True)
        return path


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

    def __init__(self, path: Path) -> None:
        self.path = path
        self._data_dir = path.parent
        self._signature: _Signature | None = None
        self._entries: tuple[Entry, ...] = ()

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
        install_brand_lexicon()  # without a file too
        with APPLY_LOCK:
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
        # Compiled, loaded, deleted: OpenJTalk keeps the file it opened (POSIX), so nothing
        # stays behind, even when the server is killed.
        with tempfile.TemporaryDirectory(prefix="hayakoe-dict-") as name:
            rows = mecab_rows(entries, empty_surface=EMPTY_SURFACE)
            install(rows, Path(name) / "user.csv", Path(name) / "user.dic")
