"""Command line: ``script/make_synthetic_voice --preset tiny|full --out DIR``."""

from __future__ import annotations

import argparse
import logging
import time
from collections.abc import Sequence
from pathlib import Path

import torch

from tools.synthetic_voice import (
    bert,
    checks,
    hayakoe_export,
    sbv2_fixtures,
    synth_export,
    vocab,
    voice_files,
)
from tools.synthetic_voice.presets import PRESETS, Preset, check_preset
from tools.synthetic_voice.synth_model import ProbeInput, build_synthesizer
from tools.tokenizer_files import real_tokenizer_dir

_LOGGER = logging.getLogger(__name__)

REPO = Path(__file__).resolve().parents[2]
CORPUS_SUFFIXES = (".txt", ".tsv", ".json")
VOICE_ROOT_EXPORTERS = ("classic", "hayakoe")
CACHE = Path(".cache/voices")  # git-ignored; the committed fixture is written only when asked


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="make_synthetic_voice",
        description="Write a HayaKoe voice root (real architectures, seeded random weights).",
    )
    parser.add_argument("--preset", choices=sorted(PRESETS), default="tiny")
    parser.add_argument(
        "--exporter",
        choices=(*VOICE_ROOT_EXPORTERS, "sbv2", "aivmx"),
        default="classic",
        help="classic: a voice root, the model itself exported (weights dec.*); hayakoe: a "
        "voice root as HayaKoe's exporter writes it (a net_g wrapper: weights net_g.*; "
        "masked-LM BERT; see hayakoe_export.py); sbv2: a Style-Bert-VITS2 ONNX export folder "
        "under --out; aivmx: <out>/<voice>.aivmx (see docs/sbv2-and-aivmx-voices.md)",
    )
    parser.add_argument("--out", type=Path, help="voice root (default .cache/voices/<preset>)")
    parser.add_argument("--voice", help="speaker name (default synthetic-<preset>)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--corpus",
        type=Path,
        nargs="+",
        help="text files whose characters the tiny vocabulary must cover "
        "(default: tests/data/*.txt, *.tsv, *.json)",
    )
    parser.add_argument(
        "--real-tokenizer",
        type=Path,
        default=real_tokenizer_dir(),
        help="folder with the real vocab.txt and config.json (optional)",
    )
    parser.add_argument("-v", "--verbose", action="store_true")
    return parser.parse_args(argv)


def default_corpus() -> list[Path]:
    """The project's test texts: tests/data/*.txt, *.tsv and *.json."""
    data = REPO / "tests" / "data"
    return sorted(p for p in data.glob("*") if p.suffix in CORPUS_SUFFIXES and p.is_file())


def _vocabulary(preset: Preset, args: argparse.Namespace) -> list[str] | None:
    """The small vocabulary, or None to copy the real vocab.txt."""
    real_path = args.real_tokenizer / "vocab.txt"
    real = vocab.read_vocab(real_path) if real_path.is_file() else None
    if preset.vocab == "real" and real is not None:
        return None
    if real is None:
        _LOGGER.warning(
            "Real vocab.txt not found under %s: kanji from JIS level 1", args.real_tokenizer
        )
    files = args.corpus if args.corpus else default_corpus()
    _LOGGER.info("Vocabulary corpus: %s", [str(f) for f in files] or "none")
    return vocab.small_vocab(vocab.corpus_characters(files), real)


def build(preset: Preset, root: Path, voice: str, seed: int, args: argparse.Namespace) -> None:
    check_preset(preset)
    tokens = _vocabulary(preset, args)
    vocab_size = (
        len(tokens)
        if tokens is not None
        else len(vocab.read_vocab(args.real_tokenizer / "vocab.txt"))
    )
    bert_config = bert.model_config(args.real_tokenizer / "config.json", preset.bert, vocab_size)
    vocab.write_tokenizer(
        root / "bert" / "tokenizer", tokens, args.real_tokenizer / "vocab.txt", bert_config
    )
    bert_path = root / "onnx" / "bert" / "q8" / "bert_q8.onnx"
    hayakoe = args.exporter == "hayakoe"
    if hayakoe:
        tokenizer_dir = root / "bert" / "tokenizer"
        hayakoe_export.build_bert_onnx(bert_path, bert_config, preset.bert, seed, tokenizer_dir)
    else:
        bert.build_bert_onnx(bert_path, bert_config, preset.bert, seed, vocab_size)
    checks.check_bert(bert_path, vocab_size)

    styles = voice_files.style_vectors(seed)
    speaker_dir = root / "onnx" / "speakers" / voice
    model = build_synthesizer(preset.synth, 1, seed + 100, torch.from_numpy(styles[0]))
    probe = ProbeInput.make(20, torch.from_numpy(styles[0]), seed + 200)
    if hayakoe:
        hayakoe_export.export_speaker(model, speaker_dir, seed + 300)
    else:
        synth_export.export_synthesizer(model, probe, speaker_dir / "synthesizer.onnx")
        synth_export.export_duration_predictor(
            model, probe, speaker_dir / "duration_predictor.onnx"
        )
    del model
    voice_files.write_speaker_files(speaker_dir, preset, voice, seed, styles)
    checks.check_speaker(speaker_dir, probe)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    preset = PRESETS[args.preset]
    root = args.out if args.out is not None else CACHE / preset.name
    voice = args.voice or preset.default_voice
    started = time.monotonic()
    _LOGGER.info(
        "Building preset %s, voice %s, seed %d into %s", preset.name, voice, args.seed, root
    )
    try:
        if args.exporter in VOICE_ROOT_EXPORTERS:
            build(preset, root, voice, args.seed, args)
        else:
            sbv2_fixtures.build(args.exporter, preset, root, args.voice, args.seed)
    except (
        checks.SyntheticVoiceError,
        FileNotFoundError,
        ValueError,
        sbv2_fixtures.AivmError,
    ) as err:
        _LOGGER.error("Failed: %s", err)
        return 1
    total = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
    _LOGGER.info("Done in %.1f s: %s, %.1f MB", time.monotonic() - started, root, total / 1e6)
    return 0
