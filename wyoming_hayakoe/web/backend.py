"""The one place where the web page meets the rest of the server.

Everything the pages show or change goes through :class:`WebBackend`: the voice list (the
service's: the voices Home Assistant is offered), synthesis (the service's queue, its turns on
the CPU and worker threads), the reading (the text front-end and the user dictionary) and
voice downloads, uploads and removals (the service's voice management). Blocking work runs on
the service's worker threads, never on the event loop.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import TextError
from ..service import TtsService, voice_list
from .rewrites import reading_json


class WebBackend:
    def __init__(self, service: TtsService) -> None:
        self.service = service

    async def in_thread(self, func: Callable[..., Any], *args: Any) -> Any:
        """``func(*args)`` on one of the service's file threads."""
        return await self.service.workers.files(func, *args)

    # ----- voices -----

    async def voices(self) -> list[dict[str, Any]]:
        """The Voices page's list (the service's)."""
        await self.service.refresh_voices()  # a voice copied in since shows, here and in HA
        running = self.service.voice_management.downloading()
        return list(await self.in_thread(voice_list, self.service, running))

    # ----- text -----

    def check_text(self, text: str) -> str:
        """The text, if there is one; TextError otherwise (its length is the service's to
        check, as for every request)."""
        if not text.strip():
            raise TextError("The text is empty")
        return text

    # ----- reading -----

    async def reading(self, text: str) -> dict[str, Any]:
        self.check_text(text)
        return reading_json(await self.service.readings.explain(text))
