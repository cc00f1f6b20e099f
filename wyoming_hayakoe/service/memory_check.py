"""The start's memory check: a memory limit below what serving the default voice needs is
said at start, with the limit and the need, instead of an out-of-memory kill in the first
request (the voice loads within less than it needs to speak: its weights are only mapped)."""

from __future__ import annotations

import logging
from pathlib import Path

from ..memory import SERVING_NEED_PER_MODEL_MB, memory_seen, serving_need_mb
from ..voices.layout import BERT_MODEL_PATH, DURATION_PREDICTOR_FILE, external_data_file
from ..voices.sources import VoiceSource

_LOGGER = logging.getLogger(__name__)


def model_files(source: VoiceSource, bert_root: Path | None) -> list[Path]:
    """The model files serving ``source`` runs: its synthesizer, its duration predictor (a
    HayaKoe folder may have one) and the shared BERT, each with its weights where they are
    kept beside it as external data (the need follows the weights, wherever they are)."""
    models = [source.model]
    if source.path.is_dir() and (source.path / DURATION_PREDICTOR_FILE).is_file():
        models.append(source.path / DURATION_PREDICTOR_FILE)
    if bert_root is not None:
        models.append(bert_root / BERT_MODEL_PATH)
    weights = [external_data_file(m) for m in models]
    return models + [w for w in weights if w.is_file()]


def check_memory_for(name: str, files: list[Path]) -> str | None:
    """A warning if this process's memory limit is below what serving ``files`` needs
    (blocking: reads the cgroup and the files' sizes); None if it fits or there is no limit."""
    seen = memory_seen()
    if seen.limit_mb is None:
        return None
    model_mb = sum(_size_mb(path) for path in files)
    need_mb = serving_need_mb(model_mb)
    if seen.limit_mb >= need_mb:
        return None
    return (
        f"The memory limit is {seen.limit_mb:,.0f} MB ({seen.limit_file}), below the about "
        f"{need_mb:,.0f} MB that serving voice {name} needs ({SERVING_NEED_PER_MODEL_MB} MB per "
        f"MB of its model files, {model_mb:,.0f} MB): its first "
        "requests may be killed by the out-of-memory killer; give the server more memory"
    )


def _size_mb(path: Path) -> float:
    """A file that cannot be read counts as empty: the check warns, it never fails a start."""
    try:
        return path.stat().st_size / (1 << 20)
    except OSError:
        return 0.0
