"""Models prepared once per machine: split synthesizer, optimized files, cached gain."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from fs_utils import read_only

from wyoming_hayakoe.engine import Engine, SynthesisParams

ROOT = Path(__file__).parent / "fixtures" / "tiny-voice"
VOICE_DIR = ROOT / "onnx" / "speakers" / "tiny"
TEXT = "エアコンを二十五度に設定しました。"
QUIET = SynthesisParams(sdp_ratio=0.0, noise_scale=0.0, noise_scale_w=0.0)


def _audio(engine: Engine) -> np.ndarray:
    voice = engine.load_voice(VOICE_DIR)
    return np.concatenate([c.audio for c in engine.render(voice, TEXT, QUIET)])


def _snapshot(directory: Path) -> dict[str, int]:
    return {str(p.relative_to(directory)): p.stat().st_mtime_ns for p in directory.rglob("*")}


@pytest.mark.slow
def test_prepared_models_are_made_once_and_reused(tmp_path: Path) -> None:
    first = Engine(ROOT, threads=1, cache_dir=tmp_path)
    audio = _audio(first)
    voice = first.load_voice(VOICE_DIR)
    first.gain(voice)
    assert voice.decoder is not None
    made = _snapshot(tmp_path)
    assert any(name.endswith("decoder.onnx") for name in made)
    assert any(name.startswith("gain-") for name in made)
    assert not any(".tmp" in name or name.startswith(".") for name in made)

    second = Engine(ROOT, threads=1, cache_dir=tmp_path)
    assert np.array_equal(_audio(second), audio)
    assert second.gain(second.load_voice(VOICE_DIR)) == first.gain(voice)
    assert _snapshot(tmp_path) == made, "a second start must not rebuild anything"


def test_damaged_cache_falls_back_to_the_published_model(tiny_model_cache: Path) -> None:
    decoders = list(tiny_model_cache.glob("split-*/decoder.onnx"))
    assert decoders, "the tiny voice comes prepared"
    for decoder in decoders:
        decoder.write_bytes(decoder.read_bytes()[:100])
    engine = Engine(ROOT, threads=1, cache_dir=tiny_model_cache)
    assert engine.load_voice(VOICE_DIR).decoder is None
    whole = Engine(ROOT, threads=1)
    assert np.allclose(_audio(engine), _audio(whole), atol=1e-4)


def test_read_only_cache_dir_loads_models_as_published(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    with read_only(cache) as is_read_only:
        if not is_read_only:
            pytest.skip("cannot make a folder read-only here")
        engine = Engine(ROOT, threads=1, cache_dir=cache)
        assert engine.load_voice(VOICE_DIR).decoder is None
        assert list(cache.iterdir()) == []


@pytest.mark.slow
def test_cache_follows_a_changed_model(tmp_path: Path, tiny_model_cache: Path) -> None:
    voice_root = tmp_path / "root"
    shutil.copytree(ROOT, voice_root)  # times kept: the copy is prepared in the cache already
    cache = tiny_model_cache
    Engine(voice_root, threads=1, cache_dir=cache).load_voice(
        voice_root / "onnx" / "speakers" / "tiny"
    )
    before = {p.name for p in cache.glob("split-*")}
    synthesizer = voice_root / "onnx" / "speakers" / "tiny" / "synthesizer.onnx"
    os.utime(synthesizer, ns=(0, 1))  # a new download of the voice
    Engine(voice_root, threads=1, cache_dir=cache).load_voice(synthesizer.parent)
    after = {p.name for p in cache.glob("split-*")}
    assert before < after
