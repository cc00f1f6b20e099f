"""Voices and the shared BERT on disk, under one or more data directories.

Any folder in the layout of :mod:`.layout` counts as a voice, so users' own exported SBV2
voices work too.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path

from ..errors import DownloadError, UnknownVoiceError
from .catalog import (
    CatalogFile,
    CatalogVoice,
    catalog_repository,
    is_valid_voice_name,
    load_bert_files,
    load_catalog,
    validate_voice_name,
)
from .discovery import discover, warn_once
from .download import DownloadOptions, download_file, repo_file_url, resolve_endpoint
from .layout import BERT_MODEL_PATH, REQUIRED_VOICE_FILES, SPEAKERS_DIR, TOKENIZER_VOCAB_PATH
from .sources import VoiceSource, hayakoe_source

_LOGGER = logging.getLogger(__name__)
_NAMES_SHOWN = 8


def _inside(root: Path, path: Path) -> bool:
    """True if ``path``, with every symlink resolved, stays under ``root``."""
    try:
        return path.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):  # unreadable or a symlink loop
        return False


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
        self._endpoint = endpoint
        self._local_files_only = local_files_only
        self._catalog = dict(catalog) if catalog is not None else load_catalog()
        self._options = options or DownloadOptions()
        self._repo, self._revision = catalog_repository()
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
                if self._complete(root, folder, REQUIRED_VOICE_FILES):
                    found[name] = folder
        return found

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
            if folder.is_dir() and self._complete(root, folder, REQUIRED_VOICE_FILES):
                return folder
        return None

    def _complete(self, root: Path, folder: Path, files: Iterable[str]) -> bool:
        paths = [folder / f for f in files]
        if not all(p.is_file() for p in paths):
            return False
        if not all(_inside(root, p) for p in [folder, *paths]):
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
            if folder.is_dir() and _inside(root, folder):
                return folder, [f for f in REQUIRED_VOICE_FILES if not (folder / f).is_file()]
        return None

    def bert_root(self) -> Path | None:
        """The first data dir that holds the BERT model and its tokenizer vocabulary."""
        for root in self._data_dirs:
            if self._complete(root, root, (BERT_MODEL_PATH, TOKENIZER_VOCAB_PATH)):
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
            self._fetch(f"{SPEAKERS_DIR}/{name}", folder, voice.files, f"voice {name}")
            if not self._complete(self._download_dir, folder, REQUIRED_VOICE_FILES):
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
                    "mode forbids downloading it: run once without --local-files-only, or copy "
                    f"those files into {self._download_dir}"
                )
            target = self._safe_target("")
            self._fetch("", target, load_bert_files(), "the shared BERT model")
            return target

    def _fetch(self, prefix: str, folder: Path, files: Iterable[CatalogFile], what: str) -> None:
        endpoint = resolve_endpoint(self._endpoint)
        _LOGGER.info("Downloading %s from %s into %s", what, endpoint, folder)
        for item in files:  # the catalog lists the defining file last
            dest = folder / item.path
            if dest.is_file() and _inside(folder, dest):
                continue
            remote = f"{prefix}/{item.path}" if prefix else item.path
            url = repo_file_url(endpoint, self._repo, self._revision, remote)
            if not download_file(url, dest, self._options, missing_ok=item.optional):
                _LOGGER.info("Optional file %s is not on the server; going on without it", remote)

    def _safe_target(self, relative: str) -> Path:
        """``download_dir / relative``, refused if a symlink on the way leads elsewhere."""
        root = self._download_dir
        target = root / relative if relative else root
        if not _inside(root, target):
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
        files = ", ".join(REQUIRED_VOICE_FILES)
        return (
            f"voice {name!r} is not on disk (looked for {SPEAKERS_DIR}/{name}/ under "
            f"{self._dirs_text()}) and local-files-only mode forbids downloading it: run once "
            f"without --local-files-only to download it, or copy {files} into "
            f"{self._download_dir / SPEAKERS_DIR / name}"
        )
