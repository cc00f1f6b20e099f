"""The benchmark's model of a client that plays chunks as they arrive (tools/benchmark)."""

from __future__ import annotations

import pytest

from tools.benchmark.listening import listen


def test_chunks_that_arrive_in_time_play_without_a_pause() -> None:
    heard = listen([(1.0, 0.5), (1.2, 1.0), (2.0, 0.25)])
    assert heard.end_s == pytest.approx(2.75)  # 1.0 + 0.5 + 1.0 + 0.25
    assert heard.longest_silence_s == 0.0


def test_a_late_chunk_makes_the_listener_wait() -> None:
    heard = listen([(1.0, 0.5), (3.0, 0.5), (3.2, 0.1), (6.0, 1.0)])
    assert heard.longest_silence_s == pytest.approx(2.4)  # 3.6 until 6.0
    assert heard.end_s == pytest.approx(7.0)


def test_nothing_heard() -> None:
    assert listen([]).end_s == 0.0
