"""The fast decoder against the reference decoder, on the full-size synthetic voice:
``script/benchmark --decoders``.

1. *A real trained decoder* (trained_decoder.py): the product's maker makes and gates joe's
   fast decoder, which is timed against joe's FP32 decoder, with a per-operator profile of
   both: the gain a trained voice gets, and where the rest of the time goes.
2. *Made*: ``commands.check --decoder fast`` on the full-size synthetic voice with the
   precisions joe's gate allowed, at the same places (``--keep-float`` the rest); the synthetic
   voice's random weights make its own sensitivity meaningless: they time the arithmetic.
3. *Speed*: both decoders timed in turn on one latent of the voice's front in the growing
   windows requests start with, at 1 and 2 threads, on this CPU and, where it has VNNI, on
   the same seen as an AVX2 CPU (decoder_speed.py: both fast decoders are made for each).
4. *The slow boards* (slow_board.py, 1 thread): our server with ``--decoder reference``, then
   with ``--decoder fast``, each asked a one-word request first, then a single long sentence
   and a three-sentence text; what a client that plays chunks on arrival hears: its first
   sound, when it could have started without ever waiting, and each wait, in a pause or not.
"""

from __future__ import annotations

import logging
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tools.benchmark.ours import Sample, Server
from tools.server_process import REPO_ROOT, server_env
from wyoming_hayakoe.compiling.fast_decoder.generator import Generator, find_generator
from wyoming_hayakoe.compiling.fast_decoder.timing import interleaved
from wyoming_hayakoe.engine import Engine, SynthesisParams
from wyoming_hayakoe.engine.voice import Voice
from wyoming_hayakoe.inference.decoder import Decoder
from wyoming_hayakoe.inference.synthesizer import front_outputs, synthesizer_inputs

_LOGGER = logging.getLogger(__name__)

WARM_UP = "はい。"
SINGLE = "明日の朝は駅前のパン屋さんで焼きたてのパンを買ってから出かけます。"
THREE = "明日の天気は晴れです。最高気温は二十三度の予報です。傘は持たなくて大丈夫です。"
LATENT_TEXT = "明日の朝は七時に起きて、駅前のパン屋さんで朝ご飯を買ってから会社に行きます。"
TIMING_FRAMES = 300


@dataclass
class Heard:
    """One request on the slow board, as a client playing on arrival hears it."""

    audio_s: float
    first_s: float
    gapless_s: float
    """When an ideal schedule would start: the first latent, or the work less the audio."""
    waits: list[tuple[float, float, bool]]
    """(seconds into the audio, seconds waited, in a pause) of each wait."""


@dataclass
class Measured:
    made: str
    """What the server's check said of the decoder it made (its choice and precision)."""
    speed: dict[int, dict[str, float]]
    """Threads -> median seconds of each decoder, and the audio seconds."""
    trained: dict[str, Any]
    """The real trained decoder's (trained_decoder.py), and ``placed``: its int8 groups at
    the same places of the voice."""


@dataclass
class DecoderResults:
    cpus: dict[str, Measured] = field(default_factory=dict)
    """How each CPU (decoder_speed.cpus) made and timed its fast decoder."""
    heard: dict[str, dict[str, dict[str, list[Heard]]]] = field(default_factory=dict)
    """Slow board -> decoder -> text -> each round."""
    boards: dict[str, str] = field(default_factory=dict)
    """Each slow board, described."""


def voice_generator(root: Path, voice: str) -> Generator:
    """The layer groups of ``voice``'s decoder (in its synthesizer graph)."""
    import onnx

    graph = root / "onnx" / "speakers" / voice / "synthesizer.onnx"
    return find_generator(onnx.load(str(graph), load_external_data=False))


def make_fast(root: Path, voice: str, cache: Path, threads: int, keep_float: list[str]) -> str:
    """The fast decoder compiled into ``cache`` as a server would, ``keep_float`` kept in
    float; what check printed."""
    done = subprocess.run(
        [sys.executable, "-m", "wyoming_hayakoe.commands.check", "--voice", voice,
         "--data-dir", str(root), "--cache-dir", str(cache), "--threads", str(threads),
         "--decoder", "fast", "--keep-float", *keep_float],
        cwd=REPO_ROOT, env=server_env(), capture_output=True, text=True, check=True,
    )  # fmt: skip
    lines = done.stdout.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("Decoder")), len(lines))
    return "\n".join(lines[start:])


def timing_latent(engine: Engine, loaded: Voice) -> tuple[np.ndarray, np.ndarray]:
    """The latent (its first TIMING_FRAMES frames) and speaker conditioning the voice's front
    makes of LATENT_TEXT: what the decoders are timed on."""
    decoder = loaded.reference_decoder or loaded.decoder
    if decoder is None:
        raise RuntimeError(f"{loaded.name} has no decoder of its own")
    (sentence,) = engine.prepare(LATENT_TEXT).sentences
    vector = loaded.style_vector("Neutral", 1.0)
    values = synthesizer_inputs(
        sentence.phonemes, engine.features(sentence.phonemes), vector, SynthesisParams()
    )
    names = (decoder.latent_name, decoder.condition_name)
    latent, condition = front_outputs(loaded.synthesizer, loaded.inputs, names, values)
    return np.ascontiguousarray(latent[:, :, :TIMING_FRAMES]), condition


def speeds(root: Path, voice: str, cache: Path, threads: int, rounds: int) -> dict[str, float]:
    """Median seconds of the reference and the fast decoder on one latent, in turn."""
    engine = Engine(root, threads=threads, cache_dir=cache)
    loaded = engine.voices.load(root / "onnx" / "speakers" / voice)
    engine.choose_decoder(loaded, "fast")
    fast, reference = loaded.decoder, loaded.reference_decoder
    if fast is None or reference is None or fast is reference:
        raise RuntimeError(f"no fast decoder for {voice} in {cache}")
    latent, condition = timing_latent(engine, loaded)

    def run(decoder: Decoder) -> Callable[[], object]:
        return lambda: [None for _ in decoder.growing(latent, condition, True)]

    seconds = latent.shape[2] * reference.hop / loaded.sample_rate
    timed = interleaved({"reference": run(reference), "fast": run(fast)}, seconds, rounds)
    return {name: t.median for name, t in timed.items()} | {"audio": seconds}


def slow_board_run(
    root: Path, voice: str, cache: Path, work: Path, rounds: int
) -> dict[str, dict[str, list[Heard]]]:
    """Each decoder's server on the slow board in effect, one after the other."""
    heard: dict[str, dict[str, list[Heard]]] = {}
    for mode in ("reference", "fast"):
        extra = ("--decoder", mode, "--cache-dir", str(cache), "--audio-cache-mb", "0",
                 "--debug")  # fmt: skip
        server = Server(root, voice, 1, work / f"slow-{mode}-{time.monotonic_ns()}.log", extra)
        try:
            server.wait_ready()
            _wait_for_choice(server, mode)
            heard[mode] = {"single": [], "three": []}
            for _ in range(rounds):
                for key, text in (("single", SINGLE), ("three", THREE)):
                    server.synthesize(WARM_UP)
                    heard[mode][key].append(_heard(server.synthesize(text, keep_pcm=True)))
        finally:
            server.stop()
    return heard


def _wait_for_choice(server: Server, mode: str, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while f"decoder ({mode})" not in server.process.log():
        if time.monotonic() > deadline:
            raise TimeoutError(f"no decoder choice logged:\n{server.process.log()}")
        time.sleep(0.2)


def _heard(sample: Sample) -> Heard:
    found = sample.waits()
    # the ideal schedule (report.py): sound once the first latent exists and no sooner than
    # the work less the audio, else the last chunk comes late
    latent = sample.first_latent_s if sample.first_latent_s == sample.first_latent_s else 0.0
    return Heard(
        sample.audio_s,
        sample.first_s,
        max(latent, sample.total_s - sample.audio_s),
        [(w.at_s, w.seconds, w.in_a_pause) for w in found],
    )


def markdown(results: DecoderResults) -> str:
    lines = [
        "A real trained decoder (joe, Piper's en_US-joe-medium): its fast decoder made and "
        "gated by the product's maker, against its FP32 decoder.",
        "",
        "| CPU | threads | FP32 | fast | fast / FP32 |",
        "|---|---|---|---|---|",
    ]
    for cpu, measured in results.cpus.items():
        for threads, timed in sorted(measured.trained["speed"].items()):
            lines.append(_speed_row(cpu, threads, timed))
    lines += ["", "What the maker chose, and its gate on the check sentences:", ""]
    for cpu, measured in results.cpus.items():
        gate = measured.trained["gate"]
        lines.append(
            f"- {cpu}: {measured.trained['described']}; log-mel distance {gate['mean_db']:.2f} dB "
            f"mean, {gate['worst_db']:.2f} dB at worst ({'passed' if gate['passed'] else 'failed'})"
        )
    lines += [
        "",
        "Where the time goes (1 thread, kernel time by operator as shares of FP32's total): "
        "what int8 leaves, and the floor of what it could reach.",
        "",
        *_profile_table(results),
        "",
        "The full-size synthetic voice (random weights: they time the arithmetic, never choose "
        "it) with the same precisions at the same places, against the reference decoder:",
        "",
        "| CPU | threads | reference | fast | fast / reference |",
        "|---|---|---|---|---|",
    ]
    for cpu, measured in results.cpus.items():
        for threads, timed in sorted(measured.speed.items()):
            lines.append(_speed_row(cpu, threads, timed))
    audio = next(iter(next(iter(results.cpus.values())).speed.values()))["audio"]
    lines += ["", f"Audio timed: {audio:.2f} s, median of the rounds. What was made:", ""]
    for cpu, measured in results.cpus.items():
        made = [line.strip() for line in measured.made.splitlines() if "fast decoder:" in line]
        lines.append(f"- {cpu}: {made[0] if made else measured.made.splitlines()[0]}")
    lines += [
        "",
        "On the simulated slow boards, what a client that plays chunks on arrival hears after a "
        "one-word request; ideal start: when a schedule that knew the speed could start.",
        "",
        *(f"- {board}: {described}" for board, described in results.boards.items()),
        "",
        "| board | decoder | text | audio | first sound | ideal start | after it | longest wait "
        "| waits in speech |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    med = statistics.median
    rows = [(b, m, k, r) for b, modes in results.heard.items() for m, texts in modes.items()
            for k, r in texts.items()]  # fmt: skip
    for board, mode, key, rounds in rows:
        longest = med([max((w[1] for w in h.waits), default=0.0) for h in rounds])
        inside = sum(1 for h in rounds for w in h.waits if not w[2])
        first, gapless = med([h.first_s for h in rounds]), med([h.gapless_s for h in rounds])
        late = med([h.first_s - h.gapless_s for h in rounds])
        lines.append(
            f"| {board} | {mode} | {key} | {med([h.audio_s for h in rounds]):.1f} s "
            f"| {first:.2f} s | {gapless:.2f} s | {late:+.2f} s | {longest:.2f} s "
            f"| {inside} |"
        )
    return "\n".join(lines) + "\n"


def _speed_row(cpu: str, threads: int, timed: dict[str, float]) -> str:
    return (
        f"| {cpu} | {threads} | {timed['reference']:.3f} s | {timed['fast']:.3f} s | "
        f"{timed['fast'] / timed['reference']:.2f} |"
    )


def _profile_table(results: DecoderResults) -> list[str]:
    cpus = list(results.cpus)
    header = " | ".join(f"{cpu}: FP32 | {cpu}: fast" for cpu in cpus)
    lines = [f"| operator | {header} |", "|---|" + "---|" * 2 * len(cpus)]
    profiles = [results.cpus[cpu].trained["profile"] for cpu in cpus]
    operators = {op for p in profiles for side in p.values() for op in side}
    first = profiles[0]
    ordered = sorted(
        operators, key=lambda op: -first["reference"].get(op, first["fast"].get(op, 0))
    )
    for op in [*ordered, "all"]:
        cells = []
        for profile in profiles:
            for side in ("reference", "fast"):
                share = sum(profile[side].values()) if op == "all" else profile[side].get(op)
                cells.append("" if share is None else f"{share:.1%}")
        lines.append(f"| {op} | {' | '.join(cells)} |")
    return lines
