"""Style-Bert-VITS2's own ONNX export: a model folder as SBV2 trains into and converts in.

``convert_onnx.py`` writes ``<checkpoint stem>.onnx`` beside each checkpoint of
``model_assets/<model>/``, which also holds ``config.json`` and ``style_vectors.npy``. Several
``.onnx`` files are checkpoints of one model: the one with the most training steps is used.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import ModelFileError
from ..json_file import read_json_object
from .config import VoiceConfig
from .layout import CONFIG_FILE, STYLE_VECTORS_FILE
from .sources import VoiceSource, slug, speaker_names

SBV2_URL = "https://github.com/litagin02/Style-Bert-VITS2"
_STEP_RE = re.compile(r"_s(\d+)$")
_TEMP_SUFFIX = "_temp"
"""The converter's unfinished file (deleted when it succeeds)."""


def pick_checkpoint(folder: Path) -> Path | None:
    """The exported ``.onnx`` with the most training steps (``..._s<steps>.onnx``)."""
    exports = [
        p for p in folder.glob("*.onnx") if p.is_file() and not p.stem.endswith(_TEMP_SUFFIX)
    ]

    def steps(path: Path) -> tuple[int, str]:
        match = _STEP_RE.search(path.stem)
        return (int(match.group(1)) if match else -1, path.name)

    return max(exports, key=steps, default=None)


def read_sbv2_export(folder: Path) -> list[VoiceSource]:
    """One source per speaker of the export in ``folder``; ModelFileError saying why not."""
    model = pick_checkpoint(folder)
    if model is None:
        raise ModelFileError(
            f"{folder} holds no .onnx export: convert the model with Style-Bert-VITS2's "
            "convert_onnx.py (or its WebUI) first"
        )
    if not (folder / STYLE_VECTORS_FILE).is_file():
        raise ModelFileError(f"{folder} has no {STYLE_VECTORS_FILE} beside {model.name}")
    raw = read_json_object(folder / CONFIG_FILE, "Voice config")
    data = raw.get("data")
    if isinstance(data, dict) and data.get("use_jp_extra") is False:
        raise ModelFileError(
            f"{folder / CONFIG_FILE}: not a JP-Extra model (use_jp_extra is false); only "
            "Style-Bert-VITS2 JP-Extra voices are supported"
        )
    config = VoiceConfig.from_raw(raw, folder / CONFIG_FILE)
    base = slug(folder.name)
    if not base:
        raise ModelFileError(f"{folder}: rename the folder with ASCII letters or digits")
    speakers = [(name, config.speakers[name]) for name in config.speakers_by_id]
    names = speaker_names(base, speakers)
    model_name = str(raw.get("model_name") or folder.name)
    styles = tuple(config.styles_by_id)
    return [
        VoiceSource(
            name=names[speaker_id],
            kind="sbv2",
            path=folder,
            model=model,
            display_name=model_name if len(speakers) == 1 else f"{model_name} {speaker}",
            speaker=speaker,
            speaker_id=speaker_id,
            styles=styles,
            style_ids=tuple(config.styles[style] for style in styles),
            credit=(f"Style-Bert-VITS2 model {model_name}", SBV2_URL),
        )
        for speaker, speaker_id in speakers
    ]
