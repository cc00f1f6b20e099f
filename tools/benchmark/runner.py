"""The phases of one benchmark run. Ours and the reference take turns, with the same voice
and the same thread count; the order flips every round so neither always runs first."""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tools.benchmark import voices, wybench
from tools.benchmark.ours import Server, voice_installed
from tools.benchmark.reference import Reference
from tools.benchmark.results import Results, Start, TextTimings
from tools.benchmark.texts import TEXTS, BenchText, announcement
from tools.server_process import REPO_ROOT

_LOGGER = logging.getLogger(__name__)

SHORT = TEXTS["short"].text
ONE_WORD = BenchText("one word", "「はい。」", "はい。", None)
PARITY_TEXT = TEXTS["long"].text
# The wire's audio compared with the engine's: no noise, and no opening silence before it.
PARITY_FLAGS = (
    *("--noise-scale", "0", "--noise-scale-w", "0", "--tempo-dynamics-scale", "0"),
    *("--first-audio-within", "0"),
)


@dataclass(frozen=True)
class Config:
    root: Path
    voice: str
    threads: int
    rounds: int
    texts: list[BenchText]
    work: Path
    """Scratch space: logs, the four-voice data dir, caches of the reference."""
    four_voices: bool
    wyoming_bench: bool
    parity: bool
    uncached: tuple[str, ...] = ()
    """Server options that turn its audio cache off, for the phases that time synthesis."""
    one_word: bool = False
    """A one-word request (ONE_WORD) before each measured one, on both sides: a voice
    assistant's "はい。" before its answer."""

    def log(self, name: str) -> Path:
        (self.work / "logs").mkdir(parents=True, exist_ok=True)
        return self.work / "logs" / name


def start_ours(
    cfg: Config,
    name: str,
    data_dir: Path | None = None,
    voice: str | None = None,
    extra: tuple[str, ...] = (),
) -> tuple[Server, Start]:
    voice = voice or cfg.voice
    server = Server(data_dir or cfg.root, voice, cfg.threads, cfg.log(name), extra)
    try:
        ready = server.wait_ready()
        loaded = server.memory().peak_mb
        if not voice_installed(server.describe(), voice):
            raise RuntimeError(f"the server does not list {voice} as installed")
        server.synthesize(SHORT)
        after = server.memory().peak_mb
    except BaseException:
        server.stop()
        raise
    detail = {"listening_s": server.listening_s or float("nan")}
    return server, Start(ready, loaded, after, detail)


def start_reference(cfg: Config, name: str) -> tuple[Reference, Start]:
    ref = Reference(cfg.root, [cfg.voice], cfg.threads, cfg.work / "hayakoe-cache", cfg.log(name))
    try:
        ready = ref.wait_ready()
        loaded = float(ref.ready_info["peak_mb"])
        ref.generate(SHORT)
        after = ref.memory().peak_mb
    except BaseException:
        ref.stop()
        raise
    detail = {k: float(ref.ready_info[k]) for k in ("import_s", "prepare_s")}
    return ref, Start(ready, loaded, after, detail)


def startup_phase(cfg: Config, res: Results) -> tuple[Server, Reference]:
    """Start each side 1 + rounds times (the first start is a warm-up: page cache, and our
    compiled-model cache if the server keeps one). The last processes stay up for the rest."""
    server: Server | None = None
    ref: Reference | None = None
    try:
        for index in range(cfg.rounds + 1):
            last = index == cfg.rounds
            for side in ("ours", "reference") if index % 2 == 0 else ("reference", "ours"):
                if side == "ours":
                    server, start = start_ours(cfg, f"ours-start-{index}.log")
                    if index:
                        res.starts_ours.append(start)
                    if not last:
                        server.stop()
                else:
                    ref, start = start_reference(cfg, f"reference-start-{index}.log")
                    if index:
                        res.starts_reference.append(start)
                    if not last:
                        ref.stop()
                _LOGGER.info(
                    "start %d %s: ready %.2f s, peak %.0f MB loaded, %.0f MB after a request",
                    index,
                    side,
                    start.ready_s,
                    start.peak_loaded_mb,
                    start.peak_after_request_mb,
                )
    except BaseException:
        for process in (server, ref):
            if process is not None:
                process.stop()
        raise
    assert server is not None and ref is not None
    return server, ref


def start_timing_server(cfg: Config) -> Server:
    """Our server for timing synthesis: as a user starts it, but with the audio cache off, so
    that the same text in every round is synthesized again, and debug lines on."""
    # --debug: its schedule line says when the first latent existed (the ideal-schedule rows).
    extra = (*cfg.uncached, "--debug")
    server = Server(cfg.root, cfg.voice, cfg.threads, cfg.log("ours-timing.log"), extra)
    try:
        server.wait_ready()
    except BaseException:
        server.stop()
        raise
    return server


def _measure_text(
    server: Server, ref: Reference, text: BenchText, ours_first: bool, timings: TextTimings | None
) -> None:
    def ours() -> None:
        sample = server.synthesize(text.text)
        if timings is not None:
            timings.ours.append(sample)

    def reference() -> None:
        streamed = ref.stream(text.text)
        sample = ref.generate(text.text)
        if timings is not None:
            timings.reference_first.append(streamed["first_s"])
            timings.reference_listening.append(
                (streamed["listening_end_s"], streamed["longest_silence_s"])
            )
            timings.reference_generate.append(sample)

    for step in (ours, reference) if ours_first else (reference, ours):
        step()


def timing_phase(cfg: Config, server: Server, ref: Reference, res: Results) -> None:
    _LOGGER.info("warm-up: every text once on each side")
    for text in cfg.texts:
        _measure_text(server, ref, text, True, None)
    for round_index in range(cfg.rounds):
        for text in cfg.texts:
            timings = res.timings.setdefault(text.key, TextTimings())
            if cfg.one_word:
                _measure_text(server, ref, ONE_WORD, round_index % 2 == 0, None)
            _measure_text(server, ref, text, round_index % 2 == 0, timings)
            ours, gen = timings.ours[-1], timings.reference_generate[-1]
            _LOGGER.info(
                "round %d %s: first audio %.3f / %.3f s, total %.2f / %.2f s, "
                "audio %.2f / %.2f s (ours / reference)",
                round_index + 1,
                text.key,
                ours.first_s,
                timings.reference_first[-1],
                ours.total_s,
                gen.total_s,
                ours.audio_s,
                gen.audio_s,
            )


def repeat_phase(cfg: Config, server: Server, ref: Reference, res: Results) -> None:
    for round_index in range(cfg.rounds):
        text = announcement(round_index)
        ours = [server.synthesize(text).first_s for _ in range(2)]
        theirs = [ref.stream_first(text) for _ in range(2)]
        res.repeat_ours.append((ours[0], ours[1]))
        res.repeat_reference.append((theirs[0], theirs[1]))
        _LOGGER.info(
            "repeat %d: ours %.3f then %.3f s; reference %.3f then %.3f s",
            round_index + 1,
            *ours,
            *theirs,
        )


def wyoming_bench_phase(cfg: Config, server: Server, res: Results) -> None:
    text = TEXTS["medium"].text
    res.wyoming_bench = wybench.run(server.port, cfg.voice, text, cfg.rounds)
    for run in res.wyoming_bench:
        _LOGGER.info("wyoming-bench %s: %s", run.mode, run.error or " | ".join(run.lines))


def _four_voices_ours(cfg: Config, data: Path, names: list[str]) -> dict[str, float]:
    """Two starts: the first compiles the copies' models (the server caches them in the data
    dir, as it would for a user); the second is measured."""
    result: dict[str, float] = {}
    for attempt in ("warm-up", "measured"):
        server = Server(data, names[0], cfg.threads, cfg.log(f"ours-four-voices-{attempt}.log"))
        try:
            server.wait_ready()
            for name in names:
                server.synthesize(SHORT, voice=name)
            memory = server.memory()
        finally:
            server.stop()
        result = {"ours_peak_mb": memory.peak_mb, "ours_rss_mb": memory.current_mb}
    return result


def four_voice_phase(cfg: Config, res: Results) -> None:
    data = cfg.work / "four-voices"
    names = voices.make_multi_voice_root(cfg.root, cfg.voice, data, 4)
    try:
        res.four_voices.update(_four_voices_ours(cfg, data, names))
        ref = Reference(
            data, names, cfg.threads, cfg.work / "hayakoe-cache", cfg.log("reference-four.log")
        )
        try:
            ref.wait_ready()
            res.four_voices["reference_peak_loaded_mb"] = float(ref.ready_info["peak_mb"])
            for name in names:
                ref.generate(SHORT, voice=name)
            res.four_voices["reference_peak_mb"] = ref.memory().peak_mb
        finally:
            ref.stop()
        _LOGGER.info("four voices: %s", res.four_voices)
    finally:
        shutil.rmtree(data, ignore_errors=True)


def parity_phase(cfg: Config, res: Results) -> None:
    """Engine float audio against the reference's (noise 0), and the server's PCM over the
    wire against the engine's own PCM."""
    pcm_path = cfg.work / "engine.pcm"
    command = [
        sys.executable,
        "-m",
        "tools.benchmark.parity",
        "--root",
        str(cfg.root),
        "--voice",
        cfg.voice,
        "--text",
        PARITY_TEXT,
        "--threads",
        str(cfg.threads),
        "--work",
        str(cfg.work),
        "--pcm-out",
        str(pcm_path),
    ]
    with cfg.log("parity.log").open("wb") as log:
        done = subprocess.run(
            command, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=log, check=False
        )
    if done.returncode != 0:
        res.parity = {"error": f"parity check failed (exit {done.returncode}), see parity.log"}
        return
    res.parity = json.loads(done.stdout.decode().strip().splitlines()[-1])
    server, _ = start_ours(cfg, "ours-parity.log", extra=PARITY_FLAGS)
    try:
        wire = server.synthesize(PARITY_TEXT, keep_pcm=True).pcm
    finally:
        server.stop()
    ours = np.frombuffer(wire, np.int16).astype(np.int32)
    engine = np.frombuffer(pcm_path.read_bytes(), np.int16).astype(np.int32)
    res.parity["wire_samples"] = int(ours.size)
    res.parity["engine_samples"] = int(engine.size)
    if ours.size == engine.size:
        res.parity["wire_max_diff_lsb"] = int(np.max(np.abs(ours - engine)))
    # Windows may differ from whole-graph decoding by the float tolerance, scaled by the gain.
    res.parity["wire_allowed_lsb"] = (
        int(np.ceil(res.parity["tolerance"] * res.parity["gain"] * 32767)) + 1
    )
    _LOGGER.info("parity: %s", res.parity)
