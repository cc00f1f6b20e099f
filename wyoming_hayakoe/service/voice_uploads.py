"""Voices uploaded from the page: an ``.aivmx`` file (kept as it is) or a zip of a HayaKoe
voice folder.

The upload is checked and unpacked into a hidden staging folder next to the voices (the
store ignores names starting with a dot), and only a complete, readable voice is renamed into
place in one step. Anything refused leaves nothing behind.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import uuid
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import numpy as np

from ..errors import ModelFileError
from ..voices.aivmx import AIVMX_SUFFIX, read_aivmx
from ..voices.catalog import is_valid_voice_name
from ..voices.config import VoiceConfig
from ..voices.layout import (
    AIVMX_DIR,
    CONFIG_FILE,
    SPEAKERS_DIR,
    STYLE_VECTORS_FILE,
    VOICE_FILE_NAMES,
    missing_voice_files,
    synthesizer_file,
)

ALLOWED_SUFFIXES = (".aivmx", ".zip")
_VOICE_FILES = VOICE_FILE_NAMES
_MAX_MEMBERS = 64


class UploadError(ValueError):
    """The upload is refused; the message says why and what to do."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class UploadLimits:
    max_upload_bytes: int = 1 << 30  # an aivmx voice is about 250 MB
    max_unpacked_bytes: int = 2 << 30


def check_file_name(filename: str) -> str:
    """The upload's suffix, or UploadError."""
    suffix = PurePosixPath(filename.replace("\\", "/")).suffix.lower()
    if suffix not in ALLOWED_SUFFIXES:
        raise UploadError(
            f"{filename!r} is neither an .aivmx voice nor a .zip of a HayaKoe voice folder"
        )
    return suffix


def install_upload(
    upload: Path, filename: str, name: str, data_dir: Path, limits: UploadLimits
) -> str:
    """Place ``upload`` in ``data_dir``: an ``.aivmx`` file as it is under ``aivmx/``, a zip
    unpacked into ``onnx/speakers/<voice name>``; returns the name it was given.

    ``name`` may be empty: then the zip's top folder or the file name gives it.
    """
    suffix = check_file_name(filename)
    if suffix == ".aivmx":
        return _install_aivmx(upload, name or PurePosixPath(filename).stem, data_dir / AIVMX_DIR)
    speakers_dir = data_dir / SPEAKERS_DIR
    staging = speakers_dir / f".staging-{uuid.uuid4().hex}"
    try:
        speakers_dir.mkdir(parents=True, exist_ok=True)
        staging.mkdir()
        top = _unzip(upload, staging, limits)
        name = check_voice_name(name or top or PurePosixPath(filename).stem, speakers_dir)
        check_voice_folder(staging)
        os.rename(staging, speakers_dir / name)  # the voice appears whole or not at all
        return name
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        with contextlib.suppress(OSError):
            upload.unlink()


def _install_aivmx(upload: Path, name: str, aivmx_dir: Path) -> str:
    """Keep the file as AivisSpeech has it (its licence, credit and speakers stay in it),
    once it reads as a JP-Extra voice; renamed into place, so it appears whole or not at all."""
    name = check_voice_name(name, aivmx_dir, AIVMX_SUFFIX)
    try:
        read_aivmx(upload)
    except ModelFileError as err:
        raise UploadError(str(err).replace(str(upload), "the .aivmx file")) from None
    aivmx_dir.mkdir(parents=True, exist_ok=True)
    staging = aivmx_dir / f".staging-{uuid.uuid4().hex}{AIVMX_SUFFIX}"
    try:
        shutil.move(upload, staging)
        os.rename(staging, aivmx_dir / f"{name}{AIVMX_SUFFIX}")
    finally:
        with contextlib.suppress(OSError):
            staging.unlink()
    return name


def check_voice_name(name: str, folder: Path, suffix: str = "") -> str:
    """``name`` if it can be a voice name and ``folder`` has no ``name + suffix`` yet."""
    if not is_valid_voice_name(name):
        raise UploadError(
            f"{name!r} cannot be a voice name: use 1-64 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit (type a name in the name field)"
        )
    if (folder / f"{name}{suffix}").exists():
        raise UploadError(
            f"a voice named {name!r} already exists: delete it or choose another name", 409
        )
    return name


def check_voice_folder(folder: Path) -> None:
    """Refuse a folder the engine could not load: missing files, a config or style vectors
    that cannot be read."""
    missing = missing_voice_files(folder)
    if missing:
        raise UploadError(f"the voice lacks {', '.join(missing)}")
    try:
        styles = VoiceConfig.read(folder / CONFIG_FILE).styles
        vectors = np.load(folder / STYLE_VECTORS_FILE, allow_pickle=False)
    except ModelFileError as err:
        raise UploadError(str(err).replace(str(folder) + "/", "")) from None
    except (OSError, ValueError) as err:
        raise UploadError(f"{STYLE_VECTORS_FILE} cannot be read: {err}") from None
    if vectors.ndim != 2 or vectors.shape[0] <= max(styles.values(), default=0):
        raise UploadError(
            f"{STYLE_VECTORS_FILE} has shape {vectors.shape}: too few rows for the styles "
            f"{', '.join(styles)}"
        )
    synthesizer = synthesizer_file(folder)
    with synthesizer.open("rb") as model:
        if len(model.read(16)) < 16:
            raise UploadError(f"{synthesizer.name} is empty or truncated")


def _unzip(upload: Path, staging: Path, limits: UploadLimits) -> str:
    """Extract the voice files of a zip; returns its single top folder name, if any."""
    try:
        archive = zipfile.ZipFile(upload)
    except (zipfile.BadZipFile, OSError) as err:
        raise UploadError(f"not a readable zip file: {err}") from None
    with archive:
        members = [m for m in archive.infolist() if not m.is_dir()]
        if not members or len(members) > _MAX_MEMBERS:
            raise UploadError(f"the zip must hold 1 to {_MAX_MEMBERS} files")
        paths = [_safe_member_path(m) for m in members]
        tops = {p.parts[0] for p in paths if len(p.parts) > 1}
        top = tops.pop() if len(tops) == 1 and all(len(p.parts) == 2 for p in paths) else ""
        if sum(m.file_size for m in members) > limits.max_unpacked_bytes:
            raise UploadError("the zip unpacks to more than the size limit", 413)
        budget = limits.max_unpacked_bytes
        for member, path in zip(members, paths, strict=True):
            inner = path.parts[1:] if top else path.parts
            if len(inner) != 1 or inner[0] not in _VOICE_FILES:
                continue  # READMEs, licences and the like are not part of the voice
            budget = _extract(archive, member, staging / inner[0], budget)
    return top


def _safe_member_path(member: zipfile.ZipInfo) -> PurePosixPath:
    name = member.filename
    path = PurePosixPath(name)
    mode = member.external_attr >> 16
    if (
        "\\" in name
        or path.is_absolute()
        or ".." in path.parts
        or any(part.startswith(".") and part != "." for part in path.parts)
    ):
        raise UploadError(f"the zip holds a path that is not allowed: {name!r}")
    if stat.S_ISLNK(mode):
        raise UploadError(f"the zip holds a symbolic link: {name!r}")
    return path


def _extract(archive: zipfile.ZipFile, member: zipfile.ZipInfo, dest: Path, budget: int) -> int:
    try:
        with archive.open(member) as source, dest.open("xb") as target:
            while block := source.read(1 << 20):
                budget -= len(block)
                if budget < 0:
                    raise UploadError("the zip unpacks to more than the size limit", 413)
                target.write(block)
    except (zipfile.BadZipFile, EOFError, NotImplementedError, RuntimeError) as err:
        raise UploadError(f"the zip cannot be unpacked: {err}") from None
    except FileExistsError:
        raise UploadError(f"the zip holds {dest.name} twice") from None
    return budget
