"""One synthesis, several listeners (service/flights.py): late joiners, listeners that leave,
clients that do not read."""

from __future__ import annotations

import asyncio

import pytest

from wyoming_hayakoe.engine import PcmPiece
from wyoming_hayakoe.service.flights import MAX_UNSENT_SECONDS, Flight

BYTES_PER_SECOND = 100


def _piece(index: int, seconds: float = 1.0) -> PcmPiece:
    return PcmPiece(f"s{index}", bytes([index]) * int(seconds * BYTES_PER_SECOND))


class Collector:
    def __init__(self) -> None:
        self.pieces: list[PcmPiece] = []
        self.more = asyncio.Event()

    async def __call__(self, piece: PcmPiece) -> None:
        self.pieces.append(piece)
        self.more.set()


async def test_a_late_joiner_gets_the_audio_so_far_at_once_then_the_rest() -> None:
    flight = Flight("key", BYTES_PER_SECOND, abandon=lambda: None)
    first, late = Collector(), Collector()
    listening = asyncio.create_task(flight.listen(first))
    for index in range(3):
        flight.add(_piece(index))
    await asyncio.sleep(0)
    joined = asyncio.create_task(flight.listen(late))
    await asyncio.sleep(0)
    assert [p.text for p in late.pieces] == ["s0", "s1", "s2"]  # at once, before any more
    flight.add(_piece(3))
    flight.finish()
    assert await listening == await joined == 4
    assert late.pieces == first.pieces == [_piece(i) for i in range(4)]


async def test_a_listener_that_leaves_stops_only_its_own_stream() -> None:
    abandoned: list[bool] = []
    flight = Flight("key", BYTES_PER_SECOND, abandon=lambda: abandoned.append(True))
    staying, leaving = Collector(), Collector()
    stays = asyncio.create_task(flight.listen(staying))
    leaves = asyncio.create_task(flight.listen(leaving))
    flight.add(_piece(0))
    await asyncio.sleep(0)
    leaves.cancel()  # its client went away
    with pytest.raises(asyncio.CancelledError):
        await leaves
    assert flight.listeners == 1 and not abandoned
    assert await flight.wants_more(), "someone still listens: synthesis goes on"
    flight.add(_piece(1))
    flight.finish()
    assert await stays == 2
    assert not abandoned


async def test_when_the_last_listener_leaves_the_flight_is_abandoned() -> None:
    abandoned: list[bool] = []
    flight = Flight(None, BYTES_PER_SECOND, abandon=lambda: abandoned.append(True))
    listening = asyncio.create_task(flight.listen(Collector()))
    await asyncio.sleep(0)
    listening.cancel()
    with pytest.raises(asyncio.CancelledError):
        await listening
    assert abandoned == [True]
    assert not await flight.wants_more()


async def test_production_waits_for_a_client_that_does_not_read() -> None:
    flight = Flight("key", BYTES_PER_SECOND, abandon=lambda: None)
    stuck = asyncio.Event()

    async def never_done(piece: PcmPiece) -> None:
        await stuck.wait()  # a client whose socket is full

    reader = asyncio.create_task(flight.listen(never_done))
    await asyncio.sleep(0)
    for index in range(int(MAX_UNSENT_SECONDS) + 2):
        flight.add(_piece(index % 256))
    waiting = asyncio.create_task(flight.wants_more())
    await asyncio.sleep(0.05)
    assert not waiting.done(), "made far ahead of every listener: production waits"
    # Another client that keeps up lets it go on.
    keeping_up = asyncio.create_task(flight.listen(Collector()))
    assert await asyncio.wait_for(waiting, 5)
    flight.finish()
    await keeping_up
    reader.cancel()


async def test_a_flight_nobody_can_join_keeps_only_what_its_listener_has_not_taken() -> None:
    flight = Flight(None, BYTES_PER_SECOND, abandon=lambda: None)
    collector = Collector()
    listening = asyncio.create_task(flight.listen(collector))
    for index in range(5):
        flight.add(_piece(index))
        await asyncio.sleep(0)
    assert len(flight._pieces) <= 1
    flight.finish()
    assert await listening == 5
    assert [p.text for p in collector.pieces] == [f"s{i}" for i in range(5)]


async def test_an_error_reaches_every_listener() -> None:
    flight = Flight("key", BYTES_PER_SECOND, abandon=lambda: None)
    listeners = [asyncio.create_task(flight.listen(Collector())) for _ in range(2)]
    await asyncio.sleep(0)
    flight.finish(ValueError("bad style"))
    for listening in listeners:
        with pytest.raises(ValueError, match="bad style"):
            await listening
