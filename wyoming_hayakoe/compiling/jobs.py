"""What a compilation child is asked to do (child.py): the jobs, as the server writes them
and the child reads them, and the names of the files they leave. Nothing here imports
``onnx``: the server imports this module, only the child edits graphs."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..inference.calibration import Calibration
from ..voices.config import DecoderShape

JOB_FILE = "job.json"
"""What a child is asked to do, in the folder it is given."""
ARRAYS_FILE = "arrays.npz"
"""Arrays a job needs (a voice's calibration inputs), beside its job file."""
BERT_MODEL = "model.onnx"
"""The compiled BERT, in its folder."""
FRONT = "front.onnx"
WHOLE = "synthesizer.onnx"
"""A voice's whole synthesizer, compiled when it is not served split."""
DURATIONS = "durations.onnx"


def stage_file(index: int) -> str:
    """A compiled decoder stage, in the voice's folder."""
    return f"stage{index}.onnx"


@dataclass(frozen=True)
class BertJob:
    """What the child compiles: the published BERT into ``target``."""

    source: Path
    target: Path
    threads: int
    max_token_id: int | None
    """The tokenizer's largest id, checked on the compiled BERT (None: no tokenizer)."""

    def to_json(self) -> dict[str, Any]:
        raw = dataclasses.asdict(self)
        return {"kind": "bert", **{k: str(v) if isinstance(v, Path) else v for k, v in raw.items()}}

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> BertJob:
        return cls(Path(raw["source"]), Path(raw["target"]), raw["threads"], raw["max_token_id"])


@dataclass(frozen=True)
class VoiceJob:
    """What the child compiles: one synthesizer (and its duration predictor) into ``target``."""

    model: Path
    duration_predictor: Path | None
    """The voice's own duration predictor; None: cut it out of the synthesizer."""
    name: str
    target: Path
    threads: int
    sample_rate: int
    decoder_shape: DecoderShape
    whole_only: bool = False
    """Only the whole synthesizer: the leaner job after a full one ran out of memory."""
    memory_failure: dict[str, Any] | None = None
    """Why the full job did not finish, kept in the record (see voice_models.py)."""
    calibration: Calibration | None = None

    def to_json(self) -> dict[str, Any]:
        raw = {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}
        raw.pop("calibration")
        raw["decoder_shape"] = dataclasses.asdict(self.decoder_shape)
        raw["speaker_id"] = self.calibration.speaker_id if self.calibration else None
        raw["calibration_key"] = self.calibration.key if self.calibration else None
        return {
            "kind": "voice",
            **{k: str(v) if isinstance(v, Path) else v for k, v in raw.items()},
        }

    @classmethod
    def from_json(cls, raw: dict[str, Any], folder: Path) -> VoiceJob:
        speaker, key = raw.pop("speaker_id"), raw.pop("calibration_key")
        calibration = None
        if speaker is not None:
            with np.load(folder / ARRAYS_FILE) as stored:
                calibration = Calibration.from_arrays(key, speaker, dict(stored))
        dp = raw.pop("duration_predictor")
        return cls(
            model=Path(raw.pop("model")),
            duration_predictor=Path(dp) if dp else None,
            target=Path(raw.pop("target")),
            decoder_shape=_shape(raw.pop("decoder_shape")),
            calibration=calibration,
            **raw,
        )

    @property
    def sources(self) -> list[Path]:
        return [self.model, *([self.duration_predictor] if self.duration_predictor else [])]


def _shape(raw: dict[str, Any]) -> DecoderShape:
    """A decoder shape read back from ``dataclasses.asdict`` through JSON (lists: tuples)."""

    def tuples(value: Any) -> Any:
        if isinstance(value, dict):
            return {key: tuples(item) for key, item in value.items()}
        if isinstance(value, list):
            return tuple(tuples(item) for item in value)
        return value

    return DecoderShape(**tuples(raw))
