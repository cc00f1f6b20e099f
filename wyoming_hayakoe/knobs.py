"""The synthesis settings a user turns: one name, one scale and one direction each, the same
on the command line, in the add-on, on the web page and in the VOICEVOX-compatible API.

The names and scales are those of VOICEVOX's AudioQuery as AivisSpeech Engine made them mean
for Style-Bert-VITS2 (its README, "AudioQuery 型の仕様変更"), because that is the one place
whose spelling is not ours to choose: clients send ``speedScale`` and ``intonationScale``.
Every knob is larger-is-more (faster, stronger, livelier, more varied) and 1.0 or the model's
own default is where it starts:

- ``speed_scale``: faster above 1; SBV2's ``length_scale`` is its inverse.
- ``intonation_scale``: the style's strength: 0-1 is SBV2's ``style_weight`` 0-1, 1-2 is 1-10.
- ``tempo_dynamics_scale``: the stochastic duration predictor's share: 0-1 is ``sdp_ratio``
  0-0.2, 1-2 is 0.2-1.
- ``noise_scale``, ``noise_scale_w``: SBV2's own noise, as they are.

The spelling follows each place's convention: ``--speed-scale`` on the command line,
``speed_scale`` in the add-on and the page's words, ``speedScale`` in the API. The spellings
before these (``--speed``, a length scale, larger is slower; ``--style-weight``,
``--sdp-ratio``, ``--noise-w``; the add-on's ``speed``, ``style_weight``, ``sdp_ratio``) are
:data:`OLD_SPELLINGS`: still read, converted, and the log says what to write instead.

Pure arithmetic, no imports of the layers: the command line reads it before anything heavy
loads, the web adapter converts the API's fields with it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

SBV2_STYLE_WEIGHT = 1.0
"""HayaKoe's and SBV2's default ``style_weight``: intonation 1.0."""
SBV2_SDP_RATIO = 0.2
"""HayaKoe's and SBV2's default ``sdp_ratio``: tempo dynamics 1.0."""
MAX_STYLE_WEIGHT = 10.0
"""Where AivisSpeech puts intonation 2.0."""


def _identity(value: float) -> float:
    return value


def _inverse(value: float) -> float:
    return 1.0 / value


def _knee_out(value: float, knee: float, top: float) -> float:
    """0..knee..top -> 0..1..2, linear on both sides of the knee."""
    return value / knee if value <= knee else 1.0 + (value - knee) / (top - knee)


def _knee_in(scale: float, knee: float, top: float) -> float:
    """The inverse of :func:`_knee_out`."""
    return scale * knee if scale <= 1.0 else knee + (scale - 1.0) * (top - knee)


def intonation_of(style_weight: float) -> float:
    return _knee_out(style_weight, SBV2_STYLE_WEIGHT, MAX_STYLE_WEIGHT)


def style_weight_of(intonation: float) -> float:
    return _knee_in(intonation, SBV2_STYLE_WEIGHT, MAX_STYLE_WEIGHT)


def tempo_of(sdp_ratio: float) -> float:
    return _knee_out(sdp_ratio, SBV2_SDP_RATIO, 1.0)


def sdp_ratio_of(tempo: float) -> float:
    return _knee_in(tempo, SBV2_SDP_RATIO, 1.0)


@dataclass(frozen=True)
class Knob:
    """One synthesis setting as users see it."""

    name: str
    """snake_case: the add-on's option and the page's word; ``flag`` and ``api_field`` follow."""
    param: str
    """The field of the engine's SynthesisParams it sets."""
    low: float
    high: float
    """The range accepted everywhere (VOICEVOX ENGINE's for ``speedScale``)."""
    default: float
    """HayaKoe's default, on this knob's scale."""
    to_param: Callable[[float], float]
    """This knob's value -> the SynthesisParams field's."""
    from_param: Callable[[float], float]
    """The SynthesisParams field's value -> this knob's."""
    meaning: str
    """What a larger value does, for help texts and errors."""

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    @property
    def dest(self) -> str:
        """Where argparse keeps the flag's value."""
        return self.name

    @property
    def api_field(self) -> str:
        """The AudioQuery's field: camelCase (``noise_scale_w`` -> ``noiseScaleW``)."""
        first, *rest = self.name.split("_")
        return first + "".join(word[:1].upper() + word[1:] for word in rest)

    def within(self, value: float) -> bool:
        return self.low <= value <= self.high


SPEED = Knob(
    "speed_scale", "length_scale", 0.25, 4.0, 1.0, _inverse, _inverse,
    "how fast the voice speaks: above 1 is faster, below 1 slower",
)  # fmt: skip
INTONATION = Knob(
    "intonation_scale", "style_weight", 0.0, 2.0, 1.0, style_weight_of, intonation_of,
    "how strongly the style is applied: 0 is Neutral, 1 the style as trained, 2 the strongest",
)  # fmt: skip
TEMPO_DYNAMICS = Knob(
    "tempo_dynamics_scale", "sdp_ratio", 0.0, 2.0, 1.0, sdp_ratio_of, tempo_of,
    "how lively the rhythm is: 0 is the steadiest, 1 the model's own, 2 the liveliest",
)  # fmt: skip
NOISE = Knob(
    "noise_scale", "noise_scale", 0.0, 2.0, 0.6, _identity, _identity,
    "how much the voice itself varies",
)  # fmt: skip
NOISE_W = Knob(
    "noise_scale_w", "noise_scale_w", 0.0, 2.0, 0.8, _identity, _identity,
    "how much the length of each sound varies",
)  # fmt: skip
KNOBS = (SPEED, INTONATION, TEMPO_DYNAMICS, NOISE, NOISE_W)


@dataclass(frozen=True)
class OldSpelling:
    """A name a knob had before, still read: its value converted onto the knob's scale."""

    knob: Knob
    to_knob: Callable[[float], float]
    """The old value -> the knob's."""
    meaning: str
    """What the old scale was, for the log line."""
    default: float
    """Its default: an old add-on option left at it changes nothing."""
    flag: str | None
    """The command line's old flag, if it had one."""
    addon_option: str | None
    """The add-on's old option, if it had one (the Supervisor keeps a saved value only while
    the schema still names it: addon/config.yaml keeps these, optional)."""


OLD_SPELLINGS = (
    OldSpelling(SPEED, _inverse, "a length scale: larger is slower", 1.0, "--speed", "speed"),
    OldSpelling(
        INTONATION, intonation_of, "SBV2's style weight, 0 to 10", SBV2_STYLE_WEIGHT,
        "--style-weight", "style_weight",
    ),
    OldSpelling(
        TEMPO_DYNAMICS, tempo_of, "SBV2's SDP ratio, 0 to 1", SBV2_SDP_RATIO, "--sdp-ratio",
        "sdp_ratio",
    ),
    OldSpelling(NOISE_W, _identity, "the same scale", NOISE_W.default, "--noise-w", None),
)  # fmt: skip
