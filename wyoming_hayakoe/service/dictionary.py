"""Edits of the user dictionary file, line by line, saved atomically, one at a time.

Comments, blank lines and lines the server skips stay as they are; an edit replaces the
entry's own line, a new word is appended. The new file is written next to the old one,
flushed and renamed over it, so the server (which reloads the file when it changes) never
reads half a file. :class:`DictionaryFile` runs the edits the adapters ask for (the
VOICEVOX API's words) on the workers' file threads and has the engine compile the result
before the caller answers.
"""

from __future__ import annotations

import asyncio
import contextlib
import csv
import io
import os
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

from ..text.user_dict import HEADER, Entry, make_entry, parse_entries
from .workers import Workers


class DictionaryEditError(ValueError):
    """The requested word is not valid (the message says why)."""


class DictionaryFile:
    """The user dictionary file (None: there is none), edited by one caller at a time."""

    def __init__(
        self, path: Path | None, workers: Workers, compile_: Callable[[], Awaitable[object]]
    ) -> None:
        self.path = path
        self._workers = workers
        self._compile = compile_
        # One edit at a time, whichever listener (page, VOICEVOX API) it came from.
        self._editing = asyncio.Lock()

    async def entries(self) -> list[Entry]:
        """The words in the file (none without a file)."""
        if self.path is None:
            return []
        return await self._workers.files(read_entries, self.path)

    async def change(self, edit: Callable[[Path], object]) -> None:
        """``edit(path)`` of the file on a file thread, then compiled before returning."""
        path = self.path
        if path is None:
            raise PermissionError("the user dictionary is not available (see the server log)")
        async with self._editing:
            await self._workers.files(edit, path)
        await self._compile()


def read_entries(path: Path) -> list[Entry]:
    return parse_entries(_read(path), str(path))


def validate(surface: str, reading: str, accent: str) -> Entry:
    """The entry the server will load for these fields, or DictionaryEditError."""
    if any(char in field for field in (surface, reading, accent) for char in "\r\n"):
        raise DictionaryEditError("a field must not hold a line break")
    try:
        return make_entry(surface, reading, accent)
    except ValueError as err:
        raise DictionaryEditError(str(err)) from None


def save_entry(path: Path, entry: Entry, replace: str | None = None) -> None:
    """Add ``entry``, or put it in place of the word ``replace`` (and of its own surface)."""
    _save(path, [(entry, replace)], override=True)


def import_entries(path: Path, entries: list[Entry], override: bool) -> None:
    """Add the words of an imported dictionary in one write. A word whose surface the file
    has already replaces that line with ``override``, and is left out without."""
    _save(path, [(entry, None) for entry in entries], override)


def _save(path: Path, changes: list[tuple[Entry, str | None]], override: bool) -> None:
    text = _read(path)
    current = {e.surface: e for e in parse_entries(text, str(path))}
    placed: dict[int, str] = {}  # line number -> the new line written there
    dropped: set[int] = set()
    appended: dict[str, str] = {}  # surface -> new line, for words the file does not have
    for entry, replace in changes:
        if entry.surface in current and not override:
            continue
        new_line = _csv_line(entry.surface, entry.reading, entry.accent)
        old = [current[s].line for s in (replace, entry.surface) if s is not None and s in current]
        if old:
            placed[old[0]] = new_line
            dropped.update(line for line in old[1:] if line not in placed)
        else:
            appended[entry.surface] = new_line
    result: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if number in placed:
            result.append(placed[number])
        elif number not in dropped:
            result.append(line)
    if appended and not result:
        result.append(",".join(HEADER))
    result.extend(appended.values())
    _write_atomically(path, "\n".join(result) + "\n")


def delete_entry(path: Path, surface: str) -> bool:
    """Remove the word ``surface``; False if the file has no such word."""
    text = _read(path)
    current = {e.surface: e for e in parse_entries(text, str(path))}
    if surface not in current:
        return False
    line = current[surface].line
    lines = [text for number, text in enumerate(text.splitlines(), 1) if number != line]
    _write_atomically(path, "\n".join(lines) + "\n")
    return True


def _read(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8-sig", errors="replace")
    except FileNotFoundError:
        return ""


def _csv_line(surface: str, reading: str, accent: int) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="").writerow([surface, reading, str(accent)])
    return buffer.getvalue()


def _write_atomically(path: Path, text: str) -> None:
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        with contextlib.suppress(FileNotFoundError):
            os.chmod(temporary, path.stat().st_mode & 0o777)
        if not path.exists():
            os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
