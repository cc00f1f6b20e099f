"""What the end-to-end tests expect of the server with the tiny voice: its texts, its sample
rate, and well-formed audio (its styles: tools.server_process.tiny_style_names)."""

from __future__ import annotations

import json

from tools.server_process import TINY_VOICE_DIR
from tools.wyoming_requests import Response

SAMPLES_PER_CHUNK = 512  # the servers of these tests run with --samples-per-chunk this
TEXT = "こんにちは。今日はいい天気ですね！散歩に行きましょう。"
LONG_SENTENCES = 6
LONG_TEXT = "".join(f"これは{i}番目のテストの文です。" for i in range(LONG_SENTENCES))


def sample_rate() -> int:
    config = json.loads((TINY_VOICE_DIR / "config.json").read_text(encoding="utf-8"))
    return int(config["data"]["sampling_rate"])


def assert_well_formed(response: Response) -> None:
    """One audio-start, same-format chunks with running timestamps, one audio-stop last."""
    assert response.types[0] == "audio-start"
    assert response.types[-1] == "audio-stop"
    assert response.types.count("audio-start") == 1
    assert response.types.count("audio-stop") == 1
    start = response.starts[0]
    assert (start.rate, start.width, start.channels) == (sample_rate(), 2, 1)
    samples = 0
    for chunk in response.chunks:
        assert (chunk.rate, chunk.width, chunk.channels) == (start.rate, 2, 1)
        assert 0 < chunk.samples <= SAMPLES_PER_CHUNK
        assert chunk.timestamp == samples * 1000 // start.rate
        samples += chunk.samples
    assert samples > 0
