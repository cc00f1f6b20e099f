"""One request as an adapter states it, and what its settings mean for the engine.

An adapter says what it wants: a text (or a text with its reading), a voice and style, and the
settings its client may set (:class:`SpeechSettings`, on the knobs' scales: knobs.py). The
service turns those settings into the engine's parameters and the output's finishing here,
one pure function per setting (as VOICEVOX ENGINE applies an AudioQuery's fields), so no
adapter does arithmetic on the engine's parameters.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..engine import SynthesisParams
from ..engine.finishing import Finishing
from ..errors import TextError
from ..knobs import INTONATION, NOISE, NOISE_W, SPEED, TEMPO_DYNAMICS
from ..text.with_reading import TextWithReading


@dataclass(frozen=True)
class SpeechSettings:
    """What a client may set of one request; None (and the defaults): the server's own."""

    speed: float | None = None
    """``speed_scale``: faster above 1."""
    intonation: float | None = None
    """``intonation_scale``: the style's strength."""
    tempo: float | None = None
    """``tempo_dynamics_scale``: the stochastic duration predictor's share."""
    noise: float | None = None
    noise_w: float | None = None
    pitch: float = 0.0
    """The pitch times ``1 + pitch`` (the voice synthesized that much longer, played faster)."""
    volume: float = 1.0
    pre_seconds: float = 0.0
    """Silence before the speech, at speed 1 (only what the voice's own silence lacks)."""
    post_seconds: float = 0.0
    pause_length: float | None = None
    """Seconds between two sentences at speed 1 (None: the duration predictor's)."""
    pause_scale: float = 1.0
    sample_rate: int | None = None
    """The output's sampling rate (None: the voice's own)."""
    stereo: bool = False


@dataclass(frozen=True)
class SpeechRequest:
    """What an adapter asks for: the service resolves, checks and finishes the rest."""

    text: str | TextWithReading
    voice: str | None = None
    """A voice name or a styled name (``"tiny (Happy)"``); None: the default voice."""
    style: str | None = None
    """A style or a speaker of the voice; wins over a styled name's."""
    settings: SpeechSettings = SpeechSettings()
    installed_only: bool = False
    """Refuse a voice that is not installed instead of downloading it (the web page's and the
    VOICEVOX API's requests: downloading is the Voices page's button)."""


def check_length(text: str | TextWithReading, limit: int) -> None:
    """Refuse a text over ``--max-text-length`` characters."""
    characters = len(text if isinstance(text, str) else text.text)
    if characters > limit:
        raise TextError(
            f"Text is {characters} characters long; the limit is {limit} (--max-text-length)"
        )


def default_settings(params: SynthesisParams) -> SpeechSettings:
    """The server's defaults (``--speed-scale``, ``--intonation-scale``,
    ``--tempo-dynamics-scale``) on the knobs' scales: what a new VOICEVOX query holds."""
    return SpeechSettings(
        speed=SPEED.from_param(params.length_scale),
        intonation=INTONATION.from_param(params.style_weight),
        tempo=TEMPO_DYNAMICS.from_param(params.sdp_ratio),
    )


def effective_speed(params: SynthesisParams, settings: SpeechSettings) -> float:
    """The request's speed on the knob's scale (the server's where it sets none)."""
    return SPEED.from_param(params.length_scale) if settings.speed is None else settings.speed


def synthesis_params(base: SynthesisParams, settings: SpeechSettings) -> SynthesisParams:
    """``base`` (the voice and style's) with the request's settings applied, one by one."""
    params = base
    for apply in (_speed, _intonation, _tempo, _noise, _pauses):
        params = apply(params, base, settings)
    return params


def finishing(base: SynthesisParams, settings: SpeechSettings) -> Finishing:
    """What is done to the synthesized audio: pitch, silence (scaled by the speed), volume,
    sampling rate, channels."""
    return Finishing(
        pitch=settings.pitch,
        speed=effective_speed(base, settings),
        volume=settings.volume,
        pre_seconds=settings.pre_seconds,
        post_seconds=settings.post_seconds,
        sample_rate=settings.sample_rate,
        stereo=settings.stereo,
    )


def finishes(settings: SpeechSettings) -> bool:
    """Whether the output differs from the engine's audio (else it is sent as it comes)."""
    return any(
        getattr(settings, name) != getattr(_UNFINISHED, name)
        for name in ("pitch", "volume", "pre_seconds", "post_seconds", "sample_rate", "stereo")
    )


_UNFINISHED = SpeechSettings()


# ----- one function per setting: (params so far, the base, the settings) -> params -----


def _speed(
    params: SynthesisParams, base: SynthesisParams, settings: SpeechSettings
) -> SynthesisParams:
    """``length_scale`` is the speed's inverse; a raised pitch is synthesized ``1 + pitch``
    times longer, because the finishing plays it that much faster (engine/finishing.py)."""
    if settings.speed is None and settings.pitch == 0.0:
        return params
    length = base.length_scale if settings.speed is None else SPEED.to_param(settings.speed)
    return dataclasses.replace(params, length_scale=length * (1.0 + settings.pitch))


def _intonation(
    params: SynthesisParams, base: SynthesisParams, settings: SpeechSettings
) -> SynthesisParams:
    if settings.intonation is None:
        return params
    return dataclasses.replace(params, style_weight=INTONATION.to_param(settings.intonation))


def _tempo(
    params: SynthesisParams, base: SynthesisParams, settings: SpeechSettings
) -> SynthesisParams:
    if settings.tempo is None:
        return params
    return dataclasses.replace(params, sdp_ratio=TEMPO_DYNAMICS.to_param(settings.tempo))


def _noise(
    params: SynthesisParams, base: SynthesisParams, settings: SpeechSettings
) -> SynthesisParams:
    if settings.noise is not None:
        params = dataclasses.replace(params, noise_scale=NOISE.to_param(settings.noise))
    if settings.noise_w is not None:
        params = dataclasses.replace(params, noise_scale_w=NOISE_W.to_param(settings.noise_w))
    return params


def _pauses(
    params: SynthesisParams, base: SynthesisParams, settings: SpeechSettings
) -> SynthesisParams:
    """A pause's length is at speed 1, as VOICEVOX's ``pauseLength``: it shortens with the
    speed."""
    seconds = params.pause_seconds
    if settings.pause_length is not None:
        seconds = settings.pause_length / effective_speed(base, settings)
    if seconds == params.pause_seconds and settings.pause_scale == params.pause_scale:
        return params
    return dataclasses.replace(params, pause_seconds=seconds, pause_scale=settings.pause_scale)
