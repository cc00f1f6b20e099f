"""A voice's duration predictor: its own, or the branch cut out of a whole-graph voice's
synthesizer, kept only once it has agreed with the synthesizer (pauses from a wrong cut would
be wrong)."""

from __future__ import annotations

import logging
from collections.abc import Callable

import onnxruntime as ort

from ..compiling.compiled import VoiceModels, keep, published_duration_branch
from ..inference.calibration import Calibration
from ..inference.inputs import DURATION_NAMES, InputNames
from ..inference.synthesizer import sentence_audio
from ..runtime.sessions import RuntimeSettings
from ..voices.sources import VoiceSource

_LOGGER = logging.getLogger(__name__)

_BRANCH_VERDICT = "duration-branch-check.txt"
"""In a compiled folder: whether the branch cut from the synthesizer agreed with it."""


def duration_predictor(
    name: str,
    source: VoiceSource,
    hop: int,
    models: VoiceModels,
    settings: RuntimeSettings,
    calibrate: Callable[[], Calibration],
) -> tuple[ort.InferenceSession | None, InputNames | None]:
    """The voice's own duration predictor, or the branch cut out of its synthesizer once it
    has agreed with it; None (pauses of 80 ms) if there is neither. ``hop``: audio samples
    per frame."""
    session = models.duration_predictor
    own = source.duration_predictor
    try:
        if session is None and models.folder is None:  # published: cut it here
            if own is not None:
                _LOGGER.info("%s has no %s: cutting it out of the synthesizer",
                             source.path, own.name)  # fmt: skip
            branch = published_duration_branch(source.model)
            options = settings.session_options()
            session = ort.InferenceSession(branch, options, providers=["CPUExecutionProvider"])
        if session is None:
            return None, None
        what = "Duration predictor" if models.duration_source else "Duration branch"
        inputs = InputNames.of(session, models.duration_source or source.model, what,
                               DURATION_NAMES)  # fmt: skip
        own_file = models.duration_source is not None
        if own_file or _branch_agrees(models, hop, (session, inputs), calibrate):
            return session, inputs
    except Exception as err:  # pauses are a nicety: any failure here leaves the voice usable
        _LOGGER.warning("No predicted pauses for %s, they fall back to 80 ms: %s", name, err)
        return None, None
    _LOGGER.warning(
        "The duration branch cut out of %s disagrees with the whole graph's audio length: "
        "pauses fall back to 80 ms",
        source.model,
    )
    return None, None


def _branch_agrees(
    models: VoiceModels,
    hop: int,
    branch: tuple[ort.InferenceSession, InputNames],
    calibrate: Callable[[], Calibration],
) -> bool:
    """Whether the branch's frames times the hop are the samples the synthesizer makes on
    each calibration sentence (at zero noise both are deterministic: anything else means the
    cut found the wrong node, and the pauses would be wrong). Checked once per compiled
    folder."""
    verdict = models.folder / _BRANCH_VERDICT if models.folder else None
    session, inputs = branch
    try:
        if verdict is not None:
            return verdict.read_text().strip() == "agrees"
    except OSError:
        pass
    agrees = True
    for values in calibrate().feeds:
        frames = round(float(session.run(None, inputs.feed(values))[0].sum()))
        audio = sentence_audio(models.synthesizer, models.inputs, models.decoder, values)
        agrees &= frames > 0 and frames * hop == sum(len(p) for p in audio)
    if verdict is not None:
        keep(verdict, "agrees\n" if agrees else "differs\n", "the duration branch's check")
    return agrees
