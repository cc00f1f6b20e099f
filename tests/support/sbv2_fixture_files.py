"""The committed Style-Bert-VITS2 export folder and AIVMX file (tests/fixtures), shared by
their tests."""

from __future__ import annotations

import io

import aivmlib
import numpy as np

from tools.server_process import REPO_ROOT, TINY_VOICE_ROOT

FIXTURES = REPO_ROOT / "tests" / "fixtures"
SBV2_DIR = FIXTURES / "sbv2-export" / "tiny-sbv2"
SBV2_ONNX = SBV2_DIR / "tiny-sbv2_e100_s2000.onnx"
AIVMX = FIXTURES / "aivmx" / "test-voice.aivmx"
TINY_BERT = TINY_VOICE_ROOT / "onnx" / "bert" / "q8" / "bert_q8.onnx"
HOP = 512


def style_vectors(name: str) -> np.ndarray:
    """The style vectors of the ``"sbv2"`` folder or of the ``"aivmx"`` file."""
    if name == "sbv2":
        return np.load(SBV2_DIR / "style_vectors.npy")
    with AIVMX.open("rb") as file:
        blob = aivmlib.read_aivmx_metadata(file).style_vectors
    assert blob is not None
    return np.load(io.BytesIO(blob))
