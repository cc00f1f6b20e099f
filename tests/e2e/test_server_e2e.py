"""End to end: the server as a subprocess on 127.0.0.1 with the tiny test voice.

One server serves most of this module. It runs with zero noise so that its audio can be
compared with what the engine itself produces for the same text in this process.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Callable, Iterator

import pytest
from e2e_utils import (
    LONG_SENTENCES,
    LONG_TEXT,
    SAMPLES_PER_CHUNK,
    TEXT,
    assert_well_formed,
)
from wyoming.info import Describe, Info
from wyoming.tts import (
    Synthesize,
    SynthesizeChunk,
    SynthesizeStart,
    SynthesizeStop,
    SynthesizeVoice,
)

from tools.engine_audio import pcm_pieces
from tools.server_process import (
    REPO_ROOT,
    TINY_VOICE_DIR,
    TINY_VOICE_ROOT,
    ServerProcess,
    free_port,
    server_env,
    start_server,
    tiny_style_names,
)
from tools.wyoming_requests import (
    Response,
    ends_audio,
    first_event,
    read_until,
    synthesize,
    synthesize_refused,
)
from wyoming_hayakoe import __version__

pytestmark = pytest.mark.skipif(
    not TINY_VOICE_DIR.is_dir(), reason="tests/fixtures/tiny-voice is missing"
)

Oracle = Callable[..., list[bytes]]
QUIET = ("--tempo-dynamics-scale", "0", "--noise-scale", "0", "--noise-scale-w", "0",
         "--threads", "1")  # fmt: skip


@pytest.fixture(scope="module")
def server_and_oracle(
    tmp_path_factory: pytest.TempPathFactory, tiny_voice_root_compiled: None
) -> Iterator[tuple[ServerProcess, Oracle]]:
    proc = start_server(
        tmp_path_factory.mktemp("server"), *QUIET, "--samples-per-chunk", str(SAMPLES_PER_CHUNK)
    )
    try:
        # The engine in this process, with the server's settings: what the audio must be.
        # Loaded while the server starts.
        from wyoming_hayakoe.engine import Engine, SynthesisParams

        engine = Engine(TINY_VOICE_ROOT, threads=1)
        voice = engine.voices.load(TINY_VOICE_DIR, "tiny")

        def sentences(text: str, style: str = "Neutral") -> list[bytes]:
            params = SynthesisParams(style=style, sdp_ratio=0, noise_scale=0, noise_scale_w=0)
            return [s.pcm for s in pcm_pieces(engine, voice, text, params)]

        proc.wait_ready()
        yield proc, sentences
    finally:
        proc.kill()


@pytest.fixture(scope="module")
def server(server_and_oracle: tuple[ServerProcess, object]) -> ServerProcess:
    return server_and_oracle[0]


@pytest.fixture(scope="module")
def oracle(
    server_and_oracle: tuple[ServerProcess, Oracle],
) -> Oracle:
    return server_and_oracle[1]


async def test_describe(server: ServerProcess) -> None:
    async with server.client() as client:
        await client.write_event(Describe().event())
        info = Info.from_event(await first_event(client, "info"))
    (program,) = info.tts
    assert program.name == "hayakoe"
    assert program.version == __version__
    assert program.supports_synthesize_streaming
    assert program.attribution.name and program.attribution.url
    voices = {v.name: v for v in program.voices}
    styles = tiny_style_names()
    tiny = voices.pop("tiny")
    assert tiny.installed
    assert tiny.languages == ["ja"]
    assert [s.name for s in tiny.speakers or []] == styles
    # Every style but the first (the default) is offered as a voice of its own.
    assert sorted(voices) == sorted(f"tiny ({style})" for style in styles[1:])
    assert all(v.installed and v.languages == ["ja"] for v in voices.values())


async def test_synthesize_default_voice(server: ServerProcess, oracle: Oracle) -> None:
    async with server.client() as client:
        response = await synthesize(client, TEXT)
    assert_well_formed(response)
    expected = oracle(TEXT)
    assert len(expected) == 3 and all(expected)  # audio for every sentence
    # it opens with the silence a voice satellite needs to start playing
    assert response.words == b"".join(expected)


async def test_named_voice_style_as_speaker_and_styled_name(
    server: ServerProcess, oracle: Oracle
) -> None:
    style = tiny_style_names()[4]
    async with server.client() as client:
        named = await synthesize(client, TEXT, voice="tiny")
        by_speaker = await synthesize(client, TEXT, voice="tiny", speaker=style)
        by_name = await synthesize(client, TEXT, voice=f"tiny ({style})")
    for response in (named, by_speaker, by_name):
        assert_well_formed(response)
    assert named.words == b"".join(oracle(TEXT))
    styled = b"".join(oracle(TEXT, style))
    assert styled != named.words
    assert by_speaker.words == styled
    assert by_name.words == styled


async def test_unknown_voice_or_style_is_an_error_then_the_connection_ends(
    server: ServerProcess,
) -> None:
    unknown_voice = await synthesize_refused(server, TEXT, voice="no-such-voice")
    unknown_style = await synthesize_refused(server, TEXT, voice="tiny", speaker="NoSuchStyle")
    async with server.client() as client:
        fine = await synthesize(client, TEXT)
    assert unknown_voice.types == ["error"]
    (error,) = unknown_voice.errors
    assert error.code == "unknown-voice" and "no-such-voice" in error.text
    assert unknown_style.types == ["error"]
    (error,) = unknown_style.errors
    assert error.code == "unknown-style" and "NoSuchStyle" in error.text
    assert_well_formed(fine)


async def test_streamed_text_starts_audio_before_the_stream_ends(
    server: ServerProcess, oracle: Oracle
) -> None:
    sentences = ["最初の文です。", "二番目の文ですね！", "そして最後の文です。"]
    text = "".join(sentences)
    async with server.client() as client:
        await client.write_event(SynthesizeStart(voice=SynthesizeVoice(name="tiny")).event())
        head = sentences[0] + sentences[1][:2]  # the first sentence is complete
        for i in range(0, len(head), 3):
            await client.write_event(SynthesizeChunk(text=head[i : i + 3]).event())
        # Audio must come while the client has not even sent the rest of the text.
        response = await read_until(client, lambda e: e.type == "audio-start")
        rest = text[len(head) :]
        for i in range(0, len(rest), 3):
            await client.write_event(SynthesizeChunk(text=rest[i : i + 3]).event())
        # Home Assistant repeats the whole text for servers that cannot stream.
        await client.write_event(Synthesize(text=text).event())
        await client.write_event(SynthesizeStop().event())
        await read_until(client, lambda e: e.type == "synthesize-stopped", response)
        # Nothing else is pending: the next answer is the one to this describe.
        await client.write_event(Describe().event())
        after = await client.read_event()
    assert after is not None and after.type == "info"
    assert response.types[-2:] == ["audio-stop", "synthesize-stopped"]
    assert_well_formed(Response(response.events[:-1]))
    position = 0
    for sentence in sentences:  # each sentence's audio, in order
        (pcm,) = oracle(sentence)
        found = response.pcm.find(pcm, position)
        assert found >= position, f"audio of {sentence} missing"
        position = found + len(pcm)


async def test_describe_is_answered_quickly_during_a_long_synthesis(
    server: ServerProcess,
) -> None:
    async with server.client() as busy, server.client() as other:
        await busy.write_event(Synthesize(text=LONG_TEXT).event())
        response = await read_until(busy, lambda e: e.type == "audio-chunk")
        # Keep reading, so the long synthesis goes on while describe is asked.
        reader = asyncio.create_task(read_until(busy, ends_audio, response))
        delays = []
        for _ in range(5):
            started = time.monotonic()
            await other.write_event(Describe().event())
            await first_event(other, "info", timeout=10)
            delays.append(time.monotonic() - started)
            await asyncio.sleep(0.05)
        # The long text must still be in progress, or the check above proved nothing.
        assert not reader.done()
        await reader
    assert max(delays) < 0.1, delays
    assert_well_formed(response)


async def test_client_hanging_up_frees_the_worker(server: ServerProcess) -> None:
    async with server.client() as client:
        # The first chunk may be a small window of the first sentence: time a whole one.
        started = time.monotonic()
        await synthesize(client, "切断の前の試験です。")
        one_sentence = time.monotonic() - started
    async with server.client() as client:
        # A text no other test sends: the audio cache must not answer it.
        await client.write_event(Synthesize(text="切断の試験です。" + LONG_TEXT).event())
        await first_event(client, "audio-chunk")
    # Hung up after the first sentence: the rest of the long text must not hold up the next
    # request, which would otherwise wait for about LONG_SENTENCES - 1 more sentences.
    async with server.client() as client:
        started = time.monotonic()
        response = await synthesize(client, "はい。")
        next_time = time.monotonic() - started
    assert_well_formed(response)
    assert next_time < one_sentence * LONG_SENTENCES / 2, (next_time, one_sentence)


def test_health_check(server: ServerProcess) -> None:
    def check(uri: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "wyoming_hayakoe.commands.health_check",
             "--uri", uri, "--timeout", "5"],
            cwd=REPO_ROOT, env=server_env(), capture_output=True, text=True, timeout=60,
            check=False,
        )  # fmt: skip

    assert check(server.uri).returncode == 0
    down = check(f"tcp://127.0.0.1:{free_port()}")
    assert down.returncode == 1
    assert "unhealthy" in down.stderr


async def test_several_clients_at_once_all_get_complete_correct_audio(
    server: ServerProcess, oracle: Oracle
) -> None:
    """Four different texts asked at the same moment: each client gets all its audio, well
    formed, as the engine makes it for that text alone."""
    texts = [TEXT, "はい、わかりました。", "明日は雨です。傘を持って行きましょう。", LONG_TEXT]

    async def one(text: str) -> Response:
        async with server.client() as client:
            return await synthesize(client, text)

    responses = await asyncio.gather(*(one(text) for text in texts))
    for text, response in zip(texts, responses, strict=True):
        assert not response.errors
        assert_well_formed(response)
        assert response.words == b"".join(oracle(text)), text


async def test_identical_requests_at_once_get_identical_audio(
    server: ServerProcess, oracle: Oracle
) -> None:
    text = "同じお知らせを、全部の部屋で流します。"

    async def one() -> Response:
        async with server.client() as client:
            return await synthesize(client, text)

    responses = await asyncio.gather(*(one() for _ in range(4)))
    expected = b"".join(oracle(text))
    assert [response.words for response in responses] == [expected] * 4
