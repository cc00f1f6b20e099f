"""The server stops cleanly on SIGTERM and on SIGINT (Ctrl-C) in the middle of a synthesis,
and with --no-streaming speaks only plain synthesize requests."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import pytest
from e2e_utils import LONG_TEXT, SAMPLES_PER_CHUNK, TEXT, assert_well_formed
from wyoming.info import Describe, Info
from wyoming.tts import Synthesize, SynthesizeChunk, SynthesizeStart, SynthesizeStop

from tools.server_process import TINY_VOICE_DIR, ServerProcess, start_server
from tools.wyoming_requests import ends_audio, first_event, read_until, synthesize

pytestmark = pytest.mark.skipif(
    not TINY_VOICE_DIR.is_dir(), reason="tests/fixtures/tiny-voice is missing"
)


async def interrupt_mid_synthesis(proc: ServerProcess, signum: int) -> None:
    """Send ``signum`` while a long text is being synthesized; the server must stop cleanly."""
    async with proc.client() as client:
        await client.write_event(Synthesize(text=LONG_TEXT).event())
        await first_event(client, "audio-chunk")
        reader = asyncio.create_task(read_until(client, ends_audio))
        elapsed = await asyncio.to_thread(proc.signal_and_wait, signum)
        assert not reader.done() or reader.exception() is not None  # it was mid-synthesis
        reader.cancel()
    assert elapsed < 2.0
    assert proc.process.returncode == 0
    assert "Traceback" not in proc.log()


async def test_sigterm_mid_synthesis_stops_within_2_seconds(tmp_path: Path) -> None:
    with start_server(tmp_path, "--threads", "1") as proc:
        await interrupt_mid_synthesis(proc, signal.SIGTERM)


async def test_no_streaming_then_ctrl_c(tmp_path: Path) -> None:
    """With --no-streaming only synthesize is spoken; SIGINT (Ctrl-C) stops it cleanly."""
    with start_server(
        tmp_path, "--no-streaming", "--threads", "1", "--samples-per-chunk", str(SAMPLES_PER_CHUNK)
    ) as proc:
        async with proc.client() as client:
            await client.write_event(Describe().event())
            info = Info.from_event(await first_event(client, "info"))
            # Stream events are ignored; the plain synthesize is what gets spoken.
            await client.write_event(SynthesizeStart().event())
            await client.write_event(SynthesizeChunk(text="無視されます。").event())
            response = await synthesize(client, TEXT)
            await client.write_event(SynthesizeStop().event())
            await client.write_event(Describe().event())
            after = await client.read_event()
        assert not info.tts[0].supports_synthesize_streaming
        assert_well_formed(response)
        assert after is not None and after.type == "info"
        await interrupt_mid_synthesis(proc, signal.SIGINT)
