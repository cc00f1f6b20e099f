"""Model sizes for the synthetic voice presets."""

from __future__ import annotations

from dataclasses import dataclass

# Fixed by the HayaKoe / SBV2 JP-Extra file format, whatever the preset.
SAMPLING_RATE = 44100
HOP_LENGTH = 512
BERT_OUTPUT_DIM = 1024  # the synthesizer's `bert` input channels
STYLE_DIM = 256
STYLE_NAMES = ("Neutral", "Angry", "Disgust", "Fear", "Happy", "Sad", "Surprise")


@dataclass(frozen=True)
class BertShape:
    """DeBERTa-v2 sizes; everything else comes from the real model's config.json."""

    hidden_size: int
    num_layers: int
    num_heads: int
    head_size: int
    intermediate_size: int

    @property
    def needs_projection(self) -> bool:
        # A small DeBERTa gets a linear map to the 1024 channels the synthesizer expects.
        return self.hidden_size != BERT_OUTPUT_DIM


@dataclass(frozen=True)
class SynthShape:
    """SBV2 JP-Extra synthesizer sizes (the `model` section of config.json)."""

    inter_channels: int
    hidden_channels: int
    filter_channels: int
    n_heads: int
    n_layers: int
    kernel_size: int
    gin_channels: int
    upsample_rates: tuple[int, ...]
    upsample_initial_channel: int
    upsample_kernel_sizes: tuple[int, ...]
    resblock_kernel_sizes: tuple[int, ...] = (3, 7, 11)
    resblock_dilation_sizes: tuple[tuple[int, ...], ...] = ((1, 3, 5), (1, 3, 5), (1, 3, 5))
    resblock: str = "1"
    # Layers of each transformer flow; SBV2 never stores it in config.json (always 6).
    n_layers_trans_flow: int = 6


@dataclass(frozen=True)
class Preset:
    name: str
    default_voice: str
    bert: BertShape
    synth: SynthShape
    # "small": characters of a corpus plus common ones; "real": the real 22,012-entry vocab.
    vocab: str


TINY = Preset(
    name="tiny",
    default_voice="synthetic-tiny",
    bert=BertShape(hidden_size=64, num_layers=4, num_heads=2, head_size=32, intermediate_size=128),
    synth=SynthShape(
        inter_channels=16,
        hidden_channels=24,
        filter_channels=48,
        n_heads=2,
        # the encoder conditions on the speaker at layer index 2, so 3 layers is the minimum
        n_layers=3,
        kernel_size=3,
        gin_channels=16,
        upsample_rates=(8, 8, 2, 2, 2),
        upsample_initial_channel=64,
        upsample_kernel_sizes=(16, 16, 8, 2, 2),
        n_layers_trans_flow=3,
    ),
    vocab="small",
)

FULL = Preset(
    name="full",
    default_voice="synthetic-full",
    bert=BertShape(
        hidden_size=1024, num_layers=24, num_heads=16, head_size=64, intermediate_size=4096
    ),
    synth=SynthShape(
        inter_channels=192,
        hidden_channels=192,
        filter_channels=768,
        n_heads=2,
        n_layers=6,
        kernel_size=3,
        gin_channels=512,
        upsample_rates=(8, 8, 2, 2, 2),
        upsample_initial_channel=512,
        upsample_kernel_sizes=(16, 16, 8, 2, 2),
    ),
    vocab="real",
)

PRESETS = {p.name: p for p in (TINY, FULL)}


def check_preset(preset: Preset) -> None:
    """Refuse sizes that would not give a 44.1 kHz / hop 512 voice."""
    product = 1
    for rate in preset.synth.upsample_rates:
        product *= rate
    if product != HOP_LENGTH:
        raise ValueError(f"upsample rates of {preset.name} multiply to {product}, not {HOP_LENGTH}")
    if preset.bert.num_layers < 3:
        raise ValueError("the BERT output is the third-from-last hidden state: need >= 3 layers")
