"""Audio parity on the benchmark voice: our engine's float audio against the reference's.

Run as ``python -m tools.benchmark.parity`` (a subprocess of the benchmark, so the models it
loads are freed when it ends). Noise, stochastic durations and sdp_ratio are 0 on both sides,
which makes both deterministic. It prints one JSON line and writes the engine's 16-bit PCM
(whole-graph configuration) for the comparison with what the server sends over the wire.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from tools.engine_audio import float_pieces, pcm_pieces
from tools.reference_g2p import read_as_we_do

TOLERANCE = 1e-4


def _ours(root: Path, voice: str, text: str, threads: int, cache_dir: Path | None) -> Any:
    from wyoming_hayakoe.engine import Engine, SynthesisParams

    params = SynthesisParams(sdp_ratio=0.0, noise_scale=0.0, noise_scale_w=0.0)
    engine = Engine(root, threads=threads, cache_dir=cache_dir)
    loaded = engine.voices.load(root / "onnx" / "speakers" / voice, voice)
    parts: list[np.ndarray] = []
    for chunk in float_pieces(engine, loaded, text, params):
        parts.append(np.zeros(chunk.pause_samples, np.float32))
        parts.append(chunk.audio)
    pcm = b"".join(c.pcm for c in pcm_pieces(engine, loaded, text, params))
    return np.concatenate(parts), pcm, engine.voices.gain(loaded)


def _reference(root: Path, voice: str, text: str, cache_dir: Path) -> np.ndarray:
    """The reference's float audio before its peak normalization, pauses included, built from
    the same steps its ``generate()`` takes with noise 0."""
    from hayakoe import TTS
    from hayakoe.api import speaker as ref

    read_as_we_do()
    tts = TTS(device="cpu", bert_source=f"file://{root}", cache_dir=cache_dir)
    speaker = tts.load(voice, source=f"file://{root}").prepare().speakers[voice]
    params = ref._SynthesisParams(sdp_ratio=0.0, noise=0.0, noise_w=0.0)
    sentences = ref._split_sentences(text)
    pauses = speaker._predict_pauses(text, sentences, "Neutral", 1.0, 0, 1.0, 0.0, 0.0)
    rate = speaker.sampling_rate
    out: list[np.ndarray] = []
    for index, sentence in enumerate(sentences):
        audio, _ = speaker._synthesize_one(sentence, params)
        if index > 0:
            trailing = ref._measure_trailing_silence(out[-1], rate)
            out.append(ref._boundary_gap(trailing, rate, np.float32, pauses, index - 1))
        out.append(audio)
    return np.concatenate(out)


def _diff(ours: np.ndarray, theirs: np.ndarray) -> float | None:
    if ours.shape != theirs.shape:
        return None
    return float(np.max(np.abs(ours - theirs)))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", type=Path, required=True)
    parser.add_argument("--voice", required=True)
    parser.add_argument("--text", required=True)
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--pcm-out", type=Path, required=True)
    args = parser.parse_args()
    out = sys.stdout
    sys.stdout = sys.stderr  # keep our one JSON line apart from anything printed on the way

    whole, pcm, gain = _ours(args.root, args.voice, args.text, args.threads, None)
    args.pcm_out.write_bytes(pcm)
    gc.collect()
    split, _, _ = _ours(args.root, args.voice, args.text, args.threads, args.work / "model-cache")
    gc.collect()
    theirs = _reference(args.root, args.voice, args.text, args.work / "hayakoe-cache")
    result = {
        "text": args.text,
        "samples_ours": int(whole.size),
        "samples_reference": int(theirs.size),
        "reference_peak": float(np.max(np.abs(theirs))),
        "max_diff_whole": _diff(whole, theirs),
        "max_diff_split": _diff(split, theirs),
        "tolerance": TOLERANCE,
        "gain": gain,
    }
    out.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
