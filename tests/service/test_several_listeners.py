"""Several clients at once, through the Wyoming handler and the service, on a fake engine:
identical requests share one synthesis, a full server refuses at once, a client that does
not read holds up nobody else."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from pathlib import Path

from fake_engine import FakeEngine, fake_pcm
from inprocess import Running, serving, synthesize_event
from wyoming.tts import SynthesizeChunk, SynthesizeStart, SynthesizeStop, SynthesizeVoice

from tools.wyoming_requests import Response, ends_audio, is_type, read_until, synthesize

TEXT = "一。二。三。"
AUDIO = b"".join(fake_pcm(sentence) for sentence in ("一。", "二。", "三。"))


def _when(engine: FakeEngine, what: str) -> float:
    return next(t for t, entry in engine.log if entry == what)


async def _wait_for(engine: FakeEngine, what: str) -> None:
    while not any(entry == what for _, entry in engine.log):
        await asyncio.sleep(0.01)


async def test_identical_requests_at_once_share_one_synthesis(tmp_path: Path) -> None:
    engine = FakeEngine(tmp_path, seconds_per_sentence=0.1)
    async with serving(tmp_path, engine) as running:

        async def one() -> Response:
            async with running.client() as client:
                return await synthesize(client, TEXT)

        responses = await asyncio.gather(*(one() for _ in range(4)))
    assert [r.pcm for r in responses] == [AUDIO] * 4
    assert all(r.types[0] == "audio-start" and r.types[-1] == "audio-stop" for r in responses)
    assert len(engine.requests) == 1


async def test_a_late_joiner_gets_the_audio_so_far_at_once(tmp_path: Path) -> None:
    engine = FakeEngine(tmp_path, seconds_per_sentence=0.3)
    async with serving(tmp_path, engine) as running, running.client() as first:
        await first.write_event(synthesize_event(TEXT))
        await _wait_for(engine, "step 二。 end")
        async with running.client() as late:
            await late.write_event(synthesize_event(TEXT))
            response = Response()
            await read_until(late, is_type("audio-chunk"), response)
            got_first_audio = time.monotonic()
            await read_until(late, ends_audio, response)
        first_response = await read_until(first, ends_audio)
    assert response.pcm == first_response.pcm == AUDIO
    assert len(engine.requests) == 1
    # What was made before it came was sent at once, not after the last sentence.
    assert got_first_audio < _when(engine, "step 三。 end")


async def test_a_joiner_that_goes_away_stops_only_its_own_stream(tmp_path: Path) -> None:
    engine = FakeEngine(tmp_path, seconds_per_sentence=0.2)
    async with serving(tmp_path, engine) as running, running.client() as staying:
        await staying.write_event(synthesize_event(TEXT))
        async with running.client() as leaving:
            await leaving.write_event(synthesize_event(TEXT))
            await read_until(leaving, is_type("audio-chunk"))
        response = await read_until(staying, ends_audio)
    assert response.pcm == AUDIO
    assert len(engine.requests) == 1
    assert sum(entry.startswith("step ") and entry.endswith("end") for _, entry in engine.log) == 3


async def test_a_synthesis_nobody_listens_to_any_more_stops(tmp_path: Path) -> None:
    engine = FakeEngine(tmp_path, seconds_per_sentence=0.2)
    text = "一。二。三。四。五。六。"
    async with serving(tmp_path, engine) as running:
        async with running.client() as leaving:
            await leaving.write_event(synthesize_event(text))
            await read_until(leaving, is_type("audio-chunk"))
        await _wait_for(engine, f"synthesize {text} end")
        # Still serving: another request is answered.
        async with running.client() as client:
            assert (await synthesize(client, "はい。")).pcm == fake_pcm("はい。")
    steps = sum(entry.startswith("step ") and entry.endswith("end") for _, entry in engine.log)
    assert steps < 6 + 1, "the sentences after the client left were not synthesized"


async def test_a_full_server_refuses_at_once(tmp_path: Path) -> None:
    engine = FakeEngine(tmp_path, seconds_per_sentence=0.5)
    async with serving(tmp_path, engine, max_waiting=2) as running:
        first, second = running.client(), running.client()
        async with first, second:
            await first.write_event(synthesize_event("一。二。"))
            await second.write_event(synthesize_event("三。四。"))
            await _wait_for(engine, "synthesize 三。四。 start")
            async with running.client() as third:
                refused = await synthesize(third, "五。")
                assert await third.read_event() is None, "the connection ends after the error"
            # The same audio as one in progress is not another synthesis: it joins.
            async with running.client() as joining:
                joined = await synthesize(joining, "一。二。")
            answered = [await read_until(client, ends_audio) for client in (first, second)]
    assert [e.code for e in refused.errors] == ["busy"]
    assert "--max-waiting" in refused.errors[0].text
    assert not joined.errors and joined.pcm == fake_pcm("一。") + fake_pcm("二。")
    assert all(not r.errors for r in answered)
    assert sorted(text for _, text, _ in engine.requests) == ["一。二。", "三。四。"]


async def test_a_client_that_does_not_read_holds_up_nobody(tmp_path: Path) -> None:
    """Its audio waits for it (production stops far ahead of it); another client's request
    is answered meanwhile, long before the stalled one is dropped."""
    engine = FakeEngine(tmp_path)
    long_text = "あいうえおかきくけこ。" * 1500  # 3.3 MB of audio: more than socket buffers hold
    async with serving(
        tmp_path, engine, max_text_length=len(long_text), client_timeout=60
    ) as running:
        stalled = _stalled_client(running, long_text)
        try:
            await _wait_for(engine, f"step {long_text[:11]} end")
            async with running.client() as client:
                response = await asyncio.wait_for(synthesize(client, "はい。"), 20)
            assert response.pcm == fake_pcm("はい。")
        finally:
            stalled.close()


def _stalled_client(running: Running, text: str) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", running.port))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    body = json.dumps({"text": text}, ensure_ascii=False).encode()
    head = json.dumps({"type": "synthesize", "data_length": len(body)}).encode()
    sock.sendall(head + b"\n" + body)
    return sock


async def test_streamed_sentences_reach_the_engine_split_once(tmp_path: Path) -> None:
    engine = FakeEngine(tmp_path)
    text = "こんにちは。今日は晴れです！"
    async with serving(tmp_path, engine) as running, running.client() as client:
        await client.write_event(SynthesizeStart(voice=SynthesizeVoice(name="tiny")).event())
        await client.write_event(SynthesizeChunk(text=text).event())
        await client.write_event(SynthesizeStop().event())
        await read_until(client, is_type("synthesize-stopped"))
    assert engine.prepared == [("こんにちは。", False), ("今日は晴れです！", False)]
