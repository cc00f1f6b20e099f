"""A voice's loudness gain, measured once on a calibration sentence.

The server computes the sentence's synthesizer inputs (front-end and BERT: small); the voice's
prepared models synthesize it in a child process that exits (calibration_step in child_step.py),
because decoding a few seconds of audio at once leaves hundreds of megabytes on the heap that
the server would keep. A voice served whole (not prepared) is calibrated in the process.
Either way the sentence is decoded in the fixed default windows, so the gain does not depend
on how fast the machine is.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort

from ..errors import ModelFileError
from ..runtime.model_cache import cached_split, write_atomically
from ..runtime.prepare_child import run_step
from ..runtime.sessions import RuntimeSettings
from ..runtime.staging import new_staging
from ..text.frontend import Phonemes
from . import audio as pcm
from .decoder import Decoder
from .inputs import CONTROL_INPUTS, MODEL_INPUTS, InputNames
from .params import SynthesisParams
from .prepared import PreparedText
from .self_check_child import open_halves, shape_from_json
from .synthesizer import synthesizer_inputs
from .voice import Voice

CALIBRATION_TEXT = "こんにちは。今日は良い天気ですね、お出かけにぴったりです。"
CALIBRATION_PARAMS = SynthesisParams(sdp_ratio=0.0, noise_scale=0.0, noise_scale_w=0.0)

Feeds = dict[str, np.ndarray]
"""One sentence's synthesizer inputs, by our names (see inputs.py)."""


def calibration_feeds(
    voice: Voice, prepared: PreparedText, features: Callable[[Phonemes], np.ndarray]
) -> list[Feeds]:
    """The synthesizer inputs of each spoken sentence of the calibration text (``prepared``)."""
    style = CALIBRATION_PARAMS.style
    params = dataclasses.replace(
        CALIBRATION_PARAMS,
        style=style if style in voice.styles else voice.styles[0],
        speaker_id=voice.speaker_id,
    )
    vector = voice.style_vector(params.style, params.style_weight)
    sentences = [s.phonemes for s in prepared.sentences if s.phonemes.has_speech]
    return [synthesizer_inputs(p, features(p), vector, params) for p in sentences]


def gain_of(
    synthesizer: ort.InferenceSession,
    inputs: InputNames,
    decoder: Decoder | None,
    feeds: list[Feeds],
    sample_rate: int,
) -> float:
    """The gain that brings the audio of ``feeds`` to the target level."""
    pieces = []
    for values in feeds:
        feed = inputs.feed(values)
        if decoder is None:
            output = synthesizer.get_outputs()[0].name
            pieces.append(synthesizer.run([output], feed)[0].reshape(-1))
            continue
        latent, condition = synthesizer.run([decoder.latent_name, decoder.condition_name], feed)
        pieces += list(decoder.windows(latent, condition, early=True))
    audio = np.concatenate(pieces) if pieces else np.zeros(0, np.float32)
    return pcm.calibration_gain(audio, sample_rate)


@dataclass(frozen=True)
class CalibrationRequest:
    """What the child needs: the voice's prepared models and the sentence's inputs."""

    model: Path
    cache_dir: Path
    threads: int
    sample_rate: int
    decoder_shape: dict[str, Any]
    context_frames: int
    folder: Path
    """Holds ``feeds.npz`` from the server; the child leaves ``gain.txt`` there."""

    def to_json(self) -> str:
        return json.dumps({k: str(v) if isinstance(v, Path) else v for k, v in vars(self).items()})

    @classmethod
    def from_json(cls, text: str) -> CalibrationRequest:
        raw = json.loads(text)
        paths = {key: Path(raw[key]) for key in ("model", "cache_dir", "folder")}
        return cls(**{**raw, **paths})


def gain_in_child(voice: Voice, feeds: list[Feeds], threads: int, cache_dir: Path) -> float:
    """The gain of a prepared voice, measured by a child process that exits."""
    decoder = voice.decoder
    if decoder is None:
        raise ValueError("only a voice with prepared models is calibrated in a child")
    folder = new_staging(cache_dir, "calibration")
    try:
        np.savez(folder / "feeds.npz", allow_pickle=False, **_flatten(feeds))
        request = CalibrationRequest(
            model=voice.model_path,
            cache_dir=cache_dir,
            threads=threads,
            sample_rate=voice.sample_rate,
            decoder_shape=dataclasses.asdict(voice.config.decoder_shape),
            context_frames=decoder.context,
            folder=folder,
        )
        run_step("calibrate", [request.to_json()], voice.name, cache_dir, _CHILD_MODULE)
        try:
            return float((folder / "gain.txt").read_text())
        except (OSError, ValueError) as err:
            raise ModelFileError(f"Calibrating {voice.name} left no gain ({err})") from err
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def calibrate(request: CalibrationRequest) -> None:
    """In the child: open the prepared models, measure the gain, write it."""
    split = cached_split(request.model, request.cache_dir)
    if split is None:
        raise ModelFileError(f"{request.model} is not split in {request.cache_dir}")
    settings = RuntimeSettings.create(request.threads)
    shape = shape_from_json(request.decoder_shape)
    front, decoder = open_halves(split, shape, settings, request.cache_dir, request.context_frames)
    required = MODEL_INPUTS | CONTROL_INPUTS | {"noise_scale"}
    inputs = InputNames.of(front, request.model, "Synthesizer", required)
    with np.load(request.folder / "feeds.npz") as stored:
        feeds = _unflatten(dict(stored))
    gain = gain_of(front, inputs, decoder, feeds, request.sample_rate)
    write_atomically(request.folder / "gain.txt", repr(gain))


_CHILD_MODULE = f"{__package__}.child_step"


def _flatten(feeds: list[Feeds]) -> dict[str, np.ndarray]:
    return {f"{index}.{name}": value for index, values in enumerate(feeds)
            for name, value in values.items()}  # fmt: skip


def _unflatten(stored: dict[str, np.ndarray]) -> list[Feeds]:
    feeds: dict[int, Feeds] = {}
    for key, value in stored.items():
        index, name = key.split(".", 1)
        feeds.setdefault(int(index), {})[name] = value
    return [feeds[index] for index in sorted(feeds)]
