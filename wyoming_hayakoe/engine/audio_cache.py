"""Finished audio kept in memory, so a daily announcement plays at once the second time."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Sequence


class AudioCache:
    """A least-recently-used map from a request's key to its PCM chunks, bounded in bytes."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[Hashable, tuple[tuple[str, bytes], ...]] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> tuple[tuple[str, bytes], ...] | None:
        with self._lock:
            chunks = self._entries.get(key)
            if chunks is not None:
                self._entries.move_to_end(key)
            return chunks

    def put(self, key: Hashable, chunks: Sequence[tuple[str, bytes]]) -> None:
        size = sum(len(pcm) for _, pcm in chunks)
        if size > self.max_bytes:
            return
        with self._lock:
            if key in self._entries:
                return
            self._entries[key] = tuple(chunks)
            self._size += size
            while self._size > self.max_bytes:
                _, evicted = self._entries.popitem(last=False)
                self._size -= sum(len(pcm) for _, pcm in evicted)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._size = 0

    @property
    def size_bytes(self) -> int:
        return self._size

    def __len__(self) -> int:
        return len(self._entries)
