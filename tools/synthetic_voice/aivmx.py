"""Write an AIVMX file (an ONNX model with AIVM metadata) with ``aivmlib``.

The metadata is made as Style-Bert-VITS2's ``convert_onnx.py --aivmx`` makes it
(``aivmlib.generate_aivm_metadata`` from config.json and style_vectors.npy), then the manifest is
filled in the way AIVM Generator lets a publisher fill it: name, description, creators, licence,
speakers and styles. Every UUID is derived from the voice, so the file is reproducible.
"""

from __future__ import annotations

import io
import json
import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aivmlib
import numpy as np
from aivmlib.schemas.aivm_manifest import (
    AivmManifestSpeaker,
    AivmManifestSpeakerStyle,
    ModelArchitecture,
)

if TYPE_CHECKING:
    from tools.synthetic_voice.voice_spec import VoiceSpec

UUID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "wyoming-hayakoe/tests/fixtures/aivmx")
LICENSE = """\
# CC0 1.0 Universal

この音声合成モデルはテスト用の合成データです。重みは乱数で、実在の人物の声を模倣していません。
No rights reserved: a synthetic test voice with seeded random weights; it imitates no one.
"""
CREATORS = ("wyoming-hayakoe test fixtures",)


@dataclass(frozen=True)
class AivmxInfo:
    """What a publisher sets in the manifest besides what the hyper-parameters give."""

    voice: VoiceSpec
    stem: str
    description: str
    epochs: int
    steps: int

    @staticmethod
    def for_voice(voice: VoiceSpec, stem: str, epochs: int, steps: int) -> AivmxInfo:
        return AivmxInfo(
            voice=voice,
            stem=stem,
            description=f"テスト用の小さな声 ({stem}): synthetic, random weights",
            epochs=epochs,
            steps=steps,
        )

    def uuid_of(self, *parts: str) -> uuid.UUID:
        return uuid.uuid5(UUID_NAMESPACE, "/".join((self.stem, *parts)))


def metadata(config: dict[str, Any], styles: np.ndarray, info: AivmxInfo) -> Any:
    """The AivmMetadata: generated from the hyper-parameters, then the manifest filled in."""
    styles_npy = io.BytesIO()
    np.save(styles_npy, styles)
    hyper = io.BytesIO(json.dumps(config, ensure_ascii=False).encode("utf-8"))
    meta = aivmlib.generate_aivm_metadata(
        ModelArchitecture.StyleBertVITS2JPExtra, hyper, styles_npy
    )
    manifest = meta.manifest
    manifest.name = info.voice.model_name
    manifest.description = info.description
    manifest.creators = list(CREATORS)
    manifest.license = LICENSE
    manifest.uuid = info.uuid_of("model")
    manifest.version = "1.0.0"
    manifest.training_epochs = info.epochs
    manifest.training_steps = info.steps
    icon = manifest.speakers[0].icon  # aivmlib's default icon
    manifest.speakers = [
        AivmManifestSpeaker(
            name=speaker.name,
            icon=icon,
            supported_languages=["ja"],
            uuid=info.uuid_of("speaker", str(speaker.local_id)),
            local_id=speaker.local_id,
            styles=[
                AivmManifestSpeakerStyle(name=name, icon=None, local_id=style_id, voice_samples=[])
                for name, style_id in speaker.styles
            ],
        )
        for speaker in info.voice.speakers
    ]
    return meta


def write(
    onnx_path: Path, path: Path, config: dict[str, Any], styles: np.ndarray, info: AivmxInfo
) -> None:
    """Write ``path`` from the plain ONNX export; a partial file never stays behind."""
    meta = metadata(config, styles, info)
    with onnx_path.open("rb") as onnx_file:
        content = aivmlib.write_aivmx_metadata(onnx_file, meta)
    partial = path.with_name(f".{path.name}.partial")
    try:
        partial.write_bytes(content)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
