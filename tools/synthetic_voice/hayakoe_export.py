"""``--exporter hayakoe``: the voice files as HayaKoe's own exporter writes them.

Facts taken from LemonDouble/hayakoe (snapshot c0faaae, 2026-04-27), our code is our own:

* ``dev-tools/cli/export/exporter.py`` (last changed in 6ebf9ff), synthesizer and duration
  predictor:
  - the SynthesizerTrn loaded by ``get_net_g`` is held by a wrapper module as attribute
    ``net_g``, so nodes are named ``/net_g/dec/...``, ``/net_g/enc_p/...`` and weights
    ``net_g.*``; the wrapper's forward repeats ``SynthesizerTrn.infer`` and returns
    ``(audio, w_ceil.squeeze(1))``;
  - ``net_g.dec.remove_weight_norm()`` before the synthesizer export only: the weight norm of
    the other modules (flows, posterior encoder) stays and is traced, then constant-folded;
  - ``torch.onnx.export(..., opset_version=17, do_constant_folding=True, dynamo=False)``;
  - synthesizer inputs ``x, x_lengths, sid, tone, language, bert, style_vec, noise_scale,
    length_scale, noise_scale_w, sdp_ratio``, outputs ``audio, durations``; dynamic axes
    ``x, tone, language: {1: phone_len}``, ``bert: {2: phone_len}``,
    ``audio: {2: audio_len}``, ``durations: {1: phone_len}``;
  - duration predictor: a wrapper with the same ``net_g`` attribute running the text encoder
    and the ``sdp_ratio`` mix of both predictors, returning ``ceil(exp(logw) * x_mask *
    length_scale).squeeze(1)``; the synthesizer's inputs without ``noise_scale``, output
    ``durations``, the same axes without ``audio``;
  - dummy inputs, 20 phonemes: ``x`` random symbols, ``tone`` random in [0, 10), ``language``
    zeros, ``bert`` randn [1, 1024, 20], ``style_vec`` randn [1, 256]; synthesizer
    ``noise_scale`` 0.667, ``length_scale`` 1.0, ``noise_scale_w`` 0.8, ``sdp_ratio`` 0.2;
    duration predictor ``length_scale`` 1.0, ``noise_scale_w`` 0.8, ``sdp_ratio`` 0.0.
* ``dev-tools/export_onnx.py`` (read at 2162905; removed in 3ad2a21, since then the BERT is only
  published, ``dev-tools/cli/export/menu.py``), BERT: ``bert_models.load_model`` is
  ``AutoModelForMaskedLM`` (``hayakoe/nlp/bert_models.py``), held by a wrapper as attribute
  ``model`` that returns ``hidden_states[-3]`` of ``output_hidden_states=True``; inputs
  ``input_ids, attention_mask``, output ``hidden_states``, axes ``{0: batch, 1: seq_len}`` on
  all three; traced on the tokenized text ``テスト文章です。``; then
  ``quantize_dynamic(weight_type=QuantType.QInt8, op_types_to_quantize=["MatMul", "Gemm"])``
  (convolutions left out: ONNX Runtime has no ConvInteger kernel).

One deviation: the tiny BERT is 64 wide, so the wrapper also holds a linear projection to the
1024 channels the synthesizer reads (``proj``), as the classic mode does.
"""

from __future__ import annotations

import logging
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import torch
from hayakoe.nlp.symbols import SYMBOLS
from torch import nn
from torch.nn.utils.parametrizations import weight_norm
from transformers import AutoTokenizer, DebertaV2Config, DebertaV2ForMaskedLM

from tools.synthetic_voice import bert
from tools.synthetic_voice.presets import BERT_OUTPUT_DIM, STYLE_DIM, BertShape
from tools.synthetic_voice.synth_model import DURATION_INPUTS, SYNTH_INPUTS, ExportableSynthesizer

_LOGGER = logging.getLogger(__name__)

OPSET = 17
DUMMY_PHONEMES = 20
DUMMY_TEXT = "テスト文章です。"
SYNTH_AXES = {
    "x": {1: "phone_len"},
    "tone": {1: "phone_len"},
    "language": {1: "phone_len"},
    "bert": {2: "phone_len"},
    "audio": {2: "audio_len"},
    "durations": {1: "phone_len"},
}
DURATION_AXES = {name: axes for name, axes in SYNTH_AXES.items() if name != "audio"}
BERT_AXES = {
    name: {0: "batch", 1: "seq_len"} for name in ("input_ids", "attention_mask", "hidden_states")
}


class SynthesizerWrapper(nn.Module):
    """The whole synthesizer: (audio, frames per phoneme)."""

    def __init__(self, net_g: ExportableSynthesizer) -> None:
        super().__init__()
        self.net_g = net_g

    def forward(self, *inputs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        feeds = dict(zip(SYNTH_INPUTS, inputs, strict=True))
        z, g, frames = self.net_g.latent(feeds)
        return self.net_g.dec(z, g=g), frames.squeeze(1)


class DurationPredictorWrapper(nn.Module):
    """Text encoder and duration predictors only: frames per phoneme."""

    def __init__(self, net_g: ExportableSynthesizer) -> None:
        super().__init__()
        self.net_g = net_g

    def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
        feeds = dict(zip(DURATION_INPUTS, inputs, strict=True))
        g, hidden, _, _, x_mask = self.net_g.encode_text(feeds)
        sdp = self.net_g.sdp(hidden, x_mask, g=g, reverse=True, noise_scale=feeds["noise_scale_w"])
        ratio = feeds["sdp_ratio"]
        logw = sdp * ratio + self.net_g.dp(hidden, x_mask, g=g) * (1 - ratio)
        return torch.ceil(torch.exp(logw) * x_mask * feeds["length_scale"]).squeeze(1)


def restore_weight_norm(model: ExportableSynthesizer) -> None:
    """Give back the weight norm the reference builds everywhere but in the decoder, whose
    weight norm the exporter removes: what ``get_net_g`` plus that removal leave."""
    for name in model.weight_norm_modules:
        if not name.startswith("dec."):
            weight_norm(model.get_submodule(name))


def _dummy_text_inputs(gen: torch.Generator) -> dict[str, torch.Tensor]:
    n = DUMMY_PHONEMES
    return {
        "x": torch.randint(0, len(SYMBOLS), (1, n), generator=gen),
        "x_lengths": torch.LongTensor([n]),
        "sid": torch.LongTensor([0]),
        "tone": torch.randint(0, 10, (1, n), generator=gen),
        "language": torch.zeros(1, n, dtype=torch.long),
        "bert": torch.randn(1, BERT_OUTPUT_DIM, n, generator=gen),
        "style_vec": torch.randn(1, STYLE_DIM, generator=gen),
    }


def export_speaker(model: ExportableSynthesizer, speaker_dir: Path, seed: int) -> None:
    """synthesizer.onnx and duration_predictor.onnx, both from ``net_g`` wrappers."""
    restore_weight_norm(model)
    gen = torch.Generator().manual_seed(seed)
    synth_dummy = {
        **_dummy_text_inputs(gen),
        "noise_scale": torch.FloatTensor([0.667]),
        "length_scale": torch.FloatTensor([1.0]),
        "noise_scale_w": torch.FloatTensor([0.8]),
        "sdp_ratio": torch.FloatTensor([0.2]),
    }
    _export(
        SynthesizerWrapper(model).eval(),
        tuple(synth_dummy[name] for name in SYNTH_INPUTS),
        speaker_dir / "synthesizer.onnx",
        SYNTH_INPUTS,
        ["audio", "durations"],
        SYNTH_AXES,
    )
    duration_dummy = {
        **_dummy_text_inputs(gen),
        "length_scale": torch.FloatTensor([1.0]),
        "noise_scale_w": torch.FloatTensor([0.8]),
        "sdp_ratio": torch.FloatTensor([0.0]),
    }
    _export(
        DurationPredictorWrapper(model).eval(),
        tuple(duration_dummy[name] for name in DURATION_INPUTS),
        speaker_dir / "duration_predictor.onnx",
        DURATION_INPUTS,
        ["durations"],
        DURATION_AXES,
    )


def _export(
    model: nn.Module,
    args: tuple[torch.Tensor, ...],
    path: Path,
    input_names: list[str],
    output_names: list[str],
    dynamic_axes: dict[str, dict[int, str]],
) -> None:
    _LOGGER.info("Exporting %s (HayaKoe exporter)", path.name)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)  # the random-number nodes are traced: keep the trace repeatable
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # tracer warnings about Python ints and asserts
        torch.onnx.export(
            model,
            args,
            str(path),
            input_names=input_names,
            output_names=output_names,
            dynamic_axes=dynamic_axes,
            opset_version=OPSET,
            do_constant_folding=True,
            dynamo=False,
        )
    _LOGGER.info("%s: %.2f MB", path.name, path.stat().st_size / 1e6)


class MaskedLmBert(nn.Module):
    """``AutoModelForMaskedLM`` as attribute ``model``: the third-from-last hidden state."""

    def __init__(self, model: DebertaV2ForMaskedLM, proj: nn.Linear | None) -> None:
        super().__init__()
        self.model = model
        self.proj = proj

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        out = self.model(
            input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True
        )
        hidden = out.hidden_states[-3]
        return self.proj(hidden) if self.proj is not None else hidden


def build_bert_onnx(
    out_path: Path, config: dict[str, Any], shape: BertShape, seed: int, tokenizer_dir: Path
) -> None:
    """Masked-LM DeBERTa, exported FP32 and checked, then quantized to ``out_path``."""
    torch.manual_seed(seed)
    wrapper = MaskedLmBert(
        DebertaV2ForMaskedLM(DebertaV2Config(**config)), bert.projection(shape)
    ).eval()
    tokenizer = AutoTokenizer.from_pretrained(str(tokenizer_dir))
    encoded = tokenizer(DUMMY_TEXT, return_tensors="pt")
    ids, mask = encoded["input_ids"], encoded["attention_mask"]
    _LOGGER.info("BERT (masked LM): dummy %s -> %d tokens", DUMMY_TEXT, ids.shape[1])
    out_path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="synthetic-bert-") as tmp:
        fp32 = Path(tmp) / "bert.onnx"
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                wrapper,
                (ids, mask),
                str(fp32),
                input_names=["input_ids", "attention_mask"],
                output_names=["hidden_states"],
                dynamic_axes=BERT_AXES,
                opset_version=OPSET,
                do_constant_folding=True,
                dynamo=False,
            )
            expected = wrapper(ids, mask).numpy()
        feeds = {"input_ids": ids.numpy(), "attention_mask": mask.numpy()}
        got = bert.run_onnx(fp32, feeds)
        _LOGGER.info("BERT: FP32 ONNX vs torch max diff %.2e", float(np.abs(got - expected).max()))
        bert.quantize(fp32, out_path)
    q8 = bert.run_onnx(out_path, feeds)
    _LOGGER.info(
        "BERT: %s %.1f MB, INT8 vs FP32 max diff %.3f",
        out_path.name,
        out_path.stat().st_size / 1e6,
        float(np.abs(q8 - expected).max()),
    )
