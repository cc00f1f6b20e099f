"""Which decoder a voice serves with: the reference (FP32, HayaKoe's) or its fast variant.

``--decoder reference`` never makes a variant. ``fast`` makes one and serves it whatever its
quality gate said (the verdict is logged and shown). ``auto``, the default, serves it only
where all three hold, each measured on this machine when the variant was made
(decoder_job.py): the reference decodes too slowly to play without waiting (below
FAST_BELOW_SPEED), the variant is measurably faster, and it passed its gate. A machine fast
enough never makes one: the record says how fast the reference was, and later starts read it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..inference.decoder import Decoder
from ..inference.stages import open_decoder
from ..pacing.margins import KEEP_UP, SPEED_MARGIN
from ..runtime.sessions import RuntimeSettings
from ..voices.config import DecoderShape
from .cache import compiled_folder, progress_folder, read_record
from .children import run_job
from .failure import CompileFailure
from .fast_decoder.quality import QualityGate
from .fast_decoder.timing import Timing, measurably_faster
from .fast_decoder.variant import Precision
from .files import writable
from .jobs import DecoderJob, fast_stage_file

_LOGGER = logging.getLogger(__name__)

REFERENCE, FAST, AUTO = "reference", "fast", "auto"
MODES = (REFERENCE, FAST, AUTO)
DECODER_SHARE = 0.87
"""The decoder's share of a sentence's work (HayaKoe measured 85-90 %; the front-end, the BERT
and the text encoder take the rest)."""
FAST_BELOW_SPEED = KEEP_UP / SPEED_MARGIN / DECODER_SHARE
"""Seconds of audio per second of decoding below which the reference makes a listener wait:
the schedule plans on SPEED_MARGIN of the speed seen and needs windows KEEP_UP times faster
than they play, and the rest of a sentence's work runs between them (about 1.5x real time)."""

Examples = Callable[[], tuple[list[dict[str, Any]], list[dict[str, Any]]]]
"""The calibration and check examples (``latent``, ``condition``), made when a job needs them."""


@dataclass(frozen=True)
class DecoderChoice:
    """The decoder a voice serves with, why, and what was measured."""

    mode: str
    fast: bool
    """Serving the fast variant (else the reference)."""
    reason: str
    code: str = "asked"
    """The reason in a word, for a page to say in its language: ``asked`` (the mode named
    it), ``fast_enough`` (the reference keeps up here), ``not_faster``, ``gate_failed``,
    ``needed`` (auto took the fast one), ``not_made`` (no group can be int8), ``failed``
    (making it failed)."""
    reference_speed: float | None = None
    fast_speed: float | None = None
    gate: QualityGate | None = None
    precision: str | None = None

    def describe(self) -> str:
        gate = f"; the fast decoder {self.gate.describe()}" if self.gate is not None else ""
        served = f"; it runs {self.precision}" if self.fast and self.precision else ""
        return (
            f"{'fast' if self.fast else 'reference'} decoder ({self.mode}): "
            f"{self.reason}{gate}{served}"
        )


def choose(mode: str, record: dict[str, Any] | None, failure: str | None = None) -> DecoderChoice:
    """The choice for ``mode`` from a fast decoder's record (None: none could be made, why
    in ``failure``)."""
    if mode == REFERENCE:
        return DecoderChoice(mode, False, "asked for (FP32, the same audio as HayaKoe)")
    if record is None:
        why = f"no fast decoder could be made: {failure}"
        return DecoderChoice(mode, False, why, "failed")
    reference = Timing.from_dict(record["reference"])
    if not record.get("built"):
        code = "not_made" if record.get("not_made") else "fast_enough"
        why = record.get("not_made") or (
            f"the reference decodes at {reference.speed:.2f}x real time here, fast enough "
            f"(auto takes a fast decoder below {FAST_BELOW_SPEED:.2f}x)"
        )
        return DecoderChoice(mode, False, why, code, reference_speed=reference.speed)
    fast = Timing.from_dict(record["fast"])
    verdict = QualityGate.from_dict(record["gate"])
    measured = DecoderChoice(
        mode,
        False,
        "",
        reference_speed=reference.speed,
        fast_speed=fast.speed,
        gate=verdict,
        precision=Precision.from_dict(record["precision"]).describe(),
    )
    ratio = f"{fast.median / reference.median:.2f} of the reference's time"
    if mode == FAST:
        return replace(measured, fast=True, reason=f"asked for; {ratio}")
    if reference.speed >= FAST_BELOW_SPEED:
        code = "fast_enough"
        why = f"the reference decodes at {reference.speed:.2f}x real time here, fast enough"
    elif not measurably_faster(fast, reference):
        code, why = "not_faster", f"the fast decoder is not measurably faster here ({ratio})"
    elif not verdict.passed:
        code, why = "gate_failed", "the fast decoder failed its quality gate"
    else:
        why = (
            f"the reference decodes at {reference.speed:.2f}x real time here, the fast one at "
            f"{fast.speed:.2f}x ({ratio}) and passed its quality gate"
        )
        return replace(measured, fast=True, reason=why, code="needed")
    return replace(measured, reason=why, code=code)


@dataclass(frozen=True)
class VoiceDecoder:
    """A voice's compiled reference decoder and what its fast variant is made from."""

    name: str
    model: Path
    """The published synthesizer."""
    folder: Path
    """The voice's compiled folder."""
    decoder: Decoder
    shape: DecoderShape
    sample_rate: int
    calibration_key: str


def fast_decoder(
    voice: VoiceDecoder,
    mode: str,
    settings: RuntimeSettings,
    examples: Examples,
    keep_float: tuple[str, ...] | None = None,
) -> tuple[Decoder | None, DecoderChoice]:
    """The fast decoder to serve ``voice`` with (made first if needed, in a child) and the
    choice; None: serve the reference. Logs the choice once."""
    if mode == REFERENCE:
        return None, _logged(voice.name, choose(mode, None))
    cache_dir = voice.folder.parent
    target = compiled_folder(cache_dir, "decoder", [voice.model], voice.name, _extra(voice))
    record = read_record(target)
    result = record["result"] if record else None
    if result is None or (mode == FAST and not result.get("built") and not result.get("not_made")):
        if not writable(cache_dir):
            return None, _logged(voice.name, choose(mode, None, f"{cache_dir} is not writable"))
        try:
            _make(voice, mode, settings, examples, keep_float, target)
        except CompileFailure as failure:
            return None, _logged(voice.name, choose(mode, None, str(failure)))
        record = read_record(target)
        result = record["result"] if record else None
    choice = choose(mode, result, "its record is unreadable")
    if not choice.fast or result is None:
        return None, _logged(voice.name, choice)
    stages = [target / fast_stage_file(i) for i in range(len(result["stage_inputs"]))]
    names = (voice.decoder.latent_name, voice.decoder.condition_name)
    fast = open_decoder(stages, result["stage_inputs"], names, voice.shape, settings,
                        voice.decoder.context)  # fmt: skip
    return fast, _logged(voice.name, choice)


def _make(
    voice: VoiceDecoder,
    mode: str,
    settings: RuntimeSettings,
    examples: Examples,
    keep_float: tuple[str, ...] | None,
    target: Path,
) -> None:
    calibration, check = examples()
    decoder = voice.decoder
    job = DecoderJob(
        model=voice.model,
        voice_folder=voice.folder,
        target=target,
        name=voice.name,
        threads=settings.threads,
        sample_rate=voice.sample_rate,
        decoder_shape=voice.shape,
        latent=decoder.latent_name,
        condition=decoder.condition_name,
        stage_inputs=tuple(stage.signal_input for stage in decoder.stages),
        context_frames=decoder.context,
        build=mode == FAST,
        keep_float=keep_float,
        key_extra=_extra(voice),
        progress=progress_folder(target),
        calibration=tuple(calibration),
        check=tuple(check),
    )
    run_job(target.parent, f"the fast decoder of {voice.name}", job.to_json(), job.arrays())


def _extra(voice: VoiceDecoder) -> tuple[str, ...]:
    """The voice folder first (cache.py checks it is still there), then the calibration."""
    return (voice.folder.name, voice.calibration_key)


def _logged(name: str, choice: DecoderChoice) -> DecoderChoice:
    failed_gate = choice.fast and choice.gate is not None and not choice.gate.passed
    level = logging.WARNING if failed_gate else logging.INFO
    _LOGGER.log(level, "Voice %s: %s", name, choice.describe())
    return choice
