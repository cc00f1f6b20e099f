"""The server's own layers in one process, against a fake engine: handler, connection, service.

Fast and exact where the subprocess end-to-end tests are realistic: what the engine is asked
for, in which thread and in which order, and what the client receives.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from fake_engine import FakeEngine, fake_pcm
from inprocess import SAMPLES_PER_CHUNK, Running, add_voice, serving, synthesize_event
from wyoming.client import AsyncTcpClient
from wyoming.info import Describe, Info
from wyoming.tts import SynthesizeChunk, SynthesizeStart, SynthesizeStop, SynthesizeVoice

from tools.wyoming_requests import is_type, read_until, synthesize
from wyoming_hayakoe.foreground import current_foreground
from wyoming_hayakoe.text.sentences import split_text


@pytest.fixture
async def running(tmp_path: Path) -> AsyncIterator[Running]:
    async with serving(tmp_path, FakeEngine(tmp_path)) as started:
        yield started


async def test_describe_lists_every_voice_and_its_styles(running: Running) -> None:
    async with running.client() as client:
        await client.write_event(Describe().event())
        info = Info.from_event((await read_until(client, is_type("info"))).events[-1])
    names = {voice.name for voice in info.tts[0].voices}
    assert {"tiny", "second", "tiny (Happy)", "second (Sad)"} <= names
    assert "tiny (Neutral)" not in names  # the plain name is the default style


async def test_each_sentence_is_sent_as_it_is_made(running: Running) -> None:
    text = "はい。元気です！ありがとう"
    async with running.client() as client:
        response = await synthesize(client, text)
    expected = b"".join(fake_pcm(s.text) for s in split_text(text))
    assert response.pcm == expected
    assert response.types[0] == "audio-start" and response.types[-1] == "audio-stop"
    assert all(len(c.audio) <= SAMPLES_PER_CHUNK * 2 for c in response.chunks)


async def test_a_styled_voice_name_needs_no_disk_scan(
    running: Running, monkeypatch: pytest.MonkeyPatch
) -> None:
    def scan(*args: object) -> object:
        raise AssertionError("the data dirs were scanned for a known voice")

    monkeypatch.setattr(running.store, "installed", scan)
    monkeypatch.setattr(running.store, "all_voice_names", scan)
    async with running.client() as client:
        response = await synthesize(client, "はい。", voice="tiny (Happy)")
        second = await synthesize(client, "はい。", voice="second (Sad)")
    assert not response.errors and not second.errors
    assert [(name, p.style) for name, _, p in running.engine.requests[-2:]] == [
        ("tiny", "Happy"),
        ("second", "Sad"),
    ]


async def test_a_voice_copied_in_later_is_found_by_a_scan_off_the_event_loop(
    running: Running, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads: list[str] = []
    scan = running.store.installed

    def recorded() -> dict[str, Path]:
        threads.append(threading.current_thread().name)
        return scan()

    monkeypatch.setattr(running.store, "installed", recorded)
    add_voice(running.data_dir, "later")
    async with running.client() as client:
        response = await synthesize(client, "はい。", voice="later (Angry)")
    assert not response.errors
    assert running.engine.requests[-1][0] == "later"
    assert threads and threading.main_thread().name not in threads


async def test_unknown_voice_and_style_are_errors(running: Running) -> None:
    async with running.client() as client:
        unknown = await synthesize(client, "はい。", voice="nobody")
    async with running.client() as client:
        style = await synthesize(client, "はい。", voice="tiny", speaker="Sleepy")
    assert [e.code for e in unknown.errors] == ["unknown-voice"]
    assert [e.code for e in style.errors] == ["unknown-style"]


async def test_text_over_the_limit_is_refused(tmp_path: Path) -> None:
    engine = FakeEngine(tmp_path)
    async with serving(tmp_path, engine, max_text_length=10) as running, running.client() as client:
        response = await synthesize(client, "あ" * 11)
    assert [e.code for e in response.errors] == ["bad-text"]
    assert "limit is 10" in response.errors[0].text
    assert engine.requests == []


async def test_streamed_text_reaches_the_engine_sentence_by_sentence(running: Running) -> None:
    text = "こんにちは。今日は、晴れです！\nまた明日"
    async with running.client() as client:
        await client.write_event(SynthesizeStart(voice=SynthesizeVoice(name="tiny")).event())
        for i in range(0, len(text), 3):
            await client.write_event(SynthesizeChunk(text=text[i : i + 3]).event())
        await client.write_event(SynthesizeStop().event())
        response = await read_until(client, is_type("synthesize-stopped"))
    sentences = [s.text for s in split_text(text)]
    assert [t for _, t, _ in running.engine.requests] == sentences
    assert response.pcm == b"".join(fake_pcm(s) for s in sentences)


def _when(engine: FakeEngine, what: str) -> float:
    return next(t for t, entry in engine.log if entry == what)


async def _wait_for(engine: FakeEngine, what: str) -> None:
    while not any(entry == what for _, entry in engine.log):
        await asyncio.sleep(0.01)


def _steps(engine: FakeEngine) -> list[tuple[float, float]]:
    """When each step of a synthesis (here: a sentence) started and ended."""
    starts = [t for t, entry in engine.log if entry.startswith("step ") and entry.endswith("start")]
    ends = [t for t, entry in engine.log if entry.startswith("step ") and entry.endswith("end")]
    return list(zip(starts, ends, strict=True))


async def test_a_first_load_calibrates_in_a_cpu_turn_of_its_own(tmp_path: Path) -> None:
    engine = FakeEngine(tmp_path, seconds_per_sentence=0.2)
    text = "一。二。三。"
    async with (
        serving(tmp_path, engine) as running,
        running.client() as first,
        running.client() as second,
    ):
        await first.write_event(synthesize_event(text))
        await _wait_for(engine, f"synthesize {text} start")
        await second.write_event(synthesize_event("はい。", voice="second"))
        await read_until(first, is_type("audio-stop"))
        await read_until(second, is_type("audio-stop"))
    calibrated = (_when(engine, "calibrate second start"), _when(engine, "calibrate second end"))
    steps = _steps(engine)
    assert len(steps) == 4
    assert all(end <= calibrated[0] or start >= calibrated[1] for start, end in steps)


async def test_ready_before_the_decoder_warm_up_which_goes_before_the_first_request(
    tmp_path: Path,
) -> None:
    engine = FakeEngine(tmp_path, seconds_per_sentence=0.2)
    async with serving(tmp_path, engine) as running:
        ready = time.monotonic()
        async with running.client() as client:
            await synthesize(client, "はい。")
    # the BERT opened beside the text front-end and the voice's own models
    assert _when(engine, "open bert start") < _when(engine, "load tiny")
    assert _when(engine, "load tiny") < _when(engine, "open bert end") < ready
    warmed = _when(engine, "warm up tiny end")
    assert ready < warmed <= _when(engine, "step はい。 start")


async def test_a_request_is_heard_before_a_later_one_whose_text_is_ready_sooner(
    tmp_path: Path,
) -> None:
    # A long text takes a while to rewrite and split; a short one asked meanwhile must not
    # go ahead of it (first come, first heard).
    engine = FakeEngine(tmp_path, seconds_to_prepare={"一。二。三。": 0.3})
    heard: list[str] = []
    async with serving(tmp_path, engine) as running:

        async def ask(client: AsyncTcpClient, text: str) -> None:
            await client.write_event(synthesize_event(text))
            await read_until(client, is_type("audio-chunk"))
            heard.append(text)
            await read_until(client, is_type("audio-stop"))

        async with running.client() as first, running.client() as second:
            earlier = asyncio.create_task(ask(first, "一。二。三。"))
            await _wait_for(engine, "prepare 一。二。三。 start")
            await ask(second, "はい。")
            await earlier
    assert heard == ["一。二。三。", "はい。"]
    assert _when(engine, "synthesize 一。二。三。 start") < _when(engine, "synthesize はい。 start")


async def test_a_compile_child_stops_while_a_request_is_synthesized(tmp_path: Path) -> None:
    # A process group registered from the service's loading thread, as a compile child is
    # (compiling/children.py), against a request the fake engine takes 0.6 s to synthesize.
    engine = FakeEngine(tmp_path, seconds_per_sentence=0.6)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                             start_new_session=True)  # fmt: skip
    states: list[tuple[float, str]] = []
    registered, done = threading.Event(), threading.Event()

    def compile_child() -> None:
        with current_foreground().background(child.pid) as tick:
            registered.set()
            while not done.is_set():
                tick()
                stat = Path(f"/proc/{child.pid}/stat").read_text()
                states.append((time.monotonic(), stat.rsplit(")", 1)[1].split()[0]))
                time.sleep(0.02)

    try:
        async with serving(tmp_path, engine) as running:
            watcher = asyncio.ensure_future(running.service.workers.load(compile_child))
            await asyncio.to_thread(registered.wait, 5)
            async with running.client() as client:
                asked = time.monotonic()
                await synthesize(client, "一。")
                answered = time.monotonic()
            await asyncio.sleep(1.0)
            done.set()
            await watcher
    finally:
        child.kill()
        child.wait()
    during = [state for when, state in states if asked + 0.1 < when < answered - 0.1]
    after = [state for when, state in states if when > answered + 0.5]
    assert during and set(during) == {"T"}, states
    assert after and "T" not in after, states


async def test_the_user_dictionary_is_refreshed_outside_the_cpu_slot(tmp_path: Path) -> None:
    engine = FakeEngine(tmp_path, seconds_per_sentence=0.2, seconds_per_refresh=0.1)
    text = "一。二。三。"
    async with (
        serving(tmp_path, engine) as running,
        running.client() as first,
        running.client() as second,
    ):
        await first.write_event(synthesize_event(text))
        await _wait_for(engine, f"synthesize {text} start")
        asked = time.monotonic()
        await second.write_event(synthesize_event("はい。"))
        await read_until(first, is_type("audio-stop"))
        await read_until(second, is_type("audio-stop"))
    refreshes = [t for t, entry in engine.log if entry == "refresh start" and t >= asked]
    assert refreshes and refreshes[0] < _when(engine, f"synthesize {text} end")
