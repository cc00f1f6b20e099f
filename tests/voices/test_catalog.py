"""The shipped voice catalog (wyoming_hayakoe/voices/voices.json)."""

from __future__ import annotations

import json
from importlib import resources
from urllib.parse import urlsplit

import pytest

from wyoming_hayakoe.errors import UnknownVoiceError
from wyoming_hayakoe.voices.catalog import (
    CatalogVoice,
    catalog_repository,
    is_valid_voice_name,
    load_bert_files,
    load_catalog,
    validate_voice_name,
)
from wyoming_hayakoe.voices.layout import (
    BERT_MODEL_PATH,
    REQUIRED_VOICE_FILES,
    TOKENIZER_VOCAB_PATH,
)

JVNV = ["jvnv-F1-jp", "jvnv-F2-jp", "jvnv-M1-jp", "jvnv-M2-jp"]
# The seven emotions of the JVNV corpus (facts given in the task, not read from our file)
JVNV_STYLES = {"Neutral", "Angry", "Disgust", "Fear", "Happy", "Sad", "Surprise"}


def _raw() -> dict:
    text = resources.files("wyoming_hayakoe.voices").joinpath("voices.json").read_text("utf-8")
    return json.loads(text)


def test_catalog_is_package_data_and_names_the_real_repository() -> None:
    assert catalog_repository() == ("lemondouble/hayakoe", "main")


def test_jvnv_voices_are_cc_by_sa_with_seven_styles() -> None:
    catalog = load_catalog()
    for name in JVNV:
        voice = catalog[name]
        assert isinstance(voice, CatalogVoice)
        assert voice.name == name and voice.language == "ja"
        assert set(voice.styles) == JVNV_STYLES and voice.styles[0] == "Neutral"
        assert voice.license == "CC-BY-SA-4.0"
        assert "JVNV" in voice.attribution_name


def test_every_voice_is_complete_and_safe() -> None:
    catalog = load_catalog()
    assert len(catalog) >= 4
    for name, voice in catalog.items():
        assert name == voice.name and is_valid_voice_name(name)
        assert voice.description and voice.styles and voice.license and voice.attribution_name
        assert urlsplit(voice.attribution_url).scheme == "https"
        required = [(r,) if isinstance(r, str) else r for r in REQUIRED_VOICE_FILES]
        by_names = {f.names: f for f in voice.files}
        assert all(names in by_names and not by_names[names].optional for names in required)
        # the synthesizer marks a finished voice, so it must come last; HayaKoe's q8 variant
        # stands in where synthesizer.onnx is absent
        assert voice.files[-1].names == ("synthesizer.onnx", "synthesizer_q8.onnx")
        assert {f.path for f in voice.files if f.optional} == {"duration_predictor.onnx"}
        names = [name for f in voice.files for name in f.names]
        assert all("/" not in p and ".." not in p for p in names)


def test_every_fact_names_a_source() -> None:
    raw = _raw()
    sources = raw["sources"]
    for entry in raw["voices"]:
        assert entry["facts_from"], entry["name"]
        assert set(entry["facts_from"]) <= set(sources), entry["name"]


def test_bert_files_cover_model_and_vocabulary() -> None:
    files = load_bert_files()
    required = {f.path for f in files if not f.optional}
    assert required == {BERT_MODEL_PATH, TOKENIZER_VOCAB_PATH}
    assert files[-1].path == BERT_MODEL_PATH  # the big file last, like the voices
    assert all(".." not in f.path and not f.path.startswith("/") for f in files)


def test_load_catalog_returns_a_fresh_dict() -> None:
    first = load_catalog()
    first.clear()
    assert "jvnv-F1-jp" in load_catalog()


@pytest.mark.parametrize("name", ["jvnv-F1-jp", "tsukuyomi_chan", "a", "my.voice-2", "X" * 64])
def test_valid_names(name: str) -> None:
    assert validate_voice_name(name) == name


@pytest.mark.parametrize(
    "name", ["", "..", "../x", "a/b", "a\\b", "/abs", ".x", "-x", "a..b", "a b", "X" * 65, "名前"]
)
def test_invalid_names(name: str) -> None:
    assert not is_valid_voice_name(name)
    with pytest.raises(UnknownVoiceError, match="invalid voice name"):
        validate_voice_name(name)
