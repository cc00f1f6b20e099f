"""Katakana readings to SBV2 phonemes, one mora at a time.

The mora inventory follows OpenJTalk's katakana-to-phoneme table (as VOICEVOX and SBV2 adapted
it: ``ッ`` is ``q``, ``ン`` is ``N``, no ``デェ``), so the phonemes agree with the ones in
OpenJTalk's full-context labels, which carry the accents.
"""

from __future__ import annotations

LONG_VOWEL_MARK = "ー"

# Each entry: katakana, then its phonemes (consonant and vowel, or the vowel alone).
_MORA_TABLE = """
ア a|イ i|ウ u|エ e|オ o|ン N|ッ q
カ k a|キ k i|ク k u|ケ k e|コ k o|キャ ky a|キュ ky u|キェ ky e|キョ ky o|クヮ kw a
ガ g a|ギ g i|グ g u|ゲ g e|ゴ g o|ギャ gy a|ギュ gy u|ギェ gy e|ギョ gy o|グヮ gw a
サ s a|シ sh i|ス s u|セ s e|ソ s o|スィ s i|シャ sh a|シュ sh u|シェ sh e|ショ sh o
ザ z a|ジ j i|ズ z u|ゼ z e|ゾ z o|ズィ z i|ジャ j a|ジュ j u|ジェ j e|ジョ j o
タ t a|チ ch i|ツ ts u|テ t e|ト t o|ティ t i|トゥ t u|テャ ty a|テュ ty u|テョ ty o
チャ ch a|チュ ch u|チェ ch e|チョ ch o|ツァ ts a|ツィ ts i|ツェ ts e|ツォ ts o
ダ d a|デ d e|ド d o|ディ d i|ドゥ d u|デャ dy a|デュ dy u|デョ dy o
ナ n a|ニ n i|ヌ n u|ネ n e|ノ n o|ニャ ny a|ニュ ny u|ニェ ny e|ニョ ny o
ハ h a|ヒ h i|フ f u|ヘ h e|ホ h o|ヒャ hy a|ヒュ hy u|ヒェ hy e|ヒョ hy o
ファ f a|フィ f i|フェ f e|フォ f o
バ b a|ビ b i|ブ b u|ベ b e|ボ b o|ビャ by a|ビュ by u|ビェ by e|ビョ by o
パ p a|ピ p i|プ p u|ペ p e|ポ p o|ピャ py a|ピュ py u|ピェ py e|ピョ py o
マ m a|ミ m i|ム m u|メ m e|モ m o|ミャ my a|ミュ my u|ミェ my e|ミョ my o
ヤ y a|ユ y u|ヨ y o|イェ y e
ラ r a|リ r i|ル r u|レ r e|ロ r o|リャ ry a|リュ ry u|リェ ry e|リョ ry o
ワ w a|ウィ w i|ウェ w e|ウォ w o
ヴァ v a|ヴィ v i|ヴ v u|ヴェ v e|ヴォ v o|ヴャ by a|ヴュ by u|ヴョ by o
ヲ o|ヰ i|ヱ e|ヂ j i|ヅ z u|ヶ k e|ヮ w a
ァ a|ィ i|ゥ u|ェ e|ォ o|ャ y a|ュ y u|ョ y o
"""

MORA_PHONEMES: dict[str, tuple[str, ...]] = {
    kana: tuple(phonemes)
    for kana, *phonemes in (
        entry.split() for line in _MORA_TABLE.strip().splitlines() for entry in line.split("|")
    )
}

LONGEST_MORA = max(len(kana) for kana in MORA_PHONEMES)


class KanaError(ValueError):
    """A reading holds a character that is neither a known mora nor the long-vowel mark."""


def is_katakana(text: str) -> bool:
    """True when ``text`` is non-empty and wholly in the Katakana block (U+30A0 to U+30FF)."""
    return bool(text) and all("\u30a0" <= char <= "\u30ff" for char in text)


def to_katakana(text: str) -> str:
    """Hiragana to katakana (a reading may be written in either)."""
    return "".join(chr(ord(c) + 0x60) if "ぁ" <= c <= "ゖ" else c for c in text)


def split_morae(reading: str) -> list[str]:
    """A katakana reading cut into morae, longest first; each ``ー`` is a mora of its own."""
    morae: list[str] = []
    pos = 0
    while pos < len(reading):
        if reading[pos] == LONG_VOWEL_MARK:
            morae.append(LONG_VOWEL_MARK)
            pos += 1
            continue
        for size in range(min(LONGEST_MORA, len(reading) - pos), 0, -1):
            if reading[pos : pos + size] in MORA_PHONEMES:
                morae.append(reading[pos : pos + size])
                pos += size
                break
        else:
            raise KanaError(f"no phonemes for {reading[pos]!r} in the reading {reading!r}")
    return morae


def kana_to_phonemes(reading: str) -> list[str]:
    """Phonemes of a katakana reading, longest mora first.

    A long-vowel mark after a mora repeats that mora's last phoneme (its vowel, ``N`` or ``q``).
    Marks before the first mora stay as ``ー``: only the neighbouring word can say what they
    lengthen (see :func:`wyoming_hayakoe.text.g2p`).
    """
    phonemes: list[str] = []
    for mora in split_morae(reading):
        if mora == LONG_VOWEL_MARK:
            phonemes.append(phonemes[-1] if phonemes else LONG_VOWEL_MARK)
        else:
            phonemes.extend(MORA_PHONEMES[mora])
    return phonemes
