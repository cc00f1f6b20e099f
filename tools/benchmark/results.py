"""Everything one benchmark run measured, kept raw so the report can show every number."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

from tools.benchmark.ours import Sample
from tools.benchmark.wybench import BenchRun


@dataclass
class Start:
    """One start of a process: ready time and memory."""

    ready_s: float
    peak_loaded_mb: float
    """Peak RSS once the voice is loaded (ours: at the readiness line; reference: after
    ``prepare()``)."""
    peak_after_request_mb: float
    """Peak RSS after one short synthesis as well."""
    detail: dict[str, float] = field(default_factory=dict)


@dataclass
class TextTimings:
    ours: list[Sample] = field(default_factory=list)
    reference_first: list[float] = field(default_factory=list)
    reference_generate: list[Sample] = field(default_factory=list)
    reference_listening: list[tuple[float, float]] = field(default_factory=list)
    """(end of listening, longest silence) of the reference's whole ``stream()``."""


@dataclass
class Results:
    machine: dict[str, str]
    settings: dict[str, Any]
    starts_ours: list[Start] = field(default_factory=list)
    starts_reference: list[Start] = field(default_factory=list)
    timings: dict[str, TextTimings] = field(default_factory=dict)
    repeat_ours: list[tuple[float, float]] = field(default_factory=list)
    """(first request, repeated request) time to first audio, per round."""
    repeat_reference: list[tuple[float, float]] = field(default_factory=list)
    four_voices: dict[str, float] = field(default_factory=dict)
    bert_mb: float = 0.0
    wyoming_bench: list[BenchRun] = field(default_factory=list)
    parity: dict[str, Any] = field(default_factory=dict)


def to_json(res: Results) -> str:
    """Every figure of a run (audio left out), so the report can be written again."""

    def encode(value: object) -> object:
        if isinstance(value, bytes):
            return None
        raise TypeError(f"cannot store {type(value).__name__}")

    return json.dumps(dataclasses.asdict(res), default=encode, ensure_ascii=False, indent=1)


def from_json(text: str) -> Results:
    data = json.loads(text)

    def sample(d: dict[str, Any]) -> Sample:
        nan = float("nan")
        return Sample(
            d["first_s"],
            d["total_s"],
            d["audio_s"],
            listening_end_s=d.get("listening_end_s", nan),
            longest_silence_s=d.get("longest_silence_s", nan),
            first_latent_s=d.get("first_latent_s", nan),
            first_chunk_s=d.get("first_chunk_s", nan),
        )

    res = Results(machine=data["machine"], settings=data["settings"])
    res.starts_ours = [Start(**s) for s in data["starts_ours"]]
    res.starts_reference = [Start(**s) for s in data["starts_reference"]]
    res.timings = {
        key: TextTimings(
            [sample(s) for s in t["ours"]],
            list(t["reference_first"]),
            [sample(s) for s in t["reference_generate"]],
            [(p[0], p[1]) for p in t.get("reference_listening", [])],
        )
        for key, t in data["timings"].items()
    }
    res.repeat_ours = [(p[0], p[1]) for p in data["repeat_ours"]]
    res.repeat_reference = [(p[0], p[1]) for p in data["repeat_reference"]]
    res.four_voices = data["four_voices"]
    res.bert_mb = data["bert_mb"]
    res.wyoming_bench = [BenchRun(**run) for run in data["wyoming_bench"]]
    res.parity = data["parity"]
    return res
