"""Repository content for the stand-in Hugging Face server (hf_server.py): stand-in voices
and BERT files of the right names and plausible shapes, and the committed tiny voice."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from tools.server_process import TINY_VOICE_DIR

VOICE_FILE_NAMES = (
    "config.json",
    "style_vectors.npy",
    "synthesizer.onnx",
    "duration_predictor.onnx",
)


def _pseudo_random(seed: str, size: int) -> bytes:
    """Deterministic bytes that do not compress or repeat (so corruption is visible)."""
    out = bytearray()
    counter = 0
    while len(out) < size:
        out += hashlib.sha256(f"{seed}:{counter}".encode()).digest()
        counter += 1
    return bytes(out[:size])


def write_fake_voice(
    root: Path, name: str, *, model_size: int = 200_000, duration_predictor: bool = True
) -> dict[str, bytes]:
    """Put a voice in the repository layout under ``root``; returns repo path -> bytes.

    The files are stand-ins of the right names and plausible shapes, not working models.
    """
    folder = root / "onnx" / "speakers" / name
    folder.mkdir(parents=True, exist_ok=True)
    config = {
        "version": "2.7.0-JP-Extra",
        "data": {
            "sampling_rate": 44100,
            "hop_length": 512,
            "add_blank": True,
            "spk2id": {name: 0},
            "style2id": {"Neutral": 0, "Happy": 1},
        },
    }
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    raw = np.frombuffer(_pseudo_random(name + "/style", 2 * 256), dtype=np.uint8)
    np.save(folder / "style_vectors.npy", (raw.astype(np.float32) / 255.0).reshape(2, 256))
    (folder / "synthesizer.onnx").write_bytes(_pseudo_random(name + "/synth", model_size))
    if duration_predictor:
        (folder / "duration_predictor.onnx").write_bytes(
            _pseudo_random(name + "/dp", model_size // 4)
        )
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(folder.iterdir())
        if p.is_file()
    }


def write_fake_bert(root: Path, *, model_size: int = 300_000) -> dict[str, bytes]:
    """Put a stand-in BERT and tokenizer under ``root``; returns repo path -> bytes."""
    files = {
        "bert/tokenizer/vocab.txt": "\n".join(
            ["[PAD]", "[CLS]", "[SEP]", "[UNK]", "[MASK]", "あ"]
        ).encode(),
        "bert/tokenizer/tokenizer_config.json": b'{"tokenizer_class": "BertJapaneseTokenizer"}',
        "onnx/bert/q8/bert_q8.onnx": _pseudo_random("bert", model_size),
    }
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return files


def write_tiny_voice_fixture(root: Path, name: str) -> dict[str, bytes] | None:
    """Serve the committed tiny synthetic voice (tests/fixtures/tiny-voice) as ``name``."""
    source = TINY_VOICE_DIR
    if not (source / "synthesizer.onnx").is_file() or not (source / "config.json").is_file():
        return None
    folder = root / "onnx" / "speakers" / name
    folder.mkdir(parents=True, exist_ok=True)
    files: dict[str, bytes] = {}
    for item in sorted(source.iterdir()):
        if item.name in VOICE_FILE_NAMES and item.is_file():
            data = item.read_bytes()
            (folder / item.name).write_bytes(data)
            files[f"onnx/speakers/{name}/{item.name}"] = data
    return files
