"""The Style-Bert-VITS2 symbol table, as every SBV2 model (JP-Extra included) was trained with.

The synthesizer's ``x`` input holds indices into :data:`SYMBOLS`. The table is the padding
symbol, the sorted union of the Chinese, Japanese and English phoneme sets, then the
punctuation marks and the two special symbols. Only the Japanese part is ever produced here,
but the other sets must stay: they fix the index of every Japanese phoneme.
"""

from __future__ import annotations

PAD = "_"

PUNCTUATIONS: tuple[str, ...] = ("!", "?", "…", ",", ".", "'", "-")
"""The marks the normalizer keeps (``…`` is written as ``...`` before it gets here)."""

_SPECIAL = ("SP", "UNK")


def _names(text: str) -> tuple[str, ...]:
    return tuple(text.split())


_ZH_PHONEMES = _names(
    "E En a ai an ang ao b c ch d e ei en eng er f g h i i0 ia ian iang iao ie in ing iong ir "
    "iu j k l m n o ong ou p q r s sh t u ua uai uan uang ui un uo v van ve vn w x y z zh AA EE OO"
)

JP_PHONEMES = _names(
    "N a a: b by ch d dy e e: f g gy h hy i i: j k ky m my n ny o o: p py q r ry s sh t ts "
    "ty u u: w y z zy"
)

_EN_PHONEMES = _names(
    "aa ae ah ao aw ay b ch d dh eh er ey f g hh ih iy jh k l m n ng ow oy p r s sh t th uh "
    "uw V w y z zh"
)

SYMBOLS: tuple[str, ...] = (
    PAD,
    *sorted(set(_ZH_PHONEMES) | set(JP_PHONEMES) | set(_EN_PHONEMES)),
    *PUNCTUATIONS,
    *_SPECIAL,
)

SYMBOL_TO_ID: dict[str, int] = {symbol: index for index, symbol in enumerate(SYMBOLS)}

NUM_ZH_TONES = 6
NUM_JP_TONES = 2
JP_TONE_OFFSET = NUM_ZH_TONES
"""Japanese tones (0 low, 1 high) are stored after the six Chinese tones."""

JP_LANGUAGE_ID = 1
"""Language ids: ZH 0, JP 1, EN 2."""
