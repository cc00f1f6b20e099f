"""A deliberately broken voice: whole, it speaks; prepared for streaming, it does not.

``python -m tools.synthetic_voice.broken`` copies a speaker directory and appends a DC blocker
to its synthesizer's output: ``audio = tanh_out - mean(tanh_out over time)``. The file loads,
the nodes the split and the band rewrite look for (``dec/conv_pre/Conv``, ``dec/cond/Conv``,
``dec/Tanh``, the ``emb_rel_k``/``emb_rel_v`` attention) are untouched, the split decoder on a
whole latent reproduces the whole graph, and the band attention computes what it did. But the
mean is over whatever the decoder is given, so decoding in windows subtracts a different mean
from every window: audio decoded window by window differs from the whole graph's by a step at
every cut. An exporter that adds post-processing over the whole utterance (normalization, DC
removal) breaks windowed decoding just so; a conformance self-check must catch it.

The copy has no duration predictor (optional in a voice): the fixture stays at one model.
It holds no BERT either: load it with the BERT of the voice it was made from, e.g.
``Engine(tests/fixtures/tiny-voice).load_voice(tests/fixtures/tiny-broken/onnx/speakers/...)``.
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
from collections.abc import Sequence
from pathlib import Path

import onnx
from onnx import helper

_LOGGER = logging.getLogger(__name__)

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
TANH_SUFFIX = "dec/Tanh"
NOTE = (
    "deliberately broken: a DC blocker over the whole output (dec/dc_block) makes decoding "
    "in windows differ from the whole graph; made by python -m tools.synthetic_voice.broken"
)


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


def make_broken_speaker(source: Path, out_dir: Path, voice: str) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    model = onnx.load(str(source / "synthesizer.onnx"))
    add_dc_blocker(model)
    onnx.save(model, str(out_dir / "synthesizer.onnx"))
    shutil.copyfile(source / "style_vectors.npy", out_dir / "style_vectors.npy")
    config = json.loads((source / "config.json").read_text(encoding="utf-8"))
    config["model_name"] = voice
    config["data"]["spk2id"] = {voice: 0}
    config["synthetic"] = {**config.get("synthetic", {}), "note": NOTE}
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
    parser.add_argument("--voice", default="tiny-broken")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        make_broken_speaker(args.source, args.out / "onnx" / "speakers" / args.voice, args.voice)
    except (OSError, ValueError, KeyError) as err:
        _LOGGER.error("Failed: %s", err)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
