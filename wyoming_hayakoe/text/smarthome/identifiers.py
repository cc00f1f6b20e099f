"""Numbers that name rather than count, read digit by digit, and an earthquake's magnitude.

The reference normalizer turns every number into words of quantity: 03-1234-5678 became
サン、センニヒャク…, 〒100-0001 ヒャク、イチ. People read these as their digits, and so does
OpenJTalk's own analysis of the digits (pyopenjtalk-plus). Before any other rule (a hyphen is a
range there, a slash a date), in every form people write them: full-width digits (NFKC makes
them ASCII), and between the groups a hyphen, the long-vowel mark ー, a full-width hyphen or a
dash, as Japanese text writes 486ー2435:

- telephone numbers: a leading 0 and two hyphens (03-1234-5678, 0120-123-456, 090-1234-5678),
  groups of 2-4, 3 and 4 digits (212-836-1725: a date's groups end in two) or a free-dial
  0120/0800 number; groups joined by ー or a dash, which no range is written
  with (212ー836ー1725, 486ー2435); and the digits after 市外局番 or 局番; each group's digits
  with a pause between the groups;
- postal codes after 〒 (NNN-NNNN): 〒 said 郵便番号 unless 郵便番号 was just written, the
  hyphen said の as people say it;
- M before a magnitude in a sentence about an earthquake (地震, 震源, 震度, 余震, 津波): マグニ
  チュード (M6.3 was エムロクテンサン; elsewhere M6 may be a screw).

A room number before 号室 is left a quantity: 360号室 サンビャクロクジューゴーシツ, as JSUT's
speaker read two of its three (tests/data/jsut; read digit by digit, they were farther from the
gold than OpenJTalk's own reading).

Digits are read as on the telephone: ゼロ イチ ニー サン ヨン ゴー ロク ナナ ハチ キュー.
"""

from __future__ import annotations

import re

from .trace import Rule, substitute

DIGIT_READINGS = ("ゼロ", "イチ", "ニー", "サン", "ヨン", "ゴー", "ロク", "ナナ", "ハチ", "キュー")
_DASHES = "ー－‐‑‒–—―"
"""What Japanese text joins a telephone number's groups with besides a hyphen."""
_GROUPED = re.compile(
    r"(?<![0-9A-Za-z.,\-])(0[0-9]{1,4}-[0-9]{1,4}-[0-9]{3,4}|[1-9][0-9]{1,3}-[0-9]{3}-[0-9]{4})"
    r"(?![0-9\-])"
)
_DASHED = re.compile(
    rf"(?<![0-9A-Za-z.,\-{_DASHES}])([0-9]{{2,5}}(?:[{_DASHES}][0-9]{{2,5}}){{1,2}})"
    rf"(?![0-9\-{_DASHES}])"
)
_PHONE_DIGITS = 6
_AREA_CODE = re.compile(r"(?<=局番)([はがの：:\s]*)([0-9]{2,5})(?![0-9])")
_FREE_DIAL = re.compile(r"(?<![0-9A-Za-z.,\-])(0(?:120|800)-?[0-9]{3}-?[0-9]{3,4})(?![0-9\-])")
_POSTAL = re.compile(r"(郵便番号[はがをの:：\s]*)?〒\s?([0-9]{3})-?([0-9]{4})(?![0-9])")
_MAGNITUDE = re.compile(r"(?<![A-Za-z])M\s?(?=[0-9]+(?:\.[0-9]+)?(?![0-9A-Za-z]))")
_EARTHQUAKE = re.compile(r"地震|震源|震度|余震|津波")
_SENTENCE_ENDS = "。！？!?\n"


def digits(number: str) -> str:
    """``number``'s digits as on the telephone, other characters dropped."""
    return "".join(DIGIT_READINGS[int(d)] for d in number if d.isdigit())


def read_identifiers(text: str) -> str:
    text = substitute(_FREE_DIAL, _groups, text, Rule("telephone number"))
    text = substitute(_GROUPED, _groups, text, Rule("telephone number"))
    text = substitute(_DASHED, _dashed, text, Rule("telephone number"))
    text = substitute(_AREA_CODE, _area_code, text, Rule("telephone number"))
    text = substitute(_POSTAL, _postal, text, Rule("postal code"))
    if "M" in text and _EARTHQUAKE.search(text):
        text = substitute(_MAGNITUDE, _magnitude, text, Rule("magnitude"))
    return text


def _groups(match: re.Match[str]) -> str:
    return "、".join(digits(group) for group in re.split(f"[-{_DASHES}]", match.group(1)))


def _dashed(match: re.Match[str]) -> str:
    """Groups joined by dashes, as a telephone number has at least six digits (10ー20 is not
    one)."""
    if sum(c.isdigit() for c in match.group(1)) < _PHONE_DIGITS:
        return match.group(1)
    return _groups(match)


def _area_code(match: re.Match[str]) -> str:
    return match.group(1) + digits(match.group(2))


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
