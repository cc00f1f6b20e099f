"""Single-flight: requests for the same audio share one synthesis while it is in progress.

A :class:`Flight` is one synthesis in progress and the listeners it feeds. Its producer (the
service) adds each piece as it is made; every listener sends the pieces to its own client at
its own pace: one that joins late gets the audio made so far at once, then the rest as it
comes. A listener that leaves (its client went away) stops only its own stream; when the
last one leaves, the flight is abandoned and the service stops the synthesis.

Production waits while every listener is more than MAX_UNSENT_SECONDS of audio behind it
(clients that do not read), so memory stays bounded; it never waits for one slow listener
while another keeps up. A flight others may join keeps every piece until it ends (at most
the audio of a text short enough for the audio cache); one nobody can join (no key: a streamed
sentence, a long text) drops the pieces its listener has taken.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable

from ..engine import PcmPiece

PieceCallback = Callable[[PcmPiece], Awaitable[None]]

MAX_UNSENT_SECONDS = 30.0
"""Audio made ahead of the most advanced listener before production waits: far more than any
client needs in advance (Home Assistant reads as fast as the audio comes), little memory
(2.6 MB at 44.1 kHz)."""


class Flight:
    def __init__(
        self, key: Hashable | None, bytes_per_second: int, abandon: Callable[[], None]
    ) -> None:
        """``key``: what identical requests share (None: nobody joins); ``abandon``: called
        once when the last listener leaves before the end."""
        self.key = key
        self._max_unsent = int(MAX_UNSENT_SECONDS * bytes_per_second)
        self._abandon = abandon
        self._pieces: list[PcmPiece] = []
        self._dropped = 0  # pieces before _pieces[0], already taken by the only listener
        self._made_bytes = 0
        self._taken: dict[int, int] = {}  # bytes each listener has taken
        self._next_listener = 0
        self._done = False
        self._error: BaseException | None = None
        self._news = asyncio.Event()

    @property
    def listeners(self) -> int:
        return len(self._taken)

    @property
    def done(self) -> bool:
        return self._done

    # ----- the producer's side -----

    def add(self, piece: PcmPiece) -> None:
        self._pieces.append(piece)
        self._made_bytes += len(piece.pcm)
        self._tell()

    def finish(self, error: BaseException | None = None) -> None:
        """No more pieces; ``error`` is raised to every listener."""
        self._done, self._error = True, error
        self._tell()

    async def wants_more(self) -> bool:
        """Wait while every listener is far behind; False when nobody listens any more."""
        while self._taken and self._made_bytes - max(self._taken.values()) > self._max_unsent:
            await self._changed()
        return bool(self._taken)

    # ----- a listener's side -----

    async def listen(self, on_piece: PieceCallback) -> int:
        """Send every piece to ``on_piece``, from the first one on; the number sent."""
        listener = self._next_listener
        self._next_listener += 1
        self._taken[listener] = 0
        index = self._dropped
        try:
            while True:
                while index - self._dropped < len(self._pieces):
                    piece = self._pieces[index - self._dropped]
                    index += 1
                    await on_piece(piece)
                    self._taken[listener] += len(piece.pcm)
                    self._tell()  # production may be waiting for room
                    if self.key is None:  # nobody else will ever read it
                        self._drop_before(index)
                if self._done:
                    if self._error is not None:
                        raise self._error
                    return index
                await self._changed()
        finally:
            del self._taken[listener]
            if not self._taken and not self._done:
                self._abandon()
            self._tell()

    # ----- both -----

    def _drop_before(self, index: int) -> None:
        del self._pieces[: index - self._dropped]
        self._dropped = index

    def _tell(self) -> None:
        self._news.set()
        self._news = asyncio.Event()

    async def _changed(self) -> None:
        await self._news.wait()
