"""The one place where the web page meets the rest of the server.

Everything the pages show or change goes through :class:`WebBackend`: the voice list (the
service's: the voices Home Assistant is offered), synthesis (the service's queue, CPU slot and
worker threads), the reading (the text front-end and the user dictionary) and voice downloads
and removals. Blocking work runs on worker threads, never on the event loop.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ..errors import TextError, UnknownVoiceError
from ..progress import reporting_to
from ..service import ResolvedVoice, TtsService
from ..text.explain import read_text
from ..text.frontend import TextFrontend
from ..voices.catalog import is_valid_voice_name
from ..voices.layout import SPEAKERS_DIR
from ..service.dictionary import read_entries
from ..service.voice_downloads import DownloadJob, VoiceDownloads
from .rewrites import reading_json
from .voice_list import voice_list

_LOGGER = logging.getLogger(__name__)


class WebBackend:
    def __init__(self, service: TtsService) -> None:
        self.service = service
        self.store = service.store
        # Uploads go where users keep their own voices: the first data dir (in the add-on,
        # the backed-up /share folder); downloads go to the download dir.
        self.upload_dir = self.store.data_dirs[0]
        self.dictionary_path: Path | None = service.settings.user_dictionary
        self._text_pool = ThreadPoolExecutor(1, thread_name_prefix="hayakoe-web-text")
        self._io_pool = ThreadPoolExecutor(2, thread_name_prefix="hayakoe-web-io")
        self._downloads = VoiceDownloads(self._download_voice, service.refresh_voices)
        # One dictionary edit at a time, whichever listener (page, VOICEVOX API) it came from.
        self.dictionary_lock = asyncio.Lock()

    def _download_voice(self, name: str) -> Path:
        """On the download thread: the page's download shows in the service's progress."""
        with reporting_to(self.service.progress):
            return self.store.ensure_voice(name)

    async def close(self) -> None:
        self._downloads.close()
        self._text_pool.shutdown(wait=False, cancel_futures=True)
        self._io_pool.shutdown(wait=False, cancel_futures=True)

    async def in_thread(self, func: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._io_pool, func, *args)

    async def in_text_thread(self, func: Callable[..., Any], *args: Any) -> Any:
        """``func(*args)`` on the thread that reads texts (OpenJTalk is one per process)."""
        return await asyncio.get_running_loop().run_in_executor(self._text_pool, func, *args)

    # ----- voices -----

    async def voices(self) -> list[dict[str, Any]]:
        await self.service.refresh_voices()  # a voice copied in since shows, here and in HA
        running = self._downloads.running()
        return list(await self.in_thread(voice_list, self.service, running, self._deletable))

    def _deletable(self, name: str, folder: Path) -> bool:
        """Downloaded and uploaded voices may go, but never the default voice."""
        ours = {(root / SPEAKERS_DIR / name).resolve() for root in self._managed_dirs()}
        return (
            name != self.service.settings.default_voice
            and not folder.is_symlink()
            and folder.resolve() in ours
        )

    def _managed_dirs(self) -> tuple[Path, Path]:
        return (self.store.download_dir, self.upload_dir)

    async def delete_voice(self, name: str) -> None:
        """Remove a voice from the download dir: renamed away at once, then deleted."""
        if not is_valid_voice_name(name):
            raise UnknownVoiceError(f"invalid voice name {name!r}")
        folder = self.store.installed().get(name)
        if folder is None:
            raise UnknownVoiceError(f"voice {name!r} is not installed")
        if not self._deletable(name, folder):
            raise PermissionError(
                f"voice {name!r} cannot be deleted here: it is the default voice or it is "
                "not in the download directory"
            )
        trash = folder.with_name(f".deleted-{name}-{uuid.uuid4().hex[:8]}")
        await self.in_thread(folder.rename, trash)
        await self.in_thread(shutil.rmtree, trash, True)
        await self.service.refresh_voices()
        _LOGGER.info("Deleted voice %s from %s", name, folder)

    def start_download(self, name: str) -> DownloadJob:
        catalog = self.store.catalog
        if name not in catalog:
            raise UnknownVoiceError(f"voice {name!r} is not in the catalog")
        if name in self.store.installed():
            raise FileExistsError(f"voice {name!r} is already installed")
        if self.service.settings.local_files_only:
            raise PermissionError("downloads are off (--local-files-only)")
        folder = self.store.download_dir / SPEAKERS_DIR / name
        return self._downloads.start(name, folder, [f.path for f in catalog[name].files])

    def download_status(self, name: str) -> dict[str, Any] | None:
        return self._downloads.status(name)

    # ----- synthesis -----

    async def resolve(self, voice: str, style: str | None) -> ResolvedVoice:
        """The voice and style, loading the voice if needed; never downloads one."""
        await self.service.refresh_voices()
        if voice not in self.service.voice_listing.installed:
            # The page never downloads as a side effect: that is the Voices page's button.
            raise UnknownVoiceError(f"voice {voice!r} is not installed")
        return await self.service.resolve(voice, style)

    def check_text(self, text: str) -> str:
        """The text, if there is one and the service takes its length; TextError otherwise."""
        if not text.strip():
            raise TextError("The text is empty")
        self.service.check_text_length(len(text))
        return text

    # ----- reading -----

    async def reading(self, text: str) -> dict[str, Any]:
        self.check_text(text)
        loop = asyncio.get_running_loop()
        frontend = await self.service.text_frontend()
        path = self.dictionary_path
        return await loop.run_in_executor(self._text_pool, _read, frontend, text, path)

    async def refresh_dictionary(self) -> None:
        """Apply an edit of the user dictionary now (the engine's copy: compiled once)."""
        await self.service.text_frontend()


def _read(frontend: TextFrontend, text: str, dictionary: Path | None) -> dict[str, Any]:
    """The reading, its rules naming the lines of the user dictionary's words."""
    entries = read_entries(dictionary) if dictionary is not None else []
    return reading_json(read_text(frontend, text, entries))
