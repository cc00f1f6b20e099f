"""Data dirs holding copies of the AIVMX and SBV2 export fixtures, and broken variants of them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import onnx
from sbv2_fixture_files import AIVMX, SBV2_DIR, SBV2_ONNX

from wyoming_hayakoe.voices.sources import VoiceSource
from wyoming_hayakoe.voices.store import VoiceStore

AIVMX_FIXTURE = AIVMX
SBV2_FIXTURE = SBV2_DIR
SBV2_MODEL_NAME = SBV2_ONNX.name

AIVMX_VOICES = {"test-voice-0": ("テスト声 あおい", ["ノーマル", "喜び"])}
AIVMX_VOICES["test-voice-1"] = ("テスト声 そら", ["ノーマル", "怒り"])
SBV2_VOICES = {
    "tiny-sbv2-aoi": ("tiny-sbv2 aoi", ["Neutral", "Happy", "Angry"]),
    "tiny-sbv2-sora": ("tiny-sbv2 sora", ["Neutral", "Happy", "Angry"]),
}


def good_data_dir(root: Path) -> Path:
    """A data dir with the AIVMX file in ``aivmx/`` and the export in ``sbv2/``. The files
    keep their times: models compiled for one such dir are found for any other (the model
    cache's key is a file's size and time, see :func:`good_voices`)."""
    (root / "aivmx").mkdir(parents=True, exist_ok=True)
    shutil.copy2(AIVMX_FIXTURE, root / "aivmx" / AIVMX_FIXTURE.name)
    shutil.copytree(SBV2_FIXTURE, root / "sbv2" / SBV2_FIXTURE.name)
    return root


def good_voices(data_dir: Path) -> tuple[VoiceSource, ...]:
    """The voices of :func:`good_data_dir`'s two files (every speaker), as the store finds
    them: what a compiled cache for them is made of (conftest's ``compiled_caches``)."""
    sources = VoiceStore([data_dir], local_files_only=True).sources()
    return tuple(sources[name] for name in sorted({*AIVMX_VOICES, *SBV2_VOICES}))


def _edit_aivmx(target: Path, edit: object) -> Path:
    model = onnx.load(str(AIVMX_FIXTURE))
    assert callable(edit)
    edit(model)
    target.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(target))
    return target


def _props(model: onnx.ModelProto) -> dict[str, str]:
    return {p.key: p.value for p in model.metadata_props}


def _set_props(model: onnx.ModelProto, props: dict[str, str]) -> None:
    del model.metadata_props[:]
    for key, value in props.items():
        model.metadata_props.add(key=key, value=value)


def truncated_aivmx(target: Path) -> Path:
    data = AIVMX_FIXTURE.read_bytes()
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data[: len(data) // 2])
    return target


def aivmx_without_metadata(target: Path) -> Path:
    return _edit_aivmx(target, lambda model: _set_props(model, {}))


def aivmx_without_style_vectors(target: Path) -> Path:
    def edit(model: onnx.ModelProto) -> None:
        props = _props(model)
        del props["aivm_style_vectors"]
        _set_props(model, props)

    return _edit_aivmx(target, edit)


def aivmx_of_another_architecture(target: Path) -> Path:
    """The manifest says Style-Bert-VITS2 (not JP-Extra), as the older models' do."""

    def edit(model: onnx.ModelProto) -> None:
        props = _props(model)
        manifest = json.loads(props["aivm_manifest"])
        manifest["model_architecture"] = "Style-Bert-VITS2"
        props["aivm_manifest"] = json.dumps(manifest, ensure_ascii=False)
        _set_props(model, props)

    return _edit_aivmx(target, edit)


def aivmx_with_renamed_input(target: Path, old: str = "sid", new: str = "speaker") -> Path:
    """Valid metadata, but the graph calls an input by a name no exporter uses."""

    def edit(model: onnx.ModelProto) -> None:
        for tensor in model.graph.input:
            if tensor.name == old:
                tensor.name = new
        for node in model.graph.node:
            node.input[:] = [new if name == old else name for name in node.input]

    return _edit_aivmx(target, edit)


def sbv2_without_style_vectors(target: Path) -> Path:
    shutil.copytree(SBV2_FIXTURE, target)
    (target / "style_vectors.npy").unlink()
    return target


def sbv2_not_jp_extra(target: Path) -> Path:
    shutil.copytree(SBV2_FIXTURE, target)
    config_path = target / "config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config["version"] = "2.4.1"
    config["data"]["use_jp_extra"] = False
    config_path.write_text(json.dumps(config, ensure_ascii=False), encoding="utf-8")
    return target


BROKEN_AIVMX = ("truncated.aivmx", "bare.aivmx", "old.aivmx", "novectors.aivmx")
"""The names ``add_broken_voices`` gives the broken AIVMX files in ``aivmx/``."""
BROKEN_SBV2 = ("novectors", "older")
"""The names of the broken SBV2 export folders in ``sbv2/``."""


def add_broken_voices(root: Path) -> None:
    """Broken AIVMX files (``BROKEN_AIVMX``: truncated, without metadata, of an older
    architecture, without style vectors) and SBV2 exports (``BROKEN_SBV2``: without style
    vectors, not JP-Extra) in the data dir ``root``."""
    makers = (
        truncated_aivmx,
        aivmx_without_metadata,
        aivmx_of_another_architecture,
        aivmx_without_style_vectors,
    )
    for name, make in zip(BROKEN_AIVMX, makers, strict=True):
        make(root / "aivmx" / name)
    sbv2_without_style_vectors(root / "sbv2" / BROKEN_SBV2[0])
    sbv2_not_jp_extra(root / "sbv2" / BROKEN_SBV2[1])
