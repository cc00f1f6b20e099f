"""The full run's topic of BENCHMARKS.md shows every figure it measured: each text's medians
against the reference, every round's raw number, the targets that were missed; and the
command it names is the one that measured, without where it wrote."""

from __future__ import annotations

import itertools

from tools.benchmark import document, options, sections
from tools.benchmark.ours import Sample
from tools.benchmark.procinfo import conditions, machine
from tools.benchmark.results import Results, Start, TextTimings, from_json, to_json
from tools.benchmark.wybench import BenchRun

WYOMING_BENCH = [
    "[streaming] ok=3 fail=0",
    "  metric             min      mean    median       p95       max",
    "  TTFT (ms)        215.6     222.0     223.7     226.3     226.6",
    "  RTF (x)           0.20      0.20      0.21      0.20      0.20",
]


def _results() -> Results:
    values = itertools.count(1)

    def sample(first: float, total: float) -> Sample:
        step = next(values) / 1000  # every round's figures differ
        return Sample(first + step, total + step, 5.0 + step, listening_end_s=6.0 + step,
                      longest_silence_s=0.0, first_latent_s=first)  # fmt: skip

    res = Results(machine=machine(), settings={"threads (both sides)": 2, "measured rounds": 3})
    res.timings = {
        "short": TextTimings([sample(0.1, 1.0) for _ in range(3)], [0.5, 0.6, 0.7],
                             [sample(0.5, 0.9) for _ in range(3)], [(7.0, 0.0)] * 3),
        "long": TextTimings([sample(0.2, 2.0) for _ in range(3)], [1.0, 1.1, 1.2],
                            [sample(1.0, 2.5) for _ in range(3)], [(8.0, 0.0)] * 3),
    }  # fmt: skip
    res.starts_ours = [Start(0.5 + i / 100, 400 + i, 700 + i) for i in range(3)]
    res.starts_reference = [Start(3.8 + i / 100, 1400 + i, 1500 + i) for i in range(3)]
    res.repeat_ours = [(0.18, 0.0013), (0.17, 0.0044), (0.19, 0.0017)]
    res.repeat_reference = [(1.1, 1.09), (1.2, 1.19), (1.3, 1.29)]
    res.wyoming_bench = [BenchRun("streaming", ["wyoming-bench"], 0, WYOMING_BENCH)]
    return res


def test_every_raw_number_and_each_median_is_shown() -> None:
    res = _results()
    text = document.markdown(res)
    for t in res.timings.values():
        for s in (*t.ours, *t.reference_generate):
            assert f"{s.first_s:.3f}" in text or f"{s.total_s:.3f}" in text
            assert f"{s.total_s:.3f}" in text and f"{s.audio_s:.3f}" in text
        for first in t.reference_first:
            assert f"{first:.3f}" in text
    assert "| short | 5.0 s | 0.102 / 0.600 s (0.17) | 1.002 / 0.905 s (1.11) |" in text
    for start in (*res.starts_ours, *res.starts_reference):
        assert f"{start.ready_s:.3f}" in text and f"{start.peak_after_request_mb:,.0f}" in text
    assert "0.0044" in text and "1.190" in text
    assert "streaming: TTFT 223.7 ms, RTF 0.21" in text


def test_a_missed_target_is_named_and_a_run_renders_again_the_same() -> None:
    res = _results()
    text = document.markdown(res)
    targets = next(line for line in text.splitlines() if line.startswith("Targets:"))
    assert "total time, short (1.11, target ≤ 1)" in targets and "long" not in targets
    assert document.markdown(from_json(to_json(res))) == text  # --render writes it again


def test_the_command_shown_is_what_measured_and_the_topic_opens_with_it() -> None:
    argv = ["--decoders", "--work", "/tmp/run", "--out=/tmp/out.md", "--rounds", "2"]
    command = options.shown_command(argv)
    assert command == "script/benchmark --decoders --rounds 2"
    said = conditions(machine(), "2 threads", "0.50")
    body = sections.body("decoders", command, said, "| a | b |")
    assert body.startswith(f"## {sections.TITLES['decoders']}\n\n`{command}`: ")
    assert "0.50 at the end." in body and "ONNX Runtime" in body
