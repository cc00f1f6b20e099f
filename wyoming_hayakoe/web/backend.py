"""The one place where the web page meets the rest of the server.

Everything the pages show or change goes through :class:`WebBackend`: the voice list (store
and catalog), synthesis (the service's queue, CPU slot and worker threads), the reading (the
text front-end and the user dictionary) and voice downloads and removals. Blocking work runs
on worker threads, never on the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import shutil
import uuid
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..engine import PcmPiece
from ..errors import HayakoeError, TextError, UnknownVoiceError
from ..server.service import ResolvedVoice, TtsService
from ..text.accent import accent_phrases
from ..text.frontend import TextFrontend
from ..text.g2p import g2p
from ..text.sentences import split_for_synthesis
from ..text.user_dict import UserDictionary
from ..voices.catalog import catalog_repository, is_valid_voice_name
from ..voices.download import DownloadOptions, fetch_remote_info
from ..voices.hub import repo_file_url, resolve_endpoint
from ..voices.layout import SPEAKERS_DIR
from ..voices.sources import VoiceSource
from .rewrites import rewrite_segments

_LOGGER = logging.getLogger(__name__)


@dataclass(frozen=True)
class ParamLimits:
    """Synthesis parameters the page may set, with their allowed ranges."""

    ranges: dict[str, tuple[float, float]] = field(
        default_factory=lambda: {
            "speed": (0.25, 4.0),
            "sdp_ratio": (0.0, 1.0),
            "noise_scale": (0.0, 2.0),
            "noise_scale_w": (0.0, 2.0),
            "style_weight": (0.0, 10.0),
        }
    )


@dataclass
class DownloadJob:
    name: str
    folder: Path
    files: list[str]
    total: int | None = None
    state: str = "running"  # running, done, error
    error: str = ""


class WebBackend:
    def __init__(self, service: TtsService) -> None:
        self.service = service
        self.store = service.store
        # Uploads go where users keep their own voices: the first data dir (in the add-on,
        # the backed-up /share folder); downloads go to the download dir.
        self.upload_dir = self.store.data_dirs[0]
        self.limits = ParamLimits()
        self.max_text_length = service.settings.max_text_length
        self.dictionary_path: Path | None = service.settings.user_dictionary
        self._text_pool = ThreadPoolExecutor(1, thread_name_prefix="hayakoe-web-text")
        self._io_pool = ThreadPoolExecutor(2, thread_name_prefix="hayakoe-web-io")
        # Downloads take minutes: their own thread, so the page stays responsive meanwhile.
        self._download_pool = ThreadPoolExecutor(1, thread_name_prefix="hayakoe-web-download")
        self._dictionary = UserDictionary(self.dictionary_path) if self.dictionary_path else None
        self._frontend = TextFrontend(smart_home=True)
        self.downloads: dict[str, DownloadJob] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        self._text_pool.shutdown(wait=False, cancel_futures=True)
        self._io_pool.shutdown(wait=False, cancel_futures=True)
        self._download_pool.shutdown(wait=False, cancel_futures=True)
        if self._dictionary is not None:
            self._dictionary.close()

    async def in_thread(self, func: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._io_pool, func, *args)

    # ----- voices -----

    async def voices(self) -> list[dict[str, Any]]:
        return list(await self.in_thread(self._voice_list))

    def _voice_list(self) -> list[dict[str, Any]]:
        store, settings = self.store, self.service.settings
        installed = store.sources()  # HayaKoe folders, AIVMX files, Style-Bert-VITS2 exports
        catalog = store.catalog
        names = set(installed) if settings.local_files_only else set(catalog) | set(installed)
        loaded = self.service.loaded_voices()
        voices = []
        for name in sorted(names):
            known = catalog.get(name)
            source = installed.get(name)
            credit = source.credit if source is not None and source.credit else ("", "")
            item: dict[str, Any] = {
                "name": name,
                "description": known.description if known else "",
                "license": known.license if known else "",
                "attribution_name": known.attribution_name if known else credit[0],
                "attribution_url": known.attribution_url if known else credit[1],
                "in_catalog": known is not None,
                "installed": source is not None,
                "default": name == settings.default_voice,
                "styles": list(known.styles) if known else [],
                "speakers": [],
                "sample_rate": None,
                "size_bytes": None,
                "deletable": False,
            }
            if source is not None:
                item.update(_installed_details(source))
                if not known:
                    item["description"] = source.description
                    item["license"] = source.license or ""
                # Only HayaKoe folders are deleted here; other files are the user's to remove.
                item["deletable"] = source.kind == "hayakoe" and self._deletable(name, source.path)
            status = loaded.get(name)
            if status is not None:
                item["self_check"] = status.self_check
                item["self_check_passed"] = status.self_check_passed
                item["decode_speed"] = status.decode_speed
            job = self.downloads.get(name)
            if job is not None and job.state == "running":
                item["downloading"] = True
            voices.append(item)
        return sorted(voices, key=lambda v: (not v["installed"], v["name"]))  # installed first

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
        running = self.downloads.get(name)
        if running is not None and running.state == "running":
            return running
        folder = self.store.download_dir / SPEAKERS_DIR / name
        job = DownloadJob(name, folder, [f.path for f in catalog[name].files])
        self.downloads[name] = job
        task = asyncio.create_task(self._download(job))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return job

    async def _download(self, job: DownloadJob) -> None:
        try:
            loop = asyncio.get_running_loop()
            pool = self._download_pool
            job.total = await loop.run_in_executor(pool, _remote_total, job.name, job.files)
            await loop.run_in_executor(pool, self.store.ensure_voice, job.name)
            job.state = "done"
        except (HayakoeError, OSError) as err:
            job.state, job.error = "error", str(err)
            _LOGGER.warning("Download of voice %s failed: %s", job.name, err)
        finally:
            await self.service.refresh_voices()

    def download_status(self, name: str) -> dict[str, Any] | None:
        job = self.downloads.get(name)
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

    # ----- synthesis -----

    async def resolve(
        self, voice: str, style: str | None, given: dict[str, float]
    ) -> ResolvedVoice:
        if voice not in await self.in_thread(self.store.sources):
            # The page never downloads as a side effect: that is the Voices page's button.
            raise UnknownVoiceError(f"voice {voice!r} is not installed")
        resolved = await self.service.resolve(voice, style)
        params = dataclasses.replace(resolved.params, **given)  # type: ignore[arg-type]
        return dataclasses.replace(resolved, params=params)

    def check_text(self, text: str) -> str:
        if not text.strip():
            raise TextError("The text is empty")
        if len(text) > self.max_text_length:
            raise TextError(
                f"Text is {len(text)} characters long; the limit is {self.max_text_length}"
            )
        return text

    async def synthesize(
        self, resolved: ResolvedVoice, text: str, on_pcm: Callable[[bytes], Awaitable[None]]
    ) -> None:
        async def on_piece(piece: PcmPiece) -> None:
            await on_pcm(piece.pcm)

        await self.service.synthesize(resolved, text, on_piece)

    # ----- reading -----

    async def reading(self, text: str) -> dict[str, Any]:
        self.check_text(text)
        loop = asyncio.get_running_loop()
        result: dict[str, Any] = await loop.run_in_executor(self._text_pool, self._read, text)
        return result

    def _read(self, text: str) -> dict[str, Any]:
        frontend = self._current_frontend()
        rewritten = frontend.rewrite(text)
        sentences = []
        for sentence in split_for_synthesis(rewritten):  # the pieces the engine speaks
            normalized = frontend.normalize(sentence.text)
            phrases = accent_phrases(normalized)
            sentences.append(
                {
                    "text": sentence.text,
                    "normalized": normalized,
                    "kana": "".join(g2p(normalized).readings),
                    "phrases": [dataclasses.asdict(p) for p in phrases],
                }
            )
        return {
            "text": text,
            "rewritten": rewritten,
            "rewrites": rewrite_segments(text, rewritten),
            "sentences": sentences,
        }

    def _current_frontend(self) -> TextFrontend:
        if self._dictionary is not None and self._dictionary.refresh():
            self._frontend = self._frontend.with_keep_words(self._dictionary.surfaces)
        return self._frontend

    async def refresh_dictionary(self) -> None:
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._text_pool, self._current_frontend)


def _installed_details(source: VoiceSource) -> dict[str, Any]:
    details: dict[str, Any] = {}
    try:
        config = source.read_config()
        details["styles"] = sorted(config.styles, key=config.styles.__getitem__)
        details["speakers"] = sorted(config.speakers, key=config.speakers.__getitem__)
        details["sample_rate"] = config.sample_rate
    except HayakoeError as err:
        details["config_error"] = str(err)
    paths = [source.path] if source.path.is_file() else source.path.rglob("*")
    size = 0
    for path in paths:
        with contextlib.suppress(OSError):
            if path.is_file():
                size += path.stat().st_size
    details["size_bytes"] = size
    return details


def _remote_total(name: str, files: list[str]) -> int | None:
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
