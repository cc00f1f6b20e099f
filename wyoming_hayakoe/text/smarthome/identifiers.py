"""Numbers that name rather than count, read digit by digit, and an earthquake's magnitude.

The reference normalizer turns every number into words of quantity: 03-1234-5678 became
サン、センニヒャク…, 418号室 ヨンヒャクジューハチゴーシツ, 〒100-0001 ヒャク、イチ. People read
these as their digits, and so does OpenJTalk's own analysis of the digits (pyopenjtalk-plus).
Before any other rule (a hyphen is a range there, a slash a date):

- telephone numbers: a leading 0 and two hyphens (03-1234-5678, 0120-123-456, 090-1234-5678)
  or a free-dial 0120/0800 number; each group's digits with a pause between the groups;
- postal codes after 〒 (NNN-NNNN): 〒 said 郵便番号 unless 郵便番号 was just written, the
  hyphen said の as people say it;
- room numbers of three or four digits before 号室 (418号室 ヨンイチハチゴーシツ);
- M before a magnitude in a sentence about an earthquake (地震, 震源, 震度, 余震, 津波): マグニ
  チュード (M6.3 was エムロクテンサン; elsewhere M6 may be a screw).

Digits are read as on the telephone: ゼロ イチ ニー サン ヨン ゴー ロク ナナ ハチ キュー.
"""

from __future__ import annotations

import re

from .trace import Rule, substitute

DIGIT_READINGS = ("ゼロ", "イチ", "ニー", "サン", "ヨン", "ゴー", "ロク", "ナナ", "ハチ", "キュー")
_GROUPED = re.compile(r"(?<![0-9A-Za-z.,\-])(0[0-9]{1,4}-[0-9]{1,4}-[0-9]{3,4})(?![0-9\-])")
_FREE_DIAL = re.compile(r"(?<![0-9A-Za-z.,\-])(0(?:120|800)-?[0-9]{3}-?[0-9]{3,4})(?![0-9\-])")
_POSTAL = re.compile(r"(郵便番号[はがをの:：\s]*)?〒\s?([0-9]{3})-?([0-9]{4})(?![0-9])")
_ROOM = re.compile(r"(?<![0-9A-Za-z.,])([0-9]{3,4})(?=号室)")
_MAGNITUDE = re.compile(r"(?<![A-Za-z])M\s?(?=[0-9]+(?:\.[0-9]+)?(?![0-9A-Za-z]))")
_EARTHQUAKE = re.compile(r"地震|震源|震度|余震|津波")
_SENTENCE_ENDS = "。！？!?\n"


def digits(number: str) -> str:
    """``number``'s digits as on the telephone, other characters dropped."""
    return "".join(DIGIT_READINGS[int(d)] for d in number if d.isdigit())


def read_identifiers(text: str) -> str:
    text = substitute(_FREE_DIAL, _groups, text, Rule("telephone number"))
    text = substitute(_GROUPED, _groups, text, Rule("telephone number"))
    text = substitute(_POSTAL, _postal, text, Rule("postal code"))
    text = substitute(_ROOM, lambda m: digits(m.group(1)), text, Rule("room number"))
    if "M" in text and _EARTHQUAKE.search(text):
        text = substitute(_MAGNITUDE, _magnitude, text, Rule("magnitude"))
    return text


def _groups(match: re.Match[str]) -> str:
    return "、".join(digits(group) for group in match.group(1).split("-"))


def _postal(match: re.Match[str]) -> str:
    said, first, second = match.groups()
    return f"{said or '郵便番号'}{digits(first)}ノ{digits(second)}"


def _magnitude(match: re.Match[str]) -> str:
    """マグニチュード where the sentence around ``match`` is about an earthquake."""
    text, at = match.string, match.start()
    start = max((text.rfind(end, 0, at) for end in _SENTENCE_ENDS), default=-1) + 1
    ends = [i for i in (text.find(end, at) for end in _SENTENCE_ENDS) if i >= 0]
    sentence = text[start : min(ends, default=len(text))]
    return "マグニチュード" if _EARTHQUAKE.search(sentence) else match.group()
