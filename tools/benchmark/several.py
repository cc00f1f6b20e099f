"""``script/benchmark --several-clients``: several listeners at once against one server.

Modes, each over ``--rounds`` rounds with the audio cache off (so every round synthesizes):

* alone: each announcement by one client, as the reference for the others;
* 4 different: four clients send different two-sentence announcements at the same moment;
* 8 different: eight at once;
* 4 identical: four clients send the same announcement at the same moment;
* with ``--baseline TREE``: one client at a time against this tree's server and the other
  tree's, side by side in the same run (first sound, total, memory), both fresh and on the
  reference decoder (no compile child beside either).

Every client plays each chunk as it arrives (listening.py): its first sound, its longest
silence once playing (and of those, the longest inside speech and the longest in a pause
between sentences), and when its audio ended are what is reported, against the one target:
no wait inside speech.
"""

from __future__ import annotations

import asyncio
import json
import logging
import statistics
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from tools.benchmark.ours import Sample, Server, read_audio, request_event, wyoming_client
from tools.benchmark.texts import ANNOUNCEMENTS

_LOGGER = logging.getLogger(__name__)

SPEECH_WAIT_TARGET_S = 0.05
"""The longest wait inside speech allowed: when the announcements need more than the machine
decodes, the shortage is spent before a sentence and between sentences, never inside one
(docs/pacing.md, "Several listeners"), so first sounds and pauses grow with the load and
have no target."""
IDENTICAL_TARGET = 1.3
"""The last of four identical requests finishes within this many times one alone."""
BASELINE_TARGET = 0.03
"""One client: first sound, total and memory within this share of the other tree's."""


@dataclass
class SeveralResults:
    settings: dict[str, str]
    alone: dict[str, list[Sample]] = field(default_factory=dict)
    """Each announcement by one client, per round."""
    at_once: dict[str, list[list[Sample]]] = field(default_factory=dict)
    """Mode -> rounds -> each client."""
    baseline: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    """Tree ("this", "baseline") -> metric -> values."""
    waits: dict[str, list[list[tuple[float, float]]]] = field(default_factory=dict)
    """Mode -> rounds -> each client's longest wait (inside speech, in a pause)."""


async def _at_once(port: int, texts: Sequence[str], voice: str | None) -> list[Sample]:
    """Connect every client first, then send all requests at the same moment."""
    clients = [wyoming_client(port) for _ in texts]
    for client in clients:
        await client.connect()
    try:
        started = time.perf_counter()
        await asyncio.gather(
            *(c.write_event(request_event(t, voice)) for c, t in zip(clients, texts, strict=True))
        )
        return list(
            await asyncio.gather(
                *(
                    read_audio(c, started, t, keep_pcm=True)
                    for c, t in zip(clients, texts, strict=True)
                )
            )
        )
    finally:
        for client in clients:
            await client.disconnect()


def run_modes(server: Server, rounds: int, res: SeveralResults) -> None:
    voice = server.voice
    modes = {
        "4 different": list(ANNOUNCEMENTS[:4]),
        "8 different": list(ANNOUNCEMENTS[:8]),
        "4 identical": [ANNOUNCEMENTS[0]] * 4,
    }
    for text in ANNOUNCEMENTS[:8]:  # warm-up: every text once
        server.synthesize(text)
    for round_index in range(rounds):
        for text in ANNOUNCEMENTS[:8]:
            res.alone.setdefault(text, []).append(server.synthesize(text))
        for mode, texts in modes.items():
            samples = asyncio.run(_at_once(server.port, texts, voice))
            res.at_once.setdefault(mode, []).append(samples)
            res.waits.setdefault(mode, []).append([_longest_waits(s) for s in samples])
            _LOGGER.info(
                "round %d, %s: first sound %s s, longest silence %s s",
                round_index + 1,
                mode,
                " ".join(f"{s.first_s:.2f}" for s in samples),
                " ".join(f"{s.longest_silence_s:.2f}" for s in samples),
            )


def _longest_waits(sample: Sample) -> tuple[float, float]:
    """The longest wait inside speech and the longest in a pause, for a client playing on
    arrival (listening.py places each wait in the audio)."""
    found = sample.waits()
    in_speech = [w.seconds for w in found if not w.in_a_pause]
    in_pause = [w.seconds for w in found if w.in_a_pause]
    return max(in_speech, default=0.0), max(in_pause, default=0.0)


def run_baseline(ours: Server, theirs: Server, rounds: int, res: SeveralResults) -> None:
    """One client at a time, the two trees taking turns (the order flips every round)."""
    text = ANNOUNCEMENTS[0]
    for server in (ours, theirs):
        server.synthesize(text)  # warm-up
    for round_index in range(rounds):
        pair = ((ours, "this"), (theirs, "baseline"))
        for server, name in pair if round_index % 2 == 0 else pair[::-1]:
            for reply in ANNOUNCEMENTS[:4]:
                sample = server.synthesize(reply)
                metrics = res.baseline.setdefault(name, {})
                metrics.setdefault("first sound", []).append(sample.first_s)
                metrics.setdefault("total", []).append(sample.total_s)
    for server, name in ((ours, "this"), (theirs, "baseline")):
        memory = server.memory()
        res.baseline[name]["peak RSS"] = [memory.peak_mb]
        res.baseline[name]["RSS"] = [memory.current_mb]


def save(res: SeveralResults, path: Path) -> None:
    path.write_text(json.dumps(asdict(res), default=lambda _: None, indent=1), encoding="utf-8")


def markdown(res: SeveralResults) -> str:
    """The report: each mode's clients (medians over the rounds, the range over the clients)
    against the targets; the settings not in the run's conditions line first."""
    said = ("voice", "rounds", "server options")
    lines = ["; ".join(f"{k} {v}" for k, v in res.settings.items() if k in said) + ".", ""]
    lines += [
        "| mode | first sound | longest wait in speech / in a pause | finished "
        "| wait in speech ≤ 0.05 s? |",
        "|---|---|---|---|---|",
    ]
    for mode, rounds in res.at_once.items():
        clients = range(len(rounds[0]))
        first = [statistics.median(r[i].first_s for r in rounds) for i in clients]
        found = [w for r in res.waits[mode] for w in r]
        in_speech = max(w[0] for w in found)
        finished = [statistics.median(r[i].total_s for r in rounds) for i in clients]
        lines.append(
            f"| {mode} | {min(first):.2f}-{max(first):.2f} s "
            f"| {in_speech:.2f} / {max(w[1] for w in found):.2f} s "
            f"| {min(finished):.1f}-{max(finished):.1f} s "
            f"| {'yes' if in_speech <= SPEECH_WAIT_TARGET_S else 'NO'} |"
        )
    lines += _identical_rows(res)
    lines += _baseline_rows(res)
    lines += ["", "First sound and finished: medians over the rounds, from the first client to "
              "the last; waits: the longest in any round, a wait next to silence counted as a "
              "pause."]  # fmt: skip
    return "\n".join(lines) + "\n"


def _identical_rows(res: SeveralResults) -> list[str]:
    rounds = res.at_once.get("4 identical")
    alone = res.alone.get(ANNOUNCEMENTS[0])
    if not rounds or not alone:
        return []
    last = statistics.median(max(s.total_s for s in r) for r in rounds)
    one = statistics.median(s.total_s for s in alone)
    ratio = last / one
    met = "yes" if ratio <= IDENTICAL_TARGET else "NO"
    return [
        "",
        "| 4 identical | the last finished | one alone | ratio | target | met? |",
        "|---|---|---|---|---|---|",
        f"| | {last:.2f} s | {one:.2f} s | {ratio:.2f} | ≤ {IDENTICAL_TARGET} | {met} |",
    ]


def _baseline_rows(res: SeveralResults) -> list[str]:
    if "baseline" not in res.baseline:
        return []
    rows = ["", "| one client | this tree | baseline | ratio | target | met? |"]
    rows.append("|---|---|---|---|---|---|")
    for metric, values in res.baseline["this"].items():
        ours = statistics.median(values)
        theirs = statistics.median(res.baseline["baseline"][metric])
        ratio = ours / theirs if theirs else float("nan")
        unit = " MB" if "RSS" in metric else " s"
        met = "yes" if ratio <= 1 + BASELINE_TARGET else "NO"
        rows.append(
            f"| {metric} | {ours:.3f}{unit} | {theirs:.3f}{unit} | {ratio:.3f} "
            f"| ≤ {1 + BASELINE_TARGET:.2f} | {met} |"
        )
    return rows
