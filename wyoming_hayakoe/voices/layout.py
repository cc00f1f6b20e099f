"""Where everything lives inside a data directory: the one place that spells the layout out.

The layout is the Hugging Face repository's, so a mirror or a manual copy works::

    <data dir>/onnx/speakers/<voice>/{config.json, style_vectors.npy, synthesizer.onnx
                                      (or synthesizer_q8.onnx), duration_predictor.onnx
                                      (optional)}, each model optionally with its weights
                                      beside it as external data (<model>.onnx.data)
    <data dir>/onnx/bert/q8/bert_q8.onnx
    <data dir>/bert/tokenizer/vocab.txt (+ tokenizer_config.json, special_tokens_map.json)
    <data dir>/aivmx/*.aivmx, <data dir>/*.aivmx (AivisHub voices, see aivmx.py)
    <data dir>/sbv2/<model>/, <data dir>/model_assets/<model>/ (Style-Bert-VITS2 ONNX exports)
    <data dir>/user_dict.csv (optional, the user's own readings)
    <download dir>/cache/ (models compiled for this machine)
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
TOKENIZER_FAST_PATH = f"{TOKENIZER_DIR}/tokenizer.json"
"""A fast tokenizer's file; with it, the folder needs no vocab.txt (see text/tokenizer_loader)."""
AIVMX_DIR = "aivmx"
"""AivisHub .aivmx files, relative to a data dir (those directly in the data dir count too)."""
SBV2_EXPORT_DIRS = ("sbv2", "model_assets")
"""Folders of Style-Bert-VITS2 export folders, relative to a data dir (``model_assets`` is
where Style-Bert-VITS2 itself keeps them)."""
USER_DICTIONARY_FILE = "user_dict.csv"
CACHE_DIR = "cache"
"""Default folder for compiled models, relative to the download dir."""

CONFIG_FILE = "config.json"
STYLE_VECTORS_FILE = "style_vectors.npy"
SYNTHESIZER_FILE = "synthesizer.onnx"
SYNTHESIZER_Q8_FILE = "synthesizer_q8.onnx"
SYNTHESIZER_FILES = (SYNTHESIZER_FILE, SYNTHESIZER_Q8_FILE)
"""The synthesizer under the names HayaKoe accepts, the one it prefers first."""
DURATION_PREDICTOR_FILE = "duration_predictor.onnx"
EXTERNAL_DATA_SUFFIX = ".data"
"""``model.onnx.data`` beside ``model.onnx``: weights saved as ONNX external data."""
REQUIRED_VOICE_FILES = (CONFIG_FILE, STYLE_VECTORS_FILE, SYNTHESIZER_FILES)
"""Files a voice folder must hold to be usable (the duration predictor is optional); a tuple
inside means any one of those names."""
PREFERRED_VOICE_FILES = (CONFIG_FILE, STYLE_VECTORS_FILE, SYNTHESIZER_FILE)
"""The required files under the names a voice written here gets."""
_MODELS = (*SYNTHESIZER_FILES, DURATION_PREDICTOR_FILE)
VOICE_FILE_NAMES = frozenset(
    (CONFIG_FILE, STYLE_VECTORS_FILE, *_MODELS, *(m + EXTERNAL_DATA_SUFFIX for m in _MODELS))
)
"""Every file a voice folder may hold."""


def voice_dir(data_dir: Path, name: str) -> Path:
    return data_dir / SPEAKERS_DIR / name


def bert_model(data_dir: Path) -> Path:
    return data_dir / BERT_MODEL_PATH


def tokenizer_dir(data_dir: Path) -> Path:
    return data_dir / TOKENIZER_DIR


def synthesizer_file(folder: Path) -> Path:
    """The voice's synthesizer: ``synthesizer.onnx``, else ``synthesizer_q8.onnx`` as HayaKoe
    loads it; the preferred name when neither is there (for the error message)."""
    for name in SYNTHESIZER_FILES:
        if (folder / name).is_file():
            return folder / name
    return folder / SYNTHESIZER_FILE


def external_data_file(model: Path) -> Path:
    """Where the external weights of ``model`` lie when it was saved with them apart."""
    return model.with_name(model.name + EXTERNAL_DATA_SUFFIX)


def _names(required: str | tuple[str, ...]) -> tuple[str, ...]:
    return (required,) if isinstance(required, str) else required


def required_voice_files_text() -> list[str]:
    """The required files for messages, alternatives written ``a or b``."""
    return [" or ".join(_names(required)) for required in REQUIRED_VOICE_FILES]


def missing_voice_files(folder: Path) -> list[str]:
    """The required files ``folder`` lacks (alternatives written ``a or b``)."""
    return [
        " or ".join(_names(required))
        for required in REQUIRED_VOICE_FILES
        if not any((folder / name).is_file() for name in _names(required))
    ]


def present_voice_files(folder: Path) -> list[Path]:
    """Every file of ``folder`` that could serve as a required one (each alternative)."""
    return [
        folder / name
        for required in REQUIRED_VOICE_FILES
        for name in _names(required)
        if (folder / name).is_file()
    ]


def resolves_inside(root: Path, path: Path) -> bool:
    """True if ``path``, with every symlink resolved, stays under ``root``."""
    try:
        return path.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):  # unreadable or a symlink loop
        return False
