"""Voices installed and removed by hand: the page's downloads from the catalog, uploads and
removals, on the service's worker threads.

Uploads go where users keep their own voices: the first data dir (in the add-on, the
backed-up /share folder); downloads go to the download dir. Only those two hold voices that
may be removed here, and never the default voice.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

from ..errors import UnknownVoiceError
from ..voices.catalog import is_valid_voice_name
from ..voices.layout import SPEAKERS_DIR
from ..voices.store import VoiceStore
from .voice_downloads import DownloadJob, VoiceDownloads
from .voice_uploads import UploadLimits, install_upload
from .workers import Workers

_LOGGER = logging.getLogger(__name__)


class VoiceManagement:
    def __init__(
        self,
        store: VoiceStore,
        workers: Workers,
        default_voice: str,
        downloads_allowed: bool,
        refresh_voices: Callable[[], Awaitable[None]],
    ) -> None:
        self._store = store
        self._workers = workers
        self._default_voice = default_voice
        self._downloads_allowed = downloads_allowed
        self._refresh_voices = refresh_voices
        self.upload_dir = store.data_dirs[0]
        self._downloads = VoiceDownloads(workers, store.ensure_voice, refresh_voices)
        self._placing = asyncio.Lock()

    def deletable(self, name: str, folder: Path) -> bool:
        """Downloaded and uploaded voices may go, but never the default voice."""
        managed = (self._store.download_dir, self.upload_dir)
        ours = {(root / SPEAKERS_DIR / name).resolve() for root in managed}
        return name != self._default_voice and not folder.is_symlink() and folder.resolve() in ours

    async def delete(self, name: str) -> None:
        """Remove a voice from the download dir: renamed away at once, then deleted."""
        if not is_valid_voice_name(name):
            raise UnknownVoiceError(f"invalid voice name {name!r}")
        folder = self._store.installed().get(name)
        if folder is None:
            raise UnknownVoiceError(f"voice {name!r} is not installed")
        if not self.deletable(name, folder):
            raise PermissionError(
                f"voice {name!r} cannot be deleted here: it is the default voice or it is "
                "not in the download directory"
            )
        trash = folder.with_name(f".deleted-{name}-{uuid.uuid4().hex[:8]}")
        await self._workers.files(folder.rename, trash)
        await self._workers.files(shutil.rmtree, trash, True)
        await self._refresh_voices()
        _LOGGER.info("Deleted voice %s from %s", name, folder)

    def upload_file(self) -> Path:
        """Where an upload is received: a new hidden file beside the uploaded voices (the store
        skips names starting with a dot); the caller removes it when done."""
        return self.upload_dir / f".upload-{uuid.uuid4().hex}"

    async def install_upload(
        self, upload: Path, filename: str, name: str, limits: UploadLimits
    ) -> str:
        """Check a received upload and place it as a voice, one placement at a time; returns
        the voice's name (UploadError, with its HTTP status, if it is refused)."""
        async with self._placing:
            voice = await self._workers.files(
                install_upload, upload, filename, name, self.upload_dir, limits
            )
        await self._refresh_voices()
        return voice

    def start_download(self, name: str) -> DownloadJob:
        """Download a catalog voice in the background; :meth:`download_status` follows it."""
        catalog = self._store.catalog
        if name not in catalog:
            raise UnknownVoiceError(f"voice {name!r} is not in the catalog")
        if name in self._store.installed():
            raise FileExistsError(f"voice {name!r} is already installed")
        if not self._downloads_allowed:
            raise PermissionError("downloads are off (--local-files-only)")
        folder = self._store.download_dir / SPEAKERS_DIR / name
        return self._downloads.start(name, folder, [f.path for f in catalog[name].files])

    def download_status(self, name: str) -> dict[str, object] | None:
        return self._downloads.status(name)

    def downloading(self) -> set[str]:
        """The voices whose download is running."""
        return self._downloads.running()

    def close(self) -> None:
        self._downloads.close()
