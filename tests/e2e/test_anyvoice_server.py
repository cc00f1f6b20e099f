"""End to end: AIVMX and Style-Bert-VITS2 export voices dropped into a data dir, served over
Wyoming beside the tiny HayaKoe voice, with broken files among them.

The server runs with zero noise, so its audio can be compared with the engine's in this process.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from anyvoice_utils import (
    AIVMX_VOICES,
    SBV2_VOICES,
    add_broken_voices,
    aivmx_with_renamed_input,
    good_data_dir,
    good_voices,
)
from compiled_voices import CompiledCaches
from wyoming.info import Describe, Info, TtsVoice
from wyoming.tts import SynthesizeChunk, SynthesizeStart, SynthesizeStop, SynthesizeVoice

from tools.engine_audio import pcm_pieces
from tools.server_process import TINY_VOICE_DIR, TINY_VOICE_ROOT, ServerProcess, start_server
from tools.wyoming_requests import first_event, read_until, synthesize

QUIET = ("--tempo-dynamics-scale", "0", "--noise-scale", "0", "--noise-scale-w", "0",
         "--threads", "1")  # fmt: skip
TEXT = "こんにちは。今日はいい天気ですね！"
# What the server logs for each of add_broken_voices's files.
BAD_FILES = {
    "aivmx/truncated.aivmx": "not a readable AIVMX file",
    "aivmx/bare.aivmx": "without AIVM metadata",
    "aivmx/old.aivmx": "its architecture is Style-Bert-VITS2;",
    "aivmx/novectors.aivmx": "holds no style vectors",
    "sbv2/novectors": "has no style_vectors.npy",
    "sbv2/older": "not a JP-Extra model",
}
AIVMX_URL = "https://hub.aivis-project.com/aivm-models/a26fd5e4-9c24-5542-97ac-41bdda679157"


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = good_data_dir(tmp_path_factory.mktemp("voices"))
    add_broken_voices(root)
    aivmx_with_renamed_input(root / "renamed.aivmx")  # directly in the data dir
    return root


@pytest.fixture(scope="module")
def server(
    data_dir: Path, tmp_path_factory: pytest.TempPathFactory, compiled_caches: CompiledCaches
) -> Iterator[ServerProcess]:
    logs = tmp_path_factory.mktemp("logs")
    # The run's compiled models of these voices: the first request of each is not its start.
    voices = (TINY_VOICE_DIR, *good_voices(data_dir))
    cache = compiled_caches.copy(tmp_path_factory.mktemp("cache"), TINY_VOICE_ROOT, voices)
    extra = ("--data-dir", str(data_dir), "--cache-dir", str(cache), *QUIET)
    with start_server(logs, *extra) as proc:
        yield proc


def oracle(data_dir: Path, voice_name: str, text: str, style: str) -> np.ndarray:
    """What the engine in this process makes of ``text`` at the server's settings."""
    from wyoming_hayakoe.engine import Engine, SynthesisParams
    from wyoming_hayakoe.voices.store import VoiceStore

    source = VoiceStore([TINY_VOICE_ROOT, data_dir], local_files_only=True).sources()[voice_name]
    engine = Engine(TINY_VOICE_ROOT, threads=1)
    voice = engine.voices.load(source)
    params = SynthesisParams(
        style=style, speaker_id=voice.speaker_id, sdp_ratio=0, noise_scale=0, noise_scale_w=0
    )
    pcm = b"".join(piece.pcm for piece in pcm_pieces(engine, voice, text, params))
    return np.frombuffer(pcm, dtype=np.int16)


async def describe(server: ServerProcess) -> dict[str, TtsVoice]:
    async with server.client() as client:
        await client.write_event(Describe().event())
        info = Info.from_event(await first_event(client, "info"))
    return {voice.name: voice for voice in info.tts[0].voices}


async def test_describe_lists_both_kinds_with_styles_and_attribution(
    server: ServerProcess,
) -> None:
    voices = await describe(server)
    for name, (description, styles) in {**AIVMX_VOICES, **SBV2_VOICES}.items():
        voice = voices[name]
        assert [s.name for s in voice.speakers or []] == styles
        assert voice.installed and voice.languages == ["ja"]
        assert voice.description is not None and voice.description.startswith(description)
        for style in styles[1:]:  # each other style is a voice too, for Home Assistant
            styled = voices[f"{name} ({style})"]
            assert styled.description is not None and f"style {style}" in styled.description
    aoi = voices["test-voice-0"]
    assert aoi.description == "テスト声 あおい (CC0 1.0 Universal)"
    assert aoi.attribution.name == "wyoming-hayakoe test fixtures (テスト声)"
    assert aoi.attribution.url == AIVMX_URL
    sora = voices["tiny-sbv2-sora"]
    assert sora.attribution.url == "https://github.com/litagin02/Style-Bert-VITS2"
    assert "renamed-0" in voices and "tiny" in voices  # its metadata is fine
    assert not any(n.startswith(("truncated", "bare", "old", "novectors", "older")) for n in voices)


def test_each_bad_file_is_named_once_in_the_log(server: ServerProcess, data_dir: Path) -> None:
    log = server.log()
    expected = {str(data_dir / path): reason for path, reason in BAD_FILES.items()}
    for path, reason in expected.items():
        lines = [line for line in log.splitlines() if re.search(re.escape(path) + "[ :/]", line)]
        assert len(lines) == 1, (path, lines)
        assert reason in lines[0] and "left out" in lines[0]


@pytest.mark.parametrize(
    ("voice", "speaker", "style"),
    [
        ("test-voice-0 (喜び)", None, "喜び"),
        ("test-voice-1", "怒り", "怒り"),
        ("tiny-sbv2-sora", None, "Neutral"),
        ("tiny-sbv2-aoi (Angry)", None, "Angry"),
    ],
)
async def test_synthesize_speaks_like_the_engine(
    server: ServerProcess, data_dir: Path, voice: str, speaker: str | None, style: str
) -> None:
    async with server.client() as client:
        response = await synthesize(client, TEXT, voice=voice, speaker=speaker)
    assert not response.errors, response.errors
    assert [s.rate for s in response.starts] == [44100]
    got = np.frombuffer(response.words, dtype=np.int16)
    want = oracle(data_dir, voice.split(" (")[0], TEXT, style)
    assert got.shape == want.shape
    # The server's models are split and optimized for this machine, the oracle's are not.
    assert np.abs(got.astype(np.int32) - want).max() <= 2


@pytest.mark.parametrize("voice", ["test-voice-1", "tiny-sbv2-aoi"])
async def test_streamed_text_is_spoken(server: ServerProcess, voice: str) -> None:
    sentences = ["最初の文です。", "二番目の文ですね！", "最後です。"]
    async with server.client() as client:
        await client.write_event(SynthesizeStart(voice=SynthesizeVoice(name=voice)).event())
        for sentence in sentences:
            await client.write_event(SynthesizeChunk(text=sentence).event())
        await client.write_event(SynthesizeStop().event())
        response = await read_until(client, lambda e: e.type in ("synthesize-stopped", "error"))
    assert not response.errors, response.errors
    assert response.types[0] == "audio-start" and response.types[-2:] == [
        "audio-stop",
        "synthesize-stopped",
    ]
    assert len(response.pcm) > 44100  # three sentences, with pauses between them


async def test_a_renamed_input_is_an_error_and_the_server_keeps_serving(
    server: ServerProcess, data_dir: Path
) -> None:
    async with server.client() as client:
        failed = await synthesize(client, TEXT, voice="renamed-0")
        (error,) = failed.errors
        assert str(data_dir / "renamed.aivmx") in error.text
        assert "missing inputs ['sid']" in error.text
    async with server.client() as client:  # an error ends its connection; others go on
        spoken = await synthesize(client, TEXT, voice="test-voice-0")
    assert not spoken.errors and len(spoken.pcm) > 0
    assert "missing inputs ['sid']" in server.log()
