"""BENCHMARKS.md's speed topic: machine, method, the table and every raw number."""

from __future__ import annotations

from tools.benchmark.report import median, rows, table
from tools.benchmark.results import Results
from tools.benchmark.texts import TEXTS, announcement

METHOD = """\
- One run of `script/benchmark` measures both sides on the same synthetic voice (`full`
  preset of `script/make_synthetic_voice`: real architectures and sizes, seeded random
  weights), with the same ONNX Runtime thread count, taking turns: for every text, one side
  then the other, the order flipping every round. Every figure is the median of the measured
  rounds, after a warm-up (one untimed request per text on each side, one untimed start).
- **Ours** runs as a user runs it: `python -m wyoming_hayakoe --uri tcp://127.0.0.1:PORT
  --data-dir ROOT --voice NAME --local-files-only --threads N` in a subprocess, measured
  over TCP with the `wyoming` client: *first audio* is the time from writing `synthesize`
  to the first `audio-chunk`, *total* the time to `audio-stop`; audio seconds are counted
  from the chunks. Default synthesis parameters on both sides. The server that times
  synthesis runs with its audio cache off (`--audio-cache-mb 0`, see Settings), so every
  round synthesizes again; starts, memory and the repeated announcement use the defaults.
- **Reference**: `hayakoe` 1.3.1, `TTS(device="cpu", bert_source="file://ROOT")
  .load(NAME, source="file://ROOT").prepare()` in its own subprocess; *first audio* is the
  first item of `speaker.stream(text)`, *total* is `speaker.generate(text)`, both timed in
  that process around the call. The reference builds its ONNX sessions with default
  `SessionOptions()` and has no thread setting (ONNX Runtime ignores `OMP_NUM_THREADS`):
  the benchmark hands it our thread count by making `onnxruntime.SessionOptions` a
  subclass whose constructor sets `intra_op_num_threads`; every other option is the
  reference's own.
- *Speed multiple* = audio seconds / total wall seconds (higher is faster).
- *Listening ends* / *longest silence*: what a client hears that plays every chunk as soon as
  it arrives (tools/benchmark/listening.py): when its last sample has played, and the longest
  wait for the next chunk after the first sound. Ours from the chunk arrival times over TCP in
  the timed request; the reference from its whole `stream()` (the call that times its first
  chunk), chunk by chunk.
- *Ready time*: from starting the process to ours logging `Ready` (the server listens at
  once and logs `Ready` when the default voice is loaded; a `describe` then lists the voice as
  installed) / to the end of the reference's `prepare()` (interpreter start, imports and
  model loading included on both sides).
- *Peak RSS* is `VmHWM` of the process. One voice: ours after `Ready` and one short request;
  the reference after `prepare()` (and, on the second row, after one short `generate()`).
  Four voices: a data dir with the shared BERT and four separate copies of the voice (each
  model file with its own content); ours after one short request to each voice (second
  start: the first compiles the copies' models in the server's cache), the reference after
  loading all four (`prepare()`). *Added per further voice* = (four voices − one voice) / 3.
- *Repeated announcement*: a text is requested twice in a row; the figure is the second
  request's first audio (a new text every round).
- *Audio parity*: noise, stochastic durations and `sdp_ratio` at 0; our engine's float
  audio (`tools/engine_audio.py`, whole published graph and the compiled, split graph) against the
  reference's float audio before its peak normalization, same sentence splitting and
  pauses; then the PCM our server sends (started with `--noise-scale 0 --noise-scale-w 0
  --tempo-dynamics-scale 0`) against the engine's own PCM for the same text.
- `wyoming-bench` (PyPI) runs against our server with the medium text, streaming and
  non-streaming; it appends a random hex nonce to each text to defeat caches, and its RTF is
  wall / audio (lower is faster), the inverse of the speed multiple above.
"""


def _list(values: list[float], unit: str = "s") -> str:
    fmt = "{:.3f}" if unit == "s" else "{:,.0f}"
    return ", ".join(fmt.format(v) for v in values) + f" {unit}"


def _raw(res: Results) -> list[str]:
    out = ["## Raw numbers", ""]
    for key, t in res.timings.items():
        out += [
            f"**{key}** (`{TEXTS[key].text}`)",
            "",
            f"- ours first audio: {_list([s.first_s for s in t.ours])}",
            f"- ours total: {_list([s.total_s for s in t.ours])}",
            f"- ours audio: {_list([s.audio_s for s in t.ours])}",
            f"- reference stream() first chunk: {_list(t.reference_first)}",
            f"- reference generate() total: {_list([s.total_s for s in t.reference_generate])}",
            f"- reference audio: {_list([s.audio_s for s in t.reference_generate])}",
            "",
        ]
    for name, starts in (("ours", res.starts_ours), ("reference", res.starts_reference)):
        if not starts:
            continue
        out += [
            f"**starts, {name}**",
            "",
            f"- ready: {_list([s.ready_s for s in starts])}",
            f"- peak RSS when loaded: {_list([s.peak_loaded_mb for s in starts], 'MB')}",
            f"- peak RSS after 1 request: {_list([s.peak_after_request_mb for s in starts], 'MB')}",
        ]
        for detail in sorted(starts[0].detail):
            out.append(f"- {detail}: {_list([s.detail[detail] for s in starts])}")
        out.append("")
    if res.repeat_ours:
        out += ["**repeated announcement** (first request, repeat)", ""]
        for index, (ours, ref) in enumerate(
            zip(res.repeat_ours, res.repeat_reference, strict=True)
        ):
            out.append(
                f"- `{announcement(index)}`: ours {ours[0]:.3f} s, {ours[1]:.4f} s; "
                f"reference {ref[0]:.3f} s, {ref[1]:.3f} s"
            )
        out.append("")
    if res.four_voices:
        out += ["**four voices**", ""]
        out += [f"- {k}: {v:,.0f} MB" for k, v in res.four_voices.items()]
        out += [f"- BERT model file: {res.bert_mb:,.0f} MB", ""]
    if res.parity:
        out += ["**parity**", ""] + [f"- {k}: {v}" for k, v in res.parity.items()] + [""]
    return out


def _wyoming_bench(res: Results) -> list[str]:
    if not res.wyoming_bench:
        return []
    out = ["## wyoming-bench", ""]
    for run in res.wyoming_bench:
        out.append(f"`{' '.join(run.command[1:])}`" if run.command else "")
        out.append("")
        if run.error:
            out.append(f"- failed: {run.error}")
            tail = run.output.strip().splitlines()[-8:]
            if tail:
                out += ["", "```", *tail, "```"]
        else:
            out += ["```", *run.lines, "```"]
        out.append("")
    return out


def markdown(res: Results) -> str:
    lines = [
        "Written by `script/benchmark` (the full run). Ratio = ours / "
        "reference; lower is better except for the speed multiple.",
        "",
    ]
    lines += ["## Machine", ""] + [f"- {k}: {v}" for k, v in res.machine.items()] + [""]
    lines += ["## Settings", ""] + [f"- {k}: {v}" for k, v in res.settings.items()] + [""]
    lines += ["## Results", "", table(rows(res)), ""]
    if res.notes:
        lines += ["## Notes", ""] + [f"- {n}" for n in res.notes] + [""]
    lines += ["## Texts", ""]
    for key, t in res.timings.items():
        ours = median([s.audio_s for s in t.ours])
        theirs = median([s.audio_s for s in t.reference_generate])
        lines.append(
            f"- {key} ({TEXTS[key].description}; {len(TEXTS[key].text)} characters; here "
            f"{ours:.1f} s of audio from ours, {theirs:.1f} s from the reference): "
            f"`{TEXTS[key].text}`"
        )
    lines += ["", "## Method", "", METHOD]
    lines += _wyoming_bench(res)
    lines += _raw(res)
    return "\n".join(lines).rstrip() + "\n"
