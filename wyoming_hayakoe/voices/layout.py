"""Where everything lives inside a data directory: the one place that spells the layout out.

The layout is the Hugging Face repository's, so a mirror or a manual copy works::

    <data dir>/onnx/speakers/<voice>/{config.json, style_vectors.npy, synthesizer.onnx,
                                      duration_predictor.onnx (optional)}
    <data dir>/onnx/bert/q8/bert_q8.onnx
    <data dir>/bert/tokenizer/vocab.txt (+ tokenizer_config.json, special_tokens_map.json)
    <data dir>/aivmx/*.aivmx, <data dir>/*.aivmx (AivisHub voices, see aivmx.py)
    <data dir>/sbv2/<model>/, <data dir>/model_assets/<model>/ (Style-Bert-VITS2 ONNX exports)
    <data dir>/user_dict.csv (optional, the user's own readings)
    <download dir>/cache/ (models prepared for this machine)
"""

from __future__ import annotations

from pathlib import Path

SPEAKERS_DIR = "onnx/speakers"
"""Voice folders, relative to a data dir."""
BERT_MODEL_PATH = "onnx/bert/q8/bert_q8.onnx"
"""The shared BERT, relative to a data dir."""
TOKENIZER_DIR = "bert/tokenizer"
"""The shared BERT's tokenizer folder, relative to a data dir."""
TOKENIZER_VOCAB_PATH = f"{TOKENIZER_DIR}/vocab.txt"
AIVMX_DIR = "aivmx"
"""AivisHub .aivmx files, relative to a data dir (those directly in the data dir count too)."""
SBV2_EXPORT_DIRS = ("sbv2", "model_assets")
"""Folders of Style-Bert-VITS2 export folders, relative to a data dir (``model_assets`` is
where Style-Bert-VITS2 itself keeps them)."""
USER_DICTIONARY_FILE = "user_dict.csv"
CACHE_DIR = "cache"
"""Default folder for prepared models, relative to the download dir."""

CONFIG_FILE = "config.json"
STYLE_VECTORS_FILE = "style_vectors.npy"
SYNTHESIZER_FILE = "synthesizer.onnx"
DURATION_PREDICTOR_FILE = "duration_predictor.onnx"
REQUIRED_VOICE_FILES = (CONFIG_FILE, STYLE_VECTORS_FILE, SYNTHESIZER_FILE)
"""Files a voice folder must hold to be usable (the duration predictor is optional)."""


def voice_dir(data_dir: Path, name: str) -> Path:
    return data_dir / SPEAKERS_DIR / name


def bert_model(data_dir: Path) -> Path:
    return data_dir / BERT_MODEL_PATH


def tokenizer_dir(data_dir: Path) -> Path:
    return data_dir / TOKENIZER_DIR
