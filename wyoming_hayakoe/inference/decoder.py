"""Decoding a sentence's latent as a stream, stage by stage, so sound plays while it decodes.

The decoder (a HiFi-GAN-like generator) runs as its stages (conv_pre, each upsampling step with
its residual blocks, conv_post; see compiling/graphs/decoder_stages.py). Every stage is a stack of
convolutions at one rate: an output sample reads only a few input samples either side (its
reach). Fed its input piece by piece, a stage emits the outputs whose reach is complete and
keeps the last input samples it will read again; a piece recomputes only those few samples of
its own stage, at its own rate. The stitched audio equals decoding the whole latent at once,
and a cut costs a few percent of a window instead of 2 x 13 frames through the whole stack.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import onnxruntime as ort

from ..errors import ModelFileError
from ..pacing.fixed import FixedWindows, WindowSchedule

_LOGGER = logging.getLogger(__name__)

_FLOAT_TYPES = {"tensor(float)": np.float32, "tensor(float16)": np.float16}
"""ONNX Runtime's names of the decoder's possible input types."""


@dataclass(frozen=True)
class Stage:
    """One stage of the decoder and how far its outputs reach into its input."""

    session: ort.InferenceSession
    signal_input: str
    condition_input: str | None
    """The speaker conditioning input, if this stage reads it."""
    rate: int
    """Output samples per input sample."""
    before: int
    """Output sample n reads inputs from ``n // rate - before`` ..."""
    after: int
    """... to ``n // rate + after``."""

    def ready(self, known: int, total: int) -> int:
        """How many outputs are exact once ``known`` of ``total`` inputs are."""
        if known >= total:
            return total * self.rate
        return max(0, known - self.after) * self.rate


class _StageStream:
    """One stage fed piece by piece: it keeps the inputs it will read again."""

    def __init__(self, stage: Stage, total: int, condition: np.ndarray) -> None:
        self.stage, self.total, self.condition = stage, total, condition
        self.kept: np.ndarray | None = None
        self.kept_from = 0
        """Input index of ``kept[..., 0]``."""
        self.known = 0
        self.emitted = 0
        self.ran = 0
        """Input samples the last push ran the stage on (0: it did not run)."""

    def push(self, piece: np.ndarray | None) -> np.ndarray | None:
        """Take the next input piece (None: nothing new); the outputs now exact, if any."""
        stage, kept = self.stage, self.kept
        if piece is not None:
            self.known += piece.shape[2]
        end = stage.ready(self.known, self.total)
        self.ran = 0
        if end <= self.emitted:
            if piece is not None:
                self.kept = piece if kept is None else np.concatenate([kept, piece], axis=2)
            return None
        low = max(0, self.emitted // stage.rate - stage.before)
        # One copy per piece: the samples read again, then the new ones.
        if kept is None:  # the first piece
            signal = np.ascontiguousarray(piece)
        elif piece is None:
            signal = np.ascontiguousarray(kept[:, :, low - self.kept_from :])
        else:
            signal = np.concatenate([kept[:, :, low - self.kept_from :], piece], axis=2)
        feeds = {stage.signal_input: signal}
        if stage.condition_input is not None:
            feeds[stage.condition_input] = self.condition
        out = stage.session.run(None, feeds)[0]
        self.ran = signal.shape[2]
        if out.shape[2] != (self.known - low) * stage.rate:
            raise ModelFileError(f"decoder stage gave {out.shape[2]} samples, not a whole rate")
        first = low * stage.rate
        result = out[:, :, self.emitted - first : end - first]
        self.emitted = end
        keep_from = max(0, end // stage.rate - stage.before)
        self.kept = signal[:, :, keep_from - low :]  # a view: the copy is made once, above
        self.kept_from = keep_from
        return result


@dataclass(frozen=True)
class Decoder:
    """The decoder half of a split synthesizer, run stage by stage."""

    stages: list[Stage]
    latent_name: str
    condition_name: str
    hop: int
    """Audio samples per latent frame."""
    context: int
    """Latent frames either side that one frame of audio depends on, through all stages."""
    cut_frames: float = 0.0
    """The work one cut adds, in latent frames decoded again (each stage's reach, weighted
    by the stage's share of the work)."""
    sample_costs: tuple[float, ...] = ()
    """The work of one input sample of each stage, in latent frames through the whole
    decoder (see cut_cost); empty: a window counts as its frames and a cut."""

    def decode(
        self, latent: np.ndarray, condition: np.ndarray, windows: Sequence[int]
    ) -> Iterator[np.ndarray]:
        """Float audio of ``latent`` in fixed ``windows`` of frames (frames left after the
        last one in one more), through the decode loop. Each piece is all audio exact so far."""
        fixed = FixedWindows(latent.shape[2], windows)
        for piece in decode_steps(self.stream(latent, condition), fixed):
            if piece is not None:
                yield piece

    def stream(self, latent: np.ndarray, condition: np.ndarray) -> LatentStream:
        """``latent`` ready to be decoded window by window, each window decided when due."""
        return LatentStream(self, latent, condition)

    def silence(self, frames: int) -> tuple[np.ndarray, np.ndarray] | None:
        """A latent of ``frames`` zero frames and a zero condition, shaped and typed as the
        stages take them; None if the graph leaves their channel counts or types open."""
        inputs = {
            arg.name: arg
            for stage in self.stages
            for arg in stage.session.get_inputs()
            if arg.name in (stage.signal_input, stage.condition_input)
        }
        signal = inputs[self.stages[0].signal_input]
        readers = [s.condition_input for s in self.stages if s.condition_input is not None]
        condition = inputs[readers[0]] if readers else None
        dtype = _FLOAT_TYPES.get(signal.type)
        condition_dtype = _FLOAT_TYPES.get(condition.type) if condition is not None else dtype
        channels = signal.shape[1]
        condition_shape = list(condition.shape) if condition is not None else [1, 1, 1]
        if (
            dtype is None
            or condition_dtype is None
            or not isinstance(channels, int)
            or not all(isinstance(d, int) for d in condition_shape)
        ):
            return None
        latent = np.zeros((1, channels, frames), dtype)
        return latent, np.zeros(condition_shape, condition_dtype)

    def audible_frames(self, known: int, frames: int) -> float:
        """Frames of audio out once ``known`` of ``frames`` latent frames are decoded."""
        total = frames
        for stage in self.stages:
            known, total = stage.ready(known, total), total * stage.rate
        return known / self.hop

    def growing(
        self, latent: np.ndarray, condition: np.ndarray, early: bool
    ) -> Iterator[np.ndarray]:
        """Float audio of ``latent`` in the windows of :meth:`FixedWindows.growing`: one piece,
        or growing windows when ``early`` sound is wanted (the self-check, the calibration)."""
        yield from self.decode(
            latent, condition, FixedWindows.growing(latent.shape[2], early).sizes
        )


class WindowFeed(Protocol):
    """A latent being decoded (:class:`LatentStream`): fed window by window."""

    def feed(self, size: int) -> np.ndarray | None:
        """Decode the next ``size`` frames; the audio that became exact, if any."""

    @property
    def work(self) -> float:
        """The decoding the last feed did, in latent frames through the whole decoder."""


def decode_steps(
    stream: WindowFeed, schedule: WindowSchedule, now: Callable[[], float] = time.monotonic
) -> Iterator[np.ndarray | None]:
    """The decode loop, the one every decoding takes: ``stream`` fed in the windows
    ``schedule`` sizes as each comes due (the scheduled windows of a request, or fixed ones),
    one window per step; after each, the float audio the schedule sends (None while it holds
    the sound back or none is exact yet)."""
    while not schedule.done:
        size = schedule.next_window()
        started = now()
        audio = stream.feed(size)
        yield schedule.decoded(size, now() - started, audio, stream.work)


class LatentStream:
    """One latent being decoded: fed window by window, each window gives the audio that
    became exact (None while the decoder still waits for the frames after it)."""

    def __init__(self, decoder: Decoder, latent: np.ndarray, condition: np.ndarray) -> None:
        self.decoder = decoder
        self.latent = latent
        self.frames: int = latent.shape[2]
        self.known = 0
        """Latent frames fed so far."""
        self._fed = 0
        self._streams: list[_StageStream] = []
        total = self.frames
        for stage in decoder.stages:
            self._streams.append(_StageStream(stage, total, condition))
            total *= stage.rate

    @property
    def done(self) -> bool:
        return self.known >= self.frames

    def feed(self, size: int) -> np.ndarray | None:
        """Decode the next ``size`` frames (fewer if fewer are left)."""
        start, end = self.known, min(self.frames, self.known + size)
        piece: np.ndarray | None = self.latent[:, :, start:end]
        self.known = end
        for stream in self._streams:
            piece = stream.push(piece)
        self._fed = end - start
        return piece.reshape(-1) if piece is not None and piece.size else None

    @property
    def work(self) -> float:
        """The decoding the last feed did, in latent frames: what each stage ran on, at its
        cost per sample. The first window of a latent reads no context before it and the
        last one runs every stage's held-back samples: counted as frames and a cut, the one
        looked fast and the other slow, and a short request (all first and last windows) made
        the speed learned look lower than it is."""
        costs = self.decoder.sample_costs
        if not costs:
            return self._fed + self.decoder.cut_frames
        return sum(stream.ran * cost for stream, cost in zip(self._streams, costs, strict=True))
