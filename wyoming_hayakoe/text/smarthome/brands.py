"""Brands and products of Japanese smart homes, read the way their makers say them in Japan.

``Nature Remo`` is ネイチャーリモ, not what its letters give (ネーチャーレモー); ``Daikin`` is
ダイキン, ``I-O DATA`` アイオーデータ. The list is ``text/data/brands.tsv`` (see the README
there): each name with its maker's Japanese name as written, the reading said as one word, and
where the spelling comes from.

A name is matched whole, in any case, its words joined by a space, a hyphen or nothing
(``Nature Remo``, ``NatureRemo``, ``nature-remo``), the longest first: a product of several
words is read as its maker says it before any of its words is (``Fire TV Stick``
ファイヤーティービースティック, not the English rules' ファイアテレビステッキ; ``PlayStation 5``
プレイステーションファイブ, not ゴ). A name that is also an ordinary word
(``Ring``, ``Nest``, ``Echo``, ``Hue``: context ``device`` in the list) is read as the brand only
where the text shows a device: right before の, で, が, を or に (``Ringが反応しました``), or
right after a room (``玄関のRing``, ``リビング Echo``); elsewhere (``Ring the bell``) the English
rules read it as before. A user-dictionary word is left to the user's reading.
"""

from __future__ import annotations

import csv
import functools
import re
from dataclasses import dataclass
from pathlib import Path

from .trace import Rule, substitute

BRANDS_FILE = Path(__file__).resolve().parents[1] / "data" / "brands.tsv"
FIELDS = ("name", "japanese", "reading", "accent", "category", "context", "source", "checked")
CONTEXTS = ("any", "device")
CHECKS = ("stored page", "unchecked")

DEVICE_PARTICLES = ("の", "で", "が", "を", "に")
"""A word right before one of these is a thing in the home (Ringが鳴りました)."""
ROOMS = (
    "リビング", "リビングルーム", "ダイニング", "キッチン", "台所", "寝室", "ベッドルーム", "玄関",
    "書斎", "部屋", "和室", "洋室", "居間", "客間", "浴室", "風呂", "脱衣所", "洗面所", "トイレ",
    "廊下", "階段", "庭", "ガレージ", "車庫", "ベランダ", "バルコニー", "屋外", "階",
)  # fmt: skip
"""Words right after which a name is a device (玄関のRing, 二階のEcho, 子供部屋のHue)."""


class BrandListError(ValueError):
    """The brand list is malformed (it ships with the package: a packaging error)."""


@dataclass(frozen=True)
class Brand:
    name: str
    """As people write it in Home Assistant (Latin letters)."""
    japanese: str
    """The maker's name for it in Japan, as written (katakana, or kanji: 日立)."""
    reading: str
    """Said as one word, in katakana."""
    accent: str
    """For a reading OpenJTalk would cut into pieces, its accent nucleus (as in the user
    dictionary): it goes into the OpenJTalk lexicon (user_dict.install_brand_lexicon); empty
    where OpenJTalk reads the katakana as one word already."""
    category: str
    context: str
    """``any``, or ``device``: an ordinary word too, read as the brand only in a device's
    context."""
    source: str
    """Where the Japanese spelling comes from (a URL)."""
    checked: str
    """``stored page``: the spelling was read in a stored copy of ``source``; ``unchecked``:
    ``source`` is the maker's Japanese site, the spelling written from its Japanese name but
    not read there."""


def load_brands(path: Path = BRANDS_FILE) -> tuple[Brand, ...]:
    """The brands of ``path`` (tab-separated, ``#`` comment lines, a header)."""
    with path.open(encoding="utf-8", newline="") as file:
        lines = [(number, line) for number, line in enumerate(file, 1) if not line.startswith("#")]
    rows = csv.reader([line for _, line in lines], delimiter="\t", quoting=csv.QUOTE_NONE)
    brands: list[Brand] = []
    for (number, _), row in zip(lines, rows, strict=True):
        if tuple(row) == FIELDS:
            continue
        brand = Brand(*row) if len(row) == len(FIELDS) else None
        if brand is None or not _valid(brand):
            raise BrandListError(f"{path} line {number}: expected {', '.join(FIELDS)}: {row}")
        brands.append(brand)
    return tuple(brands)


def _valid(brand: Brand) -> bool:
    filled = all((brand.name, brand.japanese, brand.reading, brand.category, brand.source))
    accent = brand.accent == "" or brand.accent.isdigit()
    return filled and accent and brand.context in CONTEXTS and brand.checked in CHECKS


@functools.cache
def all_brands() -> tuple[Brand, ...]:
    """The brands of the list shipped with the package, read once."""
    return load_brands()


def lexicon() -> tuple[Brand, ...]:
    """The brands whose reading goes into the OpenJTalk lexicon (those with an accent)."""
    return tuple(brand for brand in all_brands() if brand.accent)


def brand_key(name: str) -> str:
    """What two spellings of one name share (case, spaces, hyphens, apostrophes aside)."""
    return re.sub(r"[\s\-'’]", "", name).casefold()


def _name_pattern(name: str) -> str:
    words = re.split(r"[\s\-]+", name)
    pattern = r"[\s\-]?".join(re.escape(word).replace("'", "['’]?") for word in words)
    return pattern + r"(?![0-9])" if name[-1].isdigit() else pattern  # PlayStation 5, not 55


@functools.cache
def _brands() -> tuple[dict[str, Brand], re.Pattern[str]]:
    by_key = {brand_key(brand.name): brand for brand in all_brands()}
    names = sorted(by_key.values(), key=lambda b: len(brand_key(b.name)), reverse=True)
    alternatives = "|".join(_name_pattern(brand.name) for brand in names)
    # Not before 's: Alexa's is read by the English rules (アレクサズ).
    end = r"(?![A-Za-z]|['’][A-Za-z])"
    pattern = re.compile(rf"(?<![A-Za-z0-9])(?:{alternatives}){end}", re.IGNORECASE)
    return by_key, pattern


def brand_of(text: str) -> Brand | None:
    """The brand written ``text`` (any case, spacing), or None."""
    return _brands()[0].get(brand_key(text))


def shows_device(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` stands where the text speaks of a device."""
    if text[end:].lstrip(" ").startswith(DEVICE_PARTICLES):
        return True
    before = text[:start].rstrip(" ")
    return before.removesuffix("の").endswith(ROOMS)


class BrandReader:
    """Replaces brand names by their readings; ``keep_words`` (user-dictionary words) stay."""

    def __init__(self, keep_words: frozenset[str] = frozenset()) -> None:
        self._keep_words = keep_words

    def rewrite(self, text: str) -> str:
        return substitute(_brands()[1], self._reading, text, _rule)

    def _reading(self, match: re.Match[str]) -> str:
        written = match.group()
        brand = brand_of(written)
        if brand is None or written in self._keep_words:
            return written
        if brand.context == "device" and not shows_device(match.string, *match.span()):
            return written
        return brand.reading


def _rule(match: re.Match[str]) -> Rule:
    brand = brand_of(match.group())
    return Rule("brand", brand.name if brand is not None else match.group())
