"""Finding AIVMX files and Style-Bert-VITS2 export folders dropped into a data directory.

A file is read once per version (size and modification time): reading an AIVMX file's
metadata parses the whole model, and the voice list is scanned again whenever a client asks
for a voice it does not know. A file that cannot be a voice is reported once, in one log line
naming it and why, and left out; the other voices are unaffected.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from ..errors import ModelFileError
from .aivmx import AIVMX_SUFFIX, read_aivmx
from .layout import AIVMX_DIR, SBV2_EXPORT_DIRS
from .sbv2_export import read_sbv2_export
from .sources import VoiceSource

_LOGGER = logging.getLogger(__name__)

_Key = tuple[str, tuple[tuple[str, int, int], ...]]
_cache: dict[_Key, list[VoiceSource] | str] = {}
"""Sources, or the reason there are none, per version of a file or folder."""
_cache_lock = threading.Lock()
_warned: set[str] = set()


def warn_once(message: str) -> None:
    """Log ``message`` as a warning the first time only: scans repeat, the news does not."""
    with _cache_lock:
        if message in _warned:
            return
        _warned.add(message)
    _LOGGER.warning("%s", message)


def discover(root: Path) -> Iterator[VoiceSource]:
    """Every AIVMX and SBV2 export voice under the data dir ``root``, in a stable order."""
    for path in _aivmx_files(root):
        yield from _read_once(path, [path], read_aivmx)
    for folder in _export_folders(root):
        files = [f for f in folder.iterdir() if f.is_file()] if folder.is_dir() else []
        yield from _read_once(folder, files, read_sbv2_export)


def _aivmx_files(root: Path) -> list[Path]:
    found: list[Path] = []
    for folder in (root / AIVMX_DIR, root):
        found += sorted(p for p in _children(folder) if p.suffix.lower() == AIVMX_SUFFIX)
    return [p for p in found if p.is_file() and _inside(root, p)]


def _export_folders(root: Path) -> list[Path]:
    folders: list[Path] = []
    for name in SBV2_EXPORT_DIRS:
        folders += sorted(p for p in _children(root / name) if p.is_dir() and _inside(root, p))
    return folders


def _children(folder: Path) -> list[Path]:
    try:
        return list(folder.iterdir()) if folder.is_dir() else []
    except OSError as err:
        _LOGGER.warning("Cannot list voices in %s: %s", folder, err)
        return []


def _inside(root: Path, path: Path) -> bool:
    try:
        inside = path.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):
        return False
    if not inside:
        _LOGGER.debug("Ignoring %s: a symlink that leads outside %s", path, root)
    return inside


def _read_once(
    path: Path, files: list[Path], read: Callable[[Path], list[VoiceSource]]
) -> list[VoiceSource]:
    try:
        key: _Key = (
            str(path.resolve()),
            tuple(sorted((f.name, f.stat().st_size, f.stat().st_mtime_ns) for f in files)),
        )
    except OSError:  # removed while we looked
        return []
    with _cache_lock:
        known = _cache.get(key)
    if known is None:
        try:
            known = read(path)
        except ModelFileError as err:
            known = str(err)
            _LOGGER.warning("Not a usable voice, left out: %s", known)
        except Exception as err:  # a file no reader foresaw must not stop the scan
            known = f"{path}: unreadable ({type(err).__name__}: {err})"
            _LOGGER.warning("Not a usable voice, left out: %s", known)
        with _cache_lock:
            _forget_other_versions(str(path.resolve()))
            _cache[key] = known
    return known if isinstance(known, list) else []


def _forget_other_versions(resolved: str) -> None:
    for key in [k for k in _cache if k[0] == resolved]:
        del _cache[key]
