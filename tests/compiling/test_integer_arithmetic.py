"""The fast decoder's integer sums on this CPU and on x86 without VNNI (compiling/fast_decoder/
arithmetic.py), on the tiny voice's decoder: each path the product takes computes what its
graph defines; the plain path's saturating sums, where the kernels have them, do not.

x86 without VNNI is shown to ONNX Runtime by tools/cpuid_mask: a child process on this very
CPU that CPUID tells it has AVX2 and no AVX-512 or VNNI (AMD Zen 1-3), or AVX-512 without
VNNI (Intel Skylake to Cascade Lake). Native kernels, no emulator.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import integer_kernels
import pytest
from integer_kernels import ACTIVATIONS, EXACT_DB

from tools import cpuid_mask

REPO = Path(__file__).resolve().parents[2]
SATURATED_DB = 1.0
"""Sums cut by saturation are this far from the graph's arithmetic at least (measured 1.95 dB
on AVX2 with uint8 activations)."""


def test_the_paths_the_product_takes_here_sum_as_the_graph_defines(tmp_path: Path) -> None:
    measured = integer_kernels.measure_paths(tmp_path)
    distances = measured["distances"]
    assert isinstance(distances, dict)
    for name in measured["paths"]:  # type: ignore[attr-defined]
        assert distances[name] <= EXACT_DB, (name, distances)
    exact = measured["exact"]
    assert isinstance(exact, dict)
    for activations in ACTIVATIONS:  # the probe's verdict on the plain path is the audio's
        assert exact[activations] == (distances[activations] <= EXACT_DB), distances


@pytest.mark.slow
@pytest.mark.parametrize("mask", cpuid_mask.MASKS)
def test_without_vnni_the_plain_sums_saturate_and_the_exact_paths_do_not(mask: str) -> None:
    if (why := cpuid_mask.unavailable()) is not None:
        pytest.skip(f"no CPU without VNNI can be shown here: {why}")
    script = Path(integer_kernels.__file__)
    env = cpuid_mask.masked_env(mask)
    env["PYTHONPATH"] = str(REPO)  # tools/, as the tests find it
    child = subprocess.run([sys.executable, str(script)], env=env, cwd=REPO,
                           capture_output=True, text=True, timeout=600)  # fmt: skip
    assert child.returncode == 0, child.stderr[-2000:]
    measured = json.loads(child.stdout.strip().splitlines()[-1])
    print(mask, measured)
    assert measured["exact"] == {"uint8": False, "int8": False}
    assert measured["paths"] == [
        "uint8, 7-bit weights", "uint8, wide sums", "int8, 7-bit weights", "int8, wide sums"
    ]  # fmt: skip
    distances = measured["distances"]
    for name in measured["paths"]:
        assert distances[name] <= EXACT_DB, (name, distances)
    for activations in ACTIVATIONS:  # the failure the exact paths are there for
        assert distances[activations] >= SATURATED_DB, (activations, distances)
    # the maker times the exact paths only, and serves one of them
    assert measured["maker"]["timed"] == sorted(measured["paths"])
    assert measured["maker"]["path"] in measured["paths"]
