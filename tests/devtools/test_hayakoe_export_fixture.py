"""The voice exported the way HayaKoe's own exporter does (tests/fixtures/tiny-voice-hayakoe,
``script/make_synthetic_voice --exporter hayakoe``): its files carry that exporter's names,
and the engine, split and whole, and the server speak it as the reference does.

The exporter's wrapper calls ``net_g``'s submodules directly, so the weights are ``net_g.*``
while the nodes are scoped by the submodule alone (``/dec/...``, ``/enc_p/...``): torch names a
node's scope after the modules *called*, and ``net_g`` itself never is.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from compiled_voices import CompiledCaches
from reference_oracle import own_reference_tokenizer

from tools.engine_audio import float_pieces, pcm_pieces
from tools.reference_g2p import read_as_we_do
from tools.server_process import start_server
from tools.wyoming_requests import synthesize
from wyoming_hayakoe.engine import Engine, SynthesisParams

ROOT = Path(__file__).parents[1] / "fixtures" / "tiny-voice-hayakoe"
VOICE = "tiny-hk"
SPEAKER = ROOT / "onnx" / "speakers" / VOICE
TOLERANCE = 1e-4
TEXT_INPUTS = ["x", "x_lengths", "sid", "tone", "language", "bert", "style_vec"]
QUIET = SynthesisParams(sdp_ratio=0.0, noise_scale=0.0, noise_scale_w=0.0)
TEXTS = ["こんにちは。", "玄関のドアが開いています。閉めますか？"]


def _dims(value: onnx.ValueInfoProto) -> list[str | int]:
    return [d.dim_param or d.dim_value for d in value.type.tensor_type.shape.dim]


def _weights(model: onnx.ModelProto) -> list[str]:
    # Constant-folded tensors get generated names (onnx::...): only named weights count.
    return [i.name for i in model.graph.initializer if not i.name.startswith("onnx::")]


def test_synthesizer_has_the_exporters_names_opset_and_axes() -> None:
    model = onnx.load(str(SPEAKER / "synthesizer.onnx"))
    assert [(o.domain, o.version) for o in model.opset_import] == [("", 17)]
    inputs = {i.name: i for i in model.graph.input}
    assert list(inputs) == [
        *TEXT_INPUTS,
        "noise_scale",
        "length_scale",
        "noise_scale_w",
        "sdp_ratio",
    ]
    outputs = {o.name: o for o in model.graph.output}
    assert list(outputs) == ["audio", "durations"]
    assert _dims(outputs["audio"])[2] == "audio_len"
    assert _dims(outputs["durations"])[1] == "phone_len"
    assert _dims(inputs["x"])[1] == _dims(inputs["bert"])[2] == "phone_len"
    weights = _weights(model)
    assert weights and all(name.startswith("net_g.") for name in weights)
    assert "net_g.dec.conv_pre.weight" in weights
    nodes = {node.name for node in model.graph.node}
    assert {"/dec/conv_pre/Conv", "/dec/cond/Conv", "/dec/Tanh"} <= nodes


def test_duration_predictor_has_the_exporters_names() -> None:
    model = onnx.load(str(SPEAKER / "duration_predictor.onnx"))
    assert [i.name for i in model.graph.input] == [
        *TEXT_INPUTS,
        "length_scale",
        "noise_scale_w",
        "sdp_ratio",
    ]
    assert [o.name for o in model.graph.output] == ["durations"]
    weights = _weights(model)
    assert weights and all(name.startswith("net_g.") for name in weights)
    assert not any(".dec." in name for name in weights)


def test_bert_is_a_dynamically_quantized_masked_lm() -> None:
    model = onnx.load(str(ROOT / "onnx" / "bert" / "q8" / "bert_q8.onnx"))
    assert [i.name for i in model.graph.input] == ["input_ids", "attention_mask"]
    (output,) = model.graph.output
    assert output.name == "hidden_states"
    assert _dims(output)[:2] == ["batch", "seq_len"]
    assert any(name.startswith("model.deberta.") for name in _weights(model))
    ops = {node.op_type for node in model.graph.node}
    assert {"DynamicQuantizeLinear", "MatMulInteger"} <= ops
    assert "ConvInteger" not in ops


@pytest.fixture(scope="module", params=["split", "whole"])
def engine(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    compiled_caches: CompiledCaches,
) -> Engine:
    if request.param == "whole":
        return Engine(ROOT, threads=1)
    cache = compiled_caches.copy(tmp_path_factory.mktemp("model-cache"), ROOT, (SPEAKER,))
    return Engine(ROOT, threads=1, cache_dir=cache)


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory):
    pytest.importorskip("hayakoe", reason="hayakoe (oracle) missing")
    from hayakoe import TTS

    read_as_we_do()
    with own_reference_tokenizer():  # a process-wide global: this voice's, then back
        cache = tmp_path_factory.mktemp("hk")
        tts = TTS(device="cpu", bert_source=f"file://{ROOT}", cache_dir=cache)
        yield tts.load(VOICE, source=f"file://{ROOT}").prepare().speakers[VOICE]


@pytest.mark.slow
@pytest.mark.parametrize("text", TEXTS)
def test_engine_speaks_like_the_reference(engine: Engine, reference, text: str) -> None:
    from hayakoe.api import speaker as ref_speaker

    params = ref_speaker._SynthesisParams(
        style="Neutral", style_weight=1.0, speed=1.0, sdp_ratio=0.0, noise=0.0, noise_w=0.0
    )
    voice = engine.voices.load(SPEAKER, VOICE)
    for index, sentence in enumerate(ref_speaker._split_sentences(text)):
        theirs, _ = reference._synthesize_one(sentence, params)
        ours = np.concatenate(
            [c.audio for c in float_pieces(engine, voice, sentence, QUIET) if c.sentence_index == 0]
        )
        assert ours.shape == np.asarray(theirs).shape, (index, sentence)
        assert np.max(np.abs(theirs)) > 1e-3
        assert np.max(np.abs(ours - theirs)) <= TOLERANCE


async def test_server_speaks_the_voice(tmp_path: Path, compiled_caches: CompiledCaches) -> None:
    cache = compiled_caches.copy(tmp_path / "cache", ROOT, (SPEAKER,))
    args = ("--data-dir", str(ROOT), "--voice", VOICE, "--local-files-only")
    args += ("--cache-dir", str(cache))
    quiet = ("--tempo-dynamics-scale", "0", "--noise-scale", "0", "--noise-scale-w", "0",
             "--threads", "1")  # fmt: skip
    server = start_server(tmp_path, *quiet, base_args=args)
    try:
        engine = Engine(ROOT, threads=1)
        voice = engine.voices.load(SPEAKER, VOICE)
        expected = b"".join(s.pcm for s in pcm_pieces(engine, voice, TEXTS[1], QUIET))
        server.wait_ready()
        async with server.client() as client:
            response = await synthesize(client, TEXTS[1], voice=VOICE)
    finally:
        server.kill()
    assert response.types[0] == "audio-start" and response.types[-1] == "audio-stop"
    assert not response.errors
    assert expected and response.words == expected
