"""The cache folder: where each compiled model lives, what it was made from, and when it goes.

Every compilation is one folder, ``KIND-LABEL-KEY`` (``bert-bert_q8-…``, ``voice-jvnv-F1-jp-…``),
holding its files and ``compiled.json``: what it was made from (the source's path, size and
modification time, and its external weights'), with which versions (ONNX Runtime, onnx, this
compiler) on which machine (architecture and the CPU features ONNX Runtime lays weights out
for), the size of every file, and what the compilation found. The key is a digest of the same
facts and of the code a voice's compilation checked (key_parts), so a new download, a new ONNX
Runtime, another CPU or a new self-check never reads an old folder.

A folder whose files no longer have the recorded sizes (truncated by a full disk, half copied)
is damaged: it is deleted and compiled again. At start, folders of this machine whose key is
no longer what their record's sources give (other versions, a source that changed, other
checking code), or whose source is gone from this host, are superseded and deleted (about
0.7 GB per voice); folders made on another kind of machine, or copied from another host whose
sources are not here, are left alone.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import platform
import re
import shutil
import socket
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import onnxruntime as ort

from .. import __version__
from ..inference import decoder as decoder_module
from ..inference import stages as stages_module
from .self_check import CHECK_VERSION

_LOGGER = logging.getLogger(__name__)

FAST_DECODER_VERSION = "2"
"""Changes with how a fast decoder is made or judged, so old ones are made again."""
COMPILER_VERSION = "lean-1"
"""Changes when what a compilation does changes, so old folders are compiled again."""
RECORD = "compiled.json"
PROGRESS_PREFIX = ".progress-"
"""A compilation that measures for long keeps what it has measured in ``.progress-FOLDER``
(with a PROGRESS_RECORD like a finished folder's record) until FOLDER is published."""
PROGRESS_RECORD = "progress.json"
_CPU_FEATURES = re.compile(
    r"^(avx512f|avx512_vnni|avx512_bf16|avx2|avx_vnni|fma|f16c|asimddp|i8mm|sve|sve2|bf16|"
    r"fphp|asimdhp)$"
)
"""CPU features ONNX Runtime picks kernels and weight layouts by (x86_64: AVX2/AVX-512 and their
dot-product extensions; aarch64: dot product, int8 matrix multiply, SVE, half precision)."""
_OLD_LAYOUT = re.compile(
    r"^(split|opt-.+|stages|durations)-[0-9a-f]{16}$|"
    r"^(self-check|duration-branch-check|gain(-speaker\d+)?)-[0-9a-f]{16}\.(json|txt)$"
)
"""What the cache held before compilations became one folder each (no record: never read)."""


def cache_key(sources: Sequence[Path], *parts: str) -> str:
    """A digest of what a compilation of ``sources`` depends on: each source file and its
    external weights (size and modification time), the versions, the machine and ``parts``."""
    fields = [*current_versions().values(), *machine().values(), *parts]
    for source in sources:
        fields += [
            f"{key}={value}" for key, value in _source_facts(source).items() if key != "path"
        ]
    return hashlib.sha256("|".join(fields).encode()).hexdigest()[:16]


def compiled_folder(
    cache_dir: Path, kind: str, sources: Sequence[Path], label: str, extra: Sequence[str] = ()
) -> Path:
    """Where the compilation of ``sources`` (a ``kind`` named ``label``) is kept; ``extra``:
    what else it depends on (kept in its record, see new_record)."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", label)[:48] or "model"
    return cache_dir / f"{kind}-{safe}-{cache_key(sources, *key_parts(kind), *extra)}"


def key_parts(kind: str) -> tuple[str, ...]:
    """What a compilation of ``kind`` depends on besides its sources and the versions: for a
    voice, the self-check and the windowing code it checked; for a fast decoder, the code
    that makes and judges it and the windowing code it was timed with."""
    if kind == "voice":
        return (CHECK_VERSION, _decoding_code())
    if kind == "decoder":
        return (FAST_DECODER_VERSION, _decoding_code())
    return ()


def new_record(
    kind: str, sources: Sequence[Path], result: Mapping[str, Any], extra: Sequence[str] = ()
) -> dict[str, Any]:
    """What a finished compilation writes beside its files (see write_record); ``extra``:
    what its key depends on besides its sources (a fast decoder's voice folder, say)."""
    return {
        "kind": kind,
        "made from": [_source_facts(source) for source in sources],
        "key extra": list(extra),
        "versions": current_versions(),
        "machine": machine(),
        "host": socket.gethostname(),
        "result": dict(result),
    }


def write_record(folder: Path, record: dict[str, Any]) -> None:
    """Write ``compiled.json`` into a finished folder, with every file's size."""
    files = {
        entry.name: entry.stat().st_size
        for entry in os.scandir(folder)
        if entry.is_file() and entry.name != RECORD
    }
    record = {**record, "files": files}
    (folder / RECORD).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


def read_record(folder: Path) -> dict[str, Any] | None:
    """The record of a compiled folder, or None if there is none. A folder whose files do
    not match the record (missing, other sizes) is damaged: it is deleted."""
    try:
        record: dict[str, Any] = json.loads((folder / RECORD).read_text(encoding="utf-8"))
        files: dict[str, int] = record["files"]
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as err:
        remove_damaged(folder, f"its record is unreadable ({err})")
        return None
    for name, size in files.items():
        try:
            found = (folder / name).stat().st_size
        except OSError:
            found = -1
        if found != size:
            shown = "missing" if found < 0 else f"{found:,} bytes instead of {size:,}"
            remove_damaged(folder, f"{name}: {shown}")
            return None
    return record


def remove_damaged(folder: Path, reason: str) -> None:
    """Delete a compiled folder that cannot be used, saying why; it is compiled again."""
    _LOGGER.warning(
        "The compiled copy %s is damaged (%s): deleting it to compile it again", folder, reason
    )
    shutil.rmtree(folder, ignore_errors=True)


def prune(cache_dir: Path) -> list[Path]:
    """Delete the folders of this machine that can never be used again (made with other
    versions, or from a source that changed or is gone) and what the cache's older layout
    left; returns what was removed."""
    return sweep(cache_dir, _superseded)


def sweep(cache_dir: Path, reason: Callable[[Path], str | None]) -> list[Path]:
    """Delete every entry of ``cache_dir`` for which ``reason`` says why, logging it;
    returns what was removed."""
    removed = []
    try:
        entries = list(cache_dir.iterdir())
    except OSError:
        return []
    for entry in entries:
        why = reason(entry)
        if why is None:
            continue
        if entry.is_dir():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)
        removed.append(entry)
        _LOGGER.info("Removed %s from the cache: %s", entry.name, why)
    return removed


def progress_folder(target: Path) -> Path:
    """Where the compilation of ``target`` keeps what it has measured so far."""
    return target.with_name(PROGRESS_PREFIX + target.name)


def _superseded(entry: Path) -> str | None:
    if _OLD_LAYOUT.match(entry.name):
        return "left by an older version of this server"
    if entry.name.startswith(PROGRESS_PREFIX):
        if (entry.parent / entry.name[len(PROGRESS_PREFIX) :]).is_dir():
            return "what it measured is in the compiled folder now"
        return _superseded_record(entry, entry.name, PROGRESS_RECORD)
    if entry.name.startswith("."):
        return None
    return _superseded_record(entry, entry.name, RECORD)


def _superseded_record(entry: Path, name: str, record_name: str) -> str | None:
    if not (entry / record_name).is_file():
        return None
    try:
        record = json.loads((entry / record_name).read_text(encoding="utf-8"))
        if record["machine"] != machine():
            return None  # another kind of machine shares the cache: its folders are its own
        if record["versions"] != current_versions():
            return f"made with {record['versions']}, now {current_versions()}"
        sources = [Path(made_from["path"]) for made_from in record["made from"]]
        if any(_source_facts(source).get("missing") for source in sources):
            # A source that is not here may be on the machine the cache was copied from.
            return "its model is gone" if record["host"] == socket.gethostname() else None
        extra = record.get("key extra", [])
        if not name.endswith("-" + cache_key(sources, *key_parts(record["kind"]), *extra)):
            return "its model has changed since, or what compiles it has"
        if record["kind"] == "decoder" and extra and not (entry.parent / extra[0]).is_dir():
            return "the compiled voice it was made for is gone"
    except (OSError, ValueError, KeyError, TypeError):
        return None  # a record this version cannot read: not ours to judge
    return None


def current_versions() -> dict[str, str]:
    return {"onnxruntime": ort.__version__, "onnx": onnx_version(), "compiler": COMPILER_VERSION}


@cache
def onnx_version() -> str:
    try:
        return version("onnx")
    except PackageNotFoundError:  # the server runs without onnx; only children import it
        return "none"


@cache
def machine() -> dict[str, str]:
    """The architecture and the CPU features compiled files may depend on."""
    return {"architecture": platform.machine(), "cpu features": " ".join(_cpu_features())}


def _cpu_features() -> list[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return []
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            return sorted(f for f in value.split() if _CPU_FEATURES.match(f))
    return []


def _source_facts(source: Path) -> dict[str, Any]:
    """Path, size and modification time of ``source`` and of its external weights."""
    facts: dict[str, Any] = {"path": str(source)}
    try:
        stat = source.stat()
    except OSError:
        return {**facts, "missing": True}
    facts.update(size=stat.st_size, mtime_ns=stat.st_mtime_ns)
    # Weights saved apart from the graph (``model.onnx.data``) change the model as much.
    data = source.with_name(source.name + ".data")
    if data.is_file():
        data_stat = data.stat()
        facts["data"] = {"size": data_stat.st_size, "mtime_ns": data_stat.st_mtime_ns}
    return facts


def _decoding_code() -> str:
    """A digest of the windowing code and the stages' reaches: a change to either compiles
    (and checks) a voice again."""
    try:
        files = [str(m.__file__) for m in (decoder_module, stages_module)]
        source = b"".join(Path(file).read_bytes() for file in files)
    except (OSError, TypeError):  # installed without sources: the release decides
        source = __version__.encode()
    return hashlib.sha256(source).hexdigest()[:12]
