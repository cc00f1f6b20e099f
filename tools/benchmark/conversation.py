"""A conversation partner's first sound on a slow board: ``script/benchmark --conversation``.

A voice satellite gives up on a reply that has not started playing 2 s after it asked, so the
first audio chunk must leave the server within about 1 s. On each simulated slow board
(slow_board.py; 1 thread), with each decoder (the fast one made
first, as ``--decoders`` makes it), with the first-audio deadline off (``--first-audio-within
0``: the server before it) and on (the default), in turn, round after round:

- three replies: a short one, a three-sentence agent reply, a single 8 s sentence;
- asked two ways, as Home Assistant asks: one ``synthesize`` (timed from the request), and the
  streaming path (``synthesize-start``, the text in deltas of a few characters every 40 ms as a
  language model writes it, the whole text again in ``synthesize``, ``synthesize-stop``),
  timed from when the first sentence's text was complete.

The board is measured again before each server and, when the host has drifted, calibrated
anew: each row shows the speed the reference decoder had on it before each round.

For each: the first audio chunk (silence counts: what the satellite waits for), the first
voiced sound (silence does not: what the listener waits for), the end of listening, and every
wait of a client playing chunks on arrival, placed in the audio (in a pause or inside speech).
"""

from __future__ import annotations

import asyncio
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

from wyoming.audio import AudioChunk, AudioStop
from wyoming.tts import Synthesize, SynthesizeChunk, SynthesizeStart, SynthesizeStop

from tools.benchmark.decoders import WARM_UP, _wait_for_choice
from tools.benchmark.listening import gapless_start, listen, waits
from tools.benchmark.ours import Server, wyoming_client
from tools.benchmark.slow_board import Board, rechecked

REPLIES = {
    "short": "リビングの電気を消しました。",
    "three": "明日の天気は晴れです。最高気温は二十三度の予報です。傘は持たなくて大丈夫です。",
    "single 8 s": (
        "明日の朝は七時に起きて、駅前のパン屋さんで焼きたてのパンを買ってから、"
        "川沿いの道を歩いて会社に行く予定です。"
    ),
}
DELTA_CHARACTERS = 3
DELTA_EVERY_S = 0.04
DEADLINES = {"off": ("--first-audio-within", "0"), "on": ()}
SENTENCE_ENDS = "。！？!?"


@dataclass
class Heard:
    """One reply as a client playing chunks on arrival hears it, from its start."""

    first_chunk_s: float
    first_voiced_s: float
    end_s: float
    waits_in_speech: list[float]
    waits_in_pauses: list[float]
    gapless_s: float
    """The earliest start of the words from which the audio, as it was made, plays through
    (listening.gapless_start)."""


@dataclass
class ConversationResults:
    heard: dict[tuple[str, str, str, str, str], list[Heard]] = field(default_factory=dict)
    """(board, decoder, deadline, reply, asked) -> each round."""
    boards: dict[str, str] = field(default_factory=dict)
    """Each slow board, described."""
    board_speeds: dict[tuple[str, str, str], list[float]] = field(default_factory=dict)
    """(board, decoder, deadline) -> the reference decoder's speed on the board before each
    round's server."""
    shares: dict[str, list[float]] = field(default_factory=dict)
    """Each board's share of the CPU before each server (calibrated anew when it drifted)."""

    def add(self, key: tuple[str, str, str, str, str], heard: Heard) -> None:
        self.heard.setdefault(key, []).append(heard)

    def markdown(self) -> str:
        lines = [
            *(f"- {board}: {described}" for board, described in self.boards.items()),
            *(
                f"- {board}: the share before each server: {', '.join(f'{s:.3f}' for s in shares)}"
                for board, shares in self.shares.items()
            ),
            "",
            "| board | decoder | reply | asked | first chunk (off → on) "
            "| first voiced (off → on) | first voiced, each round (on) | board, each round (on) "
            "| after a gapless start (on) | end of listening (off → on) "
            "| longest wait in speech (on) | longest wait in a pause (on) |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        med = statistics.median
        for board, decoder, _on, reply, asked in sorted(k for k in self.heard if k[2] == "on"):
            off = self.heard.get((board, decoder, "off", reply, asked), [])
            on = self.heard[(board, decoder, "on", reply, asked)]

            def pair(name: str, before: list[Heard] = off, after: list[Heard] = on) -> str:
                first = f"{med([getattr(h, name) for h in before]):.2f}" if before else "-"
                return f"{first} → {med([getattr(h, name) for h in after]):.2f} s"

            speech = max((w for h in on for w in h.waits_in_speech), default=0.0)
            pauses = max((w for h in on for w in h.waits_in_pauses), default=0.0)
            late = med([h.first_voiced_s - h.gapless_s for h in on])
            rounds = ", ".join(f"{h.first_voiced_s:.2f}" for h in on)
            speeds = self.board_speeds.get((board, decoder, "on"), [])
            board_rounds = ", ".join(f"{speed:.2f}" for speed in speeds)
            lines.append(
                f"| {board} | {decoder} | {reply} | {asked} | {pair('first_chunk_s')} "
                f"| {pair('first_voiced_s')} | {rounds} s | {board_rounds}x | {late:+.2f} s "
                f"| {pair('end_s')} | {speech:.2f} s | {pauses:.2f} s |"
            )
        return "\n".join(lines) + "\n"


def run(
    root: Path, voice: str, cache: Path, work: Path, rounds: int, on: Board,
    results: ConversationResults,
) -> None:  # fmt: skip
    """Every decoder and deadline on the slow board in effect (``on``), one server after
    the other, each round through all of them (``cache`` holds the fast decoder already);
    the board measured again before each server (slow_board.rechecked)."""
    board = on.setting
    for _ in range(rounds):
        for decoder in ("reference", "fast"):
            for deadline, option in DEADLINES.items():
                on = rechecked(on, root, voice, cache)
                results.board_speeds.setdefault((board, decoder, deadline), []).append(on.speed)
                results.shares.setdefault(board, []).append(on.share)
                extra = ("--decoder", decoder, "--cache-dir", str(cache), "--audio-cache-mb",
                         "0", "--debug", *option)  # fmt: skip
                log = work / f"conversation-{decoder}-{deadline}-{time.monotonic_ns()}.log"
                server = Server(root, voice, 1, log, extra)
                try:
                    server.wait_ready()
                    _wait_for_choice(server, decoder)
                    for reply, text in REPLIES.items():
                        for asked in ("one-shot", "streamed"):
                            server.synthesize(WARM_UP)
                            heard = asyncio.run(_ask(server.port, text, asked == "streamed"))
                            results.add((board, decoder, deadline, reply, asked), heard)
                finally:
                    server.stop()


async def _ask(port: int, text: str, streamed: bool) -> Heard:
    async with wyoming_client(port) as client:
        started = time.perf_counter()
        if not streamed:
            await client.write_event(Synthesize(text=text).event())
            return await _heard(client, started)
        await client.write_event(SynthesizeStart().event())
        complete = asyncio.get_running_loop().create_future()
        writer = asyncio.create_task(_deltas(client, text, complete))
        heard = await _heard(client, None, complete)
        await writer
        return heard


async def _deltas(client: object, text: str, complete: asyncio.Future[float]) -> None:
    """The text as a language model's deltas, then the whole text, then the stop."""
    for start in range(0, len(text), DELTA_CHARACTERS):
        delta = text[start : start + DELTA_CHARACTERS]
        await client.write_event(SynthesizeChunk(text=delta).event())  # type: ignore[attr-defined]
        if not complete.done() and any(c in SENTENCE_ENDS for c in delta):
            complete.set_result(time.perf_counter())
        await asyncio.sleep(DELTA_EVERY_S)
    await client.write_event(Synthesize(text=text).event())  # type: ignore[attr-defined]
    await client.write_event(SynthesizeStop().event())  # type: ignore[attr-defined]


async def _heard(
    client: object, started: float | None, complete: asyncio.Future[float] | None = None
) -> Heard:
    """Read one reply's audio; times from ``started`` or, streamed, from when its first
    sentence was complete."""
    arrivals: list[tuple[float, float]] = []
    pcm: list[bytes] = []
    first_chunk = first_voiced = None
    rate = voiced_from = 0
    while True:
        event = await client.read_event()  # type: ignore[attr-defined]
        if event is None:
            raise ConnectionError("the server closed the connection before the audio ended")
        now = time.perf_counter()
        if AudioChunk.is_type(event.type):
            chunk = AudioChunk.from_event(event)
            rate = chunk.rate
            arrivals.append((now, len(chunk.audio) / 2 / rate))
            pcm.append(chunk.audio)
            first_chunk = first_chunk or now
            if first_voiced is None and chunk.audio.strip(b"\x00"):
                first_voiced, voiced_from = now, len(arrivals) - 1
        elif AudioStop.is_type(event.type):
            break
        elif event.type == "error":
            raise RuntimeError(f"server error: {event.data}")
    origin = started if started is not None else await complete  # type: ignore[misc]
    relative = [(at - origin, seconds) for at, seconds in arrivals]
    assert first_chunk is not None and first_voiced is not None
    found = waits(relative, b"".join(pcm), rate)
    return Heard(
        first_chunk - origin,
        first_voiced - origin,
        listen(relative).end_s,
        [w.seconds for w in found if not w.in_a_pause],
        [w.seconds for w in found if w.in_a_pause],
        gapless_start(relative, voiced_from),
    )
