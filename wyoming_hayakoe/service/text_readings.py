"""How the engine will read a text, for the adapters that show or send it: the page's reading
(the rules applied, naming the user dictionary's lines) and the VOICEVOX API's accent phrases.

Both run on the workers' text thread (OpenJTalk is one per process) with the engine's own
front-end, so what they show is what a synthesis of the same text says. Before there is an
engine (its shared BERT still downloading, or out of reach) they read with a front-end of their
own and the dictionary file's words: the same rules and words, no BERT needed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ..text.accent import AccentPhrase
from ..text.explain import TextReading, read_text
from ..text.frontend import TextFrontend
from ..text.user_dict import Entry, reading_with_entries
from ..text.with_reading import sentence_phrases
from .dictionary import read_entries
from .workers import Workers


class TextReadings:
    def __init__(
        self,
        frontend: Callable[[], Awaitable[TextFrontend | None]],
        workers: Workers,
        dictionary: Path | None,
    ) -> None:
        self._frontend = frontend
        self._workers = workers
        self._dictionary = dictionary

    async def explain(self, text: str) -> TextReading:
        """The reading of ``text``, its rules naming the lines of the user dictionary's words."""
        frontend = await self._frontend()
        return await self._workers.read_text(_explain, frontend, text, self._dictionary)

    async def accent_phrases(self, text: str) -> list[AccentPhrase]:
        """The accent phrases of ``text`` (rewritten as a request's), sentence after sentence."""
        frontend = await self._frontend()
        return await self._workers.read_text(_accent_phrases, frontend, text, self._dictionary)

    async def accent_phrases_with(self, text: str, word: Entry) -> list[AccentPhrase]:
        """The accent phrases of ``text`` as they would be with ``word`` in the dictionary
        (in place of a word of the same surface): nothing is written, and every other reading
        meanwhile goes on with the dictionary in effect."""
        return await self._workers.read_text(_accent_phrases_with, text, self._dictionary, word)


def _explain(frontend: TextFrontend | None, text: str, dictionary: Path | None) -> TextReading:
    entries = _saved(dictionary)
    with _reading_with(frontend, entries) as reading:
        return read_text(reading, text, entries)


def _saved(dictionary: Path | None) -> list[Entry]:
    return read_entries(dictionary) if dictionary is not None else []


@contextmanager
def _reading_with(frontend: TextFrontend | None, entries: list[Entry]) -> Iterator[TextFrontend]:
    """``frontend`` (the engine's, its dictionary in effect), or without an engine a front-end
    of its own reading with ``entries``."""
    if frontend is not None:
        yield frontend
        return
    with reading_with_entries(entries):
        yield TextFrontend(keep_words=_surfaces(entries), smart_home=True)


def _surfaces(entries: list[Entry]) -> frozenset[str]:
    return frozenset(entry.surface for entry in entries)


def _accent_phrases_with(text: str, dictionary: Path | None, word: Entry) -> list[AccentPhrase]:
    entries = [entry for entry in _saved(dictionary) if entry.surface != word.surface] + [word]
    with _reading_with(None, entries) as reading:
        return _phrases(reading, text)


def _accent_phrases(
    frontend: TextFrontend | None, text: str, dictionary: Path | None
) -> list[AccentPhrase]:
    entries = _saved(dictionary) if frontend is None else []  # the engine's are in effect
    with _reading_with(frontend, entries) as reading:
        return _phrases(reading, text)


def _phrases(frontend: TextFrontend, text: str) -> list[AccentPhrase]:
    rewritten = frontend.rewrite(text)
    return [p for _, phrases in sentence_phrases(frontend, rewritten) for p in phrases]
