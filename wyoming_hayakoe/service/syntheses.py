"""The syntheses in progress: their CPU turns, the flights identical requests share, the cap.

Each synthesis is a task that runs the engine's steps (a sentence's front-end, BERT and text
encoder; a decoder window) on the synthesis thread, one CPU turn per step, and hands each
piece to its :class:`~.flights.Flight`. Requests listen to flights, never to the engine, so a
slow client holds up only itself, and requests for the same audio share one flight.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Callable, Hashable, Iterator

from ..engine import Continuation, Engine, PcmPiece, SynthesisParams, Voice
from ..engine.prepared import PreparedText
from ..errors import ServerBusyError
from ..foreground import Foreground
from ..pacing.scheduler import PlaybackClock
from ..pacing.turns import CpuTurns, Demand, TurnOrder
from .flights import Flight, PieceCallback
from .workers import Workers

_LOGGER = logging.getLogger(__name__)
_END = object()


class Syntheses:
    def __init__(self, workers: Workers, max_waiting: int, foreground: Foreground) -> None:
        self._workers = workers
        self._foreground = foreground
        self._max_waiting = max_waiting
        self.order = TurnOrder()
        self._turns = CpuTurns(self.order)
        self._flights: dict[Hashable, Flight] = {}
        self._producers: set[asyncio.Task[None]] = set()
        self._warm_ups: set[asyncio.Task[None]] = set()

    async def run(
        self,
        engine: Engine,
        voice: Voice,
        params: SynthesisParams,
        prepared: PreparedText,
        on_piece: PieceCallback,
        continuation: Continuation | None = None,
    ) -> int:
        """The audio of ``prepared`` to ``on_piece``: from the audio cache, from an identical
        synthesis in progress, or from a new one; the number of pieces."""
        key = engine.audio_key(voice, prepared, params, continuation)
        cached = engine.kept_audio(key)
        if cached is not None:
            for piece in cached:
                await on_piece(piece)
            return len(cached)
        if key is not None:
            flight = self._flights.get(key)
            if flight is not None:
                _LOGGER.debug("Joining an identical synthesis in progress")
                return await flight.listen(on_piece)
        if len(self._producers) >= self._max_waiting:
            raise ServerBusyError(
                f"{len(self._producers)} syntheses are in progress, the most this server "
                "takes at once (--max-waiting): try again in a moment"
            )
        steps_of = functools.partial(
            engine.synthesis_steps, voice, prepared, params, continuation, keep_as=key
        )
        flight = self._start(steps_of, continuation, key, voice.sample_rate)
        return await flight.listen(on_piece)

    async def calibrate(self, engine: Engine, voice: Voice) -> None:
        """Measure a voice's loudness: it synthesizes, so it takes a turn as a new request."""
        await self._in_a_turn(engine.voices.gain, voice)

    def warm_up(self, engine: Engine, voice: Voice) -> None:
        """Warm the voice's decoder up in the background, in the first CPU turn: a request
        arriving meanwhile waits for it (a fraction of a second), and is planned on this
        machine's speed."""
        task = asyncio.create_task(self._warm_up(engine, voice))
        self._warm_ups.add(task)
        task.add_done_callback(self._warm_ups.discard)

    async def _warm_up(self, engine: Engine, voice: Voice) -> None:
        try:
            await self._in_a_turn(engine.voices.warm_up, voice)
        except Exception as err:  # the first request learns the speed itself then
            _LOGGER.warning("Warming up the decoder of %s failed: %s", voice.name, err)

    async def _in_a_turn(self, work: Callable[[Voice], object], voice: Voice) -> None:
        """``work(voice)`` on the synthesis thread, in a CPU turn of its own, queued as a new
        request is (its deadline is now)."""
        async with self._turns.turn(Demand(time.monotonic(), PlaybackClock())):
            self._foreground.begin()
            try:
                await self._workers.synthesize(work, voice)
            finally:
                self._foreground.end()

    def close(self) -> None:
        for task in [*self._producers, *self._warm_ups]:
            task.cancel()

    def _start(
        self,
        steps_of: functools.partial[Iterator[PcmPiece | None]],
        continuation: Continuation | None,
        key: Hashable | None,
        sample_rate: int,
    ) -> Flight:
        """A new flight and the task that produces its pieces."""
        clock = continuation.playback if continuation else PlaybackClock()
        demand = Demand(time.monotonic(), clock)
        steps = steps_of(demand.pacing)

        def abandon() -> None:
            self._forget(flight)
            producer.cancel()

        flight = Flight(key, sample_rate * 2, abandon)  # 16-bit mono
        producer = asyncio.create_task(self._produce(flight, demand, steps))
        self._producers.add(producer)
        producer.add_done_callback(self._producers.discard)
        if key is not None:
            self._flights[key] = flight
        return flight

    def _forget(self, flight: Flight) -> None:
        if flight.key is not None and self._flights.get(flight.key) is flight:
            del self._flights[flight.key]

    async def _produce(
        self, flight: Flight, demand: Demand, steps: Iterator[PcmPiece | None]
    ) -> None:
        """Run ``steps`` one CPU turn each, while anybody listens, into ``flight``."""
        self.order.join(demand)
        self._foreground.begin()
        exhausted = False
        waited, turns = 0.0, 0
        try:
            while await flight.wants_more():
                asked = time.monotonic()
                async with self._turns.turn(demand):
                    waited += time.monotonic() - asked
                    turns += 1
                    piece = await self._step(steps)
                if piece is _END:
                    exhausted = True
                    break
                if isinstance(piece, PcmPiece):
                    flight.add(piece)
            self._forget(flight)
            flight.finish()
        except asyncio.CancelledError:
            flight.finish(ConnectionError("the synthesis was stopped"))
            raise
        except Exception as err:  # every listener hears of it
            self._forget(flight)
            flight.finish(err)
        finally:
            self.order.leave(demand)
            self._foreground.end()
            _LOGGER.debug("Waited %.3f s in all for the CPU (%d steps)", waited, turns)
            if not exhausted:
                await self._close(steps)

    async def _step(self, steps: Iterator[PcmPiece | None]) -> object:
        """The next step on the synthesis thread; a step in progress cannot be interrupted,
        so a cancelled caller waits for it before the CPU goes to the next."""
        future = self._workers.start_synthesis(next, steps, _END)
        try:
            return await asyncio.shield(future)
        except asyncio.CancelledError:
            await asyncio.wait([future])
            raise

    async def _close(self, steps: Iterator[PcmPiece | None]) -> None:
        close = getattr(steps, "close", None)
        if close is None:
            return
        try:
            await self._workers.synthesize(close)
            _LOGGER.debug("Synthesis stopped early; remaining sentences dropped")
        except Exception:  # the request is gone: nobody to report to
            _LOGGER.debug("Error while stopping a synthesis", exc_info=True)
