"""The metadata of the committed AIVMX file and Style-Bert-VITS2 export folder: the AIVM
keys and manifest that aivmlib reads, hyper-parameters and style vectors that agree with it,
and the files the converter leaves (their graphs: test_sbv2_fixtures.py)."""

from __future__ import annotations

import json
from pathlib import Path

import aivmlib
import numpy as np
import onnx
import pytest
from aivmlib.schemas.aivm_manifest import ModelArchitecture, ModelFormat
from sbv2_fixture_files import AIVMX, HOP, SBV2_DIR, SBV2_ONNX, style_vectors

AIVM_KEYS = {"aivm_manifest", "aivm_hyper_parameters", "aivm_style_vectors"}


# --- the AIVMX file -------------------------------------------------------------------------


def test_aivmx_metadata_keys_are_the_aivm_spec_ones() -> None:
    assert {prop.key for prop in onnx.load(str(AIVMX)).metadata_props} == AIVM_KEYS
    assert not onnx.load(str(SBV2_ONNX)).metadata_props  # a plain export has none


def test_aivmlib_reads_the_manifest_back() -> None:
    with AIVMX.open("rb") as file:
        manifest = aivmlib.read_aivmx_metadata(file).manifest
    assert manifest.name == "テスト声"
    assert manifest.model_architecture == ModelArchitecture.StyleBertVITS2JPExtra
    assert manifest.model_format == ModelFormat.ONNX
    assert manifest.manifest_version == "1.0"
    assert manifest.license is not None and "CC0" in manifest.license
    assert manifest.creators == ["wyoming-hayakoe test fixtures"]
    speakers = [
        (s.name, s.local_id, [(st.name, st.local_id) for st in s.styles], s.supported_languages)
        for s in manifest.speakers
    ]
    assert speakers == [
        ("あおい", 0, [("ノーマル", 0), ("喜び", 1)], ["ja"]),
        ("そら", 1, [("ノーマル", 0), ("怒り", 2)], ["ja"]),
    ]
    assert all(s.icon.startswith("data:image/png;base64,") for s in manifest.speakers)


def test_aivmx_hyper_parameters_and_style_vectors_agree_with_the_manifest() -> None:
    with AIVMX.open("rb") as file:
        meta = aivmlib.read_aivmx_metadata(file)
    data = meta.hyper_parameters.data
    assert meta.hyper_parameters.version.endswith("JP-Extra") and data.use_jp_extra
    assert meta.hyper_parameters.model_name == meta.manifest.name
    assert data.spk2id == {s.name: s.local_id for s in meta.manifest.speakers}
    # style local ids are rows of the model-wide style vectors
    assert data.style2id == {"ノーマル": 0, "喜び": 1, "怒り": 2}
    assert (data.sampling_rate, data.hop_length, data.add_blank) == (44100, HOP, True)
    styles = style_vectors("aivmx")
    assert styles.shape == (data.num_styles, 256) and styles.dtype == np.float32
    np.testing.assert_allclose(styles[0], styles[1:].mean(axis=0), atol=1e-6)


def test_a_truncated_aivmx_is_refused_by_aivmlib(tmp_path: Path) -> None:
    broken = tmp_path / "broken.aivmx"
    broken.write_bytes(AIVMX.read_bytes()[: AIVMX.stat().st_size // 2])
    with broken.open("rb") as file, pytest.raises(aivmlib.AivmValidationError):
        aivmlib.read_aivmx_metadata(file)


# --- the SBV2 export folder -----------------------------------------------------------------


def test_sbv2_export_folder_is_what_the_converter_leaves() -> None:
    assert sorted(p.name for p in SBV2_DIR.iterdir()) == [
        "config.json",
        "style_vectors.npy",
        "tiny-sbv2_e100_s2000.onnx",
    ]
    config = json.loads((SBV2_DIR / "config.json").read_text(encoding="utf-8"))
    data = config["data"]
    assert config["version"].endswith("JP-Extra") and data["use_jp_extra"] is True
    assert config["model_name"] == SBV2_DIR.name
    assert data["spk2id"] == {"aoi": 0, "sora": 1} and data["n_speakers"] == 2
    assert data["style2id"] == {"Neutral": 0, "Happy": 1, "Angry": 2}
    styles = style_vectors("sbv2")
    assert styles.shape == (data["num_styles"], 256) and styles.dtype == np.float32
    np.testing.assert_allclose(styles[0], styles[1:].mean(axis=0), atol=1e-6)
