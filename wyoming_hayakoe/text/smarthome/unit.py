"""One unit's reading and where OpenJTalk needs another spelling of it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Unit:
    """How one unit is read after a number (unit_table.py has every unit's)."""

    reading: str
    prefix: str = ""
    """Said before the number: 時速 (per hour), 華氏 (Fahrenheit), 風力 (Beaufort)."""
    implied_by: tuple[str, ...] = ()
    """Words before the number that already say what the prefix would (風速 for m/s)."""
    ungeminated: str = ""
    """The reading after a number ending in 六, 十 or 百, where OpenJTalk would geminate the
    number before the usual one (ロッガロン, ジュッヘーホーメートル)."""
    after_point: str = ""
    """The reading after a decimal, where OpenJTalk would join the usual one to the last
    digit (二点五日間 ニテンイツカカン) or read it as a name after katakana digits (零点イチゴー年
    ミノル, 円 マドカ)."""
    after_four: str = ""
    """The last 四 of a whole number and the unit together, where OpenJTalk reads them apart
    (三十四日間 サンジューヨンニチカン; 三十よっか間 サンジューヨッカカン)."""
    kana_point: bool = False
    """After a decimal, its last digit in katakana: OpenJTalk reads 零点四時間 ヨジカン, 零点七時間
    シチジカン, 零点九時間 クジカン, 零点四年 ヨネン, 零点四円 ヨエン (counted, not decimal)."""
    after_quote: str = ""
    """The prefix after an opening bracket or quote, which the reference normalizer turns into
    the mark ``'``: OpenJTalk reads '分速 as ブンソク, 'ふん速 as フンソク (分速 elsewhere: its
    accent is the dictionary's, flat)."""
