"""The tests ``script/test-arm64`` runs on an emulated aarch64 (Raspberry Pi 4B) Debian.

There the package comes from its wheel and the dependencies from aarch64 wheels, without
torch, transformers or the reference ``hayakoe``. Run on the host, the same tests check the
same things natively. The cross-architecture comparisons need a reference that the script
first writes on the x86_64 host with this very file:

    python tests/support/arm64_reference.py --write-reference ref.npz
    HAYAKOE_ARM64_REFERENCE=ref.npz pytest -m arm64 tests/project/test_arm64_subset.py

The script runs it from a copy of tests/, tools/ and pyproject.toml (whose pytest
``pythonpath`` finds tests/support) with ``--import-mode=importlib``.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import integer_kernels
import numpy as np
import pytest
from arm64_reference import (
    AUDIO_TOLERANCE,
    FEATURES_RELATIVE_TOLERANCE,
    FRAME_SAMPLES,
    ROUNDING_SPAN_FRAMES,
    SENTENCE,
    SYNTHESIZER_TOLERANCE,
    TINY_ROOT,
    compute,
    synthesize_from,
)
from integer_kernels import ACTIVATIONS, EXACT_DB

import wyoming_hayakoe
from wyoming_hayakoe.engine import Engine
from wyoming_hayakoe.text.frontend import TextFrontend

pytestmark = pytest.mark.arm64

REFERENCE_ENV = "HAYAKOE_ARM64_REFERENCE"
EXPECT_ARCH_ENV = "HAYAKOE_EXPECT_ARCH"
# Emulated start-up (ONNX sessions, calibration) is slow: generous, not a benchmark.
SERVER_TIMEOUT = 600.0
NOT_INSTALLED_THERE = ("torch", "transformers", "hayakoe")


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine(TINY_ROOT, threads=1)


@pytest.fixture(scope="module")
def result(engine: Engine) -> dict[str, np.ndarray]:
    return compute(engine)


@pytest.fixture(scope="module")
def reference() -> dict[str, np.ndarray]:
    path = os.environ.get(REFERENCE_ENV)
    if not path:
        pytest.skip(f"no x86_64 reference (${REFERENCE_ENV}); script/test-arm64 provides one")
    with np.load(path) as data:
        return {key: data[key] for key in data.files}


def _package_env() -> dict[str, str]:
    """Environment for a child Python that imports the same wyoming_hayakoe as this one."""
    env = dict(os.environ)
    env.pop("WYOMING_HAYAKOE_ARGS", None)
    package_parent = str(Path(wyoming_hayakoe.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_parent, env.get("PYTHONPATH")]))
    return env


def test_every_module_imports_without_heavy_dependencies(tmp_path: Path) -> None:
    code = (
        "import pkgutil, importlib, platform, sys, wyoming_hayakoe as p\n"
        "names = [m.name for m in pkgutil.walk_packages(p.__path__, 'wyoming_hayakoe.')]\n"
        "for name in names: importlib.import_module(name)\n"
        f"print(len(names), platform.machine(), p.__file__)\n"
        f"print(' '.join(sorted(n for n in {NOT_INSTALLED_THERE!r} if n in sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=_package_env(),
        timeout=SERVER_TIMEOUT,
    )
    assert done.returncode == 0, done.stderr
    summary, heavy = [*done.stdout.splitlines(), ""][:2]
    count, machine, package_file = summary.split(" ", 2)
    assert int(count) >= 10, f"only {count} modules found in {package_file}"
    assert heavy == "", f"importing wyoming_hayakoe pulled in {heavy}"
    expected = os.environ.get(EXPECT_ARCH_ENV)
    if expected:
        assert machine == expected
        # The installed wheel, not a source tree that happened to be on sys.path.
        assert "site-packages" in package_file, package_file


def test_openjtalk_and_frontend_read_alike() -> None:
    import pyopenjtalk

    # OpenJTalk's own reading of a plain word (its dictionary, not our code).
    expected = "k o N n i ch i w a"
    assert pyopenjtalk.g2p("こんにちは") == expected
    phonemes = TextFrontend().phonemize("こんにちは")
    # add_blank puts a blank before, between and after; the ends are padding.
    spoken = phonemes.phones[1::2][1:-1]
    assert " ".join(spoken) == expected
    assert phonemes.has_speech


def test_tokenizer_ids_are_the_characters(engine: Engine) -> None:
    vocab_lines = (TINY_ROOT / "bert" / "tokenizer" / "vocab.txt").read_text("utf-8").splitlines()
    vocab = {token: index for index, token in enumerate(vocab_lines)}
    text = engine.frontend.phonemize(SENTENCE).bert_text
    ids = engine.frontend.token_ids(text)
    assert ids[0] == vocab["[CLS]"] and ids[-1] == vocab["[SEP]"]
    assert len(ids) == len(text) + 2
    for char, token_id in zip(text, ids[1:-1], strict=True):
        assert token_id == vocab.get(char, vocab["[UNK]"]), char


def test_tiny_voice_speaks(result: dict[str, np.ndarray]) -> None:
    audio = result["audio"]
    assert audio.dtype == np.float32 and audio.ndim == 1
    assert np.isfinite(audio).all()
    assert np.abs(audio).max() > 1e-3, "silence"
    # 512 samples per frame: at least one frame per phoneme of the sentence (with blanks).
    assert len(audio) >= 512 * len(result["phone_ids"]) // 2


@pytest.mark.parametrize("key", ["phone_ids", "tone_ids", "word2ph", "token_ids"])
def test_text_matches_x86_64(
    result: dict[str, np.ndarray], reference: dict[str, np.ndarray], key: str
) -> None:
    assert result[key].tolist() == reference[key].tolist()


def _max_difference(ours: np.ndarray, theirs: np.ndarray, what: str) -> float:
    assert ours.shape == theirs.shape, f"{what}: {ours.shape} here, {theirs.shape} on x86_64"
    worst = float(np.abs(ours.astype(np.float64) - theirs).max())
    # Shown with -rA / on failure: the numbers the README quotes.
    print(f"{what}: max |diff| {worst:.2e} (range {float(np.abs(theirs).max()):.3g})")
    return worst


def test_synthesizer_matches_x86_64(engine: Engine, reference: dict[str, np.ndarray]) -> None:
    ours = synthesize_from(engine, reference["features"])
    assert _max_difference(ours, reference["synthesizer_audio"], "synthesizer") <= (
        SYNTHESIZER_TOLERANCE
    )


def test_bert_features_match_x86_64(
    result: dict[str, np.ndarray], reference: dict[str, np.ndarray]
) -> None:
    theirs = reference["features"]
    worst = _max_difference(result["features"], theirs, "BERT features")
    assert worst <= FEATURES_RELATIVE_TOLERANCE * float(np.abs(theirs).max())


def _difference_beside_one_frame(longer: np.ndarray, shorter: np.ndarray) -> float:
    """The largest difference of two audios one latent frame apart in length, at the best
    place for the frame only one has, leaving out ROUNDING_SPAN_FRAMES on each side of it."""
    frames = len(shorter) // FRAME_SAMPLES
    long = longer[: (frames + 1) * FRAME_SAMPLES].reshape(-1, FRAME_SAMPLES).astype(np.float64)
    short = shorter[: frames * FRAME_SAMPLES].reshape(-1, FRAME_SAMPLES)
    before = np.abs(long[:-1] - short).max(axis=1)  # frame k against frame k
    after = np.abs(long[1:] - short).max(axis=1)  # frame k + 1 against frame k
    worst_up_to = np.concatenate([[0.0], np.maximum.accumulate(before)])
    worst_from = np.concatenate([np.maximum.accumulate(after[::-1])[::-1], [0.0]])
    span = ROUNDING_SPAN_FRAMES
    return min(
        max(worst_up_to[max(0, extra - span)], worst_from[min(frames, extra + span)])
        for extra in range(frames + 1)
    )


def test_audio_matches_x86_64(
    result: dict[str, np.ndarray], reference: dict[str, np.ndarray]
) -> None:
    """The same audio, or where the Q8 BERT's cross-CPU difference tipped a duration's
    rounding, one frame more or less and the same audio beside it."""
    ours, theirs = result["audio"], reference["audio"]
    if len(ours) == len(theirs):
        assert _max_difference(ours, theirs, "audio") <= AUDIO_TOLERANCE
        return
    longer, shorter = (ours, theirs) if len(ours) > len(theirs) else (theirs, ours)
    assert len(longer) - len(shorter) == FRAME_SAMPLES, (
        f"audio: {len(ours)} samples here, {len(theirs)} on x86_64: more than one frame apart"
    )
    worst = _difference_beside_one_frame(longer, shorter)
    print(f"audio: one frame apart, max |diff| beside it {worst:.2e}")
    assert worst <= AUDIO_TOLERANCE


# ----- the real server, over TCP on 127.0.0.1 -----


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module", autouse=True)
def server_process(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[subprocess.Popen[bytes], int, Path]]:
    """The server, started before the first test of this file.

    Its start-up (loading and calibrating the voice: minutes under emulation) then overlaps
    the in-process tests on the second core instead of adding to them.
    """
    port = _free_port()
    log_path = tmp_path_factory.mktemp("server") / "server.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "wyoming_hayakoe", "--uri", f"tcp://127.0.0.1:{port}",
             "--data-dir", str(TINY_ROOT), "--voice", "tiny", "--local-files-only",
             "--threads", "1", "--cache-dir", str(log_path.parent / "cache")],
            cwd=log_path.parent,
            env=_package_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )  # fmt: skip
    try:
        yield process, port, log_path
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="module")
def server(server_process: tuple[subprocess.Popen[bytes], int, Path]) -> tuple[int, Path]:
    process, port, log_path = server_process
    deadline = time.monotonic() + SERVER_TIMEOUT
    while "Ready" not in log_path.read_text("utf-8", "replace"):
        assert process.poll() is None, log_path.read_text("utf-8", "replace")
        assert time.monotonic() < deadline, "server not ready in time"
        time.sleep(0.2)
    return port, log_path


async def test_wyoming_describe_and_synthesize(server: tuple[int, Path]) -> None:
    from wyoming.audio import AudioChunk, AudioStart, AudioStop
    from wyoming.client import AsyncTcpClient
    from wyoming.info import Describe, Info
    from wyoming.tts import Synthesize, SynthesizeVoice

    port, log_path = server
    async with AsyncTcpClient("127.0.0.1", port) as client:
        await client.write_event(Describe().event())
        event = await asyncio.wait_for(client.read_event(), SERVER_TIMEOUT)
        assert event is not None and Info.is_type(event.type)
        voices = [v.name for program in Info.from_event(event).tts for v in program.voices]
        assert "tiny" in voices

        await client.write_event(
            Synthesize(text="こんにちは。", voice=SynthesizeVoice(name="tiny")).event()
        )
        start: AudioStart | None = None
        pcm = b""
        while True:
            event = await asyncio.wait_for(client.read_event(), SERVER_TIMEOUT)
            assert event is not None, log_path.read_text("utf-8", "replace")
            assert event.type != "error", event.data
            if AudioStart.is_type(event.type):
                start = AudioStart.from_event(event)
            elif AudioChunk.is_type(event.type):
                pcm += AudioChunk.from_event(event).audio
            elif AudioStop.is_type(event.type):
                break
    assert start is not None
    assert (start.rate, start.width, start.channels) == (44100, 2, 1)
    samples = np.frombuffer(pcm, dtype="<i2")
    assert len(samples) > 0.1 * start.rate and np.abs(samples).max() > 100


@pytest.mark.parametrize("activations", ACTIVATIONS)
def test_the_fast_decoders_integer_kernels_sum_as_the_hosts_exact_path(
    reference: dict[str, np.ndarray], activations: str
) -> None:
    """The same mixed graph, built on the host on its exact integer path (8-bit weights with
    VNNI, 7-bit without): its int8 convolutions become integer kernels here too, and their
    audio is the host's, within what rounding the output steps in fixed point instead of
    float allows (integer_kernels.EXACT_DB)."""
    audio, kernels = integer_kernels.run(reference, activations)
    # aarch64 makes every int8 conv an integer kernel; x86_64 leaves some in float with int8
    # activations (measured: 74 and 62 of the tiny voice's 74 with int8, 74 and 74 with uint8)
    assert kernels >= int(reference[f"fast_kernels_{activations}"]) > 0
    hosts = reference[f"fast_audio_{activations}"]
    assert audio.shape == hosts.shape
    relative, decibels = integer_kernels.distance(audio, hosts)
    _, from_graph = integer_kernels.distance(audio, reference[f"fast_exact_{activations}"])
    _, host_from_graph = integer_kernels.distance(hosts, reference[f"fast_exact_{activations}"])
    print(f"{reference[f'fast_path_{activations}']}: {kernels} integer convolutions; "
          f"{relative:.1e} of the peak, {decibels:.2f} dB from x86_64's; from the graph's "
          f"arithmetic {from_graph:.2f} dB (x86_64's: {host_from_graph:.2f} dB)")  # fmt: skip
    assert decibels <= EXACT_DB
