"""A voice's fast decoder: the examples it is made from, and the swap once it is chosen.

The examples are latents the voice's own front makes of announcements a home hears, with the
settings requests use by default (noise included: the decoder sees such latents), for the
voice's speaker. The calibration sentences set the int8 ranges and choose the groups; the
check sentences, which neither saw, judge the result (compiling/decoder_choice.py).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..compiling.compiled import DecoderChoice, VoiceDecoder, fast_decoder
from ..inference.params import SynthesisParams
from ..inference.synthesizer import front_outputs, synthesizer_inputs
from ..runtime.sessions import RuntimeSettings
from ..text.frontend import Phonemes
from .voice import Voice

_LOGGER = logging.getLogger(__name__)

CALIBRATION_SENTENCES = (
    "おはようございます。今日の最高気温は二十三度の予報です。",
    "玄関の鍵が開いたままになっています。",
    "洗濯が終わりました。",
    "リビングの照明を消しました。",
    "午後から雨が降る見込みです、傘をお持ちください。",
    "お風呂が沸きました！",
    "寝室の湿度が六十パーセントを超えています。",
    "宅配便が届いたようです。",
    "次の予定は十五時からの打ち合わせです。",
    "エアコンを冷房二十六度でつけました。",
    "窓が開いています、戸締まりを確認してください。",
    "おかえりなさい、今日もお疲れさまでした。",
    "ゴミ出しは明日の朝です。",
    "冷蔵庫のドアが開いています。",
    "掃除機の充電が完了しました。",
    "まもなく日の入りです、カーテンを閉めますか？",
)
CHECK_SENTENCES = (
    "こんにちは。今日は良い天気ですね、お出かけにぴったりです。",
    "ガレージで動きを検知しました。",
    "電気代が安い時間帯になりました、食洗機を動かしましょう。",
    "明日の朝は冷え込みます、暖かくしてお休みください。",
    "子供部屋の温度が下がっています。",
    "おやすみなさい、すべての照明を消しました。",
    "郵便受けに何か届いています！",
    "雪の予報です、車の運転に気をつけてください。",
)

Features = Callable[[Phonemes], np.ndarray]
Prepare = Callable[[str], Sequence[Phonemes]]


def choose_decoder(
    voice: Voice,
    mode: str,
    settings: RuntimeSettings,
    prepare: Prepare,
    features: Features,
    calibration_key: str,
    keep_float: tuple[str, ...] | None = None,
) -> DecoderChoice | None:
    """Serve ``voice`` with its fast decoder where ``mode`` chooses it (made first if
    needed); the choice, or None for a voice served whole (nothing to choose)."""
    if voice.decoder is None or voice.compiled is None:
        return None
    reference = voice.reference_decoder or voice.decoder
    source = VoiceDecoder(
        voice.name,
        voice.model_path,
        voice.compiled,
        reference,
        voice.config.decoder_shape,
        voice.sample_rate,
        calibration_key,
    )

    def examples() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        return (
            _examples(voice, CALIBRATION_SENTENCES, prepare, features),
            _examples(voice, CHECK_SENTENCES, prepare, features),
        )

    fast, choice = fast_decoder(source, mode, settings, examples, keep_float)
    voice.reference_decoder = reference
    voice.decoder = fast or reference
    voice.decoder_choice = choice
    return choice


def _examples(
    voice: Voice, sentences: Sequence[str], prepare: Prepare, features: Features
) -> list[dict[str, Any]]:
    decoder = voice.reference_decoder or voice.decoder
    if decoder is None:
        return []
    names = (decoder.latent_name, decoder.condition_name)
    params = dataclasses.replace(SynthesisParams(), speaker_id=voice.speaker_id)
    vector = voice.style_vector(voice.styles[0], params.style_weight)
    made = []
    for text in sentences:
        for phonemes in prepare(text):
            if not phonemes.has_speech:
                continue
            values = synthesizer_inputs(phonemes, features(phonemes), vector, params)
            latent, condition = front_outputs(voice.synthesizer, voice.inputs, names, values)
            made.append({"latent": latent, "condition": condition})
    return made
