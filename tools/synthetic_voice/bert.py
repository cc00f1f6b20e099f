"""The shared BERT: a seeded random DeBERTa-v2, exported to ONNX and dynamically INT8-quantized
like the public ``onnx/bert/q8/bert_q8.onnx``."""

from __future__ import annotations

import json
import logging
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
import torch
from onnxruntime.quantization import QuantType, quantize_dynamic
from torch import nn
from transformers import DebertaV2Config, DebertaV2Model

from tools.synthetic_voice.presets import BERT_OUTPUT_DIM, BertShape

_LOGGER = logging.getLogger(__name__)

OPSET = 17
INPUT_NAMES = ["input_ids", "attention_mask"]
OUTPUT_NAME = "hidden_states"  # the name the public export uses

# ku-nlp/deberta-v2-large-japanese-char-wwm's config.json, used when the real file is absent.
_FALLBACK_CONFIG: dict[str, Any] = {
    "architectures": ["DebertaV2ForMaskedLM"],
    "attention_head_size": 64,
    "attention_probs_dropout_prob": 0.1,
    "conv_act": "gelu",
    "conv_kernel_size": 3,
    "hidden_act": "gelu",
    "hidden_dropout_prob": 0.1,
    "hidden_size": 1024,
    "initializer_range": 0.02,
    "intermediate_size": 4096,
    "layer_norm_eps": 1e-07,
    "max_position_embeddings": 512,
    "max_relative_positions": -1,
    "model_type": "deberta-v2",
    "norm_rel_ebd": "layer_norm",
    "num_attention_heads": 16,
    "num_hidden_layers": 24,
    "pad_token_id": 0,
    "pooler_dropout": 0,
    "pooler_hidden_act": "gelu",
    "pooler_hidden_size": 1024,
    "pos_att_type": ["p2c", "c2p"],
    "position_biased_input": False,
    "position_buckets": 256,
    "relative_attention": True,
    "share_att_key": True,
    "type_vocab_size": 0,
    "vocab_size": 22012,
}


def model_config(real_config: Path | None, shape: BertShape, vocab_size: int) -> dict[str, Any]:
    """The real DeBERTa-v2 configuration with the preset's sizes and vocabulary."""
    if real_config is not None and real_config.is_file():
        config = json.loads(real_config.read_text(encoding="utf-8"))
    else:
        _LOGGER.warning("Real BERT config.json not found: using the built-in copy")
        config = dict(_FALLBACK_CONFIG)
    for key in ("torch_dtype", "dtype", "transformers_version"):
        config.pop(key, None)
    config.update(
        hidden_size=shape.hidden_size,
        pooler_hidden_size=shape.hidden_size,
        num_hidden_layers=shape.num_layers,
        num_attention_heads=shape.num_heads,
        attention_head_size=shape.head_size,
        intermediate_size=shape.intermediate_size,
        vocab_size=vocab_size,
        torch_dtype="float32",
    )
    return config


class _HayakoeBert(nn.Module):
    """input ids -> the third-from-last hidden state, as HayaKoe feeds the synthesizer."""

    def __init__(self, deberta: DebertaV2Model, projection: nn.Linear | None) -> None:
        super().__init__()
        self.model = deberta
        self.proj = projection

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        out = self.model(
            input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True
        )
        hidden = out.hidden_states[-3]
        return self.proj(hidden) if self.proj is not None else hidden


def projection(shape: BertShape) -> nn.Linear | None:
    """A linear map to the 1024 channels the synthesizer reads, for a smaller DeBERTa."""
    if not shape.needs_projection:
        return None
    linear = nn.Linear(shape.hidden_size, BERT_OUTPUT_DIM)
    with torch.no_grad():
        # keeps the output about as large as the LayerNorm-ed hidden state
        linear.weight.normal_(0.0, shape.hidden_size**-0.5)
        linear.bias.zero_()
    return linear


def _build(config: dict[str, Any], shape: BertShape, seed: int) -> _HayakoeBert:
    torch.manual_seed(seed)
    deberta = DebertaV2Model(DebertaV2Config(**config))
    return _HayakoeBert(deberta, projection(shape)).eval()


def build_bert_onnx(
    out_path: Path, config: dict[str, Any], shape: BertShape, seed: int, vocab_size: int
) -> None:
    """Build, export (FP32), check against torch, then quantize to ``out_path``."""
    model = _build(config, shape, seed)
    n_params = sum(p.numel() for p in model.parameters())
    _LOGGER.info(
        "BERT: DeBERTa-v2 %d layers x %d, %.1f M parameters",
        shape.num_layers,
        shape.hidden_size,
        n_params / 1e6,
    )
    gen = torch.Generator().manual_seed(seed)
    ids = torch.randint(5, vocab_size, (1, 12), generator=gen)
    ids[0, 0], ids[0, -1] = 1, 2  # [CLS] ... [SEP]
    mask = torch.ones_like(ids)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="synthetic-bert-") as tmp:
        fp32 = Path(tmp) / "bert.onnx"
        _LOGGER.info("BERT: exporting to ONNX")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                model,
                (ids, mask),
                str(fp32),
                input_names=INPUT_NAMES,
                output_names=[OUTPUT_NAME],
                dynamic_axes={
                    "input_ids": {0: "batch", 1: "seq_len"},
                    "attention_mask": {0: "batch", 1: "seq_len"},
                    OUTPUT_NAME: {0: "batch", 1: "seq_len"},
                },
                opset_version=OPSET,
                do_constant_folding=True,
                dynamo=False,
            )
        with torch.no_grad():
            expected = model(ids, mask).numpy()
        del model
        feeds = {"input_ids": ids.numpy(), "attention_mask": mask.numpy()}
        got = run_onnx(fp32, feeds)
        _LOGGER.info("BERT: FP32 ONNX vs torch max diff %.2e", float(np.abs(got - expected).max()))
        quantize(fp32, out_path)
    q8 = run_onnx(out_path, feeds)
    _LOGGER.info(
        "BERT: %s %.1f MB, output %s, INT8 vs FP32 max diff %.3f (output std %.3f)",
        out_path.name,
        out_path.stat().st_size / 1e6,
        q8.shape,
        float(np.abs(q8 - expected).max()),
        float(expected.std()),
    )


def quantize(fp32: Path, out_path: Path) -> None:
    """Dynamic INT8 of the MatMul and Gemm weights, as the public bert_q8.onnx."""
    _LOGGER.info("BERT: quantizing (dynamic INT8, MatMul/Gemm)")
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.WARNING)  # the quantizer logs every tensor on the root logger
    try:
        quantize_dynamic(
            model_input=str(fp32),
            model_output=str(out_path),
            weight_type=QuantType.QInt8,
            op_types_to_quantize=["MatMul", "Gemm"],
        )
    finally:
        root.setLevel(level)


def run_onnx(path: Path, feeds: dict[str, np.ndarray]) -> np.ndarray:
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return np.asarray(session.run(None, feeds)[0])
