"""What a listener hears when the machine is slower than speech, on the fake clock
of machine_model.py: the wait spent once, before the first sound, close to what the machine
needs, and never between the words of a sentence."""

from __future__ import annotations

import pytest
from decoder_model import FRAME_S
from machine_model import PAUSE_S, Heard, Request, play

THREE = [250, 300, 320]
"""A three-sentence text: 2.9, 3.5 and 3.7 s of audio."""
FRONT_END_S = 0.3
"""A sentence's front-end, BERT and text encoder on a slow board."""


def _alone(sentences: list[int], speed: float) -> Heard:
    (heard,) = play([Request(0.0, sentences, front_end=FRONT_END_S)], speed=speed)
    return heard


@pytest.mark.parametrize("speed", [0.45, 0.6, 0.8, 1.0])
def test_a_text_below_real_time_grows_no_pause_by_more_than_half_a_second(speed: float) -> None:
    heard = _alone(THREE, speed)
    assert len(heard.stretches) == 2
    assert max(heard.stretches) <= 0.5
    assert heard.longest_silence == 0.0, "no wait inside a sentence"


@pytest.mark.parametrize("speed", [0.45, 0.6, 0.8])
def test_a_long_sentence_starts_soon_after_what_the_machine_needs(speed: float) -> None:
    """8.1 s of audio: a start any sooner than the decoding less the audio would run dry."""
    frames = 700
    heard = _alone([frames], speed)
    need = heard.finished - frames * FRAME_S
    assert heard.first_sound is not None
    assert need <= heard.first_sound <= need + 1.0
    assert heard.longest_silence == 0.0


@pytest.mark.parametrize("speed", [0.45, 0.8])
def test_held_sound_goes_out_where_the_rest_follows_not_at_the_end_of_a_larger_window(
    speed: float,
) -> None:
    """4.8 s of audio: held back in windows of up to 128 frames (3.3 s of decoding at 0.45x),
    it goes out once the rest can follow, the window before ending there."""
    frames = 410
    heard = _alone([frames], speed)
    need = heard.finished - frames * FRAME_S
    assert heard.first_sound is not None
    assert need <= heard.first_sound <= need + 0.6
    assert heard.longest_silence == 0.0


def test_the_held_back_text_starts_no_later_than_its_sentences_need() -> None:
    """Held for the whole text, it still starts before the machine has made all of it."""
    heard = _alone(THREE, 0.45)
    audio = sum(THREE) * FRAME_S + PAUSE_S * 2
    assert heard.first_sound is not None
    assert heard.first_sound < heard.finished - audio + 2.5


def test_the_next_sentence_is_prepared_while_the_one_before_plays() -> None:
    """Faster than speech, each later sentence's front-end runs while the client still has
    the sentences before it to play, and the pauses come out as restored."""
    heard = _alone(THREE, 2.0)
    _first, *later = heard.fronts
    assert all(still_to_play > FRONT_END_S for _when, still_to_play in later)
    assert heard.stretches == [0.0, 0.0]
