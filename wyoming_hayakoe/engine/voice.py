"""A loaded voice: its config, style vectors, ONNX sessions and how to feed them.

Any packaging of a Style-Bert-VITS2 JP-Extra voice loads the same way (voices/sources.py): a
HayaKoe folder brings its own duration predictor; an AIVMX file or an SBV2 export holds the
whole graph, so its duration predictor is cut out of it and checked against it on a probe.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnxruntime as ort

from ..errors import ModelFileError, UnknownStyleError
from ..runtime import model_io
from ..runtime.duration_branch import duration_branch
from ..runtime.model_cache import cached_number, writable
from ..runtime.prepare_child import durations_in_child
from ..runtime.self_check import SelfCheckResult
from ..runtime.sessions import RuntimeSettings
from ..voices.config import VoiceConfig
from ..voices.sources import VoiceSource
from .decoder import Decoder
from .inputs import CONTROL_INPUTS, MODEL_INPUTS, InputNames
from .probe import branch_matches_graph
from .self_checked import open_checked

_LOGGER = logging.getLogger(__name__)


@dataclass
class Voice:
    """One loaded voice. Create it with :meth:`Voice.load`; sessions are reused by all calls."""

    name: str
    source: VoiceSource
    config: VoiceConfig
    style_vectors: np.ndarray
    synthesizer: ort.InferenceSession
    """The whole synthesizer, or its front half (encoder, durations, flow) when split."""
    inputs: InputNames
    """How the synthesizer (or its front) names its inputs."""
    decoder: Decoder | None
    """The decoder half when the synthesizer is split, for sound inside a sentence."""
    duration_predictor: ort.InferenceSession | None
    duration_inputs: InputNames | None = None
    gain: float | None = None
    """Loudness gain, measured once on a calibration sentence (see Engine.gain)."""
    self_check: SelfCheckResult | None = None
    """How the prepared models compared with the published synthesizer (None: not prepared)."""

    @property
    def model_path(self) -> Path:
        return self.source.model

    @property
    def speaker_id(self) -> int:
        """The speaker requests use unless they name another: the one speaker of a voice cut
        out of a multi-speaker model, else the config's default."""
        if self.source.speaker is not None:
            return self.source.speaker_id
        return self.config.default_speaker_id

    @property
    def sample_rate(self) -> int:
        return self.config.sample_rate

    @property
    def styles(self) -> list[str]:
        """Style names ordered by id, so the default (Neutral, row 0) comes first."""
        return self.config.styles_by_id

    @property
    def speakers(self) -> list[str]:
        if self.source.speaker is not None:
            return [self.source.speaker]
        return self.config.speakers_by_id

    @classmethod
    def load(
        cls,
        source: VoiceSource | Path,
        settings: RuntimeSettings,
        name: str | None = None,
        cache_dir: Path | None = None,
    ) -> Voice:
        """Load the voice; with a writable ``cache_dir`` the synthesizer is split and every
        model optimized once for this machine (see model_cache.py). A folder ``source`` is a
        HayaKoe voice folder."""
        if isinstance(source, Path):
            from ..voices.sources import hayakoe_source

            source = hayakoe_source(name or source.name, source)
        config = source.read_config()
        vectors = _checked_vectors(source, config)
        name = name or source.name
        synthesizer, inputs, decoder, check = _open_synthesizer(
            source.model, name, config, vectors, settings, cache_dir
        )
        voice = cls(
            name=name,
            source=source,
            config=config,
            style_vectors=vectors,
            synthesizer=synthesizer,
            inputs=inputs,
            decoder=decoder,
            duration_predictor=None,
            self_check=check,
        )
        voice.duration_predictor, voice.duration_inputs = _duration_predictor(
            voice, settings, cache_dir
        )
        _log_loaded(voice)
        return voice

    def for_source(self, source: VoiceSource) -> Voice:
        """This model as another of its voices (another speaker): the sessions are shared."""
        return dataclasses.replace(
            self, name=source.name, source=source, config=source.read_config(), gain=None
        )

    def style_vector(self, style: str, weight: float) -> np.ndarray:
        """Blend the style towards the mean (row 0): ``mean + (style - mean) * weight``."""
        row = self.config.styles.get(style)
        if row is None:
            raise UnknownStyleError(
                f"Voice {self.name} has no style {style!r}; styles: {', '.join(self.styles)}"
            )
        mean = self.style_vectors[0]
        return mean + (self.style_vectors[row] - mean) * weight

    def check_speaker(self, speaker_id: int) -> None:
        if speaker_id not in self.config.speakers.values():
            raise UnknownStyleError(
                f"Voice {self.name} has no speaker id {speaker_id}; "
                f"speakers: {', '.join(f'{n}={i}' for n, i in self.config.speakers.items())}"
            )


def _checked_vectors(source: VoiceSource, config: VoiceConfig) -> np.ndarray:
    vectors = source.read_style_vectors()
    rows = max(config.styles.values(), default=0) + 1
    if vectors.ndim != 2 or vectors.shape[0] < rows or vectors.dtype.kind != "f":
        raise ModelFileError(
            f"{source.path}: expected float [{rows}, 256] style vectors, got "
            f"{vectors.dtype} {list(vectors.shape)}"
        )
    return vectors.astype(np.float32)


def _open_synthesizer(
    path: Path,
    name: str,
    config: VoiceConfig,
    style_vectors: np.ndarray,
    settings: RuntimeSettings,
    cache_dir: Path | None,
) -> tuple[ort.InferenceSession, InputNames, Decoder | None, SelfCheckResult | None]:
    """The split synthesizer (front, decoder) if it is prepared and passes its self-check,
    else the whole one."""
    required = MODEL_INPUTS | CONTROL_INPUTS | {"noise_scale"}
    check = None
    if cache_dir is not None and path.is_file() and writable(cache_dir):
        try:
            checked = open_checked(path, name, config, style_vectors, settings, cache_dir)
            check = checked.result
            if checked.front is not None:
                inputs = InputNames.of(checked.front, path, "Synthesizer", required)
                return checked.front, inputs, checked.decoder, check
        except Exception as err:  # any export we cannot split still works whole
            _LOGGER.warning(
                "Cannot split %s for streaming inside sentences (%s): using it whole", path, err
            )
    synthesizer = settings.open(path, "Synthesizer", cache_dir)
    inputs = InputNames.of(synthesizer, path, "Synthesizer", required)
    model_io.check_synthesizer(synthesizer, path)
    return synthesizer, inputs, None, check


def _duration_predictor(
    voice: Voice, settings: RuntimeSettings, cache_dir: Path | None
) -> tuple[ort.InferenceSession | None, InputNames | None]:
    """The voice's own duration predictor file, or the branch cut out of its synthesizer;
    None (pauses of 80 ms) if there is neither."""
    path = voice.source.duration_predictor
    required = MODEL_INPUTS | CONTROL_INPUTS
    if path is not None and path.exists():
        session = settings.open(path, "Duration predictor", cache_dir)
        return session, InputNames.of(session, path, "Duration predictor", required)
    if path is not None:
        _LOGGER.info(
            "%s has no %s: cutting it out of the synthesizer", voice.source.path, path.name
        )
    try:
        if cache_dir is not None and writable(cache_dir):
            branch: Path | bytes = durations_in_child(voice.model_path, cache_dir)
        else:
            branch = duration_branch(voice.model_path, None)
        if isinstance(branch, Path):
            session = settings.open(branch, "Duration predictor", cache_dir)
        else:
            options = settings.session_options()
            session = ort.InferenceSession(branch, options, providers=["CPUExecutionProvider"])
        inputs = InputNames.of(session, voice.model_path, "Duration branch", required)
        matches = cached_number(
            cache_dir,
            [voice.model_path],
            "duration-branch-check",
            lambda: float(branch_matches_graph(voice, session, inputs)),
        )
    except Exception as err:  # pauses are a nicety: any failure here leaves the voice usable
        _LOGGER.warning("No predicted pauses for %s, they fall back to 80 ms: %s", voice.name, err)
        return None, None
    if not matches:
        _LOGGER.warning(
            "The duration branch cut out of %s disagrees with the whole graph's audio length: "
            "pauses fall back to 80 ms",
            voice.model_path,
        )
        return None, None
    return session, inputs


def _log_loaded(voice: Voice) -> None:
    source = voice.source
    _LOGGER.info("Loaded voice %s (styles: %s)", voice.name, ", ".join(voice.styles))
    if source.kind == "hayakoe":
        return
    credit = source.credit[0] if source.credit else "unknown author"
    terms = source.license or "no licence information in the file"
    _LOGGER.info(
        "Voice %s is %s by %s under %s: using it means following its terms%s",
        voice.name,
        source.description,
        credit,
        terms,
        f" ({source.credit[1]})" if source.credit and source.credit[1] else "",
    )
