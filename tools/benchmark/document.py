"""BENCHMARKS.md's speed topic: the run's conditions, the figures, every raw number.

How each figure is measured is docs/benchmarking.md ("The full run"); this module only writes
what one run measured.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tools.benchmark.ours import Sample
from tools.benchmark.report import median, rows, table
from tools.benchmark.results import Results, TextTimings
from tools.benchmark.texts import TEXTS, announcement

TARGETS = "targets"
"""The word that opens the line saying which targets were met."""


def _each(values: Sequence[float], digits: int = 3) -> str:
    return ", ".join(f"{v:,.{digits}f}" for v in values)


def _pair(ours: float, theirs: float, unit: str = " s", digits: int = 3) -> str:
    ratio = f" ({ours / theirs:.2f})" if theirs else ""
    return f"{ours:.{digits}f} / {theirs:.{digits}f}{unit}{ratio}"


def _ideal_lead(t: TextTimings) -> tuple[float, float]:
    """How much later than an ideal schedule (report.py) the first sound came and listening
    ended, medians."""

    def start(s: Sample) -> float:
        latent = s.first_latent_s if s.first_latent_s == s.first_latent_s else 0.0
        return max(latent, s.total_s - s.audio_s)

    first = median([s.first_s - start(s) for s in t.ours])
    end = median([s.listening_end_s - max(s.total_s, start(s) + s.audio_s) for s in t.ours])
    return first, end


def _medians(samples: list[Sample]) -> Callable[[str], float]:
    """The median of a figure (a Sample's attribute) over ``samples``."""
    return lambda name: median([getattr(s, name) for s in samples])


def _texts_table(res: Results) -> list[str]:
    lines = [
        "| text | audio | first audio | total | speed multiple | listening ends "
        "| longest silence, ours | ours after an ideal schedule: first audio, end |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for key, t in res.timings.items():
        of, theirs = _medians(t.ours), _medians(t.reference_generate)
        heard = "—"
        if t.reference_listening:
            heard = _pair(of("listening_end_s"), median([p[0] for p in t.reference_listening]),
                          digits=2)  # fmt: skip
        lead_first, lead_end = _ideal_lead(t)
        lines.append(
            f"| {key} | {of('audio_s'):.1f} s | {_pair(of('first_s'), median(t.reference_first))} "
            f"| {_pair(of('total_s'), theirs('total_s'))} "
            f"| {_pair(of('speed'), theirs('speed'), 'x', 2)} | {heard} "
            f"| {of('longest_silence_s'):.2f} s | {lead_first:+.2f} / {lead_end:+.2f} s |"
        )
    return lines


def _raw(res: Results) -> list[str]:
    lines = [
        "Every round (seconds): ours first audio / total / audio; the reference's `stream()` "
        "first chunk / `generate()` total / audio.",
        "",
        "| text | ours | reference |",
        "|---|---|---|",
    ]
    for key, t in res.timings.items():
        ours = " / ".join(_each([getattr(s, n) for s in t.ours])
                          for n in ("first_s", "total_s", "audio_s"))  # fmt: skip
        gen = t.reference_generate
        theirs = " / ".join((_each(t.reference_first), _each([s.total_s for s in gen]),
                             _each([s.audio_s for s in gen])))  # fmt: skip
        lines.append(f"| {key} | {ours} | {theirs} |")
    lines.append("")
    for name, each in (("ours", res.starts_ours), ("the reference", res.starts_reference)):
        if each:
            lines.append(
                f"- Starts, {name}: ready {_each([s.ready_s for s in each])} s; peak RSS loaded "
                f"{_each([s.peak_loaded_mb for s in each], 0)} MB, after one request "
                f"{_each([s.peak_after_request_mb for s in each], 0)} MB."
            )
    repeats = [
        f"`{announcement(index)}` ours {_each(ours_pair, 4)} s, reference {_each(ref_pair)} s"
        for index, (ours_pair, ref_pair) in enumerate(
            zip(res.repeat_ours, res.repeat_reference, strict=True)
        )
    ]
    if repeats:
        lines.append(f"- Repeated announcements (first request, repeat): {'; '.join(repeats)}.")
    if res.four_voices:
        four = ", ".join(f"{k} {v:,.0f} MB" for k, v in res.four_voices.items())
        lines.append(f"- Four voices: {four}; the BERT model file {res.bert_mb:,.0f} MB.")
    if res.parity:
        lines.append("- Parity: " + ", ".join(f"{k} {v}" for k, v in res.parity.items()) + ".")
    return lines


def _wyoming_bench(res: Results) -> list[str]:
    said = []
    for run in res.wyoming_bench:
        if run.error:
            said.append(f"{run.mode}: failed ({run.error})")
            continue
        medians = {line.split("(")[0].strip(): line.split()[-3]
                   for line in run.lines if line.strip().startswith(("TTFT", "RTF"))}  # fmt: skip
        ttft, rtf = medians.get("TTFT", "?"), medians.get("RTF", "?")
        said.append(f"{run.mode}: TTFT {ttft} ms, RTF {rtf}")
    if not said:
        return []
    return [f"`wyoming-bench` (PyPI), medium text, medians: {'; '.join(said)}.", ""]


def _targets(res: Results) -> str:
    missed = [f"{r.metric} ({r.ratio}, target {r.target})" for r in rows(res) if r.met == "NO"]
    said = "not met: " + "; ".join(missed) if missed else "all met"
    return f"{TARGETS.capitalize()}: {said}."


def markdown(res: Results) -> str:
    """The topic's report (sections.body adds its title and command)."""
    shown = {
        k: v for k, v in res.settings.items() if not k.startswith("load average") and k != "topic"
    }
    settings = "; ".join(f"{k} {v}" for k, v in shown.items())
    versions = (f"hayakoe {res.machine.get('hayakoe (reference)')}, wyoming "
                f"{res.machine.get('wyoming')}, numpy {res.machine.get('numpy')}")  # fmt: skip
    lines = [
        f"{settings}; {versions}. Each pair: ours / the reference (ratio); lower is better but "
        "for the speed multiple.",
        "",
        _targets(res),
        "",
        *_texts_table(res),
        "",
    ]
    others = [r for r in rows(res) if r.metric.split(",")[0] not in _PER_TEXT]
    if others:
        lines += [table(others), ""]
    lines += _wyoming_bench(res)
    lines.append("Texts: " + "; ".join(f"{k} `{TEXTS[k].text}`" for k in res.timings) + ".")
    lines += ["", *_raw(res)]
    return "\n".join(lines).rstrip() + "\n"


_PER_TEXT = {
    "first audio", "total time", "speed multiple", "listening ends",
    "longest silence after the first sound", "listening ends vs ideal schedule",
    "first audio vs ideal schedule",
}  # fmt: skip
"""The rows of report.rows that the texts' table shows."""
