"""What the smart-home layer changed in a text, as pieces the page can highlight."""

from __future__ import annotations

import difflib


def rewrite_segments(original: str, rewritten: str) -> list[dict[str, str]]:
    """``original`` cut into kept and rewritten pieces: ``{"from": ..., "to": ...}`` each.

    A kept piece has ``from == to``. Joined, the ``from`` parts give ``original`` and the
    ``to`` parts give ``rewritten``.
    """
    matcher = difflib.SequenceMatcher(None, original, rewritten, autojunk=False)
    segments: list[dict[str, str]] = []
    for _tag, a1, a2, b1, b2 in matcher.get_opcodes():
        piece = {"from": original[a1:a2], "to": rewritten[b1:b2]}
        same = piece["from"] == piece["to"]
        if segments and (segments[-1]["from"] == segments[-1]["to"]) == same:
            segments[-1]["from"] += piece["from"]  # merge neighbours of the same kind
            segments[-1]["to"] += piece["to"]
        else:
            segments.append(piece)
    return segments
