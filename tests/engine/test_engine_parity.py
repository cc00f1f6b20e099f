"""Audio parity with the reference on the committed tiny synthetic voice.

The voice has the real architecture and random weights: this proves the same graph gets the
same inputs and the same post-processing (sentences, pauses), not that it sounds good.
Noise, stochastic durations and sdp_ratio are 0 so both sides are deterministic.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from compiled_voices import CompiledCaches
from reference_oracle import own_reference_tokenizer

from tools.engine_audio import float_pieces, pcm_pieces
from tools.reference_g2p import read_as_we_do
from wyoming_hayakoe.engine import Engine, SynthesisParams

ref_speaker = pytest.importorskip("hayakoe.api.speaker", reason="hayakoe (oracle) missing")

ROOT = Path(__file__).parents[1] / "fixtures" / "tiny-voice"
VOICE = "tiny"
TOLERANCE = 1e-4
WINDOW_TOLERANCE = 1e-5
"""Windows against whole decoding, relative to the peak (see test_decoder_context.py)."""

SINGLE = [
    "こんにちは。",
    "今日はいい天気ですね",
    "リビングの照明をつけました！",
    "明日の予定を教えてください？",
]
MULTI = [
    "こんにちは。元気ですか？今日は晴れです！",
    "玄関のドアが開いています。閉めますか？",
    "おはようございます。\n今日の最高気温は二十度です。",
    "えっ！？本当ですか。信じられません……。",
]


@pytest.fixture(scope="module", params=["split", "whole"])
def engine(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    compiled_caches: CompiledCaches,
) -> Engine:
    """``split``: compiled models (optimized, decoder split, windows); ``whole``: as published."""
    if request.param == "whole":
        return Engine(ROOT, threads=2)
    return Engine(ROOT, threads=2, cache_dir=compiled_caches.copy(tmp_path_factory.mktemp("c")))


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory):
    from hayakoe import TTS

    read_as_we_do()
    # The reference keeps its tokenizer in a process-wide global: the tiny voice's for this
    # module, then back to what the other tests loaded.
    with own_reference_tokenizer():
        cache = tmp_path_factory.mktemp("hayakoe-cache")
        tts = TTS(device="cpu", bert_source=f"file://{ROOT}", cache_dir=cache)
        yield tts.load(VOICE, source=f"file://{ROOT}").prepare().speakers[VOICE]


def _params(
    style: str = "Neutral", weight: float = 1.0, length_scale: float = 1.0
) -> SynthesisParams:
    return SynthesisParams(
        style=style,
        style_weight=weight,
        length_scale=length_scale,
        sdp_ratio=0.0,
        noise_scale=0.0,
        noise_scale_w=0.0,
    )


def _ref_params(p: SynthesisParams):
    return ref_speaker._SynthesisParams(
        style=p.style,
        style_weight=p.style_weight,
        speed=p.length_scale,
        sdp_ratio=p.sdp_ratio,
        noise=p.noise_scale,
        noise_w=p.noise_scale_w,
    )


def _reference_render(speaker, text: str, p: SynthesisParams) -> tuple[np.ndarray, list[int]]:
    """The reference's float audio (before its peak normalization) and its gap lengths."""
    sentences = ref_speaker._split_sentences(text)
    rp = _ref_params(p)
    pauses = speaker._predict_pauses(
        text, sentences, p.style, p.style_weight, 0, p.length_scale, p.sdp_ratio, p.noise_scale_w
    )
    parts: list[np.ndarray] = []
    gaps: list[int] = []
    rate = speaker.sampling_rate
    for index, sentence in enumerate(sentences):
        audio, _ = speaker._synthesize_one(sentence, rp)
        if index > 0:
            trailing = ref_speaker._measure_trailing_silence(parts[-1], rate)
            gap = ref_speaker._boundary_gap(trailing, rate, np.float32, pauses, index - 1)
            gaps.append(len(gap))
            parts.append(gap)
        parts.append(audio)
    return np.concatenate(parts), gaps


def _our_render(engine: Engine, text: str, p: SynthesisParams) -> tuple[np.ndarray, list[int]]:
    voice = engine.voices.load(ROOT / "onnx" / "speakers" / VOICE)
    parts: list[np.ndarray] = []
    gaps: list[int] = []
    sentence_index = 0
    for chunk in float_pieces(engine, voice, text, p):
        if chunk.sentence_index != sentence_index:
            gaps.append(chunk.pause_samples)
            sentence_index = chunk.sentence_index
        else:
            assert chunk.pause_samples == 0
        parts.append(np.zeros(chunk.pause_samples, np.float32))
        parts.append(chunk.audio)
    return np.concatenate(parts), gaps


def _assert_same_audio(ours: np.ndarray, theirs: np.ndarray) -> None:
    assert ours.shape == theirs.shape
    assert np.max(np.abs(theirs)) > 1e-3, "reference audio is silent: the test proves nothing"
    assert np.max(np.abs(ours - theirs)) <= TOLERANCE


@pytest.mark.slow
@pytest.mark.parametrize("text", SINGLE)
def test_single_sentence_audio_matches_reference(engine, reference, text: str) -> None:
    ours, _ = _our_render(engine, text, _params())
    theirs, _ = _reference_render(reference, text, _params())
    _assert_same_audio(ours, theirs)


@pytest.mark.slow
@pytest.mark.parametrize("text", MULTI)
def test_multi_sentence_audio_and_pauses_match_reference(engine, reference, text: str) -> None:
    ours, our_gaps = _our_render(engine, text, _params())
    theirs, their_gaps = _reference_render(reference, text, _params())
    assert our_gaps == their_gaps
    assert all(gap > 0 for gap in our_gaps)
    _assert_same_audio(ours, theirs)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("style", "weight", "length_scale"),
    [("Happy", 1.0, 1.0), ("Angry", 0.5, 1.2), ("Sad", 2.0, 0.8)],
)
def test_styles_and_length_scales_match_reference(
    engine, reference, style, weight, length_scale
) -> None:
    text = "電気を消しました。おやすみなさい。"
    p = _params(style, weight, length_scale)
    ours, our_gaps = _our_render(engine, text, p)
    theirs, their_gaps = _reference_render(reference, text, p)
    assert our_gaps == their_gaps
    _assert_same_audio(ours, theirs)


def test_generator_yields_each_sentence_before_the_next_is_synthesized(engine) -> None:
    voice = engine.voices.load(ROOT / "onnx" / "speakers" / VOICE)
    stream = pcm_pieces(
        engine, voice, "一つ目の文です。二つ目の文です。三つ目の文です。", _params()
    )
    first = next(stream)
    assert first.text == "一つ目の文です。"
    assert len(first.pcm) > 0 and len(first.pcm) % 2 == 0
    texts = [first.text] + [chunk.text for chunk in stream]
    expected = ["一つ目の文です。", "二つ目の文です。", "三つ目の文です。"]
    assert list(dict.fromkeys(texts)) == expected


def test_long_sentence_streams_in_windows_equal_to_whole_decoding(tiny_model_cache: Path) -> None:
    text = (
        "本日の天気は晴れのち曇り、最高気温は二十三度、"
        "最低気温は十五度で、夕方から雨が降るでしょう。"
    )
    split = Engine(ROOT, threads=2, cache_dir=tiny_model_cache)
    whole = Engine(ROOT, threads=2)
    voice_dir = ROOT / "onnx" / "speakers" / VOICE
    chunks = list(float_pieces(split, split.voices.load(voice_dir), text, _params()))
    assert split.voices.load(voice_dir).decoder is not None
    assert len(chunks) >= 2, "a long sentence must come out in several windows"
    (reference,) = float_pieces(whole, whole.voices.load(voice_dir), text, _params())
    stitched = np.concatenate([c.audio for c in chunks])
    assert stitched.shape == reference.audio.shape
    # Relative to the peak, at the level of float rounding: the fixture's decoder has weight on
    # its outer taps, so one frame too little context is off by about 1e-3 of the peak.
    peak = float(np.max(np.abs(reference.audio)))
    assert np.max(np.abs(stitched - reference.audio)) <= WINDOW_TOLERANCE * peak


def test_decoder_context_is_exactly_how_far_a_latent_frame_reaches(tiny_model_cache: Path) -> None:
    """Change one latent frame: the audio that changes spans exactly the computed context."""
    engine = Engine(ROOT, threads=1, cache_dir=tiny_model_cache)
    decoder = engine.voices.load(ROOT / "onnx" / "speakers" / VOICE).decoder
    assert decoder is not None
    channels = {i.name: i.shape[1] for i in decoder.stages[0].session.get_inputs()}
    rng = np.random.default_rng(3)
    frames, poked = 80, 40
    latent = rng.standard_normal((1, channels[decoder.latent_name], frames)).astype(np.float32)
    condition = rng.standard_normal((1, channels[decoder.condition_name], 1)).astype(np.float32)

    def decode(z: np.ndarray) -> np.ndarray:
        return np.concatenate(list(decoder.decode(z, condition, [frames])))

    poked_latent = latent.copy()
    poked_latent[:, :, poked] += 3.0
    changed = np.nonzero(decode(latent) != decode(poked_latent))[0]
    hop = len(decode(latent)) // frames
    assert changed.size > 0
    assert poked - changed.min() // hop == decoder.context
    assert changed.max() // hop - poked == decoder.context


def test_engine_never_imports_torch() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from pathlib import Path; from wyoming_hayakoe.engine import Engine;"
        "from tools.engine_audio import pcm_pieces;"
        f"e = Engine(Path({str(ROOT)!r}), threads=1);"
        f"v = e.voices.load(Path({str(ROOT / 'onnx' / 'speakers' / VOICE)!r}));"
        "list(pcm_pieces(e, v, 'こんにちは。'));"
        "bad = [m for m in ('torch', 'transformers', 'hayakoe') if m in sys.modules];"
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).parents[2])
