"""What int8 saves in each layer group on this machine, measured once.

The search orders the groups by the distance each costs per second it saves. Multiply-adds do
not tell the seconds: at a decoder's size the int8 graph's own work (a QuantizeLinear and a
DequantizeLinear around each integer convolution, transposes to the channels-last layout its
kernels use) eats a share of the gain that differs by layer and CPU; on a real trained decoder
on a CPU without VNNI, the QLinearConvs of three residual blocks took half their FP32 time,
and the nodes around them 40 % of the QLinearConvs' own.

So the plain graph and a variant with every candidate group in int8 run on one example under
ONNX Runtime's profiler, and each group saves the kernel time of the nodes in its layers'
scopes in the one less that in the other. The quantizer names the nodes it adds after the
tensors they read, so those of a group's layers count against it; the layout's transposes
carry no scope and are left out, as the same cost for every group.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import onnxruntime as ort

from .generator import Generator, scope_of
from .ranges import Feeds

ROUNDS = 4
"""Runs profiled of each graph."""


def profile(session: ort.InferenceSession, example: Feeds) -> Counter[str]:
    """Microseconds of kernel time per layer scope over ROUNDS runs of ``example``
    (``session`` made with profiling on)."""
    by_scope: Counter[str] = Counter()
    for _ in range(ROUNDS):
        session.run(None, example)
    trace = Path(session.end_profiling())
    try:
        for event in json.loads(trace.read_text(encoding="utf-8")):
            name = str(event.get("name", ""))
            if event.get("cat") == "Node" and name.endswith("_kernel_time"):
                scope = scope_of(name.removesuffix("_kernel_time"))
                if scope is not None:
                    by_scope[scope] += int(event.get("dur", 0))
    finally:
        trace.unlink(missing_ok=True)
    return by_scope


def per_group(
    generator: Generator, names: Sequence[str], plain: Counter[str], mixed: Counter[str]
) -> dict[str, float]:
    """Seconds per run each of ``names`` saves, from the two profiles."""
    saved = {}
    for name in names:
        scopes = generator.scopes([name])
        before = sum(plain[scope] for scope in scopes)
        after = sum(mixed[scope] for scope in scopes)
        saved[name] = (before - after) / ROUNDS / 1e6
    return saved
