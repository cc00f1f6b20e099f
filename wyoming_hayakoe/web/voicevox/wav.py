"""The WAV a VOICEVOX client gets: 16-bit PCM, as VOICEVOX ENGINE writes it (the audio itself
is finished by the engine: engine/finishing.py)."""

from __future__ import annotations

import struct

_OPEN_SIZE = 0xFFFFFFFF
"""The size a streamed WAV's header gives for audio of unknown length."""


def wav_header(sample_rate: int, channels: int = 1, data_size: int | None = None) -> bytes:
    """A 16-bit PCM WAV header; without ``data_size`` the sizes are left open (streaming)."""
    data = _OPEN_SIZE if data_size is None else data_size
    riff = _OPEN_SIZE if data_size is None else 36 + data_size
    block = 2 * channels
    return struct.pack(
        "<4sI4s4sIHHIIHH4sI",
        b"RIFF", riff, b"WAVE", b"fmt ", 16, 1, channels,
        sample_rate, sample_rate * block, block, 16, b"data", data,
    )  # fmt: skip
