"""Our BERT tokenizer gives the ids of transformers' BertJapaneseTokenizer, for any text."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from fresh_python import modules_imported
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from wyoming_hayakoe.errors import ModelFileError
from wyoming_hayakoe.text.normalize import fold_punctuation
from wyoming_hayakoe.text.tokenizer import BertTokenizer, tokenize
from wyoming_hayakoe.text.tokenizer_loader import load_tokenizer

CORPUS: list[str] = json.loads(
    (Path(__file__).parents[1] / "data" / "frontend_corpus.json").read_text(encoding="utf-8")
)
REPO = Path(__file__).resolve().parents[2]

# Any code point, surrogates included, plus pieces that exercise the special cases.
_FRAGMENTS = st.sampled_from(
    [
        "[CLS]", "[SEP]", "[UNK]", "[PAD]", "[MASK]", "[", "]", "CLS", "[[", "MASK]",
        "\u3099", "\u309a", "か", "\u0301", "e", "゛", "ｶﾞ", "½", "㍿", "ﬁ", "①",
        "\u00a0", "\u3000", "\u2028", "\u0085", "\x1c", "\t", "\r\n", " ",
        "\x00", "\ufffd", "\ud800", "\udc00", "\ue000", "\u0378", "\u200d", "\ufeff",
        "😀", "👍🏻", "👨\u200d👩\u200d👧", "𠮷", "ἀ", "Å", "Ω", "ǅ", "İ",
        "!", "！", "。", "、", "…", "・", "ー", "〜", "~", "'", "-", "—", "¥", "$",
    ]
)  # fmt: skip
# Hypothesis leaves out surrogates even with no excluded category: add them explicitly.
_ANY_CHAR = st.one_of(st.characters(exclude_categories=()), st.integers(0xD800, 0xDFFF).map(chr))
ANY_TEXT = st.text(_ANY_CHAR, max_size=40)
MIXED_TEXT = st.lists(st.one_of(_FRAGMENTS, ANY_TEXT), max_size=8).map("".join)


def _reference_ids(tokenizer: Any, text: str) -> list[int]:
    return list(tokenizer(text)["input_ids"])


@pytest.fixture(scope="module")
def ours(bert_tokenizer_dir: Path) -> BertTokenizer:
    # What the runtime picks for the published folder, from its configuration files.
    tokenizer = load_tokenizer(bert_tokenizer_dir)
    assert isinstance(tokenizer, BertTokenizer)
    return tokenizer


@pytest.mark.parametrize("text", CORPUS, ids=[f"line{i:03d}" for i in range(len(CORPUS))])
def test_corpus_ids_match_transformers(
    text: str, ours: BertTokenizer, transformers_tokenizer: Any
) -> None:
    assert ours.encode(text) == _reference_ids(transformers_tokenizer, text)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.one_of(ANY_TEXT, MIXED_TEXT))
@example(text="")
@example(text="[CLS]あ[SEP]")
@example(text="[C\x00LS]")
@example(text="か\u3099が\u309aぱ")
@example(text="\ud800\udc00")
@example(text="a\u2028b\u2029c\x85d\x1ce")
def test_arbitrary_unicode_ids_match_transformers(
    text: str, ours: BertTokenizer, transformers_tokenizer: Any
) -> None:
    expected = _reference_ids(transformers_tokenizer, text)
    assert ours.encode(text) == expected
    # The tokens need no vocabulary (the G2P counts them for word2ph); transformers writes
    # [UNK] where the vocabulary lacks the character.
    theirs = transformers_tokenizer.tokenize(text)
    mine = tokenize(text)
    assert len(mine) == len(theirs) == len(expected) - 2
    assert all(a == b or b == "[UNK]" for a, b in zip(mine, theirs, strict=True))


def test_special_ids_come_from_the_vocabulary(
    ours: BertTokenizer, bert_tokenizer_dir: Path
) -> None:
    lines = (bert_tokenizer_dir / "vocab.txt").read_text(encoding="utf-8").split("\n")
    assert ours.encode("") == [lines.index("[CLS]"), lines.index("[SEP]")]
    assert len(ours) == 22012
    # A character outside the vocabulary is [UNK]; a known one has its line number.
    unknown = next(chr(c) for c in range(0x4E00, 0x9FFF) if chr(c) not in lines)
    assert ours.encode(unknown + "の")[1:-1] == [lines.index("[UNK]"), lines.index("の")]


def test_vocabulary_file_of_our_own(tmp_path: Path) -> None:
    (tmp_path / "vocab.txt").write_text(
        "[PAD]\n[CLS]\n[SEP]\n[UNK]\n[MASK]\nあ\nい\nあ\n", encoding="utf-8"
    )
    tokenizer = BertTokenizer.from_directory(tmp_path)
    # A repeated entry keeps its last line, as transformers' load_vocab does.
    assert tokenizer.encode("あいう") == [1, 7, 6, 3, 2]
    assert tokenizer.encode("ア イ") == [1, 3, 3, 2]


def test_missing_vocabulary_is_a_model_file_error(tmp_path: Path) -> None:
    with pytest.raises(ModelFileError, match=r"vocab\.txt"):
        BertTokenizer.from_directory(tmp_path)
    (tmp_path / "vocab.txt").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ModelFileError, match=r"vocab\.txt"):
        BertTokenizer.from_directory(tmp_path)
    (tmp_path / "vocab.txt").write_text("[PAD]\n[UNK]\nあ\n", encoding="utf-8")
    with pytest.raises(ModelFileError, match=r"\[CLS\]"):
        BertTokenizer.from_directory(tmp_path)


def test_runtime_front_end_does_not_import_transformers() -> None:
    tokenizer_dir = REPO / "tests" / "fixtures" / "tiny-voice" / "bert" / "tokenizer"
    code = (
        "from wyoming_hayakoe.text.frontend import TextFrontend\n"
        f"frontend = TextFrontend({str(tokenizer_dir)!r})\n"
        "assert frontend.token_ids(frontend.phonemize('テスト').bert_text)\n"
    )
    assert modules_imported(code, {"transformers", "torch", "hayakoe"}) == set()


def test_every_character_the_normalizer_can_leave_is_one_token() -> None:
    """Why word2ph (one entry per character of the BERT text) fits the BERT tokens."""
    # Characters that canonically compose with the one before them (NFC could merge them).
    second_halves = set()
    for code in range(0x110000):
        decomposition = unicodedata.decomposition(chr(code))
        if decomposition and not decomposition.startswith("<"):
            parts = decomposition.split()
            if len(parts) == 2:
                second_halves.add(chr(int(parts[1], 16)))
    kept = [
        char
        for char in map(chr, range(0x10000))
        if fold_punctuation(char) == char
        and unicodedata.normalize("NFKC", char) == char  # the normalizer starts with NFKC
        and not unicodedata.category(char).startswith("C")  # and ends deleting these
        and char not in "\u3099\u309a"  # deleted too
    ]
    assert len(kept) > 28000
    assert [c for c in kept if len(tokenize(c)) != 1] == []
    assert [c for c in kept if c in second_halves or unicodedata.combining(c)] == []
