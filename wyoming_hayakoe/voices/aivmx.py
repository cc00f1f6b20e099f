"""AivisHub ``.aivmx`` files: an ONNX synthesizer with the AIVM metadata in its metadata_props.

aivmlib reads and validates the metadata (manifest, hyper-parameters = SBV2 config.json, style
vectors). What it accepts but this server cannot play is refused here with a reason: another
architecture than JP-Extra, a manifest of another major version, no style vectors.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ModelFileError
from .sources import VoiceSource, short_license, slug, speaker_names

AIVMX_SUFFIX = ".aivmx"
AIVISHUB_MODEL_URL = "https://hub.aivis-project.com/aivm-models/{uuid}"
_JP_EXTRA = "Style-Bert-VITS2 (JP-Extra)"
_LANGUAGES = ("ja", "ja-JP")


def read_aivmx(path: Path) -> list[VoiceSource]:
    """One source per Japanese speaker of ``path``; ModelFileError saying why it cannot be."""
    import aivmlib  # parses protobuf and pydantic: only when there is a file to read

    try:
        with path.open("rb") as file:
            metadata = aivmlib.read_aivmx_metadata(file)
    except aivmlib.AivmValidationError as err:
        raise ModelFileError(
            f"{path} is not a readable AIVMX file (truncated, or without AIVM metadata): {err}"
        ) from err
    except OSError as err:
        raise ModelFileError(f"{path} cannot be read: {err}") from err
    manifest = metadata.manifest
    if not str(manifest.manifest_version).startswith("1."):
        raise ModelFileError(
            f"{path}: AIVM manifest version {manifest.manifest_version} is not supported (1.x)"
        )
    architecture = getattr(manifest.model_architecture, "value", manifest.model_architecture)
    if architecture != _JP_EXTRA:
        raise ModelFileError(
            f"{path}: its architecture is {architecture}; only {_JP_EXTRA} voices are supported"
        )
    if not metadata.style_vectors:
        raise ModelFileError(f"{path}: the AIVM metadata holds no style vectors")
    vectors = _style_vectors(path, metadata.style_vectors)
    hyper_parameters: dict[str, Any] = metadata.hyper_parameters.model_dump(mode="json")
    return _sources(path, manifest, hyper_parameters, vectors)


def _style_vectors(path: Path, blob: bytes) -> np.ndarray:
    try:
        vectors: np.ndarray = np.load(io.BytesIO(blob), allow_pickle=False)
    except (OSError, ValueError) as err:
        raise ModelFileError(f"{path}: the style vectors are not a .npy array ({err})") from err
    if vectors.ndim != 2 or vectors.dtype.kind != "f" or vectors.shape[0] == 0:
        raise ModelFileError(
            f"{path}: expected float [styles, 256] style vectors, got "
            f"{vectors.dtype} {list(vectors.shape)}"
        )
    return vectors.astype(np.float32)


def _sources(
    path: Path, manifest: Any, hyper_parameters: dict[str, Any], vectors: np.ndarray
) -> list[VoiceSource]:
    speakers = [
        s
        for s in manifest.speakers
        if s.styles and any(lang in _LANGUAGES for lang in s.supported_languages)
    ]
    if not speakers:
        raise ModelFileError(f"{path}: the manifest has no Japanese speaker with styles")
    base = slug(path.stem) or f"aivm-{str(manifest.uuid)[:8]}"
    names = speaker_names(base, [(s.name, s.local_id) for s in speakers])
    creators = ", ".join(manifest.creators) or "unknown author"
    credit = (f"{creators} ({manifest.name})", AIVISHUB_MODEL_URL.format(uuid=manifest.uuid))
    rows = vectors.shape[0]
    sources = []
    for speaker in speakers:
        styles = sorted(speaker.styles, key=lambda style: style.local_id)
        if any(style.local_id >= rows for style in styles):
            raise ModelFileError(
                f"{path}: speaker {speaker.name} has a style beyond the {rows} style vectors"
            )
        display = manifest.name if len(speakers) == 1 else f"{manifest.name} {speaker.name}"
        sources.append(
            VoiceSource(
                name=names[speaker.local_id],
                kind="aivmx",
                path=path,
                model=path,
                display_name=display,
                speaker=speaker.name,
                speaker_id=speaker.local_id,
                styles=tuple(style.name for style in styles),
                style_ids=tuple(style.local_id for style in styles),
                speaker_uuid=str(speaker.uuid),
                credit=credit,
                license=short_license(manifest.license) or "no licence given",
                license_text=manifest.license,
                hyper_parameters=_for_speaker(hyper_parameters, manifest, speaker),
                style_vectors=vectors,
            )
        )
    return sources


def _for_speaker(hyper_parameters: dict[str, Any], manifest: Any, speaker: Any) -> dict[str, Any]:
    """The config with speaker and style ids as the manifest gives them (the manifest wins,
    as in AivisSpeech), and only this speaker's styles: a style's row is its local id."""
    data = dict(hyper_parameters.get("data") or {})
    data["spk2id"] = {s.name: s.local_id for s in manifest.speakers}
    data["style2id"] = {style.name: style.local_id for style in speaker.styles}
    return {**hyper_parameters, "data": data}
