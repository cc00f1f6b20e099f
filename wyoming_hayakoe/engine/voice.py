"""A loaded voice: its config, style vectors, ONNX sessions and how to feed them.

Any packaging of a Style-Bert-VITS2 JP-Extra voice loads the same way (voices/sources.py): a
HayaKoe folder brings its own duration predictor; an AIVMX file or an SBV2 export holds the
whole graph, so its duration predictor is cut out of it and checked against it on the
calibration sentences.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnxruntime as ort

from ..compiling.compiled import (
    DecoderChoice,
    SelfCheckResult,
    open_models,
)
from ..errors import ModelFileError, UnknownStyleError
from ..inference.calibration import Calibration
from ..inference.decoder import Decoder
from ..inference.inputs import InputNames
from ..inference.params import SynthesisParams
from ..inference.synthesizer import encode, sentence_audio, synthesizer_inputs
from ..runtime.sessions import RuntimeSettings
from ..text.frontend import Phonemes
from ..voices.config import VoiceConfig
from ..voices.sources import VoiceSource
from .duration_branch import duration_predictor

_LOGGER = logging.getLogger(__name__)

CalibrationMaker = Callable[[VoiceConfig, np.ndarray, int], Calibration]
"""Makes a voice's calibration inputs from its config, style vectors and speaker."""


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
    """Loudness gain, measured once on a calibration sentence (see LoadedVoices.gain)."""
    self_check: SelfCheckResult | None = None
    """How the compiled models compared with the published synthesizer (None: no check)."""
    compiled: Path | None = None
    """The folder of its compiled models, which also keeps what was measured on them."""
    reference_decoder: Decoder | None = None
    """The FP32 decoder once a choice was made (``decoder`` is then the one served)."""
    decoder_choice: DecoderChoice | None = None
    """Which decoder serves and why (None: not chosen yet, or the voice is served whole)."""

    @property
    def model_path(self) -> Path:
        return self.source.model

    @property
    def speaker_id(self) -> int:
        return speaker_of(self.source, self.config)

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
        calibration: CalibrationMaker | None = None,
    ) -> Voice:
        """Load the voice; with a writable ``cache_dir`` its models are compiled once for
        this machine (see compiling/), which checks them on the calibration sentences that
        ``calibration`` makes (the engine's LoadedVoices gives it). A folder ``source`` is a HayaKoe
        voice folder."""
        if isinstance(source, Path):
            from ..voices.sources import hayakoe_source

            source = hayakoe_source(name or source.name, source)
        config = source.read_config()
        vectors = _checked_vectors(source, config)
        name = name or source.name

        def calibrate() -> Calibration:
            if calibration is None:
                raise ValueError("compiling a voice needs its calibration sentences")
            return calibration(config, vectors, speaker_of(source, config))

        models = open_models(source, name, config, settings, cache_dir, calibrate)
        voice = cls(
            name=name,
            source=source,
            config=config,
            style_vectors=vectors,
            synthesizer=models.synthesizer,
            inputs=models.inputs,
            decoder=models.decoder,
            duration_predictor=None,
            self_check=models.self_check,
            compiled=models.folder,
        )
        voice.duration_predictor, voice.duration_inputs = duration_predictor(
            name, source, config.hop_length, models, settings, calibrate
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

    def synthesize(
        self,
        phonemes: Phonemes,
        bert: np.ndarray,
        style_vector: np.ndarray,
        params: SynthesisParams,
        early: bool = False,
    ) -> Iterator[np.ndarray]:
        """Float32 audio of one sentence in [-1, 1]; when the synthesizer is split and
        ``early`` sound is wanted, a long sentence comes in windows."""
        values = synthesizer_inputs(phonemes, bert, style_vector, params)
        yield from sentence_audio(self.synthesizer, self.inputs, self.decoder, values, early)

    def encode(
        self,
        phonemes: Phonemes,
        bert: np.ndarray,
        style_vector: np.ndarray,
        params: SynthesisParams,
    ) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
        """One sentence through the text encoder: the latent and speaker condition its
        decoder takes; a synthesizer that is not split gives the whole audio."""
        return encode(
            self.synthesizer, self.inputs, self.decoder,
            synthesizer_inputs(phonemes, bert, style_vector, params),
        )  # fmt: skip

    def predict_durations(
        self,
        phonemes: Phonemes,
        bert: np.ndarray,
        style_vector: np.ndarray,
        params: SynthesisParams,
    ) -> np.ndarray | None:
        """Frames per phoneme from the duration predictor (``[1, T]`` or, cut out of an SBV2
        graph, ``[1, 1, T]``), or None if the voice has none."""
        if self.duration_predictor is None or self.duration_inputs is None:
            return None
        values = synthesizer_inputs(phonemes, bert, style_vector, params)
        durations: np.ndarray = self.duration_predictor.run(
            None, self.duration_inputs.feed(values)
        )[0]
        return durations.reshape(-1)

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


def speaker_of(source: VoiceSource, config: VoiceConfig) -> int:
    """The speaker requests use unless they name another: the one speaker of a voice cut out
    of a multi-speaker model, else the config's default."""
    if source.speaker is not None:
        return source.speaker_id
    return config.default_speaker_id


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
