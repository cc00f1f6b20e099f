"""Voice downloads started from the Voices page: one at a time on the service's download thread
(they take minutes), with progress read from the files as they grow."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import HayakoeError
from ..voices.catalog import catalog_repository
from ..voices.hub import repo_file_url, resolve_endpoint
from ..voices.layout import SPEAKERS_DIR
from ..voices.remote_file import DownloadOptions, fetch_remote_info
from .workers import Workers

_LOGGER = logging.getLogger(__name__)


@dataclass
class DownloadJob:
    name: str
    folder: Path
    files: list[str]
    total: int | None = None
    state: str = "running"  # running, done, error
    error: str = ""


class VoiceDownloads:
    """The downloads of this page: ``fetch(name)`` installs a voice (blocking) and
    ``finished()`` runs after each, whether it worked or not; both blocking steps run on the
    workers' download thread."""

    def __init__(
        self,
        workers: Workers,
        fetch: Callable[[str], object],
        finished: Callable[[], Awaitable[None]],
    ) -> None:
        self.jobs: dict[str, DownloadJob] = {}
        self._workers = workers
        self._fetch = fetch
        self._finished = finished
        self._tasks: set[asyncio.Task[None]] = set()

    def running(self) -> set[str]:
        return {name for name, job in self.jobs.items() if job.state == "running"}

    def start(self, name: str, folder: Path, files: list[str]) -> DownloadJob:
        """Start downloading ``name`` into ``folder``, or return its download if one runs."""
        running = self.jobs.get(name)
        if running is not None and running.state == "running":
            return running
        job = DownloadJob(name, folder, files)
        self.jobs[name] = job
        task = asyncio.create_task(self._download(job))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return job

    async def _download(self, job: DownloadJob) -> None:
        try:
            job.total = await self._workers.download(remote_total, job.name, job.files)
            await self._workers.download(self._fetch, job.name)
            job.state = "done"
        except (HayakoeError, OSError) as err:
            job.state, job.error = "error", str(err)
            _LOGGER.warning("Download of voice %s failed: %s", job.name, err)
        finally:
            await self._finished()

    def status(self, name: str) -> dict[str, Any] | None:
        job = self.jobs.get(name)
        if job is None:
            return None
        done = 0
        for relative in job.files:
            path = job.folder / relative
            for candidate in (path, path.with_name(path.name + ".part")):
                with contextlib.suppress(OSError):
                    done += candidate.stat().st_size
                    break
        return {"state": job.state, "done": done, "total": job.total, "error": job.error}

    def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()


def remote_total(name: str, files: list[str]) -> int | None:
    """The bytes a voice download will fetch, from the server's answers to HEAD."""
    repo, revision = catalog_repository()
    endpoint = resolve_endpoint()
    total = 0
    for relative in files:
        url = repo_file_url(endpoint, repo, revision, f"{SPEAKERS_DIR}/{name}/{relative}")
        meta = fetch_remote_info(url, DownloadOptions())
        if meta is not None and meta.size is not None:
            total += meta.size
    return total or None
