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


@dataclass(frozen=True)
class DecoderJob:
    """What the child compiles: a voice's fast decoder (decoder_job.py) into ``target``, beside
    its compiled voice folder, from latents its front made of the example sentences."""

    model: Path
    """The published synthesizer, split again for its plain decoder graph."""
    voice_folder: Path
    """The voice's compiled folder: its FP32 decoder stages, the reference."""
    target: Path
    name: str
    threads: int
    sample_rate: int
    decoder_shape: DecoderShape
    latent: str
    condition: str
    stage_inputs: tuple[str, ...]
    context_frames: int
    build: bool
    """Make the variant even where the reference is fast enough (``--decoder fast``)."""
    keep_float: tuple[str, ...] | None = None
    """Layer groups kept in float instead of choosing them by measurement."""
    key_extra: tuple[str, ...] = ()
    """What the folder's key depends on besides the model (see decoder_choice.py)."""
    progress: Path | None = None
    """Where what is measured is kept until ``target`` is published (checkpoints.py)."""
    calibration: tuple[dict[str, np.ndarray], ...] = ()
    check: tuple[dict[str, np.ndarray], ...] = ()

    def to_json(self) -> dict[str, Any]:
        raw = {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}
        raw.pop("calibration"), raw.pop("check")
        raw["decoder_shape"] = dataclasses.asdict(self.decoder_shape)
        return {
            "kind": "decoder",
            **{k: str(v) if isinstance(v, Path) else v for k, v in raw.items()},
        }

    def arrays(self) -> dict[str, np.ndarray]:
        """The examples flattened for a file (``SET.INDEX.NAME``)."""
        return {
            f"{kind}.{index}.{name}": value
            for kind, examples in (("calibration", self.calibration), ("check", self.check))
            for index, example in enumerate(examples)
            for name, value in example.items()
        }

    @classmethod
    def from_json(cls, raw: dict[str, Any], folder: Path) -> DecoderJob:
        sets: dict[str, dict[int, dict[str, np.ndarray]]] = {"calibration": {}, "check": {}}
        with np.load(folder / ARRAYS_FILE) as stored:
            for key in stored.files:
                kind, index, name = key.split(".", 2)
                sets[kind].setdefault(int(index), {})[name] = stored[key]
        keep = raw.pop("keep_float")
        progress = raw.pop("progress")
        return cls(
            progress=Path(progress) if progress else None,
            model=Path(raw.pop("model")),
            voice_folder=Path(raw.pop("voice_folder")),
            target=Path(raw.pop("target")),
            decoder_shape=_shape(raw.pop("decoder_shape")),
            stage_inputs=tuple(raw.pop("stage_inputs")),
            key_extra=tuple(raw.pop("key_extra")),
            keep_float=tuple(keep) if keep is not None else None,
            calibration=tuple(sets["calibration"][i] for i in sorted(sets["calibration"])),
            check=tuple(sets["check"][i] for i in sorted(sets["check"])),
            **raw,
        )


def fast_stage_file(index: int) -> str:
    """A stage of the fast decoder, in its folder."""
    return f"fast-stage{index}.onnx"


def _shape(raw: dict[str, Any]) -> DecoderShape:
    """A decoder shape read back from ``dataclasses.asdict`` through JSON (lists: tuples)."""

    def tuples(value: Any) -> Any:
        if isinstance(value, dict):
            return {key: tuples(item) for key, item in value.items()}
        if isinstance(value, list):
            return tuple(tuples(item) for item in value)
        return value

    return DecoderShape(**tuples(raw))
