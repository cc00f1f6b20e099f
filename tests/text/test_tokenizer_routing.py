"""A tokenizer folder is served by the tokenizer its configuration asks for, and a tokenizer
that does not fit the BERT fails at load."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fresh_python import modules_imported

from wyoming_hayakoe.compiling import bert as bert_compiler
from wyoming_hayakoe.engine import Engine
from wyoming_hayakoe.errors import ModelFileError
from wyoming_hayakoe.inference.bert import BertEncoder
from wyoming_hayakoe.runtime.sessions import RuntimeSettings
from wyoming_hayakoe.text.tokenizer import BertTokenizer
from wyoming_hayakoe.text.tokenizer_loader import (
    TransformersTokenizer,
    load_tokenizer,
    why_not_own,
)

REPO = Path(__file__).resolve().parents[2]
TINY_ROOT = Path(__file__).parents[1] / "fixtures" / "tiny-voice"
TINY_TOKENIZER = TINY_ROOT / "bert" / "tokenizer"
TEXTS = ["今日はいい天気ですね。", "Aliceの家のLEDをつけて!", "ＡＢＣ、ａｂｃ"]


def _folder(tmp_path: Path, config: dict[str, Any] | None = None, **special: str) -> Path:
    """The tiny voice's tokenizer folder (the published configuration), with changes."""
    folder = tmp_path / "tokenizer"
    shutil.copytree(TINY_TOKENIZER, folder)
    if config is not None:
        path = folder / "tokenizer_config.json"
        path.write_text(json.dumps({**json.loads(path.read_text()), **config}), encoding="utf-8")
    if special:
        path = folder / "special_tokens_map.json"
        path.write_text(json.dumps({**json.loads(path.read_text()), **special}), encoding="utf-8")
    return folder


def _transformers_ids(folder: Path, text: str) -> list[int]:
    from transformers import AutoTokenizer

    return list(AutoTokenizer.from_pretrained(str(folder))(text)["input_ids"])


def test_published_configuration_is_served_by_our_tokenizer(tmp_path: Path) -> None:
    assert why_not_own(TINY_TOKENIZER) is None
    assert isinstance(load_tokenizer(TINY_TOKENIZER), BertTokenizer)
    # A bare vocabulary (older copies of the folder) is read as the published tokenizer.
    folder = _folder(tmp_path)
    (folder / "tokenizer_config.json").unlink()
    (folder / "special_tokens_map.json").unlink()
    assert isinstance(load_tokenizer(folder), BertTokenizer)


@pytest.mark.parametrize(
    ("config", "reason"),
    [
        ({"do_lower_case": True}, "do_lower_case is True"),
        ({"subword_tokenizer_type": "wordpiece"}, "subword_tokenizer_type is 'wordpiece'"),
        # transformers' default subword type is wordpiece: leaving it out is not ours
        ({"subword_tokenizer_type": None}, "subword_tokenizer_type is 'wordpiece'"),
        ({"tokenizer_class": "BertTokenizer"}, "tokenizer_class is 'BertTokenizer'"),
        ({"never_split": ["テスト"]}, "never_split"),
    ],
    ids=["lower-case", "wordpiece", "no-subword-type", "bert-class", "never-split"],
)
def test_other_configurations_go_to_transformers(
    tmp_path: Path, config: dict[str, Any], reason: str
) -> None:
    folder = _folder(tmp_path, config)
    if config == {"subword_tokenizer_type": None}:
        path = folder / "tokenizer_config.json"
        raw = json.loads(path.read_text())
        del raw["subword_tokenizer_type"]
        path.write_text(json.dumps(raw), encoding="utf-8")
    assert reason in (why_not_own(folder) or "")
    tokenizer = load_tokenizer(folder)
    assert isinstance(tokenizer, TransformersTokenizer)
    for text in TEXTS:
        assert tokenizer.encode(text) == _transformers_ids(folder, text)


def test_lower_casing_changes_the_ids_where_ours_would_not(tmp_path: Path) -> None:
    ours = load_tokenizer(TINY_TOKENIZER)
    lower = load_tokenizer(_folder(tmp_path, {"do_lower_case": True}))
    vocab = (TINY_TOKENIZER / "vocab.txt").read_text(encoding="utf-8").split("\n")
    assert ours.encode("A")[1:-1] == [vocab.index("A")]
    assert lower.encode("A")[1:-1] == [vocab.index("a")]


def test_other_special_tokens_go_to_transformers(tmp_path: Path) -> None:
    assert "cls_token is '<s>'" in (why_not_own(_folder(tmp_path, cls_token="<s>")) or "")
    extra = _folder(tmp_path / "extra", additional_special_tokens=["[NEW]"])  # type: ignore[arg-type]
    assert "[NEW]" in (why_not_own(extra) or "")
    stripping = _folder(
        tmp_path / "strip",
        {"sep_token": {"content": "[SEP]", "lstrip": True, "rstrip": False}},
    )
    assert "sep_token" in (why_not_own(stripping) or "")


def _fast_char_tokenizer(folder: Path) -> None:
    """A ``tokenizer.json`` (tokenizers' WordPiece without a subword prefix over the tiny
    character vocabulary: one token per known character), and no vocab.txt."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    lines = (TINY_TOKENIZER / "vocab.txt").read_text(encoding="utf-8").split("\n")
    vocab = {token: index for index, token in enumerate(lines) if token}
    tokenizer = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]", continuing_subword_prefix=""))
    tokenizer.normalizer = normalizers.NFKC()
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    folder.mkdir(parents=True)
    tokenizer.save(str(folder / "tokenizer.json"))
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        **{f"{n}_token": f"[{n.upper()}]" for n in ("cls", "sep", "unk", "pad", "mask")},
    }
    (folder / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")


def test_fast_tokenizer_json_goes_to_transformers_and_feeds_the_front_end(
    tmp_path: Path,
) -> None:
    from wyoming_hayakoe.text.frontend import TextFrontend

    folder = tmp_path / "fast"
    _fast_char_tokenizer(folder)
    assert "tokenizer.json" in (why_not_own(folder) or "")
    tokenizer = load_tokenizer(folder)
    assert isinstance(tokenizer, TransformersTokenizer)
    ours = load_tokenizer(TINY_TOKENIZER)
    for text in TEXTS[:1]:
        assert tokenizer.encode(text) == ours.encode(text)
    frontend = TextFrontend(folder)
    phonemes = frontend.phonemize("リビングの照明をつけました。")
    assert len(frontend.token_ids(phonemes.bert_text)) == len(phonemes.word2ph)
    assert frontend.max_token_id == max(tokenizer.max_id, 0) == len(ours) - 1


def test_unreadable_tokenizer_folder_is_a_model_file_error(tmp_path: Path) -> None:
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "tokenizer.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ModelFileError, match="transformers cannot load"):
        load_tokenizer(folder)
    config = _folder(tmp_path)
    (config / "tokenizer_config.json").write_text("[", encoding="utf-8")
    with pytest.raises(ModelFileError, match=r"tokenizer_config\.json"):
        load_tokenizer(config)


def test_published_configuration_never_imports_transformers() -> None:
    """Start-up time and memory for the published voices stay as they were."""
    code = (
        "from pathlib import Path\n"
        "from wyoming_hayakoe.engine import Engine\n"
        f"engine = Engine(Path({str(TINY_ROOT)!r}), threads=1)\n"
        "phonemes = engine.frontend.phonemize('テストです。')\n"
        "assert engine.frontend.token_ids(phonemes.bert_text)\n"
    )
    assert modules_imported(code, {"transformers", "tokenizers", "torch"}) == set()


# --- the BERT's side ---------------------------------------------------------------------


def _bert_root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    shutil.copytree(TINY_ROOT / "bert", root / "bert")
    shutil.copytree(TINY_ROOT / "onnx" / "bert", root / "onnx" / "bert")
    return root


@pytest.mark.parametrize("compiled", [False, True], ids=["published", "compiled"])
def test_vocabulary_larger_than_the_embedding_table_fails_at_load(
    tmp_path: Path, compiled: bool
) -> None:
    root = _bert_root(tmp_path)
    cache = tmp_path / "cache" if compiled else None
    Engine(root, threads=1, cache_dir=cache).open_bert()  # as committed: every id is embedded
    vocab = root / "bert" / "tokenizer" / "vocab.txt"
    lines = vocab.read_text(encoding="utf-8").rstrip("\n").split("\n")
    vocab.write_text("\n".join([*lines, "新字"]) + "\n", encoding="utf-8")
    for _start in range(2):  # found when compiled, then from the kept verdict
        with pytest.raises(ModelFileError, match=f"cannot embed token id {len(lines)}"):
            Engine(root, threads=1, cache_dir=cache).open_bert()


def test_a_compiled_berts_vocabulary_check_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check runs the BERT: once, when it is compiled, not at every start."""
    root = _bert_root(tmp_path)
    Engine(root, threads=1, cache_dir=tmp_path / "cache").open_bert()
    (record,) = (tmp_path / "cache").glob("bert-*/compiled.json")
    verdict = json.loads(record.read_text())["result"]["vocabulary"]
    assert verdict == {"max_token_id": Engine(root, threads=1).frontend.max_token_id, "error": None}

    def refused(*args: object) -> None:
        raise AssertionError("the BERT was run at start")

    monkeypatch.setattr(bert_compiler, "check_vocabulary", refused)
    Engine(root, threads=1, cache_dir=tmp_path / "cache").open_bert()


def _toy_bert(path: Path, inputs: dict[str, int]) -> Path:
    """An ONNX model with the given int inputs and a float [batch, tokens, 4] output."""
    import onnx
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [
            helper.make_node("Cast", ["input_ids"], ["ids_f"], to=TensorProto.FLOAT),
            helper.make_node("Unsqueeze", ["ids_f", "axes"], ["hidden1"]),
            helper.make_node("Tile", ["hidden1", "repeats"], ["hidden"]),
        ],
        "toy",
        [helper.make_tensor_value_info(n, t, ["b", "t"]) for n, t in inputs.items()],
        [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, ["b", "t", 4])],
        [
            helper.make_tensor("axes", TensorProto.INT64, [1], [2]),
            helper.make_tensor("repeats", TensorProto.INT64, [3], [1, 1, 4]),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def test_bert_inputs_other_than_ids_and_mask_fail_at_load(tmp_path: Path) -> None:
    settings = RuntimeSettings.create(1)
    int64, int32 = 7, 6
    good = _toy_bert(tmp_path / "good.onnx", {"input_ids": int64, "attention_mask": int64})
    features = BertEncoder(good, settings.open(good, "BERT")).features([1, 2, 3], [1, 2, 1])
    assert features.shape == (4, 4)
    np.testing.assert_array_equal(features[0], [1, 2, 2, 3])
    extra = _toy_bert(
        tmp_path / "extra.onnx",
        {"input_ids": int64, "attention_mask": int64, "token_type_ids": int64},
    )
    with pytest.raises(ModelFileError, match="token_type_ids"):
        BertEncoder(extra, settings.open(extra, "BERT"))
    narrow = _toy_bert(tmp_path / "narrow.onnx", {"input_ids": int32, "attention_mask": int64})
    with pytest.raises(ModelFileError, match="int64"):
        BertEncoder(narrow, settings.open(narrow, "BERT"))
