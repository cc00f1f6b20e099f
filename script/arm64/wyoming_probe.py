"""Ask a running Wyoming TTS server what it offers, and optionally have it speak.

    python script/arm64/wyoming_probe.py --port 10200 [--voice tiny] [--text こんにちは。]

Retries the connection until --timeout (a container may still be loading its voice), then
prints the TTS voices and, with --text, the audio format and length. Exit status 0 only if
the server answered describe with an info event (naming --voice, if given) and, with --text,
sent audio-start, at least one non-silent audio-chunk and audio-stop.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time

from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.error import Error
from wyoming.info import Describe, Info
from wyoming.tts import Synthesize, SynthesizeVoice


async def describe(host: str, port: int, deadline: float) -> Info:
    while True:
        try:
            async with AsyncTcpClient(host, port) as client:
                await client.write_event(Describe().event())
                event = await asyncio.wait_for(client.read_event(), 60)
                if event is not None and Info.is_type(event.type):
                    return Info.from_event(event)
                raise RuntimeError(f"describe answered with {event and event.type}")
        except (OSError, asyncio.IncompleteReadError, ConnectionError):
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(1)


async def synthesize(host: str, port: int, text: str, voice: str | None) -> tuple[int, int]:
    """Return (sample rate, samples) of the answer to one synthesize event."""
    rate, pcm = 0, b""
    async with AsyncTcpClient(host, port) as client:
        await client.write_event(
            Synthesize(text=text, voice=SynthesizeVoice(name=voice) if voice else None).event()
        )
        while True:
            event = await asyncio.wait_for(client.read_event(), 300)
            if event is None:
                raise RuntimeError("connection closed before audio-stop")
            if Error.is_type(event.type):
                raise RuntimeError(f"server error: {Error.from_event(event).text}")
            if AudioStart.is_type(event.type):
                rate = AudioStart.from_event(event).rate
            elif AudioChunk.is_type(event.type):
                pcm += AudioChunk.from_event(event).audio
            elif AudioStop.is_type(event.type):
                break
    if not rate or not any(pcm):
        raise RuntimeError(f"no audio-start or only silence ({len(pcm)} bytes)")
    return rate, len(pcm) // 2


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--timeout", type=float, default=120, help="seconds to wait for the server")
    parser.add_argument("--voice", help="voice that must be listed (and is used for --text)")
    parser.add_argument("--text", help="also synthesize this text")
    args = parser.parse_args()

    started = time.monotonic()
    info = await describe(args.host, args.port, started + args.timeout)
    voices = [voice.name for program in info.tts for voice in program.voices]
    sys.stdout.write(f"describe: {len(voices)} voices after {time.monotonic() - started:.1f} s\n")
    if args.voice and args.voice not in voices:
        sys.stdout.write(f"voice {args.voice!r} missing from {voices}\n")
        return 1
    if args.text:
        began = time.monotonic()
        rate, samples = await synthesize(args.host, args.port, args.text, args.voice)
        sys.stdout.write(
            f"synthesize: {samples / rate:.2f} s of audio at {rate} Hz "
            f"in {time.monotonic() - began:.1f} s\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
