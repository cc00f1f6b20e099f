"""The reference ``hayakoe``'s G2P given OpenJTalk's input as ours is, for the tests' and the
benchmark's parity with it."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from wyoming_hayakoe.text.g2p import japanese_marks


def read_as_we_do() -> None:
    """Make the reference's G2P hand OpenJTalk its text with Japanese commas and full stops,
    as ours does (text/g2p.py ``japanese_marks``): given the folded ``,``, OpenJTalk reads
    the word after it as after a number's comma (「だったが、次から」: ジカラ). Everything else
    of the reference is as published (but for ``！``, below): the oracle then reads what the
    G2P library reads, and every field of the front-end and every sample of the audio must
    still match it."""
    import pyopenjtalk
    from hayakoe.nlp.japanese import g2p

    def run_frontend(text: str) -> Any:
        features = pyopenjtalk.run_frontend(japanese_marks(text))
        for feature in features:  # pyopenjtalk-plus reads ! as ！, which the reference
            if feature["pron"] == "！":  # takes for a reading and fails on: as OpenJTalk's
                feature["pron"] = "、"  # older builds, a mark
        return features

    g2p.pyopenjtalk = SimpleNamespace(run_frontend=run_frontend,  # type: ignore[attr-defined]
                                      make_label=pyopenjtalk.make_label)  # fmt: skip
