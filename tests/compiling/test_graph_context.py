"""The decoder's receptive field read from its graph (compiling/graphs/graph_context.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from wyoming_hayakoe.compiling.graphs.graph_context import GraphContextError, decoder_reach
from wyoming_hayakoe.compiling.graphs.synthesizer_split import split_synthesizer
from wyoming_hayakoe.voices.config import DecoderShape, VoiceConfig

FIXTURES = Path(__file__).parents[1] / "fixtures"
SPEAKERS = [FIXTURES / "tiny-voice" / "onnx" / "speakers" / "tiny"]
SHAPES = {
    "published": DecoderShape(),
    "resblock 2": DecoderShape(
        upsample_rates=(8, 8, 4, 2),
        upsample_kernel_sizes=(16, 16, 8, 4),
        resblock="2",
        resblock_kernel_sizes=(3, 5),
        resblock_dilation_sizes=((1, 2), (2, 6)),
    ),
    "wide kernels": DecoderShape(
        upsample_rates=(4, 4, 4, 4, 2),
        upsample_kernel_sizes=(8, 8, 8, 8, 4),
        resblock_kernel_sizes=(3, 7, 11, 15),
        resblock_dilation_sizes=((1, 3, 5), (1, 3, 5), (1, 3, 5), (1, 3, 5)),
    ),
}


class _Builder:
    """A one-channel HiFi-GAN generator as SBV2 exports it, weights positive and random."""

    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.weights: list[onnx.TensorProto] = []
        self.rng = np.random.default_rng(0)

    def _name(self) -> str:
        return f"n{len(self.nodes)}"

    def conv(self, x: str, kernel: int, dilation: int = 1) -> str:
        name = self._name()
        weight = self.rng.uniform(0.2, 0.6, (1, 1, kernel)).astype(np.float32)
        self.weights.append(numpy_helper.from_array(weight, name + "_w"))
        pad = (kernel - 1) * dilation // 2
        self.nodes.append(
            helper.make_node(
                "Conv",
                [x, name + "_w"],
                [name],
                name=name,
                kernel_shape=[kernel],
                dilations=[dilation],
                pads=[pad, pad],
            )
        )
        return name

    def upsample(self, x: str, kernel: int, rate: int) -> str:
        name = self._name()
        weight = self.rng.uniform(0.5, 1.0, (1, 1, kernel)).astype(np.float32)
        self.weights.append(numpy_helper.from_array(weight, name + "_w"))
        pad = (kernel - rate) // 2
        self.nodes.append(
            helper.make_node(
                "ConvTranspose",
                [x, name + "_w"],
                [name],
                name=name,
                kernel_shape=[kernel],
                strides=[rate],
                pads=[pad, pad],
            )
        )
        return name

    def op(self, op_type: str, *inputs: str, **attrs: object) -> str:
        name = self._name()
        self.nodes.append(helper.make_node(op_type, list(inputs), [name], name=name, **attrs))
        return name

    def relu(self, x: str) -> str:
        return self.op("LeakyRelu", x, alpha=0.1)

    def generator(self, shape: DecoderShape, tail: str = "") -> onnx.ModelProto:
        x = self.conv("latent", 7)
        for rate, kernel in zip(shape.upsample_rates, shape.upsample_kernel_sizes, strict=True):
            x = self.upsample(self.relu(x), kernel, rate)
            total = ""
            for size, dilations in zip(
                shape.resblock_kernel_sizes, shape.resblock_dilation_sizes, strict=True
            ):
                y = x
                for dilation in dilations:
                    step = self.conv(self.relu(y), size, dilation)
                    if shape.resblock == "1":
                        step = self.conv(self.relu(step), size)
                    y = self.op("Add", step, y)
                total = self.op("Add", total, y) if total else y
            count = numpy_helper.from_array(
                np.array(len(shape.resblock_kernel_sizes), np.float32), self._name() + "_n"
            )
            self.weights.append(count)
            x = self.op("Div", total, count.name)
        x = self.op("Tanh", self.conv(self.relu(x), 7))
        if tail:
            x = self.op(tail, x, axes=[2], keepdims=1)
        graph = helper.make_graph(
            self.nodes,
            "generator",
            [helper.make_tensor_value_info("latent", TensorProto.FLOAT, [1, 1, "frames"])],
            [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, 1, "samples"])],
            self.weights,
        )
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_graph_reach_equals_the_config_formula(name: str) -> None:
    shape = SHAPES[name]
    reach = decoder_reach(_Builder().generator(shape), "latent")
    assert reach.samples_per_frame == int(np.prod(shape.upsample_rates))
    assert reach.frames == shape.context_frames()


@pytest.mark.parametrize("name", ["published", "resblock 2"])
def test_graph_reach_is_the_exact_receptive_field(name: str) -> None:
    """An impulse on a silent latent reaches a frame's samples from exactly ``before`` frames
    earlier and ``after`` frames later, not one further (no bias, positive weights: whatever
    the impulse reaches is not zero, whatever it does not reach is exactly zero)."""
    model = _Builder().generator(SHAPES[name])
    reach = decoder_reach(model, "latent")
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    frames, frame, per_frame = 80, 40, reach.samples_per_frame

    def reaches_the_frame(impulse_at: int) -> bool:
        latent = np.zeros((1, 1, frames), np.float32)
        latent[0, 0, impulse_at] = 1e-3
        audio = session.run(None, {"latent": latent})[0].reshape(-1)
        return bool(np.any(audio[frame * per_frame : (frame + 1) * per_frame] != 0))

    assert reaches_the_frame(frame - reach.before)
    assert reaches_the_frame(frame + reach.after)
    assert not reaches_the_frame(frame - reach.before - 1)
    assert not reaches_the_frame(frame + reach.after + 1)


@pytest.mark.parametrize("speaker", SPEAKERS, ids=lambda p: p.name)
def test_fixture_decoders_agree_with_their_config(speaker: Path, tmp_path: Path) -> None:
    split = split_synthesizer(speaker / "synthesizer.onnx", tmp_path)
    reach = decoder_reach(onnx.load(str(split.decoder)), split.latent)
    config = VoiceConfig.read(speaker / "config.json")
    assert reach.frames == config.decoder_shape.context_frames() == 13
    assert reach.samples_per_frame == config.hop_length
    # The whole synthesizer holds the same decoder: its front does not change the reach.
    whole = onnx.load(str(speaker / "synthesizer.onnx"))
    assert decoder_reach(whole, split.latent) == reach


def test_an_operation_over_the_whole_time_axis_has_no_reach() -> None:
    model = _Builder().generator(SHAPES["published"], tail="ReduceMean")
    with pytest.raises(GraphContextError, match="ReduceMean"):
        decoder_reach(model, "latent")


def test_an_output_not_computed_from_the_latent_is_refused() -> None:
    model = _Builder().generator(SHAPES["published"])
    with pytest.raises(GraphContextError, match="not upsampled"):
        decoder_reach(model, "no-such-tensor")
