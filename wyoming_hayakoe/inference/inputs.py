"""Our names for the synthesizer's inputs, mapped onto the names and ranks a file declares.

HayaKoe names them ``x, x_lengths, tone, ...`` with ``[1]`` scalars; Style-Bert-VITS2's
converter (and so every AIVMX file) ``x_tst, x_tst_lengths, tones, ...`` with 0-d scalars and
another order. Feeds are built by name, with the rank the graph declares.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnxruntime as ort

from ..errors import ModelFileError
from ..runtime import model_io

ALIASES: dict[str, tuple[str, ...]] = {
    "x": ("x", "x_tst"),
    "x_lengths": ("x_lengths", "x_tst_lengths"),
    "sid": ("sid",),
    "tone": ("tone", "tones"),
    "language": ("language",),
    "bert": ("bert",),
    "style_vec": ("style_vec",),
    "length_scale": ("length_scale",),
    "sdp_ratio": ("sdp_ratio",),
    "noise_scale": ("noise_scale",),
    "noise_scale_w": ("noise_scale_w",),
}
"""Our name -> the names exporters give that input."""
SCALARS = frozenset({"length_scale", "sdp_ratio", "noise_scale", "noise_scale_w"})
MODEL_INPUTS = frozenset({"x", "x_lengths", "sid", "tone", "language", "bert", "style_vec"})
CONTROL_INPUTS = frozenset({"length_scale", "noise_scale_w", "sdp_ratio"})
"""What the duration predictor needs besides the model inputs (the synthesizer: noise_scale)."""
DURATION_NAMES = MODEL_INPUTS | CONTROL_INPUTS
"""What a duration predictor must take."""
SYNTHESIZER_NAMES = DURATION_NAMES | {"noise_scale"}
"""What a synthesizer (or its front) must take."""


@dataclass(frozen=True)
class InputNames:
    """Which input of one session each of our names feeds, and the scalars it wants 0-d."""

    names: Mapping[str, str]
    """Our name -> the session's input name."""
    zero_d: frozenset[str]
    """Our names of the scalar inputs the graph declares with rank 0."""

    @classmethod
    def of(
        cls, session: ort.InferenceSession, path: Path, what: str, required: Iterable[str]
    ) -> InputNames:
        """Map ``session``'s inputs; ModelFileError if a required one is missing or the graph
        has an input we would not feed (another architecture, such as ``ja_bert``)."""
        declared = {i.name: i.shape for i in session.get_inputs()}
        names: dict[str, str] = {}
        for ours, aliases in ALIASES.items():
            found = [alias for alias in aliases if alias in declared]
            if found:
                names[ours] = found[0]
        missing = sorted(set(required) - set(names))
        unknown = sorted(set(declared) - set(names.values()))
        if missing or unknown:
            raise ModelFileError(
                f"{what} at {path} is not a Style-Bert-VITS2 JP-Extra synthesizer: "
                f"missing inputs {missing or 'none'}, unexpected inputs {unknown or 'none'} "
                f"(it has {', '.join(declared)})"
            )
        zero_d = frozenset(o for o, n in names.items() if o in SCALARS and not declared[n])
        model_io.check_inputs(session, path, what, names, zero_d)
        return cls(names, zero_d)

    def feed(self, values: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """``values`` (by our names, scalars as ``[1]``) renamed and shaped for the session;
        values the session does not take are left out."""
        return {
            name: values[ours].reshape(()) if ours in self.zero_d else values[ours]
            for ours, name in self.names.items()
        }
