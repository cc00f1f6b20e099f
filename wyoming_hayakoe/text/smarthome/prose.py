"""What a conversation agent writes beyond announcements: arithmetic, comparisons, Latin
abbreviations and e-mail addresses, read as Japanese says them.

- ``3×4＝12`` 三かける四は十二, ``12÷3`` 十二わる三, ``3+4`` 三たす四, ``5−2`` 五ひく二 (the minus
  sign, between numbers: a hyphen there is a range or a telephone number);
- ``x≤10`` xは十以下, ``a≥b`` aはb以上, ``a≠b`` aはbと等しくない; ``a=b`` between two terms
  (numbers, or a letter and a number) aはb;
- ``e.g.`` 例えば, ``i.e.`` つまり, ``etc.`` など, ``vs.`` 対, ``approx.`` 約 (OpenJTalk spelled
  them: イー.ジー., ブイエス.);
- an e-mail address: メールアドレス, a word for what it is (read character by character it
  says nothing a listener can use; a link is リンク in markdown.py).

All on NFKC text (``＝`` is ``=`` by then); the operators keep their numbers for the rules
after (numbers.py reads them).
"""

from __future__ import annotations

import re

from .numbers import NUMBER
from .trace import Rule, substitute

EMAIL_WORD = "メールアドレス"

_TERM = rf"(?:{NUMBER}|(?<![A-Za-z°])[A-Za-z](?![A-Za-z]))"
"""One side of an operation: a number or a letter standing alone (x, a; not the C of °C)."""
_OPERATORS = {"×": "かける", "÷": "わる", "+": "たす", "−": "ひく"}
_OPERATION = re.compile(
    rf"(?<=[0-9]|(?<![A-Za-z°])[A-Za-z])\s*([×÷+−])\s*(?![0-9]{{2}}:[0-9]{{2}})(?={_TERM})"
)
"""Not a time zone's offset (+09:00)."""
_COMPARISON = re.compile(rf"({_TERM})\s*([≤≦≥≧≠=])\s*({_TERM})")
_COMPARED = {
    "≤": "は{}以下", "≦": "は{}以下", "≥": "は{}以上", "≧": "は{}以上",
    "≠": "は{}と等しくない", "=": "は{}",
}  # fmt: skip
_ABBREVIATIONS = {"e.g.": "例えば", "i.e.": "つまり", "etc.": "など", "vs.": "対",
                  "vs": "対", "approx.": "約"}  # fmt: skip
_ABBREVIATION = re.compile(
    r"(?<![A-Za-z.])("
    + "|".join(re.escape(a) for a in sorted(_ABBREVIATIONS, key=len, reverse=True))
    + r")(?![A-Za-z])",
    re.IGNORECASE,
)
_EMAIL = re.compile(r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")


def read_prose(text: str) -> str:
    """Apply every rule of this module."""
    text = substitute(_EMAIL, EMAIL_WORD, text, Rule("e-mail address"))
    text = substitute(_ABBREVIATION, _abbreviation, text, lambda m: Rule("abbreviation", m[1]))
    text = substitute(_COMPARISON, _comparison, text, lambda m: Rule("comparison", m[2]))
    return substitute(_OPERATION, _operation, text, lambda m: Rule("arithmetic", m[1]))


def _abbreviation(match: re.Match[str]) -> str:
    return _ABBREVIATIONS[match.group(1).lower()]


def _comparison(match: re.Match[str]) -> str:
    left, sign, right = match.groups()
    return left + _COMPARED[sign].format(right)


def _operation(match: re.Match[str]) -> str:
    return _OPERATORS[match.group(1)]
