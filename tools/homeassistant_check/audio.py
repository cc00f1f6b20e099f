"""Is it audio: a WAV header with its frames, or mp3 frames."""

from __future__ import annotations

import array
import io
import sys
import wave
from dataclasses import dataclass


@dataclass(frozen=True)
class Audio:
    kind: str
    seconds: float
    rate: int
    peak: float | None = None  # of 16-bit WAV samples, 1.0 = full scale

    def __str__(self) -> str:
        peak = "" if self.peak is None else f", peak {self.peak:.2f}"
        return f"{self.kind}, {self.seconds:.2f} s at {self.rate} Hz{peak}"


class NotAudio(Exception):
    pass


def parse_wav(data: bytes) -> Audio:
    if data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise NotAudio(f"no RIFF/WAVE header ({len(data)} bytes: {data[:16]!r})")
    with wave.open(io.BytesIO(data), "rb") as wav:
        rate, width, channels = wav.getframerate(), wav.getsampwidth(), wav.getnchannels()
        frames = wav.getnframes()
        pcm = wav.readframes(frames)
    frame_bytes = width * channels
    offset = _pcm_offset(data)
    present = (len(data) - offset) // frame_bytes
    if frames == 0 or frames > present:
        # Home Assistant 2025.7 and later stream the WAV: its header is written before the
        # audio is known and says 0 frames (or, converted by ffmpeg, the largest size there
        # is), and the PCM follows it. Count what follows.
        frames = present
        pcm = data[offset : offset + frames * frame_bytes]
    peak = None
    if width == 2:
        samples = array.array("h", pcm[: len(pcm) // 2 * 2])
        if sys.byteorder == "big":
            samples.byteswap()
        peak = max((abs(s) for s in samples), default=0) / 32768
    return Audio("wav", frames / rate, rate, peak)


def _pcm_offset(data: bytes) -> int:
    """Where the ``data`` chunk's bytes begin: after the RIFF chunks before it."""
    pos = 12
    while pos + 8 <= len(data):
        size = int.from_bytes(data[pos + 4 : pos + 8], "little")
        if data[pos : pos + 4] == b"data":
            return pos + 8
        pos += 8 + size + (size & 1)
    raise NotAudio(f"no data chunk in {len(data)} bytes of WAV")


# MPEG-1/2/2.5 Layer III bit rates (kbit/s) and sample rates, by header field.
_BITRATES = {
    3: [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],  # MPEG-1
    2: [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],  # MPEG-2
}
_RATES = {3: [44100, 48000, 32000], 2: [22050, 24000, 16000], 0: [11025, 12000, 8000]}


def parse_mp3(data: bytes) -> Audio:
    """Walk the Layer III frames (after an ID3 tag); the duration is their samples."""
    pos = 0
    if data[:3] == b"ID3" and len(data) >= 10:
        size = (data[6] << 21) | (data[7] << 14) | (data[8] << 7) | data[9]
        pos = 10 + size
    # Encoders may pad the tag: the first frame is the first sync after it.
    while pos + 1 < len(data) and not (data[pos] == 0xFF and data[pos + 1] & 0xE0 == 0xE0):
        pos += 1
    frames = samples = rate = 0
    while pos + 4 <= len(data):
        b1, b2 = data[pos + 1], data[pos + 2]
        if data[pos] != 0xFF or (b1 & 0xE0) != 0xE0:
            break
        version = (b1 >> 3) & 3  # 3: MPEG-1, 2: MPEG-2, 0: MPEG-2.5
        layer = (b1 >> 1) & 3  # 1: Layer III
        bitrate_index, rate_index = b2 >> 4, (b2 >> 2) & 3
        if version == 1 or layer != 1 or bitrate_index in (0, 15) or rate_index == 3:
            break
        kbps = _BITRATES[3 if version == 3 else 2][bitrate_index]
        rate = _RATES[version][rate_index]
        per_frame = 1152 if version == 3 else 576
        length = (144 if version == 3 else 72) * kbps * 1000 // rate + ((b2 >> 1) & 1)
        frames += 1
        samples += per_frame
        pos += length
    if frames == 0:
        raise NotAudio(f"no mp3 frame sync ({len(data)} bytes: {data[:16]!r})")
    return Audio(f"mp3 ({frames} frames)", samples / rate, rate)


def parse_audio(data: bytes, content_type: str) -> Audio:
    if "wav" in content_type or data[:4] == b"RIFF":
        return parse_wav(data)
    return parse_mp3(data)
