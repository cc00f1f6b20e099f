"""A short soak; script/soak runs the long one and writes RELIABILITY.md.

120 requests of mixed texts and styles, a quarter of them streamed, over 6 connections at
once: every answer is well-formed audio, memory does not creep up once the server is warm,
and every connection's file descriptor is closed again.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from reliability_utils import assert_clean_log

from tools.server_process import TINY_VOICE_DIR, ServerProcess, start_server
from tools.soak_requests import SHORT_TEXTS, request_mix, run_soak

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not TINY_VOICE_DIR.is_dir(), reason="tests/fixtures/tiny-voice is missing"),
]

REQUESTS = 120
CONNECTIONS = 6
CHECKPOINT = 40  # every text and style was asked for by then: the server is warm
# No audio cache: every request is synthesized. No noise: the same request always makes the
# same amount of audio, so once every request was seen, ONNX Runtime needs no bigger buffers
# and any growth of memory is a leak (with noise, a rare longer answer grows them once more).
ARGS = ("--threads", "1", "--audio-cache-mb", "0", "--tempo-dynamics-scale", "0",
        "--noise-scale", "0", "--noise-scale-w", "0")  # fmt: skip


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    with start_server(tmp_path_factory.mktemp("soak"), *ARGS) as proc:
        yield proc


async def test_short_soak(server: ServerProcess) -> None:
    result = await run_soak(server, request_mix(REQUESTS, SHORT_TEXTS), CONNECTIONS, CHECKPOINT)
    assert result.failures == []
    assert len(result.latencies) == REQUESTS
    assert abs(result.rss_change) < 0.05, (
        f"RSS {result.rss_at_checkpoint_mb:.1f} MB after {CHECKPOINT} requests, "
        f"{result.rss_end_mb:.1f} MB after {REQUESTS}: samples {result.rss_samples}"
    )
    assert result.fds_during == result.fds_before + CONNECTIONS
    assert result.fds_after == result.fds_before
    assert_clean_log(server)
