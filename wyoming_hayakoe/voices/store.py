"""Voices and the shared BERT on disk, under one or more data directories.

Any folder in the layout of :mod:`.layout` counts as a voice, so users' own exported SBV2
voices work too.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Mapping
from contextlib import AbstractContextManager
from pathlib import Path

from ..errors import DownloadError, UnknownVoiceError
from .catalog import (
    CatalogVoice,
    catalog_repository,
    is_valid_voice_name,
    load_bert_files,
    load_catalog,
    validate_voice_name,
)
from .discovery import discover, warn_once
from .download import disk_error
from .hub import OFFLINE_ENV, hub_offline
from .layout import (
    BERT_MODEL_PATH,
    SPEAKERS_DIR,
    TOKENIZER_FAST_PATH,
    TOKENIZER_VOCAB_PATH,
    missing_voice_files,
    present_voice_files,
    required_voice_files_text,
    resolves_inside,
)
from .locking import folder_lock
from .remote_file import DownloadOptions
from .repo_download import RepoDownloader
from .sources import VoiceSource, hayakoe_source

_LOGGER = logging.getLogger(__name__)
_NAMES_SHOWN = 8


class VoiceStore:
    """Finds installed voices and downloads missing ones into ``download_dir``."""

    def __init__(
        self,
        data_dirs: Iterable[Path],
        download_dir: Path | None = None,
        endpoint: str | None = None,
        local_files_only: bool = False,
        *,
        catalog: Mapping[str, CatalogVoice] | None = None,
        options: DownloadOptions | None = None,
    ) -> None:
        self._data_dirs = [Path(d) for d in data_dirs]
        if download_dir is None and not self._data_dirs:
            raise ValueError("VoiceStore needs at least one data directory")
        self._download_dir = Path(download_dir) if download_dir else self._data_dirs[0]
        if self._download_dir not in self._data_dirs:
            self._data_dirs.append(self._download_dir)  # what we download must be found again
        self._local_files_only = local_files_only or hub_offline()
        self._catalog = dict(catalog) if catalog is not None else load_catalog()
        self._downloader = RepoDownloader(
            endpoint, options or DownloadOptions(), *catalog_repository()
        )
        self._lock = threading.Lock()  # one download of a given file at a time

    @property
    def data_dirs(self) -> list[Path]:
        return list(self._data_dirs)

    @property
    def download_dir(self) -> Path:
        return self._download_dir

    @property
    def catalog(self) -> dict[str, CatalogVoice]:
        return dict(self._catalog)

    # --- what is on disk -------------------------------------------------------------

    def installed(self) -> dict[str, Path]:
        """Name -> voice folder for every complete voice; the first data dir wins a tie."""
        found: dict[str, Path] = {}
        for root in self._data_dirs:
            speakers = root / SPEAKERS_DIR
            try:
                children = sorted(speakers.iterdir()) if speakers.is_dir() else []
            except OSError as err:
                _LOGGER.warning("Cannot list voices in %s: %s", speakers, err)
                continue
            for folder in children:
                name = folder.name
                if name in found or not is_valid_voice_name(name) or not folder.is_dir():
                    continue
                if self._complete_voice(root, folder):
                    found[name] = folder
        return found

    def _complete_voice(self, root: Path, folder: Path) -> bool:
        if missing_voice_files(folder):
            return False
        present = [p.relative_to(folder).as_posix() for p in present_voice_files(folder)]
        return self._complete(root, folder, present)

    def sources(self) -> dict[str, VoiceSource]:
        """Name -> source of every installed voice: HayaKoe folders, AIVMX files and SBV2
        exports (see discovery.py); a name already taken keeps its first owner."""
        found = {name: hayakoe_source(name, folder) for name, folder in self.installed().items()}
        return self._discovered(found)

    def _discovered(self, found: dict[str, VoiceSource]) -> dict[str, VoiceSource]:
        for root in self._data_dirs:
            for source in discover(root):
                owner = found.setdefault(source.name, source)
                if owner is not source and owner.path != source.path:
                    warn_once(f"{source.path} is left out: its voice name {source.name} "
                              f"is taken by {owner.path}")  # fmt: skip
        return found

    def ensure_source(self, name: str) -> VoiceSource:
        """The voice ``name``: a HayaKoe folder (looked up directly), else an AIVMX file or
        SBV2 export, else a catalog voice, downloaded if it is not on disk."""
        folder = self._installed_folder(name) if is_valid_voice_name(name) else None
        if folder is not None:
            return hayakoe_source(name, folder)
        source = self._discovered({}).get(name)
        return source if source is not None else hayakoe_source(name, self.ensure_voice(name))

    def _installed_folder(self, name: str) -> Path | None:
        """The folder of installed voice ``name`` (the first data dir wins), looked up
        directly rather than by listing every voice."""
        for root in self._data_dirs:
            folder = root / SPEAKERS_DIR / name
            if folder.is_dir() and self._complete_voice(root, folder):
                return folder
        return None

    def _complete(self, root: Path, folder: Path, files: Iterable[str]) -> bool:
        paths = [folder / f for f in files]
        if not all(p.is_file() for p in paths):
            return False
        if not all(resolves_inside(root, p) for p in [folder, *paths]):
            _LOGGER.warning(
                "Ignoring %s: it (or a file in it) is a symlink that leads outside %s",
                folder,
                root,
            )
            return False
        return True

    def missing_files(self, name: str) -> tuple[Path, list[str]] | None:
        """For a voice folder that exists but is not complete: the folder and what it lacks.

        None if ``name`` is installed, has no folder, or is no valid voice name.
        """
        if not is_valid_voice_name(name) or name in self.installed():
            return None
        for root in self._data_dirs:
            folder = root / SPEAKERS_DIR / name
            if folder.is_dir() and resolves_inside(root, folder):
                return folder, missing_voice_files(folder)
        return None

    def bert_root(self) -> Path | None:
        """The first data dir that holds the BERT model and its tokenizer (a vocab.txt, or a
        fast tokenizer's tokenizer.json)."""
        for root in self._data_dirs:
            for tokenizer in (TOKENIZER_VOCAB_PATH, TOKENIZER_FAST_PATH):
                if self._complete(root, root, (BERT_MODEL_PATH, tokenizer)):
                    return root
        return None

    def all_voice_names(self) -> list[str]:
        """Catalog voices and installed voices, sorted."""
        return sorted(set(self._catalog) | set(self.sources()))

    # --- getting what is missing -----------------------------------------------------

    def ensure_voice(self, name: str) -> Path:
        """The folder of voice ``name``, downloading a catalog voice if it is not on disk."""
        validate_voice_name(name)
        with self._lock:
            found = self._installed_folder(name)
            if found is not None:
                return found
            voice = self._catalog.get(name)
            if voice is None:
                raise UnknownVoiceError(self._unknown_voice_text(name, self.installed()))
            if self._local_files_only:
                raise DownloadError(self._not_on_disk_text(name))
            folder = self._safe_target(f"{SPEAKERS_DIR}/{name}")
            with self._locked(folder):
                self._downloader.fetch(
                    f"{SPEAKERS_DIR}/{name}", folder, voice.files, f"voice {name}"
                )
            if not self._complete_voice(self._download_dir, folder):
                raise DownloadError(f"voice {name!r} is still incomplete in {folder}")
            return folder

    def ensure_bert(self) -> Path:
        """A data dir holding the BERT model and tokenizer, downloading them if needed."""
        with self._lock:
            root = self.bert_root()
            if root is not None:
                return root
            if self._local_files_only:
                raise DownloadError(
                    f"the shared BERT model is not on disk (looked for {BERT_MODEL_PATH} and "
                    f"{TOKENIZER_VOCAB_PATH} under {self._dirs_text()}) and local-files-only "
                    f"mode ({OFFLINE_ENV} or --local-files-only) forbids downloading it: run once "
                    "without them, or copy "
                    f"those files into {self._download_dir}"
                )
            target = self._safe_target("")
            with self._locked(target):
                self._downloader.fetch("", target, load_bert_files(), "the shared BERT model")
            return target

    @staticmethod
    def _locked(folder: Path) -> AbstractContextManager[None]:
        """``folder``, created, locked against other processes downloading into it."""
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise disk_error(err, folder) from err
        return folder_lock(folder)

    def _safe_target(self, relative: str) -> Path:
        """``download_dir / relative``, refused if a symlink on the way leads elsewhere."""
        root = self._download_dir
        target = root / relative if relative else root
        if not resolves_inside(root, target):
            raise DownloadError(
                f"refusing to write into {target}: it resolves to {target.resolve()}, "
                f"outside the data directory {root.resolve()}"
            )
        return target

    # --- messages --------------------------------------------------------------------

    def _dirs_text(self) -> str:
        return ", ".join(str(d) for d in self._data_dirs)

    def _unknown_voice_text(self, name: str, installed: Mapping[str, Path]) -> str:
        names = sorted(set(self._catalog) | set(installed))
        shown = ", ".join(names[:_NAMES_SHOWN])
        more = f" and {len(names) - _NAMES_SHOWN} more" if len(names) > _NAMES_SHOWN else ""
        hint = f"available voices: {shown}{more}" if names else "no voice is available"
        return (
            f"unknown voice {name!r}: it is not in the catalog and not installed under "
            f"{self._dirs_text()} (as {SPEAKERS_DIR}/{name}/); {hint}"
        )

    def _not_on_disk_text(self, name: str) -> str:
        files = ", ".join(required_voice_files_text())
        return (
            f"voice {name!r} is not on disk (looked for {SPEAKERS_DIR}/{name}/ under "
            f"{self._dirs_text()}) and local-files-only mode ({OFFLINE_ENV} or "
            "--local-files-only) forbids downloading it: run once without them to download it, "
            f"or copy {files} into "
            f"{self._download_dir / SPEAKERS_DIR / name}"
        )
