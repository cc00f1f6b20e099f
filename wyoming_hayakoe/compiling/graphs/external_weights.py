"""Models whose weights live in a file beside the graph, laid out so ONNX Runtime maps them.

A published model holds its weights inside the graph file (or in ``model.onnx.data`` at any
offset). Read whole, it costs its size twice on the heap: the file's bytes and the parsed
protobuf (1.1 GB for the 570 MB BERT), and ONNX Runtime copies every weight once more. With
the weights in a data file at aligned offsets, ONNX Runtime maps them from the page cache
(memory the kernel can take back) and the graph alone is a few MB: the graph edits and
checks of a first start then run in about a fifth of the memory (docs/memory.md, "A first
start in 1 GB").

Here a model is taken apart without ever holding it whole: the protobuf is walked on a
memory map, each weight written to the data file as it is met, and only the graph (every
field but the weights' bytes) kept. A weight is read back alone when a rewrite needs its
values, and weights a rewrite adds are appended the same way.
"""

from __future__ import annotations

import mmap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from google.protobuf.message import DecodeError
from onnx import ModelProto, TensorProto, helper, numpy_helper

from ...errors import ModelFileError

ALIGNMENT = 65536
"""Offset of every weight in the data file: a multiple of any page size (4 KiB on x86_64 and
a Raspberry Pi 4, 16 KiB on a Pi 5's kernel, 64 KiB on some aarch64 kernels), so ONNX
Runtime can map each weight where it lies. At most 64 KiB of padding per weight: under 1 % of
a full voice's files."""
MIN_EXTERNAL_BYTES = 1024
"""Weights smaller than this stay in the graph (the threshold ONNX Runtime's own saver uses)."""

# Protobuf field numbers (onnx.proto) of what the walk looks for.
_MODEL_GRAPH = 7
_GRAPH_INITIALIZER = 5
_TENSOR_RAW_DATA = 9
_TENSOR_EXTERNAL_DATA = 13
_TENSOR_DATA_LOCATION = 14
_LENGTH_DELIMITED = 2


def move_weights_out(source: Path, graph: Path, data_name: str) -> None:
    """Write ``source`` as ``graph`` with every weight of at least MIN_EXTERNAL_BYTES in the
    file ``data_name`` beside it, one weight in memory at a time. ``source`` may keep its
    weights inside or as external data of its own."""
    data_path = graph.with_name(data_name)
    with source.open("rb") as file, data_path.open("wb") as data:
        if not source.stat().st_size:
            raise ModelFileError(f"{source} is empty, not an ONNX model")
        with mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as view:
            writer = _WeightWriter(data, data_name, source)
            out = bytearray()
            try:
                for number, wire, start, end, field in _fields(view, 0, len(view)):
                    if number == _MODEL_GRAPH and wire == _LENGTH_DELIMITED:
                        graph_bytes = _graph_without_weights(view, start, end, writer)
                        _append_field(out, number, graph_bytes)
                    else:
                        out += view[field:end]
            except (ValueError, DecodeError) as err:
                raise ModelFileError(
                    f"{source} is not a readable ONNX model ({err}). The file is probably "
                    "truncated or corrupt: delete it and download it again."
                ) from err
    graph.write_bytes(bytes(out))


def load_graph(path: Path) -> ModelProto:
    """The model at ``path`` without its external weights' values (they stay on disk)."""
    import onnx

    return onnx.load(str(path), load_external_data=False)


def weight_array(tensor: TensorProto, folder: Path) -> np.ndarray:
    """The values of one weight, read from its data file in ``folder`` if it lives there."""
    if tensor.data_location != TensorProto.EXTERNAL:
        return numpy_helper.to_array(tensor)
    entries = {entry.key: entry.value for entry in tensor.external_data}
    loaded = TensorProto()
    loaded.CopyFrom(tensor)
    loaded.ClearField("external_data")
    loaded.data_location = TensorProto.DEFAULT
    loaded.raw_data = _read(folder, entries, str(folder))
    return numpy_helper.to_array(loaded)


def save_graph(model: ModelProto, graph: Path, data_name: str) -> None:
    """Save ``model`` as ``graph``, appending the weights it holds inside (those a rewrite
    added) to the data file ``data_name`` beside it; weights already there stay where they
    are."""
    data_path = graph.with_name(data_name)
    with data_path.open("ab") as data:
        writer = _WeightWriter(data, data_name, graph)
        for tensor in model.graph.initializer:
            inside = tensor.data_location != TensorProto.EXTERNAL and tensor.HasField("raw_data")
            if inside and len(tensor.raw_data) >= MIN_EXTERNAL_BYTES:
                raw = tensor.raw_data
                tensor.ClearField("raw_data")
                writer.place(tensor, raw)
    graph.write_bytes(model.SerializeToString())


def append_weights(
    folder: Path, data_name: str, arrays: dict[str, np.ndarray]
) -> list[TensorProto]:
    """Weights pointing at ``arrays``, appended to the data file in ``folder`` one by one;
    each array is released from ``arrays`` once written."""
    tensors = []
    with (folder / data_name).open("ab") as data:
        writer = _WeightWriter(data, data_name, folder / data_name)
        for name in list(arrays):
            array = np.ascontiguousarray(arrays.pop(name))
            tensor = TensorProto(name=name, data_type=helper.np_dtype_to_tensor_dtype(array.dtype))
            tensor.dims.extend(array.shape)
            writer.place(tensor, array.tobytes())
            tensors.append(tensor)
    return tensors


def compact(graph: Path, data_name: str) -> None:
    """Rewrite the data file of ``graph`` (its only user) with the weights the graph still
    reads, so that those a rewrite replaced no longer take disk space."""
    model = load_graph(graph)
    data_path = graph.with_name(data_name)
    fresh = graph.with_name(data_name + ".compact")
    with (
        data_path.open("rb") as old,
        fresh.open("wb") as data,
        mmap.mmap(old.fileno(), 0, access=mmap.ACCESS_READ) as view,
    ):
        writer = _WeightWriter(data, data_name, graph)
        for tensor in model.graph.initializer:
            if tensor.data_location == TensorProto.EXTERNAL:
                entries = {entry.key: entry.value for entry in tensor.external_data}
                offset, length = int(entries.get("offset", 0)), int(entries["length"])
                writer.place_slice(tensor, view, offset, offset + length)
    fresh.replace(data_path)
    graph.write_bytes(model.SerializeToString())


class _WeightWriter:
    """Appends weights to an open data file at aligned offsets and points tensors at them."""

    def __init__(self, data: Any, data_name: str, source: Path) -> None:
        """``source``: the model whose weights are moved (or the graph they are added to)."""
        self.data, self.data_name, self.source = data, data_name, source

    def place_slice(self, tensor: TensorProto, view: mmap.mmap, start: int, end: int) -> None:
        """Place ``view[start:end]`` without copying it; the slice is released whatever
        happens, so that the map can be closed after a failed write."""
        with memoryview(view) as whole, whole[start:end] as raw:
            self.place(tensor, raw)

    def place(self, tensor: TensorProto, raw: memoryview | bytes) -> None:
        position = self.data.tell()
        padding = -position % ALIGNMENT
        self.data.write(b"\0" * padding)
        self.data.write(raw)
        del tensor.external_data[:]
        for key, value in (
            ("location", self.data_name),
            ("offset", str(position + padding)),
            ("length", str(len(raw))),
        ):
            entry = tensor.external_data.add()
            entry.key, entry.value = key, value
        tensor.data_location = TensorProto.EXTERNAL

    def tensor(self, view: mmap.mmap, start: int, end: int) -> bytes:
        """One initializer (the bytes of a TensorProto) with its weight moved out if large."""
        kept = bytearray()
        raw: tuple[int, int] | None = None
        for number, wire, value_start, value_end, field in _fields(view, start, end):
            if number == _TENSOR_RAW_DATA and wire == _LENGTH_DELIMITED:
                raw = (value_start, value_end)
            else:
                kept += view[field:value_end]
        tensor = TensorProto.FromString(bytes(kept))
        if raw is not None and raw[1] - raw[0] >= MIN_EXTERNAL_BYTES:
            self.place_slice(tensor, view, raw[0], raw[1])
        elif raw is not None:
            tensor.raw_data = view[raw[0] : raw[1]]
        elif tensor.data_location == TensorProto.EXTERNAL:
            entries = {entry.key: entry.value for entry in tensor.external_data}
            self.place(tensor, _read(self.source.parent, entries, str(self.source)))
        return tensor.SerializeToString()


def _graph_without_weights(view: mmap.mmap, start: int, end: int, writer: _WeightWriter) -> bytes:
    out = bytearray()
    for number, wire, value_start, value_end, field in _fields(view, start, end):
        if number == _GRAPH_INITIALIZER and wire == _LENGTH_DELIMITED:
            _append_field(out, number, writer.tensor(view, value_start, value_end))
        else:
            out += view[field:value_end]
    return bytes(out)


def _read(folder: Path, entries: dict[str, str], model: str) -> bytes:
    """The bytes of an external weight of ``model``, from its file in ``folder``. The file must
    be inside the folder (ONNX Runtime refuses any other, and so does this): a model must not
    make the server read, and keep in its cache, a file of its choosing."""
    location = Path(entries.get("location", ""))
    path = folder / location
    inside = not location.is_absolute() and ".." not in location.parts and location.parts
    if not inside or not path.resolve().is_relative_to(folder.resolve()):
        raise ModelFileError(
            f"{model}: a weight lives outside the model's folder ({location}): refused"
        )
    offset = int(entries.get("offset", 0))
    try:
        length = int(entries["length"]) if "length" in entries else path.stat().st_size - offset
        with path.open("rb") as file:
            file.seek(offset)
            data = file.read(length)
    except FileNotFoundError as err:
        raise ModelFileError(f"{path}, which holds a weight of {model}, is missing") from err
    if len(data) != length:
        raise ModelFileError(f"{path} ends before the {length} bytes at {offset} a weight needs")
    return data


def _fields(view: Any, start: int, end: int) -> Iterator[tuple[int, int, int, int, int]]:
    """(field number, wire type, value start, value end, field start) of each field of the
    protobuf message in ``view[start:end]``; a length-delimited value is not copied."""
    position = start
    while position < end:
        field = position
        key, position = _varint(view, position)
        number, wire = key >> 3, key & 7
        if wire == 0:
            _, value_end = _varint(view, position)
        elif wire == 1:
            value_end = position + 8
        elif wire == _LENGTH_DELIMITED:
            length, position = _varint(view, position)
            value_end = position + length
        elif wire == 5:
            value_end = position + 4
        else:
            raise ValueError(f"protobuf wire type {wire} at byte {field}: not an ONNX model")
        if value_end > end:
            raise ValueError(f"a protobuf field at byte {field} runs past its message")
        yield number, wire, position, value_end, field
        position = value_end


def _varint(view: Any, position: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        if position >= len(view):
            raise ValueError("the file ends inside a protobuf field")
        byte = view[position]
        value |= (byte & 0x7F) << shift
        position += 1
        if not byte & 0x80:
            return value, position
        shift += 7
        if shift > 63:
            raise ValueError(f"a protobuf varint at byte {position} is too long")


def _append_field(out: bytearray, number: int, value: bytes) -> None:
    out += _encode_varint(number << 3 | _LENGTH_DELIMITED)
    out += _encode_varint(len(value))
    out += value


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)
