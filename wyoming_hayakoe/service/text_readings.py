"""How the engine will read a text, for the adapters that show or send it: the page's reading
(the rules applied, naming the user dictionary's lines) and the VOICEVOX API's accent phrases.

Both run on the workers' text thread (OpenJTalk is one per process) with the engine's own
front-end, so what they show is what a synthesis of the same text says.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from ..text.accent import AccentPhrase
from ..text.explain import TextReading, read_text
from ..text.frontend import TextFrontend
from ..text.with_reading import sentence_phrases
from .dictionary import read_entries
from .workers import Workers


class TextReadings:
    def __init__(
        self,
        frontend: Callable[[], Awaitable[TextFrontend]],
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
        return await self._workers.read_text(_accent_phrases, frontend, text)


def _explain(frontend: TextFrontend, text: str, dictionary: Path | None) -> TextReading:
    entries = read_entries(dictionary) if dictionary is not None else []
    return read_text(frontend, text, entries)


def _accent_phrases(frontend: TextFrontend, text: str) -> list[AccentPhrase]:
    rewritten = frontend.rewrite(text)
    return [p for _, phrases in sentence_phrases(frontend, rewritten) for p in phrases]
