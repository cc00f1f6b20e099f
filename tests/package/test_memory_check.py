"""The start's memory check, in a real memory cgroup: a limit below what serving a voice
needs, estimated from its model files' sizes, is a warning with the limit and the need."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tools.benchmark.memory_cgroup import MemoryCgroup
from tools.server_process import REPO_ROOT, server_env
from wyoming_hayakoe.memory import SERVING_NEED_PER_MODEL_MB

LIMIT_MB = 200

CHECK = """
import sys
from collections.abc import Iterator
from pathlib import Path
from wyoming_hayakoe.service.memory_check import check_memory_for
print(check_memory_for("big", [Path(p) for p in sys.argv[1:]]))
"""


def check_in_cgroup(group: MemoryCgroup, *files: Path) -> str:
    done = subprocess.run(
        [*group.wrapper(), sys.executable, "-c", CHECK, *map(str, files)],
        cwd=REPO_ROOT, env=server_env(), capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    return done.stdout.strip()


def sparse_file(path: Path, size_mb: int) -> Path:
    """A file of that size that takes no disk: only its size is read."""
    with path.open("wb") as handle:
        handle.truncate(size_mb << 20)
    return path


@pytest.fixture
def group() -> Iterator[MemoryCgroup]:
    try:
        made = MemoryCgroup(LIMIT_MB)
    except RuntimeError as err:
        pytest.skip(str(err))
    yield made
    made.close()


def test_a_limit_below_the_need_is_a_warning_with_both(group: MemoryCgroup, tmp_path: Path) -> None:
    # A full-size voice's files (777 MB: BERT, synthesizer, duration predictor).
    files = [sparse_file(tmp_path / name, mb) for name, mb in
             (("bert_q8.onnx", 497), ("synthesizer.onnx", 250), ("dp.onnx", 30))]  # fmt: skip
    warning = check_in_cgroup(group, *files)
    need = 777 * SERVING_NEED_PER_MODEL_MB
    assert f"memory limit is {LIMIT_MB} MB" in warning, warning
    assert f"about {need:,.0f} MB that serving voice big needs" in warning, warning
    assert "777 MB" in warning


def test_a_limit_above_the_need_says_nothing(group: MemoryCgroup, tmp_path: Path) -> None:
    small = sparse_file(
        tmp_path / "synthesizer.onnx", int(LIMIT_MB / SERVING_NEED_PER_MODEL_MB) - 10
    )
    assert check_in_cgroup(group, small) == "None"


def test_weights_kept_beside_a_model_count_toward_the_need(tmp_path: Path) -> None:
    """A voice whose weights are ONNX external data (``synthesizer.onnx.data``) needs memory
    for them as much as for weights inside the model file."""
    from wyoming_hayakoe.service.memory_check import model_files
    from wyoming_hayakoe.voices.layout import BERT_MODEL_PATH, DURATION_PREDICTOR_FILE
    from wyoming_hayakoe.voices.sources import hayakoe_source

    folder, bert_root = tmp_path / "voice", tmp_path / "bert-root"
    folder.mkdir()
    source = hayakoe_source("v", folder)
    source.model.write_bytes(b"model")
    (folder / DURATION_PREDICTOR_FILE).write_bytes(b"predictor")
    bert = bert_root / BERT_MODEL_PATH
    bert.parent.mkdir(parents=True)
    bert.write_bytes(b"bert")
    assert set(model_files(source, bert_root)) == {
        source.model,
        folder / DURATION_PREDICTOR_FILE,
        bert,
    }
    weights = source.model.with_name(source.model.name + ".data")
    weights.write_bytes(b"weights")
    assert weights in model_files(source, bert_root)
    assert weights in model_files(source, None) and bert not in model_files(source, None)
