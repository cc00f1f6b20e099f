"""Markdown, links and emoji of LLM answers, reduced to what should be spoken.

- ``**bold**``, ``*italic*``, ``__x__``, ``~~x~~``, inline code: the marks go, the words stay;
- headings ``#``, quotes ``>`` (nested too), bullets ``-`` ``*`` ``+`` ``•`` at any depth and rules
  ``---`` go; a numbered item ``1. 牛乳`` is read 一、牛乳; a fenced code block is said コード (its
  code, read character by character, says nothing a listener can use); table borders go, table
  cells are read in turn;
- ``[text](url)`` and ``![alt](url)`` → the text; a bare URL → リンク; HTML tags go;
- emoji and kaomoji (``(^_^)``, ``m(_ _)m``, ``(´・ω・`)``) go; between two words they leave a
  pause (、) instead; ™ ℠ ® © go (see :func:`strip_marks`).
"""

from __future__ import annotations

import re

from .numbers import integer_words
from .trace import Rule, substitute

LINK_WORD = "リンク"
CODE_WORD = "コード"

_CODE_BLOCK = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n(?:.*\n)*?[ \t]*\1[ \t]*$", re.MULTILINE)
_FENCE = re.compile(r"^[ \t]*(?:```|~~~).*$", re.MULTILINE)
_RULE = re.compile(r"^[ \t]*(?:[-*_][ \t]*){3,}$", re.MULTILINE)
_TABLE_BORDER = re.compile(r"^[ \t]*\|?[ \t]*:?-{3,}:?[ \t]*(?:\|[ \t]*:?-{3,}:?[ \t]*)*\|?[ \t]*$",
                           re.MULTILINE)  # fmt: skip
_TABLE_ROW = re.compile(r"^[ \t]*\|(.*)\|[ \t]*$", re.MULTILINE)
_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]+(.*?)[ \t]*#*[ \t]*$", re.MULTILINE)
_QUOTE = re.compile(r"^[ \t]*(?:>[ \t]?)+", re.MULTILINE)
_BULLET = re.compile(r"^[ \t]*(?:[-*+][ \t]+|[•・][ \t]*)", re.MULTILINE)
_NUMBERED = re.compile(r"^[ \t]*([0-9]{1,3})[.)][ \t]+", re.MULTILINE)
_IMAGE_OR_LINK = re.compile(r"!?\[([^\]\n]*)\]\([^)\s]*(?:\s+\"[^\"]*\")?\)")
# ASCII only: Japanese text runs on right after a URL, without a space.
_URL = re.compile(r"(?:https?://|www\.)[A-Za-z0-9\-._~:/?#@!$&*+,;=%]*[A-Za-z0-9/#=_\-~%]")
_ANGLE_URL = re.compile(r"<((?:https?://|www\.)[^>\s]+)>")
_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
# Single marks: * anywhere but between digits (2*3*4 stays); _ only outside ASCII words, so
# snake_case stays.
_EMPHASIS = re.compile(r"(?<![*0-9])\*(?![\s*])([^*\n]+?)(?<![\s*])\*(?![*0-9])")
_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9_])_(?=\S)([^_\n]+?)(?<=\S)_(?![A-Za-z0-9_])")
_CODE = re.compile(r"`([^`\n]+)`")
_HTML_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9]*(?:\s[^<>]*)?/?>")

# Pictographs, dingbats, flags, keycap and variation marks, joiners, skin tones.
_EMOJI_CHARS = (
    "\U0001f000-\U0001faff"
    "\u2600-\u27bf"
    "\u2b00-\u2bff"
    "\u2190-\u21ff"
    "\u2300-\u23ae\u23b0-\u23e3\u23e5-\u23ff"  # not ⎯ ⏤: the reference reads them as dashes
    "\u25a0-\u25ff"
    "\ufe0e\ufe0f\u200d\u20e3"
    "\U000e0020-\U000e007f"
)
_MARKS = re.compile("[™℠®©]")
"""Said by nobody; NFKC would turn ™ into the letters TM."""
_EMOJI = re.compile(f"[{_EMOJI_CHARS}]+")
_FACE = "ωдДε∀゚ﾟ・･^＾_＿;；´｀`'ｰ\\/~〜\\-=≧≦><TｏoOUu*＊°。:：.▽△○◎∇ﾉノヮ"
"""What a kaomoji's face is drawn with: marks, and the few letters faces use (ω, ∀, ノ)."""
_FEATURE = "ωдД∀゚ﾟ^＾_＿;；´｀≧≦><▽∇"
"""What only a face has inside parentheses: eyes and mouths (not a dot or a dash alone)."""
_KAOMOJI = re.compile(
    rf"[mｍ]?[(（](?=[^)）]*[{re.escape(_FEATURE)}])[{re.escape(_FACE)}\s]{{2,12}}[)）][mｍノﾉ]?"
)
_KEYCAP = re.compile("([0-9#*])\ufe0f?\u20e3")
_WORD_CHAR = re.compile(r"[^\s\W_]|[0-9]")


def strip_marks(text: str) -> str:
    """™ ℠ ® © go; before NFKC, which would turn ™ into the letters TM."""
    return substitute(_MARKS, "", text, lambda m: Rule("mark", m.group()))


def _markdown(what: str) -> Rule:
    return Rule("markdown", what)


_LINK = Rule("link")


def strip_markdown(text: str) -> str:
    """Apply every rule of this module (once: the caller repeats until nothing changes)."""
    text = substitute(_CODE_BLOCK, CODE_WORD + "。", text, _markdown("code block"))
    text = substitute(_FENCE, "", text, _markdown("code block"))
    text = substitute(_TABLE_BORDER, "", text, _markdown("table"))
    text = substitute(_TABLE_ROW, _cells, text, _markdown("table"))
    text = substitute(_RULE, "", text, _markdown("rule"))
    text = substitute(_QUOTE, "", text, _markdown("quote"))
    text = substitute(_HEADING, r"\1", text, _markdown("heading"))
    text = substitute(_BULLET, "", text, _markdown("list"))
    text = substitute(_NUMBERED, _numbered, text, _markdown("numbered list"))
    text = substitute(_HTML_TAG, "", text, Rule("HTML tag"))
    text = substitute(_IMAGE_OR_LINK, r"\1", text, _LINK)
    text = substitute(_ANGLE_URL, LINK_WORD, text, _LINK)
    text = substitute(_URL, LINK_WORD, text, _LINK)
    text = substitute(_CODE, r"\1", text, _markdown("code"))
    text = substitute(_STRONG, r"\2", text, _markdown("bold"))
    text = substitute(_STRIKE, r"\1", text, _markdown("strikethrough"))
    text = substitute(_EMPHASIS, r"\1", text, _markdown("emphasis"))
    text = substitute(_UNDERSCORE, r"\1", text, _markdown("emphasis"))
    text = substitute(_KEYCAP, r"\1", text, Rule("keycap"))
    text = substitute(_KAOMOJI, _emoji, text, Rule("kaomoji"))
    return substitute(_EMOJI, _emoji, text, Rule("emoji"))


def _cells(match: re.Match[str]) -> str:
    return "、".join(cell.strip() for cell in match.group(1).split("|"))


def _numbered(match: re.Match[str]) -> str:
    return integer_words(int(match.group(1))) + "、"


def _emoji(match: re.Match[str]) -> str:
    text = match.string
    before = text[match.start() - 1] if match.start() > 0 else ""
    after = text[match.end()] if match.end() < len(text) else ""
    if _WORD_CHAR.match(before) and _WORD_CHAR.match(after):
        return "、"
    return ""
