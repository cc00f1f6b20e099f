"""The first self-check of a voice, run in a child process that exits.

The check holds the published synthesizer whole (about 1.3 GB at its peak for a full voice),
the front as exported and the decoder graph read with ``onnx``: a server process would keep
that peak for good. A child runs it, writes the result beside the prepared models (atomically:
a child killed half-way leaves no result, and the next start checks again) and exits; the
server only reads the result and opens the prepared halves. The child runs child_step.py.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort

from ..errors import ModelFileError
from ..runtime import model_io
from ..runtime.model_cache import (
    SplitSynthesizer,
    cached_split,
    exported_front,
    release_freed_heap,
)
from ..runtime.prepare_child import run_step
from ..runtime.self_check import (
    PreparedPath,
    SelfCheckResult,
    calibration_feeds,
    front_outputs,
    run_self_check,
    whole_audio,
)
from ..runtime.sessions import RuntimeSettings
from ..voices.config import DecoderShape
from .decoder import Decoder, open_decoder
from .inputs import CONTROL_INPUTS, MODEL_INPUTS, InputNames

_LOGGER = logging.getLogger(__name__)


@dataclass(frozen=True)
class CheckRequest:
    """What the check of one synthesizer needs, as a child process gets it."""

    model: Path
    """The published synthesizer; its split must be in ``cache_dir`` already."""
    name: str
    cache_dir: Path
    record: Path
    """Where the result goes (see self_checked.result_file)."""
    threads: int
    speaker: int
    sample_rate: int
    decoder_shape: DecoderShape
    style_vector: tuple[float, ...]
    """The mean style (row 0 of the style vectors)."""

    def to_json(self) -> str:
        raw = dataclasses.asdict(self)
        for key in ("model", "cache_dir", "record"):
            raw[key] = str(raw[key])
        return json.dumps(raw)

    @classmethod
    def from_json(cls, text: str) -> CheckRequest:
        raw = json.loads(text)
        return cls(
            model=Path(raw.pop("model")),
            cache_dir=Path(raw.pop("cache_dir")),
            record=Path(raw.pop("record")),
            decoder_shape=shape_from_json(raw.pop("decoder_shape")),
            style_vector=tuple(raw.pop("style_vector")),
            **raw,
        )


def shape_from_json(raw: dict[str, Any]) -> DecoderShape:
    """A decoder shape read back from ``dataclasses.asdict`` through JSON."""
    return DecoderShape(**_tuples(raw))


def _tuples(value: Any) -> Any:
    """JSON's lists back as the tuples they were written from."""
    if isinstance(value, dict):
        return {key: _tuples(item) for key, item in value.items()}
    if isinstance(value, list):
        return tuple(_tuples(item) for item in value)
    return value


def check_in_child(request: CheckRequest) -> None:
    """Run the check in a child process; its result is then in ``request.record``."""
    module = f"{__package__}.child_step"
    run_step("self-check", [request.to_json()], request.name, request.cache_dir, module)
    if not request.record.is_file():
        raise ModelFileError(f"The self-check of {request.model} left no result")


def run_check(request: CheckRequest) -> SelfCheckResult:
    """The check itself: the published synthesizer against the prepared path."""
    split = cached_split(request.model, request.cache_dir)
    if split is None:
        raise ModelFileError(f"{request.model} is not split in {request.cache_dir}")
    settings = RuntimeSettings.create(request.threads)
    vector = np.asarray(request.style_vector, dtype=np.float32)
    # Before the halves are opened: one large model in memory at a time.
    feeds, reference = _published_audio(request.model, settings, vector, request.speaker)
    exported = _exported_outputs(request.model, split, settings, feeds)
    context = _graph_context(split, request.decoder_shape.context_frames(), request.name)
    front, decoder = open_halves(split, request.decoder_shape, settings, request.cache_dir, context)
    prepared = PreparedPath(
        front,
        lambda latent, condition, early: decoder.windows(latent, condition, early),
        split.latent,
        split.condition,
        split.band_layers,
        context,
    )
    return run_self_check(request.name, reference, exported, prepared, feeds, request.sample_rate)


def open_halves(
    split: SplitSynthesizer,
    shape: DecoderShape,
    settings: RuntimeSettings,
    cache_dir: Path,
    context: int,
) -> tuple[ort.InferenceSession, Decoder]:
    """The prepared front and the decoder in stages, opened."""
    front = settings.open(split.front, "Synthesizer front", cache_dir)
    model_io.check_front(front, split.front, split.latent, split.condition)
    decoder = open_decoder(
        split.decoder, split.latent, split.condition, shape, settings, cache_dir, context
    )
    return front, decoder


def _published_audio(
    path: Path, settings: RuntimeSettings, style_vector: np.ndarray, speaker: int
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The calibration feeds and the published synthesizer's audio of them."""
    whole = settings.open(path, "Synthesizer")  # as published: no optimized copy is made
    model_io.check_synthesizer(whole, path)
    required = MODEL_INPUTS | CONTROL_INPUTS | {"noise_scale"}
    # By the file's own input names and scalar ranks (an AIVMX file's are not HayaKoe's).
    feeds = InputNames.of(whole, path, "Synthesizer", required).feed(
        calibration_feeds(style_vector, speaker)
    )
    audio = whole_audio(whole, feeds)
    del whole
    release_freed_heap()
    return feeds, audio


def _exported_outputs(
    path: Path, split: SplitSynthesizer, settings: RuntimeSettings, feeds: dict[str, np.ndarray]
) -> tuple[np.ndarray, np.ndarray] | None:
    """Latent and conditioning of the front before the band rewrite (None: not rewritten)."""
    if not split.band_layers:
        return None
    front = ort.InferenceSession(
        exported_front(path), settings.session_options(), providers=["CPUExecutionProvider"]
    )
    outputs = front_outputs(front, feeds, split.latent, split.condition)
    del front
    release_freed_heap()
    return outputs


def _graph_context(split: SplitSynthesizer, configured: int, name: str) -> int:
    """Context frames from the decoder graph; config.json's value if the graph has none."""
    import onnx

    from ..runtime.graph_context import GraphContextError, decoder_reach

    try:
        return decoder_reach(onnx.load(str(split.decoder)), split.latent).frames
    except GraphContextError as err:
        _LOGGER.warning(
            "Voice %s: cannot read the decoder's receptive field from its graph (%s); "
            "using %d frames of context from config.json",
            name,
            err,
            configured,
        )
        return configured
