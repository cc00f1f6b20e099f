"""A voice as found on disk, whatever its packaging: what to list and what to load.

Three packagings hold the same Style-Bert-VITS2 JP-Extra synthesizer:

* a HayaKoe folder (``onnx/speakers/<voice>/``, see layout.py), with its own duration predictor;
* an AivisHub ``.aivmx`` file: the ONNX synthesizer with the hyper-parameters, style vectors,
  speakers, styles and licence in its metadata (aivmx.py);
* a Style-Bert-VITS2 ONNX export folder: ``<model>.onnx`` + ``config.json`` +
  ``style_vectors.npy`` (sbv2_export.py).

The last two contain the whole inference graph; their duration predictor is cut out of it.
Home Assistant picks a voice, not a speaker, so each speaker of a multi-speaker AIVMX file or
export is a voice of its own (``<slug>-<speaker>``) offering that speaker's styles.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from ..errors import ModelFileError
from .config import VoiceConfig
from .layout import CONFIG_FILE, DURATION_PREDICTOR_FILE, STYLE_VECTORS_FILE, synthesizer_file

SourceKind = Literal["hayakoe", "aivmx", "sbv2"]

_SLUG_CUT_RE = re.compile(r"[^A-Za-z0-9._-]+")
_UUID_RE = re.compile(
    r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
)
_MAX_NAME = 64
_LICENSE_SHOWN = 60


@dataclass(frozen=True, kw_only=True, eq=False)
class VoiceSource:
    """One installed voice: where its files are and what a client is told about it.

    Compared by identity: it may hold arrays."""

    name: str
    """The Wyoming voice name: an ASCII slug, stable across restarts."""
    kind: SourceKind
    path: Path
    """What identifies the voice on disk: its folder, or the ``.aivmx`` file."""
    model: Path
    """The synthesizer ONNX file (the ``.aivmx`` file itself for AIVMX)."""
    display_name: str = ""
    """Human name (the AIVMX manifest's, Japanese as written); empty: the name."""
    speaker: str | None = None
    """The one speaker this voice speaks, for a voice cut out of a multi-speaker model."""
    speaker_id: int = 0
    styles: tuple[str, ...] = ()
    """The styles this voice offers, default first; empty: every style of the config."""
    style_ids: tuple[int, ...] = ()
    """The model's id of each of :attr:`styles` (``data.style2id``, the AIVM local id)."""
    speaker_uuid: str | None = None
    """The speaker's UUID in the AIVM manifest (None: the model names none)."""
    credit: tuple[str, str] | None = None
    """(name, url) to credit; None: HayaKoe's."""
    license: str | None = None
    """Short licence name shown in the voice list."""
    license_text: str | None = None
    """The model's full terms, as its author wrote them."""
    hyper_parameters: dict[str, Any] | None = None
    """The config.json contents when they do not live in a file (AIVMX)."""
    style_vectors: np.ndarray | None = None
    """The style vectors when they do not live in a file (AIVMX)."""

    @property
    def duration_predictor(self) -> Path | None:
        """A separate duration predictor file; None: cut it out of the synthesizer graph."""
        return self.path / DURATION_PREDICTOR_FILE if self.kind == "hayakoe" else None

    @property
    def description(self) -> str:
        return self.display_name or self.name

    def read_config(self) -> VoiceConfig:
        if self.hyper_parameters is not None:
            return VoiceConfig.from_raw(self.hyper_parameters, self.model)
        return VoiceConfig.read(self.path / CONFIG_FILE)

    def read_style_vectors(self) -> np.ndarray:
        """Float style vectors ``[styles, 256]``; ModelFileError when absent or unreadable."""
        if self.style_vectors is not None:
            return self.style_vectors
        path = self.path / STYLE_VECTORS_FILE
        try:
            vectors: np.ndarray = np.load(path, allow_pickle=False)
        except FileNotFoundError as err:
            raise ModelFileError(
                f"Style vectors not found: {path}. Download the voice again."
            ) from err
        except (OSError, ValueError) as err:
            raise ModelFileError(
                f"Style vectors unreadable: {path} ({err}). Download the voice again."
            ) from err
        return vectors


def hayakoe_source(name: str, folder: Path) -> VoiceSource:
    """A voice folder in HayaKoe's layout."""
    return VoiceSource(name=name, kind="hayakoe", path=folder, model=synthesizer_file(folder))


def slug(text: str) -> str:
    """An ASCII voice name from a file or folder name; empty if nothing ASCII is left."""
    if _UUID_RE.match(text):  # AivisSpeech names its files <model uuid>.aivmx
        return f"aivm-{text[:8].lower()}"
    ascii_text = unicodedata.normalize("NFKC", text).encode("ascii", "ignore").decode()
    cut = _SLUG_CUT_RE.sub("-", ascii_text).strip("-._")
    return re.sub(r"-{2,}", "-", cut)[:_MAX_NAME]


def speaker_names(base: str, speakers: list[tuple[str, int]]) -> dict[int, str]:
    """Voice name per speaker id: ``base`` alone for one speaker, else ``base-<speaker>``
    with the speaker's ASCII name, or its id when the names are not ASCII or not distinct."""
    if len(speakers) == 1:
        return {speakers[0][1]: base}
    parts = {local_id: slug(name).lower() for name, local_id in speakers}
    if any(not part for part in parts.values()) or len(set(parts.values())) < len(parts):
        parts = {local_id: str(local_id) for _, local_id in speakers}
    return {
        local_id: f"{base[: _MAX_NAME - len(part) - 1]}-{part}" for local_id, part in parts.items()
    }


def short_license(text: str | None) -> str | None:
    """The first line of a licence text (its title, usually), without Markdown marks."""
    for line in (text or "").splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line if len(line) <= _LICENSE_SHOWN else line[: _LICENSE_SHOWN - 1] + "…"
    return None
