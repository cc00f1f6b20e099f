"""The benchmark's model of a client that plays chunks as they arrive (tools/benchmark)."""

from __future__ import annotations

import pytest

from tools.benchmark.listening import gapless_start, listen, waits


def test_chunks_that_arrive_in_time_play_without_a_pause() -> None:
    heard = listen([(1.0, 0.5), (1.2, 1.0), (2.0, 0.25)])
    assert heard.end_s == pytest.approx(2.75)  # 1.0 + 0.5 + 1.0 + 0.25
    assert heard.longest_silence_s == 0.0


def test_a_late_chunk_makes_the_listener_wait() -> None:
    heard = listen([(1.0, 0.5), (3.0, 0.5), (3.2, 0.1), (6.0, 1.0)])
    assert heard.longest_silence_s == pytest.approx(2.4)  # 3.6 until 6.0
    assert heard.end_s == pytest.approx(7.0)


def test_the_wait_after_an_opening_silence_is_not_a_silence_but_one_after_sound_is() -> None:
    # 0.1 s of silence at once, the first words 2 s later, then a late chunk
    chunks = [(0.0, 0.1), (2.1, 1.0), (3.6, 0.5)]
    heard = listen(chunks, first_sound=1)
    assert heard.longest_silence_s == pytest.approx(0.5)  # 3.1 until 3.6, not 0.1 until 2.1
    assert heard.end_s == pytest.approx(4.1)
    assert listen(chunks).longest_silence_s == pytest.approx(2.0)


def test_nothing_heard() -> None:
    assert listen([]).end_s == 0.0


def test_a_wait_next_to_silence_is_a_longer_pause_and_one_between_sounds_a_cut() -> None:
    """One second of sound, 0.3 s of silence (a restored pause), one second of sound, in
    chunks of 0.5 s and 0.3 s: the late chunk after the first second waits where silence
    follows, the one in the middle of the second second where sound is on both sides."""
    import numpy as np

    rate = 1000
    noise = np.random.default_rng(0).uniform(-0.5, 0.5, rate)
    audio = np.concatenate([noise, np.zeros(300), noise])
    pcm = (audio * 32767).astype("<i2").tobytes()
    chunks = [(0.0, 0.5), (0.1, 0.5), (2.0, 0.3), (2.1, 0.5), (4.0, 0.5)]
    found = waits(chunks, pcm, rate)
    assert [(w.at_s, round(w.seconds, 3), w.in_a_pause) for w in found] == [
        (1.0, 1.0, True),
        (1.8, 1.2, False),
    ]


def test_the_ideal_schedule_cannot_sound_before_the_first_latent() -> None:
    from tools.benchmark.ours import Sample
    from tools.benchmark.report import _ideal_rows
    from tools.benchmark.results import TextTimings

    fast = Sample(first_s=0.5, total_s=2.0, audio_s=5.0, listening_end_s=5.6, first_latent_s=0.3)
    rows = {row.metric: row for row in _ideal_rows("reply", TextTimings(ours=[fast]))}
    first = rows["first audio vs ideal schedule, reply"]
    assert first.reference == "0.300 s" and first.ratio == "+0.20 s" and first.met == "yes"
    end = rows["listening ends vs ideal schedule, reply"]
    assert end.reference == "5.300 s" and end.ratio == "+0.30 s"
    # Below real time the end of decoding decides; without --debug, the latent counts as 0.
    slow = Sample(first_s=4.0, total_s=8.0, audio_s=5.0, listening_end_s=9.5)
    rows = {row.metric: row for row in _ideal_rows("reply", TextTimings(ours=[slow]))}
    assert rows["first audio vs ideal schedule, reply"].reference == "3.000 s"
    assert rows["listening ends vs ideal schedule, reply"].met == "NO"


def test_a_gapless_start_is_bound_by_what_was_made_after_the_first_sound() -> None:
    # the opening silence, then 3.4 s of words held back and sent together at 8.9 s, then
    # 0.9 s made by 11.1 s and the last 0.4 s by 12.0 s
    chunks = [(0.0, 0.1), (8.9, 2.9), (8.91, 0.5), (11.1, 0.9), (12.0, 0.4)]
    # the chunk of 11.1 s comes 3.4 s into the words: they could have started at 7.7 s
    assert gapless_start(chunks, first_sound=1) == pytest.approx(7.7)
    # a sentence sent whole: only when its last part was made bounds it
    assert gapless_start([(0.0, 0.1), (9.0, 3.0), (9.01, 1.0)], 1) == pytest.approx(6.01)
    # words sent as they are made, faster than they play: from the first one
    assert gapless_start([(1.0, 0.3), (1.2, 0.6), (1.6, 1.0)], 0) == pytest.approx(1.0)
