"""The service's worker threads, counted while busy: one for synthesis, two for loading, one
that reads texts (OpenJTalk is one per process), two for files (uploads, the dictionary file,
removals) and one for the page's voice downloads (one at a time).

Separate pools so a long download never holds up synthesis, and vice versa. Nothing that
blocks (disk scans, downloads, ONNX sessions, synthesis) runs on the event loop. Long work on
these threads (downloads, compiles) reports its progress into the service's board, and the
compile children it starts stop while requests are synthesized (foreground.py).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from ..foreground import Foreground, giving_way_to
from ..progress import ProgressBoard, reporting_to

_T = TypeVar("_T")


class Workers:
    def __init__(self, progress: ProgressBoard, foreground: Foreground) -> None:
        self._progress = progress
        self._foreground = foreground
        self._synthesis = ThreadPoolExecutor(1, thread_name_prefix="hayakoe-synth")
        self._loading = ThreadPoolExecutor(2, thread_name_prefix="hayakoe-load")
        self._text = ThreadPoolExecutor(1, thread_name_prefix="hayakoe-text")
        self._files = ThreadPoolExecutor(2, thread_name_prefix="hayakoe-files")
        self._download = ThreadPoolExecutor(1, thread_name_prefix="hayakoe-download")
        self._busy_threads = 0
        self._busy_lock = threading.Lock()

    async def load(self, func: Callable[..., _T], *args: object) -> _T:
        """``func(*args)`` on a loading thread."""
        return await self._submit(self._loading, func, *args)

    async def read_text(self, func: Callable[..., _T], *args: object) -> _T:
        """``func(*args)`` on the text thread, where the adapters' readings and the requests'
        texts are prepared one at a time, in the order they were asked."""
        return await self._submit(self._text, func, *args)

    async def files(self, func: Callable[..., _T], *args: object) -> _T:
        """``func(*args)`` on a file thread (short reads and writes, removals)."""
        return await self._submit(self._files, func, *args)

    async def download(self, func: Callable[..., _T], *args: object) -> _T:
        """``func(*args)`` on the download thread: one voice download at a time."""
        return await self._submit(self._download, func, *args)

    async def synthesize(self, func: Callable[..., _T], *args: object) -> _T:
        """``func(*args)`` on the synthesis thread."""
        return await self._submit(self._synthesis, func, *args)

    def start_synthesis(self, func: Callable[..., _T], *args: object) -> asyncio.Future[_T]:
        """``func(*args)`` on the synthesis thread, as a future the caller may leave pending."""
        return self._submit(self._synthesis, func, *args)

    def _submit(
        self, pool: ThreadPoolExecutor, func: Callable[..., _T], *args: object
    ) -> asyncio.Future[_T]:
        loop = asyncio.get_running_loop()
        return loop.run_in_executor(pool, self._counted, func, *args)

    def _counted(self, func: Callable[..., _T], *args: object) -> _T:
        with self._busy_lock:
            self._busy_threads += 1
        try:
            with reporting_to(self._progress), giving_way_to(self._foreground):
                return func(*args)
        finally:
            with self._busy_lock:
                self._busy_threads -= 1

    @property
    def busy(self) -> bool:
        """True while a worker thread is still inside the engine or a download."""
        with self._busy_lock:
            return self._busy_threads > 0

    def shutdown(self) -> None:
        """Take no more work; threads still inside ONNX Runtime are not waited for."""
        for pool in (self._synthesis, self._loading, self._text, self._files, self._download):
            pool.shutdown(wait=False, cancel_futures=True)
