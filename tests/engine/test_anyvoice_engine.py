"""AIVMX files and Style-Bert-VITS2 export folders as voices: found in a data dir, spoken by
the same pipeline, with audio equal to the file's own graph and pauses from its own durations."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
from anyvoice_utils import (
    AIVMX_FIXTURE,
    AIVMX_VOICES,
    SBV2_FIXTURE,
    SBV2_MODEL_NAME,
    SBV2_VOICES,
    add_broken_voices,
    aivmx_with_renamed_input,
    aivmx_without_style_vectors,
    good_data_dir,
    good_voices,
)
from compiled_voices import CompiledCaches

from tools.engine_audio import float_pieces
from tools.server_process import TINY_VOICE_DIR, TINY_VOICE_ROOT
from wyoming_hayakoe.engine import Engine, SynthesisParams
from wyoming_hayakoe.errors import ModelFileError
from wyoming_hayakoe.inference.synthesizer import synthesizer_inputs
from wyoming_hayakoe.voices.sources import slug, speaker_names
from wyoming_hayakoe.voices.store import VoiceStore

ZERO_NOISE = dict(sdp_ratio=0.2, noise_scale=0.0, noise_scale_w=0.0)
TEXT = "今日はいい天気ですね、散歩に行きましょう"
MODELS = {"test-voice-1": AIVMX_FIXTURE, "tiny-sbv2-sora": SBV2_FIXTURE / SBV2_MODEL_NAME}


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return good_data_dir(tmp_path_factory.mktemp("voices"))


@pytest.fixture(scope="module")
def engine(
    data_dir: Path, tmp_path_factory: pytest.TempPathFactory, compiled_caches: CompiledCaches
) -> Engine:
    """With a cache dir: the synthesizer split at the decoder, attention on its band (the
    run's compiled models of these voices, shared with test_anyvoice_server)."""
    voices = (TINY_VOICE_DIR, *good_voices(data_dir))
    cache = compiled_caches.copy(tmp_path_factory.mktemp("cache"), TINY_VOICE_ROOT, voices)
    return Engine(TINY_VOICE_ROOT, threads=1, cache_dir=cache)


def store_of(*dirs: Path) -> VoiceStore:
    return VoiceStore([TINY_VOICE_ROOT, *dirs], local_files_only=True)


# --- discovery ------------------------------------------------------------------------------


def test_every_speaker_of_both_fixtures_is_a_voice(data_dir: Path) -> None:
    sources = store_of(data_dir).sources()
    assert set(sources) == {"tiny", *AIVMX_VOICES, *SBV2_VOICES}
    for name, (description, styles) in {**AIVMX_VOICES, **SBV2_VOICES}.items():
        source = sources[name]
        assert (source.description, list(source.styles)) == (description, styles)
    aoi = sources["test-voice-0"]
    assert (aoi.kind, aoi.speaker, aoi.speaker_id, aoi.license) == (
        "aivmx",
        "あおい",
        0,
        "CC0 1.0 Universal",
    )
    assert aoi.credit == (
        "wyoming-hayakoe test fixtures (テスト声)",
        "https://hub.aivis-project.com/aivm-models/a26fd5e4-9c24-5542-97ac-41bdda679157",
    )
    assert aoi.license_text is not None and "No rights reserved" in aoi.license_text
    sora = sources["tiny-sbv2-sora"]
    assert (sora.kind, sora.speaker_id, sora.model.name) == ("sbv2", 1, SBV2_MODEL_NAME)


def test_files_directly_in_the_data_dir_and_sbv2_model_assets_count(tmp_path: Path) -> None:
    (tmp_path / "model_assets").mkdir()
    (tmp_path / "model_assets" / "my voice").symlink_to(SBV2_FIXTURE)  # leads outside: no
    (tmp_path / "model_assets" / "mine").mkdir()
    for path in SBV2_FIXTURE.iterdir():
        (tmp_path / "model_assets" / "mine" / path.name).write_bytes(path.read_bytes())
    uuid_name = "0f3e3f2a-2b8b-4c55-9d4e-0123456789ab.aivmx"
    (tmp_path / uuid_name).write_bytes(AIVMX_FIXTURE.read_bytes())
    assert set(store_of(tmp_path).sources()) == {
        "tiny",
        "aivm-0f3e3f2a-0",
        "aivm-0f3e3f2a-1",
        "mine-aoi",
        "mine-sora",
    }


def test_slugs_are_ascii_and_stable() -> None:
    assert slug("test-voice") == "test-voice"
    assert slug("My Voice (v2)") == "My-Voice-v2"
    assert slug("ずんだもん") == ""
    assert slug("Ｆｕｌｌｗｉｄｔｈ") == "Fullwidth"
    assert speaker_names("m", [("あおい", 0), ("そら", 3)]) == {0: "m-0", 3: "m-3"}
    assert speaker_names("m", [("Aoi", 0), ("Sora", 1)]) == {0: "m-aoi", 1: "m-sora"}
    assert speaker_names("m", [("Aoi", 0), ("aoi", 1)]) == {0: "m-0", 1: "m-1"}
    assert speaker_names("m", [("only", 2)]) == {2: "m"}


# What the store logs for each of add_broken_voices's files.
BAD_FILES = {
    "aivmx/truncated.aivmx": "not a readable AIVMX file",
    "aivmx/bare.aivmx": "not a readable AIVMX file",
    "aivmx/old.aivmx": "only Style-Bert-VITS2 (JP-Extra) voices",
    "aivmx/novectors.aivmx": "holds no style vectors",
    "sbv2/novectors": "has no style_vectors.npy",
    "sbv2/older": "not a JP-Extra model",
}


def test_bad_files_are_left_out_with_one_line_each(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    add_broken_voices(good_data_dir(tmp_path))
    (tmp_path / "sbv2" / "unconverted").mkdir()
    store = store_of(tmp_path)
    with caplog.at_level(logging.WARNING, logger="wyoming_hayakoe.voices"):
        assert set(store.sources()) == {"tiny", *AIVMX_VOICES, *SBV2_VOICES}
        store.sources()  # a second scan reports nothing again
    lines = [r.getMessage() for r in caplog.records]
    expected = {str(tmp_path / path): reason for path, reason in BAD_FILES.items()}
    expected[str(tmp_path / "sbv2" / "unconverted")] = "holds no .onnx export"
    assert len(lines) == len(expected), lines
    for path, reason in expected.items():
        (line,) = [line for line in lines if re.search(re.escape(path) + "[ :/]", line)]
        assert reason in line


def test_a_replaced_file_is_read_again(tmp_path: Path) -> None:
    target = tmp_path / "aivmx" / "voice.aivmx"
    aivmx_without_style_vectors(target)
    store = store_of(tmp_path)
    assert set(store.sources()) == {"tiny"}
    target.write_bytes(AIVMX_FIXTURE.read_bytes())
    assert set(store.sources()) == {"tiny", "voice-0", "voice-1"}


# --- synthesis ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", MODELS)
def test_audio_equals_the_files_own_graph(name: str, data_dir: Path, engine: Engine) -> None:
    voice = engine.voices.load(store_of(data_dir).sources()[name])
    assert voice.decoder is not None and voice.duration_predictor is not None
    params = SynthesisParams(style=voice.styles[-1], speaker_id=voice.speaker_id, **ZERO_NOISE)
    pieces = list(float_pieces(engine, voice, TEXT, params))
    assert len(pieces) > 1  # windows of one sentence: the decoder split at work
    got = np.concatenate([p.audio for p in pieces])

    phonemes = engine.frontend.phonemize(engine.prepare(TEXT).rewritten)
    features = engine.features(phonemes)
    inputs = synthesizer_inputs(phonemes, features, voice.style_vector(params.style, 1.0), params)
    renamed = {"x": "x_tst", "x_lengths": "x_tst_lengths", "tone": "tones"}
    feeds = {renamed.get(k, k): v for k, v in inputs.items()}
    for scalar in ("length_scale", "sdp_ratio", "noise_scale", "noise_scale_w"):
        feeds[scalar] = feeds[scalar].reshape(())  # the converter's 0-d scalars
    session = ort.InferenceSession(str(MODELS[name]), providers=["CPUExecutionProvider"])
    want = session.run(["output"], feeds)[0].reshape(-1)
    assert feeds["sid"].tolist() == [1]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, atol=1e-4)


@pytest.mark.parametrize("name", MODELS)
def test_the_cut_out_durations_are_the_graphs(name: str, data_dir: Path, engine: Engine) -> None:
    voice = engine.voices.load(store_of(data_dir).sources()[name])
    params = SynthesisParams(style=voice.styles[0], speaker_id=voice.speaker_id, **ZERO_NOISE)
    phonemes = engine.frontend.phonemize("こんにちは。元気ですか？はい！")
    features = engine.features(phonemes)
    style = voice.style_vector(params.style, 1.0)
    frames = voice.predict_durations(phonemes, features, style, params)
    assert frames is not None and frames.shape == (len(phonemes.phone_ids),)
    inputs = voice.inputs.feed(synthesizer_inputs(phonemes, features, style, params))
    whole = ort.InferenceSession(str(MODELS[name]), providers=["CPUExecutionProvider"])
    audio, attn = whole.run(None, inputs)[:2]
    np.testing.assert_array_equal(frames, attn[0, 0].sum(axis=0))
    assert audio.shape[-1] == int(frames.sum()) * voice.config.hop_length


def test_speakers_of_one_file_share_its_sessions(data_dir: Path, engine: Engine) -> None:
    sources = store_of(data_dir).sources()
    aoi, sora = (engine.voices.load(sources[n]) for n in ("test-voice-0", "test-voice-1"))
    assert aoi.synthesizer is sora.synthesizer
    assert (aoi.speakers, sora.speakers, aoi.speaker_id, sora.speaker_id) == (
        ["あおい"],
        ["そら"],
        0,
        1,
    )
    assert (aoi.styles, sora.styles) == (["ノーマル", "喜び"], ["ノーマル", "怒り"])
    assert engine.voices.gain(aoi) > 0 and engine.voices.gain(sora) > 0


def test_pauses_come_from_the_cut_out_predictor(data_dir: Path, engine: Engine) -> None:
    voice = engine.voices.load(store_of(data_dir).sources()["tiny-sbv2-aoi"])
    params = SynthesisParams(style="Neutral", **ZERO_NOISE)
    pieces = [
        p for p in float_pieces(engine, voice, "はい。そうですね！", params) if p.pause_samples
    ]
    assert len(pieces) == 1  # the second sentence, after a predicted pause
    assert pieces[0].sentence_index == 1


def test_a_renamed_input_is_refused_at_load(tmp_path: Path, tiny_model_cache: Path) -> None:
    path = aivmx_with_renamed_input(tmp_path / "aivmx" / "renamed.aivmx")
    source = store_of(tmp_path).sources()["renamed-0"]  # the metadata is fine
    for cache in (None, tiny_model_cache):
        engine = Engine(TINY_VOICE_ROOT, threads=1, cache_dir=cache)
        with pytest.raises(ModelFileError) as caught:
            engine.voices.load(source)
        assert str(path) in str(caught.value)
        assert "missing inputs ['sid']" in str(caught.value)
        assert "unexpected inputs ['speaker']" in str(caught.value)


def test_without_a_ceil_node_pauses_fall_back(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import onnx

    model = onnx.load(str(SBV2_FIXTURE / SBV2_MODEL_NAME))
    (ceil,) = [n for n in model.graph.node if n.op_type == "Ceil"]
    ceil.op_type = "Floor"  # one frame fewer per phoneme in the branch: it cannot be found
    folder = tmp_path / "sbv2" / "floor"
    folder.mkdir(parents=True)
    for name in ("config.json", "style_vectors.npy"):
        (folder / name).write_bytes((SBV2_FIXTURE / name).read_bytes())
    onnx.save(model, str(folder / "floor.onnx"))
    engine = Engine(TINY_VOICE_ROOT, threads=1)
    with caplog.at_level(logging.WARNING):
        voice = engine.voices.load(store_of(tmp_path).sources()["floor-aoi"])
    assert voice.duration_predictor is None
    assert any("0 Ceil nodes" in r.getMessage() for r in caplog.records)
    params = SynthesisParams(style="Neutral", **ZERO_NOISE)
    assert [p.pause_samples > 0 for p in float_pieces(engine, voice, "はい。いいえ。", params)] == [
        False,
        True,
    ]


def test_a_taken_name_leaves_the_later_file_out(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    good_data_dir(tmp_path)
    (tmp_path / AIVMX_FIXTURE.name).write_bytes(AIVMX_FIXTURE.read_bytes())
    store = store_of(tmp_path)
    with caplog.at_level(logging.WARNING, logger="wyoming_hayakoe.voices"):
        sources = store.sources()
        store.sources()
    assert sources["test-voice-0"].path == tmp_path / "aivmx" / AIVMX_FIXTURE.name
    taken = [r.getMessage() for r in caplog.records if "is taken by" in r.getMessage()]
    assert len(taken) == 2  # one line for each of its speakers, once
    assert all(str(tmp_path / AIVMX_FIXTURE.name) + " is left out" in line for line in taken)


def test_a_hayakoe_folder_without_its_predictor_gets_one_from_the_graph(tmp_path: Path) -> None:
    folder = tmp_path / "tiny"
    folder.mkdir()
    for name in ("config.json", "style_vectors.npy", "synthesizer.onnx"):
        (folder / name).write_bytes((TINY_VOICE_DIR / name).read_bytes())
    engine = Engine(TINY_VOICE_ROOT, threads=1)
    cut, own = engine.voices.load(folder), engine.voices.load(TINY_VOICE_DIR)
    assert cut.duration_predictor is not None
    params = SynthesisParams(**ZERO_NOISE)
    phonemes = engine.frontend.phonemize("こんにちは。元気ですか？")
    features = engine.features(phonemes)
    style = own.style_vector("Neutral", 1.0)
    want = own.predict_durations(phonemes, features, style, params)
    got = cut.predict_durations(phonemes, features, style, params)
    assert got is not None and want is not None
    np.testing.assert_array_equal(got, want)
