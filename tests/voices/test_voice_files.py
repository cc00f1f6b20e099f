"""The voice file variants HayaKoe accepts: a Q8 synthesizer, weights as external data, a
config without a version, and speaker ids that are not 0, 1, 2..."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from fake_repo import write_fake_bert
from hf_server import HFTestServer

from tools.engine_audio import float_pieces
from wyoming_hayakoe.compiling.voice_models import voice_folder
from wyoming_hayakoe.engine import Engine, SynthesisParams
from wyoming_hayakoe.errors import ModelFileError, UnknownStyleError
from wyoming_hayakoe.service.voice_names import request_params
from wyoming_hayakoe.voices import layout
from wyoming_hayakoe.voices.config import VoiceConfig
from wyoming_hayakoe.voices.download import DownloadOptions
from wyoming_hayakoe.voices.sources import hayakoe_source
from wyoming_hayakoe.voices.store import VoiceStore

TINY_ROOT = Path(__file__).parents[1] / "fixtures" / "tiny-voice"
TINY = TINY_ROOT / "onnx" / "speakers" / "tiny"
TEXT = "リビングの照明をつけました。"
PARAMS = SynthesisParams(sdp_ratio=0.0, noise_scale=0.0, noise_scale_w=0.0)
OPTIONS = DownloadOptions(timeout=5.0, chunk_size=64 * 1024, retries=0)


def _copy_voice(data: Path, name: str) -> Path:
    folder = layout.voice_dir(data, name)
    shutil.copytree(TINY, folder)
    return folder


def _audio(engine: Engine, folder: Path, params: SynthesisParams = PARAMS) -> np.ndarray:
    voice = engine.voices.load(folder)
    return np.concatenate([piece.audio for piece in float_pieces(engine, voice, TEXT, params)])


def _save_with_external_data(model: Path) -> Path:
    import onnx

    graph = onnx.load(str(model))
    data = layout.external_data_file(model)
    onnx.save_model(
        graph, str(model), save_as_external_data=True, location=data.name, size_threshold=0
    )
    return data


@pytest.fixture(scope="module")
def whole_engine() -> Engine:
    return Engine(TINY_ROOT, threads=1)


@pytest.fixture(scope="module")
def tiny_audio(whole_engine: Engine) -> np.ndarray:
    return _audio(whole_engine, TINY)


# --- synthesizer_q8.onnx -----------------------------------------------------------------


@pytest.mark.slow
def test_q8_synthesizer_stands_in_for_an_absent_synthesizer(
    tmp_path: Path, whole_engine: Engine, tiny_audio: np.ndarray
) -> None:
    folder = _copy_voice(tmp_path / "data", "q8")
    (folder / "synthesizer.onnx").rename(folder / "synthesizer_q8.onnx")
    store = VoiceStore([tmp_path / "data"], local_files_only=True)
    assert store.installed() == {"q8": folder}
    assert store.missing_files("q8") is None
    assert layout.synthesizer_file(folder) == folder / "synthesizer_q8.onnx"
    np.testing.assert_array_equal(_audio(whole_engine, folder), tiny_audio)
    # Compiled (split and optimized) from the q8 file just as well.
    split = Engine(TINY_ROOT, threads=1, cache_dir=tmp_path / "cache")
    assert split.voices.load(folder).decoder is not None
    assert np.max(np.abs(_audio(split, folder) - tiny_audio)) <= 1e-4


def test_synthesizer_onnx_wins_over_q8_and_neither_is_incomplete(tmp_path: Path) -> None:
    folder = _copy_voice(tmp_path / "data", "both")
    shutil.copy(folder / "synthesizer.onnx", folder / "synthesizer_q8.onnx")
    assert layout.synthesizer_file(folder) == folder / "synthesizer.onnx"
    (folder / "synthesizer.onnx").unlink()
    (folder / "synthesizer_q8.onnx").unlink()
    store = VoiceStore([tmp_path / "data"], local_files_only=True)
    assert store.installed() == {}
    assert store.missing_files("both") == (folder, ["synthesizer.onnx or synthesizer_q8.onnx"])


# --- external data -----------------------------------------------------------------------


@pytest.mark.slow
def test_external_weights_load_and_belong_to_the_cache_key(
    tmp_path: Path, tiny_audio: np.ndarray
) -> None:
    folder = _copy_voice(tmp_path / "data", "external")
    synthesizer = folder / "synthesizer.onnx"
    data = _save_with_external_data(synthesizer)
    assert data.stat().st_size > synthesizer.stat().st_size  # the weights moved out
    engine = Engine(TINY_ROOT, threads=1, cache_dir=tmp_path / "cache")
    assert engine.voices.load(folder).decoder is not None
    assert np.max(np.abs(_audio(engine, folder) - tiny_audio)) <= 1e-4

    source = hayakoe_source("external", folder)
    first = voice_folder(tmp_path / "cache", source)
    assert first.is_dir()
    # New weights with the graph file untouched: the compiled copy must not be reused.
    stat = data.stat()
    os.utime(data, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert voice_folder(tmp_path / "cache", source) != first


def test_download_brings_external_weights_before_their_model(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    write_fake_bert(repo)
    folder = _copy_voice(repo, "jvnv-F1-jp")
    data = _save_with_external_data(folder / "synthesizer.onnx")
    (folder / "synthesizer.onnx").rename(folder / "synthesizer_q8.onnx")
    data.rename(folder / "synthesizer_q8.onnx.data")
    with HFTestServer(repo, redirect_lfs=True, lfs_min_size=1000) as server:
        store = VoiceStore([tmp_path / "data"], endpoint=server.endpoint, options=OPTIONS)
        got = store.ensure_voice("jvnv-F1-jp")
        gets = [r.path for r in server.requests if r.method == "GET"]
    for name in ("synthesizer_q8.onnx", "synthesizer_q8.onnx.data"):
        assert (got / name).read_bytes() == (folder / name).read_bytes()
    assert not (got / "synthesizer.onnx").exists()
    prefix = "onnx/speakers/jvnv-F1-jp/"
    # The model marks a finished voice: its weights are on disk before it.
    assert gets.index(prefix + "synthesizer_q8.onnx.data") < gets.index(
        prefix + "synthesizer_q8.onnx"
    )
    assert store.installed() == {"jvnv-F1-jp": got}


# --- config.json -------------------------------------------------------------------------


def _config(folder: Path) -> dict:  # type: ignore[type-arg]
    return json.loads((folder / "config.json").read_text(encoding="utf-8"))


def _write_config(folder: Path, config: dict) -> None:  # type: ignore[type-arg]
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")


def test_config_without_version_is_read_as_jp_extra(tmp_path: Path, whole_engine: Engine) -> None:
    folder = _copy_voice(tmp_path / "data", "old")
    config = _config(folder)
    del config["version"]
    _write_config(folder, config)
    assert VoiceConfig.read(folder / "config.json").sample_rate == 44100
    assert whole_engine.voices.load(folder).styles[0] == "Neutral"
    config["version"] = "2.0"  # a stated version that is not JP-Extra is still refused
    _write_config(folder, config)
    with pytest.raises(ModelFileError, match="JP-Extra"):
        VoiceConfig.read(folder / "config.json")


# --- speaker ids -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def two_speakers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The tiny voice with speakers ``a`` = 3 and ``b`` = 7 (an 8-row speaker table)."""
    import onnx
    from onnx import numpy_helper

    folder = _copy_voice(tmp_path_factory.mktemp("speakers"), "pair")
    for name in ("synthesizer.onnx", "duration_predictor.onnx"):
        model = onnx.load(str(folder / name))
        for index, init in enumerate(model.graph.initializer):
            if init.name == "emb_g.weight":
                row = numpy_helper.to_array(init)[0]
                rng = np.random.default_rng(5)
                table = np.stack([row * rng.uniform(0.2, 2.0, row.shape) for _ in range(8)])
                table[3] = row
                updated = numpy_helper.from_array(table.astype(np.float32), init.name)
                model.graph.initializer[index].CopyFrom(updated)
        onnx.save(model, str(folder / name))
    config = _config(folder)
    config["data"]["spk2id"] = {"a": 3, "b": 7}
    config["data"]["n_speakers"] = 8
    _write_config(folder, config)
    yield folder


def test_speaker_ids_are_the_values_of_spk2id(
    two_speakers: Path, whole_engine: Engine, tiny_audio: np.ndarray
) -> None:
    voice = whole_engine.voices.load(two_speakers)
    assert voice.speakers == ["a", "b"]
    assert voice.config.default_speaker_id == 3
    # Requests that name no speaker get the voice's first one, not a list position.
    assert request_params(PARAMS, voice, None).speaker_id == 3
    assert request_params(PARAMS, voice, "Happy").speaker_id == 3
    assert request_params(PARAMS, voice, "b").speaker_id == 7
    assert whole_engine.voices.gain(voice) > 0  # calibration runs with speaker 3
    first = _audio(whole_engine, two_speakers, request_params(PARAMS, voice, None))
    second = _audio(whole_engine, two_speakers, request_params(PARAMS, voice, "b"))
    np.testing.assert_allclose(first, tiny_audio, atol=1e-6)  # row 3 is the original speaker
    assert first.shape != second.shape or np.max(np.abs(first - second)) > 1e-3
    for position in (0, 1):
        with pytest.raises(UnknownStyleError, match="no speaker id"):
            list(float_pieces(whole_engine, voice, TEXT, SynthesisParams(speaker_id=position)))
