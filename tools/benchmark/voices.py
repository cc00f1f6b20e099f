"""The ``full`` synthetic voice the benchmark runs on, and a data dir holding four copies of it."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

_LOGGER = logging.getLogger(__name__)

REPO = Path(__file__).resolve().parents[2]
DEFAULT_ROOT = REPO / ".cache" / "voices" / "full"
SPEAKERS = Path("onnx") / "speakers"
BERT_FILE = Path("onnx") / "bert" / "q8" / "bert_q8.onnx"
VOICE_FILES = ("config.json", "style_vectors.npy", "synthesizer.onnx", "duration_predictor.onnx")
# ModelProto field 6 (doc_string), wire type 2: appending it to a serialized model gives a
# valid model whose doc_string is the appended text (the last value of a field wins).
_DOC_STRING_TAG = b"\x32"


def voice_names(root: Path) -> list[str]:
    speakers = root / SPEAKERS
    if not speakers.is_dir():
        return []
    return sorted(d.name for d in speakers.iterdir() if (d / "synthesizer.onnx").is_file())


def is_complete(root: Path) -> bool:
    return (
        (root / BERT_FILE).is_file()
        and (root / "bert" / "tokenizer" / "vocab.txt").is_file()
        and bool(voice_names(root))
    )


def ensure_voice(root: Path, build: bool) -> Path:
    """Return ``root`` holding a complete voice, building the ``full`` preset there if allowed."""
    if is_complete(root):
        return root
    if not build:
        raise SystemExit(f"No complete voice root at {root} (bert, tokenizer, onnx/speakers/*)")
    _LOGGER.info("Building the full synthetic voice into %s (takes minutes)", root)
    subprocess.run(
        [str(REPO / "script" / "make_synthetic_voice"), "--preset", "full", "--out", str(root)],
        check=True,
        cwd=REPO,
        env={**os.environ, "PYTHON": sys.executable},  # the benchmark's interpreter, with torch
    )
    if not is_complete(root):
        raise SystemExit(f"make_synthetic_voice finished but {root} is incomplete")
    return root


def _link_or_copy(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def _distinct_copy(source: Path, target: Path, mark: str) -> None:
    """Copy a model so that it differs in content, size and mtime from the original: a real
    second voice has its own file, and no cache keyed on the file may treat them as one."""
    shutil.copyfile(source, target)
    text = mark.encode()
    with target.open("ab") as out:
        out.write(_DOC_STRING_TAG + bytes([len(text)]) + text)


def make_multi_voice_root(root: Path, voice: str, target: Path, count: int) -> list[str]:
    """A data dir with the shared BERT (hard links) and ``count`` separate copies of ``voice``.

    No symlinks: the server refuses files that lead outside its data dir.
    """
    names = [f"bench-voice-{i + 1}" for i in range(count)]
    for path in (root / "bert").rglob("*"):
        if path.is_file():
            _link_or_copy(path, target / path.relative_to(root))
    _link_or_copy(root / BERT_FILE, target / BERT_FILE)
    source_dir = root / SPEAKERS / voice
    for name in names:
        voice_dir = target / SPEAKERS / name
        voice_dir.mkdir(parents=True, exist_ok=True)
        for file in VOICE_FILES:
            source = source_dir / file
            if not source.is_file():
                continue
            if file.endswith(".onnx"):
                _distinct_copy(source, voice_dir / file, f"benchmark copy {name}")
            else:
                shutil.copyfile(source, voice_dir / file)
    return names


def shown(path: Path) -> str:
    """``path`` as a results file shows it: inside the checkout, relative to it."""
    try:
        return str(path.resolve().relative_to(REPO))
    except ValueError:
        return str(path)
