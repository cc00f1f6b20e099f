"""Prepared copies of the ONNX models, made once per machine and reused at every start.

Two preparations, both cached under a directory of the user's choosing:

* The synthesizer is split at the decoder input (graph surgery with ``onnx``'s extractor), so
  the text encoder, duration predictor and flow run once per sentence and the decoder can turn
  the latent into audio window by window: the first sound of a long sentence plays long before
  the sentence is finished.
* The front's relative-position attention is rewritten to work on its band only (see
  attention_band), which halves the front's time on long sentences.
* Every model is optimized once at level ALL and saved with its initializers as external data;
  later starts load that file with optimization off. Start-up skips the optimizer, and the
  weights are memory-mapped from the page cache instead of copied onto the heap. In the BERT,
  the relative-position terms the optimizer folded into constants are then computed on the
  positions a sentence reaches only (see position_span).

Optimized files hold layouts for this CPU, so the cache key includes the ONNX Runtime version,
the machine and the source file's size and modification time.
"""

from __future__ import annotations

import hashlib
import logging
import os
import platform
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import onnxruntime as ort

from ..errors import ModelFileError
from .staging import staged

_LOGGER = logging.getLogger(__name__)

# Found by path suffix: exporters name them /dec/... or /net_g/dec/... depending on wrapping.
_DECODER_INPUT_NODE = "dec/conv_pre/Conv"
_CONDITION_NODE = "dec/cond/Conv"
_SPLIT_VERSION = "band-attention-2"
"""Changes when the preparation of the split models changes, so old copies are redone."""
_OPTIMIZE_VERSION = "position-span-1"
"""Changes when what is done to an optimized model changes, so old copies are redone."""


@dataclass(frozen=True)
class SplitSynthesizer:
    """The two halves of a synthesizer and the names that join them."""

    front: Path
    decoder: Path
    latent: str
    """Front output / decoder input: ``z * y_mask``, float32 ``[1, channels, frames]``."""
    condition: str
    """Front output / decoder input: speaker conditioning ``g``, float32 ``[1, gin, 1]``."""
    band_layers: int = 0
    """Attention layers of the front rewritten to work on their band (0: as exported)."""


def _cache_key(source: Path, *parts: str) -> str:
    stat = source.stat()
    fields = [ort.__version__, platform.machine(), str(stat.st_size), str(stat.st_mtime_ns), *parts]
    # Weights saved apart from the graph (``model.onnx.data``) change the model as much.
    data = source.with_name(source.name + ".data")
    if data.is_file():
        data_stat = data.stat()
        fields += ["data", str(data_stat.st_size), str(data_stat.st_mtime_ns)]
    return hashlib.sha256("|".join(fields).encode()).hexdigest()[:16]


def cached_split(source: Path, cache_dir: Path) -> SplitSynthesizer | None:
    """The split of ``source`` if it is prepared already (no ``onnx`` import)."""
    target = _split_target(source, cache_dir)
    names_file = target / "names.txt"
    if not names_file.is_file():
        return None
    latent, condition, rewritten = names_file.read_text().split()
    return SplitSynthesizer(
        target / "front.onnx", target / "decoder.onnx", latent, condition, int(rewritten)
    )


def _split_target(source: Path, cache_dir: Path) -> Path:
    return cache_dir / f"split-{_cache_key(source, onnx_version(), _SPLIT_VERSION)}"


def onnx_version() -> str:
    from importlib.metadata import version

    return version("onnx")


def split_synthesizer(source: Path, cache_dir: Path) -> SplitSynthesizer:
    """Split ``source`` into front and decoder models, cached in ``cache_dir``."""
    cached = cached_split(source, cache_dir)
    if cached is not None:
        return cached
    import onnx  # only needed the first time a voice is prepared

    target = _split_target(source, cache_dir)

    front, decoder, latent, condition = _extract_halves(source)
    with staged(target, "split") as staging:
        onnx.save(decoder, str(staging / "decoder.onnx"))
        del decoder
        layers = _save_front(front, staging)
        (staging / "names.txt").write_text(f"{latent}\n{condition}\n{layers}\n")
    _LOGGER.info(
        "Split %s into front and decoder in %s (%d attention layers on their band)",
        source,
        target,
        layers,
    )
    return SplitSynthesizer(
        target / "front.onnx", target / "decoder.onnx", latent, condition, layers
    )


def exported_front(source: Path) -> bytes:
    """The front of ``source`` as the extractor cuts it, before any rewrite (serialized)."""
    front, decoder, _, _ = _extract_halves(source)
    del decoder
    data: bytes = front.SerializeToString()
    return data


def _extract_halves(source: Path) -> tuple[Any, Any, str, str]:
    """Front and decoder models of ``source`` and the names of the two tensors joining them."""
    import onnx
    from onnx import TensorProto, helper
    from onnx.utils import Extractor

    model = onnx.load(str(source))
    pre = _node_by_suffix(model, _DECODER_INPUT_NODE, source)
    cond = _node_by_suffix(model, _CONDITION_NODE, source)
    latent, condition = pre.input[0], cond.input[0]
    weights = {init.name: init for init in model.graph.initializer}
    channels = weights[pre.input[1]].dims[1]
    gin = weights[cond.input[1]].dims[1]
    # The extractor needs shapes for the tensors it cuts at.
    model.graph.value_info.extend(
        [
            helper.make_tensor_value_info(latent, TensorProto.FLOAT, [1, channels, "frames"]),
            helper.make_tensor_value_info(condition, TensorProto.FLOAT, [1, gin, 1]),
        ]
    )
    inputs = [i.name for i in model.graph.input if i.name not in weights]
    extractor = Extractor(model)
    front = extractor.extract_model(inputs, [latent, condition])
    decoder = extractor.extract_model([latent, condition], [model.graph.output[0].name])
    return front, decoder, latent, condition


def _save_front(front: Any, staging: Path) -> int:
    """Save the front with its attention on the band if that computes the same; returns the
    number of layers rewritten."""
    import onnx

    from . import attention_band

    exported, rewritten = staging / "exported-front.onnx", staging / "front.onnx"
    onnx.save(front, str(exported))
    layers = attention_band.rewrite(front)
    if not layers:
        exported.rename(rewritten)
        return 0
    onnx.save(front, str(rewritten))
    del front  # the check below loads each model in turn
    if attention_band.same_outputs(exported, rewritten):
        exported.unlink()
        return layers
    _LOGGER.warning("Band attention changed the front's output: keeping the exported graph")
    exported.replace(rewritten)
    return 0


def _node_by_suffix(model: Any, suffix: str, source: Path) -> Any:
    found = [node for node in model.graph.node if node.name.endswith("/" + suffix)]
    if len(found) != 1:
        raise ModelFileError(f"{source}: no single {suffix} node, cannot split the decoder off")
    return found[0]


def optimized_model(source: Path, cache_dir: Path, options: ort.SessionOptions) -> Path:
    """An ALL-level optimized copy of ``source`` with external weights, made once."""
    model_path = optimized_model_path(source, cache_dir)
    target = model_path.parent
    if model_path.is_file():
        return model_path
    with staged(target, "opt") as staging:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.optimized_model_filepath = str(staging / "model.onnx")
        options.add_session_config_entry(
            "session.optimized_model_external_initializers_file_name", "model.data"
        )
        options.add_session_config_entry(
            "session.optimized_model_external_initializers_min_size_in_bytes", "1024"
        )
        ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
        from . import position_span  # onnx: only the preparing child imports it

        if sliced := position_span.rewrite_file(staging / "model.onnx"):
            _LOGGER.info("%s: %d position terms computed on the span used", source, sliced)
    _LOGGER.info("Optimized %s for this machine into %s", source, target)
    return model_path


def optimized_model_path(source: Path, cache_dir: Path) -> Path:
    """Where the optimized copy of ``source`` is (or will be) kept."""
    return cache_dir / f"opt-{source.stem}-{_cache_key(source, _OPTIMIZE_VERSION)}" / "model.onnx"


def cached_number(
    cache_dir: Path | None, sources: list[Path], name: str, compute: Callable[[], float]
) -> float:
    """A number derived from model files (a voice's gain), computed once per set of files."""
    if cache_dir is None:
        return compute()
    key = _cache_key(sources[0], *(_cache_key(source) for source in sources[1:]), name)
    path = cache_dir / f"{name}-{key}.txt"
    try:
        return float(path.read_text())
    except (OSError, ValueError):
        pass
    value = compute()
    if writable(cache_dir):
        staging = path.with_suffix(f".{os.getpid()}.tmp")
        staging.write_text(repr(value))
        staging.replace(path)
    return value


def derived_file(cache_dir: Path, source: Path, name: str, *parts: str) -> Path:
    """Where a small file derived from ``source`` (and ``parts``) is kept, keyed like the
    split: a new download, ONNX Runtime, onnx or split method makes a new entry."""
    key = _cache_key(source, onnx_version(), _SPLIT_VERSION, *parts)
    return cache_dir / f"{name}-{key}"


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` so that a reader sees the old file, the whole new one, or none."""
    staging = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        staging.write_text(text, encoding="utf-8")
        staging.replace(path)
    except BaseException:
        staging.unlink(missing_ok=True)
        raise


def release_freed_heap() -> None:
    """Give the heap that building sessions left behind back to the OS (glibc keeps it)."""
    if platform.system() != "Linux":
        return
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def writable(directory: Path) -> bool:
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.access(directory, os.W_OK)
