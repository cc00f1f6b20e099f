"""The engine every voice shares, created once the shared BERT is there (downloaded if needed).

A BERT that cannot be had is kept as unavailable with its reason (availability.py): while the
background retry waits for it, a request is refused at once; otherwise the next request tries
again. It owns no voice and never decides to retry by itself: the service's start does.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable

from ..engine import Engine
from ..voices.store import VoiceStore
from .availability import BERT, Availabilities
from .settings import ServiceSettings
from .workers import Workers

EngineFactory = Callable[..., Engine]


class SharedEngine:
    def __init__(
        self,
        store: VoiceStore,
        settings: ServiceSettings,
        factory: EngineFactory,
        workers: Workers,
        availability: Availabilities,
    ) -> None:
        self._store = store
        self._settings = settings
        self._factory = factory
        self._workers = workers
        self._availability = availability
        self._task: asyncio.Task[Engine] | None = None

    async def get(self, background: bool = False) -> Engine:
        """The engine, created at the first call (``background``: the start's own retry,
        which tries again even while requests are refused)."""
        task = self._task
        if task is not None and task.done() and (task.cancelled() or task.exception()):
            if not background and (refusal := self._availability.refusal(BERT)) is not None:
                raise refusal
            self._task = None
        if self._task is None:
            self._task = asyncio.create_task(self._create())
        # shield: a cancelled request must not cancel the load the others share
        return await asyncio.shield(self._task)

    @property
    def ready(self) -> Engine | None:
        """The engine if it has been created (None: not yet, or its BERT failed)."""
        task = self._task
        if task is None or not task.done() or task.cancelled() or task.exception():
            return None
        return task.result()

    def cancel(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()

    async def _create(self) -> Engine:
        self._availability.loading(BERT)
        try:
            bert_root = await self._workers.load(self._store.ensure_bert)
            settings = self._settings
            engine = await self._workers.load(
                functools.partial(
                    self._factory,
                    bert_root,
                    threads=settings.threads,
                    cache_dir=settings.cache_dir,
                    audio_cache_bytes=settings.audio_cache_bytes,
                    user_dictionary=settings.user_dictionary,
                    english_model=settings.english_model,
                ),
            )
        except Exception as err:
            self._availability.unavailable(BERT, err)
            raise
        self._availability.available(BERT)
        return engine
