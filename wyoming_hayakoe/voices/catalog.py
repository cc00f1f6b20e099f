"""The catalog of public HayaKoe voices, read from the packaged ``voices.json``."""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

from ..errors import UnknownVoiceError

# A voice name becomes a folder name: keep it to a safe, portable alphabet.
VOICE_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


@dataclass(frozen=True)
class CatalogFile:
    """One file to fetch; ``path`` is relative to the voice folder or, for BERT, the repo root.

    ``alternatives`` are names tried in turn when the server has no ``path`` (HayaKoe loads
    ``synthesizer_q8.onnx`` where ``synthesizer.onnx`` is absent). An ONNX model's external
    weights (``<model>.onnx.data``) are fetched with it, before it, when the server has them.
    """

    path: str
    optional: bool = False
    alternatives: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        return (self.path, *self.alternatives)


@dataclass(frozen=True, kw_only=True)
class CatalogVoice:
    """A public voice: what it is, whom to credit, and which files make it up."""

    name: str
    description: str
    language: str = "ja"
    styles: tuple[str, ...]
    attribution_name: str
    attribution_url: str
    license: str
    files: tuple[CatalogFile, ...]


def is_valid_voice_name(name: str) -> bool:
    """True if ``name`` is safe to use as a single folder name."""
    return isinstance(name, str) and bool(VOICE_NAME_RE.match(name)) and ".." not in name


def validate_voice_name(name: str) -> str:
    """Return ``name`` or raise UnknownVoiceError if it could not be a voice folder."""
    if not is_valid_voice_name(name):
        raise UnknownVoiceError(
            f"invalid voice name {name!r}: a voice name is 1-64 characters of letters, "
            "digits, '.', '_' and '-', starts with a letter or digit and holds no '..'"
        )
    return name


@functools.cache
def _raw_catalog() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("voices.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def _files(entries: list[dict[str, Any]]) -> tuple[CatalogFile, ...]:
    return tuple(
        CatalogFile(
            str(e["path"]),
            bool(e.get("optional", False)),
            tuple(str(a) for a in e.get("alternatives", ())),
        )
        for e in entries
    )


def catalog_repository() -> tuple[str, str]:
    """The Hugging Face repository and revision the catalog describes."""
    data = _raw_catalog()
    return str(data["repository"]), str(data["revision"])


def load_bert_files() -> tuple[CatalogFile, ...]:
    """Shared BERT and tokenizer files, paths relative to the repository root."""
    return _files(_raw_catalog()["bert_files"])


@functools.cache
def _parsed_catalog() -> dict[str, CatalogVoice]:
    data = _raw_catalog()
    files = _files(data["voice_files"])
    voices: dict[str, CatalogVoice] = {}
    for entry in data["voices"]:
        voice = CatalogVoice(
            name=validate_voice_name(entry["name"]),
            description=str(entry["description"]),
            language=str(entry.get("language", "ja")),
            styles=tuple(str(s) for s in entry["styles"]),
            attribution_name=str(entry["attribution_name"]),
            attribution_url=str(entry["attribution_url"]),
            license=str(entry["license"]),
            files=files,
        )
        if voice.name in voices:
            raise ValueError(f"voices.json lists {voice.name!r} twice")
        voices[voice.name] = voice
    return voices


def load_catalog() -> dict[str, CatalogVoice]:
    """Name -> voice for every public voice in the packaged catalog (a fresh dict each call)."""
    return dict(_parsed_catalog())
