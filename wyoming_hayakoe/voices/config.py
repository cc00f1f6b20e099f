"""A voice's ``config.json`` (Style-Bert-VITS2 hyper-parameters): what inference needs of it."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ModelFileError
from ..json_file import read_json_object

# SBV2's generator: conv_pre and conv_post are fixed 7-tap convolutions.
_PRE_KERNEL = 7
_POST_KERNEL = 7
_DEFAULT_VERSION = "2.0-JP-Extra"


@dataclass(frozen=True)
class DecoderShape:
    """What bounds the decoder's receptive field (the ``model`` section of config.json)."""

    upsample_rates: Sequence[int] = (8, 8, 2, 2, 2)
    upsample_kernel_sizes: Sequence[int] = (16, 16, 8, 2, 2)
    resblock: str = "1"
    resblock_kernel_sizes: Sequence[int] = (3, 7, 11)
    resblock_dilation_sizes: Sequence[Sequence[int]] = ((1, 3, 5), (1, 3, 5), (1, 3, 5))

    @classmethod
    def from_config(cls, model: dict[str, Any]) -> DecoderShape:
        known = {name: model[name] for name in cls.__dataclass_fields__ if name in model}
        if "resblock" in known:
            known["resblock"] = str(known["resblock"])
        return cls(**known)

    def context_frames(self) -> int:
        """How many latent frames either side an output sample can depend on, exactly.

        Walks the generator backwards, turning the span of samples one output sample reads
        into the span it reads one layer earlier, down to the latent; the widest span over
        every sample of a frame decides (13 frames for the published configuration).
        """
        total_rate = math.prod(self.upsample_rates)
        spread = self.resblock_spread()
        reach = max(
            frame
            for sample in range(total_rate)
            for frame in self._frames_read(sample, total_rate, spread)
        )
        return int(reach)

    def _frames_read(self, sample: int, total_rate: int, spread: int) -> tuple[int, int]:
        """Latent frames before and after the frame of ``sample`` that it reads, given the
        generator's total upsampling and the samples either side a residual stage reads."""
        # Far from the edges, so that padding never clips the span.
        out = sample + 64 * total_rate
        low, high = out - (_POST_KERNEL - 1) // 2, out + (_POST_KERNEL - 1) // 2
        for rate, kernel in reversed(
            list(zip(self.upsample_rates, self.upsample_kernel_sizes, strict=False))
        ):
            low, high = low - spread, high + spread
            # ConvTranspose1d(kernel, rate, padding=(kernel - rate) // 2): output n reads
            # inputs m with n = m * rate - padding + j, 0 <= j < kernel.
            padding = (kernel - rate) // 2
            low = -((-(low + padding - kernel + 1)) // rate)  # ceiling division
            high = (high + padding) // rate
        low, high = low - (_PRE_KERNEL - 1) // 2, high + (_PRE_KERNEL - 1) // 2
        frame = out // total_rate
        return frame - low, high - frame

    def resblock_spread(self) -> int:
        """Samples either side that the widest residual block reads (the blocks are summed)."""
        spreads = []
        for kernel, dilations in zip(
            self.resblock_kernel_sizes, self.resblock_dilation_sizes, strict=False
        ):
            spread = sum((kernel - 1) * d // 2 for d in dilations)
            if self.resblock == "1":  # each dilated conv is followed by an undilated one
                spread += len(dilations) * ((kernel - 1) // 2)
            spreads.append(spread)
        return max(spreads, default=0)


@dataclass(frozen=True)
class VoiceConfig:
    """The parts of an SBV2 ``config.json`` that inference needs."""

    sample_rate: int
    hop_length: int
    styles: dict[str, int]
    """Style name -> row of ``style_vectors.npy``."""
    speakers: dict[str, int]
    """Speaker name -> speaker id (``data.spk2id``: the ids are its values, which need not be
    0, 1, 2...)."""
    decoder_shape: DecoderShape = field(default_factory=DecoderShape)

    @property
    def styles_by_id(self) -> list[str]:
        """Style names ordered by their row, so the default (Neutral, row 0) comes first."""
        return sorted(self.styles, key=self.styles.__getitem__)

    @property
    def speakers_by_id(self) -> list[str]:
        """Speaker names ordered by speaker id."""
        return sorted(self.speakers, key=self.speakers.__getitem__)

    @property
    def default_speaker_id(self) -> int:
        """The speaker of requests that name none: id 0 (HayaKoe's default) where the voice
        has it, else its lowest id."""
        ids = self.speakers.values()
        return 0 if 0 in ids or not ids else min(ids)

    @classmethod
    def read(cls, path: Path) -> VoiceConfig:
        raw = read_json_object(path, "Voice config", "Download the voice again.")
        return cls.from_raw(raw, path)

    @classmethod
    def from_raw(cls, raw: dict[str, Any], path: Path) -> VoiceConfig:
        """The config from parsed ``config.json`` contents; ``path`` names where they came from."""
        data = raw.get("data") or {}
        # HayaKoe reads a config without a version as its default, "2.0-JP-Extra".
        version = str(raw.get("version", _DEFAULT_VERSION))
        if not version.endswith("JP-Extra"):
            raise ModelFileError(
                f"{path}: version {version!r} is not a Style-Bert-VITS2 JP-Extra voice; "
                "only JP-Extra voices are supported."
            )
        if data.get("add_blank", True) is not True:
            raise ModelFileError(f"{path}: voices without add_blank are not supported.")
        try:
            num_styles = int(data.get("num_styles", 1))
            styles = {str(k): int(v) for k, v in (data.get("style2id") or {}).items()}
            speakers = {str(k): int(v) for k, v in (data.get("spk2id") or {"0": 0}).items()}
            config = cls(
                sample_rate=int(data.get("sampling_rate", 44100)),
                hop_length=int(data.get("hop_length", 512)),
                styles=styles or {str(i): i for i in range(num_styles)},
                speakers=speakers,
                decoder_shape=DecoderShape.from_config(raw.get("model") or {}),
            )
        except (TypeError, ValueError, AttributeError) as err:
            raise ModelFileError(f"{path}: malformed data section ({err})") from err
        if config.sample_rate <= 0 or config.hop_length <= 0:
            raise ModelFileError(f"{path}: sampling_rate and hop_length must be positive")
        return config
