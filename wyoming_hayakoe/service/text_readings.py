"""How the engine will read a text, for the adapters that show or send it: the page's reading
(the rules applied, naming the user dictionary's lines) and the VOICEVOX API's accent phrases.

Both run on the workers' text thread (OpenJTalk is one per process) with the engine's own
front-end, so what they show is what a synthesis of the same text says. Before there is an
engine (its shared BERT still downloading, or out of reach) they read with a front-end of their
own and the dictionary file's words: the same rules and words, no BERT needed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..text.accent import AccentPhrase, PhraseReading, spoken_phrase
from ..text.aquestalk import parse_aquestalk
from ..text.explain import TextReading, read_text
from ..text.frontend import TextFrontend
from ..text.user_dict import Entry, TriedDictionaries
from ..text.with_reading import sentence_phrases
from .dictionary import read_entries
from .request import check_length
from .workers import Workers


class TextReadings:
    def __init__(
        self,
        frontend: Callable[[], Awaitable[TextFrontend | None]],
        workers: Workers,
        dictionary: Path | None,
        english_model: bool = True,
        max_text_length: int | None = None,
    ) -> None:
        """``english_model``: the server's, for the front-end read with before there is an
        engine (the engine's has it); a text over ``max_text_length`` is refused."""
        self._max_text_length = max_text_length
        self._frontend = frontend
        self._workers = workers
        self._dictionary = dictionary
        self._english_model = english_model
        self._tried = TriedDictionaries()
        """Words read before the engine exists, or before they are saved: compiled once."""

    async def explain(self, text: str) -> TextReading:
        """The reading of ``text``, its rules naming the lines of the user dictionary's words."""
        self._check(text)
        frontend = await self._frontend()
        return await self._workers.read_text(_explain, self._reading(frontend), text)

    async def accent_phrases(
        self, text: str, english_model: bool | None = None
    ) -> list[AccentPhrase]:
        """The accent phrases of ``text`` (rewritten as a request's), sentence after sentence;
        ``english_model``: as the server reads unless given (VOICEVOX's
        ``enable_katakana_english``)."""
        self._check(text)
        frontend = await self._frontend()
        reading = self._reading(frontend)
        return await self._workers.read_text(_accent_phrases, reading, text, english_model)

    async def accent_phrases_with(self, text: str, word: Entry) -> list[AccentPhrase]:
        """The accent phrases of ``text`` as they would be with ``word`` in the dictionary
        (in place of a word of the same surface): nothing is written, and every other reading
        meanwhile goes on with the dictionary in effect."""
        self._check(text)
        reading = self._reading(None)
        return await self._workers.read_text(_accent_phrases_with, reading, text, word)

    def kana_phrases(self, kana: str) -> list[AccentPhrase]:
        """The accent phrases VOICEVOX's AquesTalk-like notation writes (AquesTalkError where
        it is not that notation)."""
        self._check(kana)
        return self.spoken(parse_aquestalk(kana))

    @staticmethod
    def spoken(readings: Sequence[PhraseReading]) -> list[AccentPhrase]:
        """The phrases ``readings`` describe, read from their kana and accents (TextError
        names the first bad mora)."""
        return [spoken_phrase(reading, i) for i, reading in enumerate(readings)]

    def _check(self, text: str) -> None:
        if self._max_text_length is not None:
            check_length(text, self._max_text_length)

    def _reading(self, frontend: TextFrontend | None) -> _Reading:
        return _Reading(frontend, self._tried, self._dictionary, self._english_model)


@dataclass(frozen=True)
class _Reading:
    """What a reading reads with: the engine's front-end (its dictionary in effect), or
    without an engine a front-end of its own with the dictionary file's words."""

    frontend: TextFrontend | None
    tried: TriedDictionaries
    dictionary: Path | None
    english_model: bool

    def saved(self) -> list[Entry]:
        return read_entries(self.dictionary) if self.dictionary is not None else []

    @contextmanager
    def front_end(self, entries: list[Entry]) -> Iterator[TextFrontend]:
        """The engine's front-end, or one reading with ``entries``."""
        if self.frontend is not None:
            yield self.frontend
            return
        with self.tried.reading_with(entries):
            yield TextFrontend(keep_words=_surfaces(entries), smart_home=True,
                               english_model=self.english_model)  # fmt: skip


def _explain(reading: _Reading, text: str) -> TextReading:
    entries = reading.saved()
    with reading.front_end(entries) as frontend:
        return read_text(frontend, text, entries)


def _surfaces(entries: list[Entry]) -> frozenset[str]:
    return frozenset(entry.surface for entry in entries)


def _accent_phrases_with(reading: _Reading, text: str, word: Entry) -> list[AccentPhrase]:
    saved = reading.saved()
    entries = [entry for entry in saved if entry.surface != word.surface] + [word]
    with reading.front_end(entries) as frontend:
        return _phrases(frontend, text)


def _accent_phrases(
    reading: _Reading, text: str, english_model: bool | None = None
) -> list[AccentPhrase]:
    entries = reading.saved() if reading.frontend is None else []  # the engine's are in effect
    with reading.front_end(entries) as frontend:
        return _phrases(frontend, text, english_model)


def _phrases(
    frontend: TextFrontend, text: str, english_model: bool | None = None
) -> list[AccentPhrase]:
    rewritten = frontend.rewrite(text, english_model)
    return [p for _, phrases in sentence_phrases(frontend, rewritten) for p in phrases]
