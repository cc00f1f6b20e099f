"""What a caller may choose for one request."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SynthesisParams:
    """What a caller may choose per request; defaults are HayaKoe's."""

    style: str = "Neutral"
    """Style name from the voice's config (``data.style2id``)."""
    style_weight: float = 1.0
    """How far from the mean style (0 = neutral, 1 = the style as trained)."""
    length_scale: float = 1.0
    """SBV2's ``length_scale``: above 1 speaks slower, below 1 faster (``--speed-scale`` is its
    inverse: knobs.py)."""
    sdp_ratio: float = 0.2
    """Share of the stochastic duration predictor (more varied rhythm)."""
    noise_scale: float = 0.6
    """Variation of the voice itself."""
    noise_scale_w: float = 0.8
    """Variation of the stochastic durations."""
    speaker_id: int = 0
    """Speaker of a multi-speaker voice."""
    pause_seconds: float | None = None
    """The pause between two sentences (None: the one the duration predictor gives)."""
    pause_scale: float = 1.0
    """A factor on the predicted pause between two sentences. Pauses never go under 80 ms."""
