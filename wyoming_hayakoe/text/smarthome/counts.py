"""A number before a counter, where OpenJTalk misreads the kanji numeral the normalizer writes.

The reference normalizer writes ``6種`` as 六種, which OpenJTalk takes for one old word,
ムクサ; pyopenjtalk-plus reads the digits ロクシュ, and people say that. And it reads 七 before
人 シチ (七人 シチニン, 六十七人 ロクジューシチニン) where NHK's usage says ナナ. Neither is a
list of counters: each case is found by asking OpenJTalk itself, once per number and what
follows, and only then rewritten:

- *absorbed*: the numeral and the counter after it come out as one word whose reading does
  not begin as the numeral does (六種 ムクサ): the digits' own reading goes in its place
  (ロクシュ), if that one does begin as the numeral does;
- *seven*: a 7 read シチ before a counter (a suffix), but for the times and months NHK's usage
  reads シチ (七時, 七月): ナナ, the counter as OpenJTalk read it after (ナナニン).
"""

from __future__ import annotations

import functools
import re

from .. import jtalk
from .numbers import integer_words
from .trace import Rule, substitute

_COUNT = re.compile(r"(?<![0-9A-Za-z.,_/:\-])([0-9]{1,4})(?![0-9.,])([\u4e00-\u9fff]{1,3})")
"""A plain number and the kanji after it (a counter and what binds to it)."""
_SEVEN_KEPT = ("時", "月")
"""Counters NHK's usage reads with シチ: 七時, 七月."""
_SUFFIX = "接尾"


def read_counts(text: str) -> str:
    return substitute(_COUNT, _count, text, _rule)


def _count(match: re.Match[str]) -> str:
    digits, after = match.groups()
    found = _reading(digits, after)
    return digits + after if found is None else found[0]


def _rule(match: re.Match[str]) -> Rule:
    found = _reading(*match.groups())
    return Rule("count", found[1] if found else "")


@functools.lru_cache(maxsize=1024)
def _reading(digits: str, after: str) -> tuple[str, str] | None:
    """What to write for ``digits`` and the kanji ``after`` them, and the words it corrects;
    None to leave them."""
    numeral = integer_words(int(digits))
    features = jtalk.run_frontend(numeral + after)
    first = _pron(jtalk.run_frontend(numeral))[:1]
    covered, index = 0, 0
    while index < len(features) and covered < len(numeral):
        covered += len(str(features[index]["string"]))
        index += 1
    if covered > len(numeral):  # the last word runs into the counter: 六種 ムクサ
        kanji = after[: covered - len(numeral)]
        spoken = _pron(jtalk.run_frontend(digits + kanji))
        if first and not _pron(features[:index]).startswith(first) and spoken.startswith(first):
            return spoken + after[len(kanji) :], numeral + kanji
        return None
    if index < len(features) and numeral.endswith("七"):
        seven, counter = features[index - 1], features[index]
        word = str(counter["string"])
        if (
            _pron([seven]).startswith("シチ")
            and counter["pos_group1"] == _SUFFIX
            and word not in _SEVEN_KEPT
            and after.startswith(word)
        ):
            return numeral[:-1] + "ナナ" + _pron([counter]) + after[len(word) :], "七" + word
    return None


def _pron(features: list[jtalk.Feature]) -> str:
    return "".join(str(f["pron"]) for f in features).replace("’", "")
