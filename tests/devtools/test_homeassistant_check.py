"""The parts of script/test-homeassistant's check that judge what Home Assistant did: the WAV
reader (a streamed WAV's header says 0 frames) and the relay that notes the request path."""

from __future__ import annotations

import asyncio
import io
import wave

import pytest
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.event import Event, async_read_event, async_write_event
from wyoming.tts import (
    Synthesize,
    SynthesizeChunk,
    SynthesizeStart,
    SynthesizeStop,
    SynthesizeStopped,
)

from tools.homeassistant_check.audio import NotAudio, parse_wav
from tools.homeassistant_check.wire_tap import WireTap
from tools.server_process import free_port

RATE = 16000
PCM = (1000).to_bytes(2, "little", signed=True) * RATE  # one second at a tenth of full scale


def _wav(frames: bytes) -> bytes:
    with io.BytesIO() as buffer:
        with wave.open(buffer, "wb") as wav:
            wav.setframerate(RATE)
            wav.setsampwidth(2)
            wav.setnchannels(1)
            wav.writeframes(frames)
        return buffer.getvalue()


def test_a_whole_wav_is_measured_by_its_header() -> None:
    audio = parse_wav(_wav(PCM))
    assert (audio.seconds, audio.rate) == (1.0, RATE)
    assert audio.peak == pytest.approx(1000 / 32768)


def test_a_streamed_wav_is_measured_by_the_bytes_after_its_0_frame_header() -> None:
    """As Home Assistant 2025.7+ sends it: the header written before any audio, then PCM."""
    header = _wav(b"")
    assert parse_wav(header).seconds == 0
    audio = parse_wav(header + PCM)
    assert (audio.seconds, audio.rate) == (1.0, RATE)
    assert audio.peak == pytest.approx(1000 / 32768)


def test_a_wav_of_unknown_length_is_measured_by_the_bytes_after_its_header() -> None:
    """As ffmpeg writes a WAV to a pipe (Home Assistant's resampling): the sizes say 2^32-1."""
    header = bytearray(_wav(b""))
    unknown = (0xFFFFFFFF).to_bytes(4, "little")
    header[4:8] = unknown
    at = header.index(b"data") + 4
    header[at : at + 4] = unknown
    audio = parse_wav(bytes(header) + PCM)
    assert (audio.seconds, audio.rate) == (1.0, RATE)


def test_a_wav_without_data_chunk_is_not_audio() -> None:
    riff = _wav(b"")
    broken = riff[: riff.index(b"data")]
    with pytest.raises((NotAudio, EOFError, wave.Error)):
        parse_wav(broken)


AUDIO = (
    AudioStart(rate=RATE, width=2, channels=1),
    AudioChunk(rate=RATE, width=2, channels=1, audio=PCM),
    AudioStop(),
)


async def _fake_server(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Answers as the real server does: audio for a synthesize outside a stream; audio, then
    synthesize-stopped for a stream (and nothing for the synthesize inside it)."""
    streaming = False
    while (event := await async_read_event(reader)) is not None:
        answers: tuple = ()
        if SynthesizeStart.is_type(event.type):
            streaming = True
        elif Synthesize.is_type(event.type) and not streaming:
            answers = AUDIO
        elif SynthesizeStop.is_type(event.type):
            answers = (*AUDIO, SynthesizeStopped())
        for answer in answers:
            await async_write_event(answer.event(), writer)
    writer.close()


async def _read_until(client: AsyncTcpClient, last: str) -> list[Event]:
    events = []
    while (event := await asyncio.wait_for(client.read_event(), 10)) is not None:
        events.append(event)
        if event.type == last:
            break
    return events


async def test_the_relay_passes_events_unchanged_and_notes_the_streaming_path() -> None:
    server = await asyncio.start_server(_fake_server, "127.0.0.1", 0)
    tap = WireTap(server.sockets[0].getsockname()[1])
    port = free_port()
    await tap.start(port)
    try:
        async with AsyncTcpClient("127.0.0.1", port) as client:
            for event in (
                SynthesizeStart(),
                SynthesizeChunk(text="こんにちは。"),
                Synthesize(text="こんにちは。"),  # for servers without streaming
                SynthesizeStop(),
            ):
                await client.write_event(event.event())
            answers = await _read_until(client, "synthesize-stopped")
        async with AsyncTcpClient("127.0.0.1", port) as client:
            await client.write_event(Synthesize(text="はい。").event())
            assert [e.type for e in await _read_until(client, "audio-stop")][-1] == "audio-stop"
    finally:
        await tap.stop()
        server.close()
    assert [e.type for e in answers] == ["audio-start", "audio-chunk", "audio-stop",
                                         "synthesize-stopped"]  # fmt: skip
    assert AudioChunk.from_event(answers[1]).audio == PCM
    streamed, whole = tap.synthesis_connections()
    assert streamed.sent == ["synthesize-start", "synthesize-chunk", "synthesize",
                             "synthesize-stop"]  # fmt: skip
    assert streamed.streamed and streamed.stopped
    assert whole.sent == ["synthesize"] and not whole.streamed
