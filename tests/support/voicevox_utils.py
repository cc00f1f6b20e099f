"""Helpers of the VOICEVOX API tests: WAVs read with the standard library (not with the
server's own writer), and the tiny voice's style ids worked out from AivisSpeech Engine's
rule as its README states it (an oracle written apart from web/voicevox/styles.py)."""

from __future__ import annotations

import hashlib
import io
import uuid
import wave
from dataclasses import dataclass
from typing import Any

import numpy as np

QUIET_QUERY = {"tempoDynamicsScale": 0.0, "noiseScale": 0.0, "noiseScaleW": 0.0}
"""Query fields for deterministic audio (sdp_ratio 0, no noise)."""


@dataclass(frozen=True)
class Wav:
    rate: int
    channels: int
    samples: np.ndarray
    """int16, ``[frames, channels]``."""

    @property
    def seconds(self) -> float:
        return len(self.samples) / self.rate

    @property
    def mono(self) -> np.ndarray:
        return self.samples[:, 0]


def read_wav(data: bytes) -> Wav:
    with wave.open(io.BytesIO(data)) as reader:
        assert reader.getsampwidth() == 2 and reader.getcomptype() == "NONE"
        frames = reader.readframes(reader.getnframes())
        channels = reader.getnchannels()
        samples = np.frombuffer(frames, dtype="<i2").reshape(-1, channels)
        return Wav(reader.getframerate(), channels, samples)


def aivisspeech_style_id(speaker_uuid: str, local_id: int) -> int:
    """README: MD5 of the UUID, its low 27 bits, then the 5-bit local id, in a 32-bit integer
    (aivm_infos_repository.py clears the sign bit: the ids are never negative)."""
    low = int.from_bytes(hashlib.md5(speaker_uuid.encode()).digest(), "big") % (1 << 27)
    return (low * 32 + local_id % 32) % (1 << 31)


def hayakoe_speaker_uuid(voice: str) -> str:
    """README: a voice without a UUID of its own (the rule documented for HayaKoe voices)."""
    return str(
        uuid.uuid5(
            uuid.NAMESPACE_URL, "https://github.com/wyoming-hayakoe/wyoming-hayakoe#" + voice
        )
    )


def trim_zeros(samples: np.ndarray) -> tuple[int, np.ndarray, int]:
    """(zeros before, the rest, zeros after) of a mono signal."""
    nonzero = np.flatnonzero(samples)
    if not len(nonzero):
        return len(samples), samples[:0], 0
    return (
        int(nonzero[0]),
        samples[nonzero[0] : nonzero[-1] + 1],
        len(samples) - 1 - int(nonzero[-1]),
    )


AIVMX_FIXTURE_SPEAKERS = {
    "あおい": "a6580cf5-e5fe-573d-b8a8-4ccfcccda6e1",
    "そら": "55150642-78c4-5b81-9403-8f73b0e6a47a",
}
"""The speaker UUIDs in the manifest of tests/fixtures/aivmx/test-voice.aivmx."""


async def speak(client: Any, speaker_uuid: str, text: str = "はい。") -> Wav:
    """``text`` in the first style of a speaker, through /audio_query and /synthesis."""
    speakers = await (await client.get("/speakers")).json()
    speaker = next(s for s in speakers if s["speaker_uuid"] == speaker_uuid)
    style = speaker["styles"][0]["id"]
    made = await client.post("/audio_query", params={"text": text, "speaker": style})
    assert made.status == 200, await made.text()
    spoken = await client.post("/synthesis", params={"speaker": style}, json=await made.json())
    assert spoken.status == 200, await spoken.text()
    return read_wav(await spoken.read())


async def style_ids(client: Any) -> dict[str, int]:
    """The first speaker's style ids by style name."""
    speakers = await (await client.get("/speakers")).json()
    return {style["name"]: style["id"] for style in speakers[0]["styles"]}


async def query(client: Any, text: str, speaker: int, **fields: Any) -> dict[str, Any]:
    """/audio_query's answer for ``text``, with ``fields`` changed."""
    response = await client.post("/audio_query", params={"text": text, "speaker": speaker})
    assert response.status == 200, await response.text()
    assert response.headers["Content-Type"] == "application/json"
    return {**await response.json(), **fields}


async def synthesis(client: Any, body: Any, speaker: int, **params: str) -> bytes:
    """/synthesis's WAV for the query ``body``."""
    response = await client.post("/synthesis", params={"speaker": speaker, **params}, json=body)
    assert response.status == 200, await response.text()
    assert response.headers["Content-Type"] == "audio/wav"
    return await response.read()


async def detail(response: Any, status: int) -> Any:
    """The ``detail`` of a VOICEVOX error answer with ``status``."""
    assert response.status == status, await response.text()
    body = await response.json()
    assert set(body) == {"detail"}
    return body["detail"]


def same_pcm(ours: np.ndarray, theirs: np.ndarray) -> bool:
    """The same speech, sample for sample, but for rounding: two syntheses decode in windows
    sized by the speed measured as they run, and windows of another size sum the same
    convolutions in another order (2e-6 of full scale apart at most, measured on the tiny
    voice with 2 threads), which tips a 16-bit rounding here and there."""
    if ours.shape != theirs.shape:
        return False
    return int(np.max(np.abs(ours.astype(np.int32) - theirs.astype(np.int32)), initial=0)) <= 1
