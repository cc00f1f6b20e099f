"""A deliberately broken voice: whole, it speaks; compiled for streaming, it does not.

``python -m tools.synthetic_voice.broken`` copies a speaker directory and appends a DC blocker
to its synthesizer's output: ``audio = tanh_out - mean(tanh_out over time)``. The file loads,
the nodes the split and the band rewrite look for (``dec/conv_pre/Conv``, ``dec/cond/Conv``,
``dec/Tanh``, the ``emb_rel_k``/``emb_rel_v`` attention) are untouched, the split decoder on a
whole latent reproduces the whole graph, and the band attention computes what it did. But the
mean is over whatever the decoder is given, so decoding in windows subtracts a different mean
from every window: audio decoded window by window differs from the whole graph's by a step at
every cut. An exporter that adds post-processing over the whole utterance (normalization, DC
removal) breaks windowed decoding just so; a conformance self-check must catch it.

``--break band`` makes another kind instead: in every text-encoder attention layer the
relative-key logits are scaled by 1.5 once the text is longer than BAND_GATE phones. The band
rewrite matches the layers and checks itself on a 12-phone probe, where nothing is scaled, so
it keeps its rewrite, which leaves the scale out: the compiled front differs from the whole
graph on every longer text. Made in a second on demand (``tests/devtools/test_broken_fixture.py``
writes it into a temporary folder), it is not committed.

The copy has no duration predictor (optional in a voice): the fixture stays at one model.
It holds no BERT either: load it with the BERT of the voice it was made from, e.g.
``Engine(tests/fixtures/tiny-voice).voices.load(tests/fixtures/tiny-broken/onnx/speakers/...)``.
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
from collections import deque
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

_LOGGER = logging.getLogger(__name__)

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
TANH_SUFFIX = "dec/Tanh"
BAND_GATE = 16
"""Phones (blanks included) above which the band variant scales its relative-key logits; the
band rewrite checks itself on 12."""
BAND_SCALE = 1.5
NOTES = {
    "windows": "a DC blocker over the whole output (dec/dc_block) makes decoding in windows "
    "differ from the whole graph",
    "band": f"the text encoder's relative-key logits are scaled by {BAND_SCALE} above "
    f"{BAND_GATE} phones (rel_gate), which the band rewrite leaves out",
}
DEFAULT_VOICES = {"windows": "tiny-broken", "band": "tiny-broken-band"}


def add_dc_blocker(model: onnx.ModelProto) -> None:
    """Subtract the output's mean over time from the audio output, keeping its name."""
    graph = model.graph
    audio = graph.output[0].name
    tanh = [node for node in graph.node if node.name.endswith("/" + TANH_SUFFIX)]
    if len(tanh) != 1 or list(tanh[0].output) != [audio]:
        raise ValueError(f"the audio output does not come straight from one {TANH_SUFFIX}")
    prefix = tanh[0].name[: -len("Tanh")] + "dc_block/"
    raw, mean = prefix + "tanh_out", prefix + "mean"
    tanh[0].output[0] = raw
    graph.node.extend(
        [
            # opset 17: ReduceMean takes its axes as an attribute
            helper.make_node(
                "ReduceMean", [raw], [mean], name=prefix + "ReduceMean", axes=[2], keepdims=1
            ),
            helper.make_node("Sub", [raw, mean], [audio], name=prefix + "Sub"),
        ]
    )
    onnx.checker.check_model(model)


def gate_relative_keys(model: onnx.ModelProto) -> int:
    """Scale the relative-key logits of every text-encoder attention layer by BAND_SCALE when
    the text is longer than BAND_GATE; returns the number of layers edited."""
    graph = model.graph
    consumers: dict[str, list[onnx.NodeProto]] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    keys = [
        i.name
        for i in graph.initializer
        if i.name.endswith("emb_rel_k") and ".enc_p." in "." + i.name
    ]
    for index, key in enumerate(keys):
        _gate_layer(graph, _first_matmul(key, consumers), consumers, f"/enc_p/rel_gate_{index}/")
    _sort_topologically(graph)
    onnx.checker.check_model(model)
    return len(keys)


def _gate_layer(
    graph: onnx.GraphProto,
    matmul: onnx.NodeProto,
    consumers: dict[str, list[onnx.NodeProto]],
    prefix: str,
) -> None:
    """logits * (1 + (BAND_SCALE - 1) * (length > BAND_GATE)) in place of ``matmul``'s logits."""
    logits, gated = matmul.output[0], prefix + "gated_logits"
    for node in consumers[logits]:
        node.input[:] = [gated if name == logits else name for name in node.input]

    def const(name: str, value: np.ndarray) -> str:
        graph.initializer.append(numpy_helper.from_array(value, prefix + name))
        return prefix + name

    length, over, extra, factor = (prefix + n for n in ("length", "over", "extra", "factor"))
    graph.node.extend(
        [
            helper.make_node("Shape", [matmul.input[0]], [length], name=length, start=2, end=3),
            helper.make_node(
                "Greater", [length, const("gate", np.array([BAND_GATE], np.int64))], [over]
            ),
            helper.make_node("Cast", [over], [over + "_float"], to=TensorProto.FLOAT),
            helper.make_node(
                "Mul",
                [over + "_float", const("scale", np.array([BAND_SCALE - 1], np.float32))],
                [extra],
            ),
            helper.make_node("Add", [extra, const("one", np.array([1], np.float32))], [factor]),
            helper.make_node("Mul", [logits, factor], [gated], name=prefix + "Mul"),
        ]
    )


def _first_matmul(tensor: str, consumers: dict[str, list[onnx.NodeProto]]) -> onnx.NodeProto:
    """The nearest MatMul downstream of ``tensor`` along the data (not through Shape)."""
    queue, seen = deque([tensor]), {tensor}
    while queue:
        for node in consumers.get(queue.popleft(), []):
            if node.op_type == "MatMul":
                return node
            if node.op_type != "Shape":
                queue.extend(out for out in node.output if out not in seen)
                seen.update(node.output)
    raise ValueError(f"no MatMul reads {tensor}")


def _sort_topologically(graph: onnx.GraphProto) -> None:
    """New nodes were appended: order all so every input is produced before it is read."""
    nodes = list(graph.node)
    ready = {i.name for i in graph.input} | {i.name for i in graph.initializer} | {""}
    ordered: list[onnx.NodeProto] = []
    while nodes:
        waiting = []
        for node in nodes:
            if all(name in ready for name in node.input):
                ordered.append(node)
                ready.update(node.output)
            else:
                waiting.append(node)
        if len(waiting) == len(nodes):
            raise ValueError("the edited graph has a cycle or a missing input")
        nodes = waiting
    del graph.node[:]
    graph.node.extend(ordered)


def make_broken_speaker(source: Path, out_dir: Path, voice: str, kind: str = "windows") -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    model = onnx.load(str(source / "synthesizer.onnx"))
    if kind == "band":
        gate_relative_keys(model)
    else:
        add_dc_blocker(model)
    onnx.save(model, str(out_dir / "synthesizer.onnx"))
    shutil.copyfile(source / "style_vectors.npy", out_dir / "style_vectors.npy")
    config = json.loads((source / "config.json").read_text(encoding="utf-8"))
    config["model_name"] = voice
    config["data"]["spk2id"] = {voice: 0}
    note = f"deliberately broken: {NOTES[kind]}; made by python -m tools.synthetic_voice.broken"
    config["synthetic"] = {**config.get("synthetic", {}), "note": note}
    (out_dir / "config.json").write_text(
        json.dumps(config, ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
    )
    _LOGGER.info("Wrote %s (%.2f MB)", out_dir, (out_dir / "synthesizer.onnx").stat().st_size / 1e6)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.synthetic_voice.broken")
    parser.add_argument(
        "--source", type=Path, default=FIXTURES / "tiny-voice" / "onnx" / "speakers" / "tiny"
    )
    parser.add_argument("--out", type=Path, default=FIXTURES / "tiny-broken")
    parser.add_argument("--break", dest="kind", choices=sorted(NOTES), default="windows")
    parser.add_argument("--voice", help="speaker name (default tiny-broken[-band])")
    args = parser.parse_args(argv)
    voice = args.voice or DEFAULT_VOICES[args.kind]
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        speaker_dir = args.out / "onnx" / "speakers" / voice
        make_broken_speaker(args.source, speaker_dir, voice, args.kind)
    except (OSError, ValueError, KeyError) as err:
        _LOGGER.error("Failed: %s", err)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
