"""The SBV2 JP-Extra synthesizer (the reference's own class) with seeded random weights, tuned
so that it behaves like a voice: phonemes of 70-100 ms and audible, unclipped audio."""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any

import torch
from hayakoe.models import commons
from hayakoe.models.models_jp_extra import SynthesizerTrn
from hayakoe.nlp.symbols import SYMBOLS
from torch import nn
from torch.nn.utils import parametrize

from tools.synthetic_voice import decoder_weights
from tools.synthetic_voice.presets import BERT_OUTPUT_DIM, HOP_LENGTH, SynthShape

_LOGGER = logging.getLogger(__name__)

FILTER_LENGTH = 2048  # SBV2's STFT size: spec_channels = 1025
SEGMENT_SIZE = 16384
TARGET_FRAMES = 7.0  # per phoneme: 7 x 512 / 44100 = 81 ms
DP_SPREAD = 0.15  # std of the deterministic predictor's log-duration around the target
DECODER_RMS = 0.25  # pre-tanh RMS: audible, far from clipping
CALIBRATION_FRAMES = 96
CONTEXT_CHECK_FRAMES = 192
JP_TONE_OFFSET = 6
JP_LANGUAGE = 1


TEXT_INPUTS = ["x", "x_lengths", "sid", "tone", "language", "bert", "style_vec"]
SYNTH_INPUTS = [*TEXT_INPUTS, "noise_scale", "length_scale", "noise_scale_w", "sdp_ratio"]
DURATION_INPUTS = [*TEXT_INPUTS, "length_scale", "noise_scale_w", "sdp_ratio"]

Feeds = dict[str, torch.Tensor]


class ExportableSynthesizer(SynthesizerTrn):
    """The reference's SynthesizerTrn with an ONNX-exportable ``forward``.

    Subclassing (not wrapping) keeps the module paths, so the exported decoder nodes are named
    ``/dec/...``. ``export_target`` picks the graph: "synthesizer" takes SYNTH_INPUTS and gives
    (audio, frames per phoneme); "durations" takes DURATION_INPUTS and gives the frames only.
    """

    export_target = "synthesizer"
    weight_norm_modules: tuple[str, ...] = ()
    """Modules the reference builds with weight norm (folded into plain weights here)."""

    def forward(self, *inputs: torch.Tensor) -> Any:
        if self.export_target == "durations":
            feeds = dict(zip(DURATION_INPUTS, inputs, strict=True))
            return self._encode(feeds)[-1].squeeze(1)  # [1, phones]
        feeds = dict(zip(SYNTH_INPUTS, inputs, strict=True))
        z, g, frames = self.latent(feeds)
        return self.dec(z, g=g), frames.squeeze(1)

    def encode_text(self, f: Feeds) -> tuple[torch.Tensor, ...]:
        """(speaker conditioning g, encoder output, prior mean, prior log-std, phone mask)"""
        g = self.emb_g(f["sid"]).unsqueeze(-1)
        hidden, m_p, logs_p, x_mask = self.enc_p(
            f["x"], f["x_lengths"], f["tone"], f["language"], f["bert"], f["style_vec"], g=g
        )
        return g, hidden, m_p, logs_p, x_mask

    def _encode(self, f: Feeds) -> tuple[torch.Tensor, ...]:
        g, hidden, m_p, logs_p, x_mask = self.encode_text(f)
        sdp = self.sdp(hidden, x_mask, g=g, reverse=True, noise_scale=f["noise_scale_w"])
        logw = f["sdp_ratio"] * sdp + (1 - f["sdp_ratio"]) * self.dp(hidden, x_mask, g=g)
        frames = torch.ceil(torch.exp(logw) * x_mask * f["length_scale"])  # [1, 1, phones]
        return g, m_p, logs_p, x_mask, frames

    def latent(self, f: Feeds) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Everything before the decoder: (z * y_mask, g, frames)."""
        g, m_p, logs_p, x_mask, frames = self._encode(f)
        n_frames = torch.clamp_min(frames.sum([1, 2]), 1).long()
        y_mask = commons.sequence_mask(n_frames, None).unsqueeze(1).to(x_mask.dtype)
        # [1, frames, phones]: which phoneme each frame belongs to
        align = commons.generate_path(frames, x_mask.unsqueeze(2) * y_mask.unsqueeze(-1))
        align = align.squeeze(1)
        mean = torch.matmul(align, m_p.transpose(1, 2)).transpose(1, 2)
        log_std = torch.matmul(align, logs_p.transpose(1, 2)).transpose(1, 2)
        z_p = mean + torch.randn_like(mean) * torch.exp(log_std) * f["noise_scale"]
        z = self.flow(z_p, y_mask, g=g, reverse=True)
        return z * y_mask, g, frames


@dataclass(frozen=True)
class ProbeInput:
    """A fixed blank-interspersed phoneme sequence used to tune and check the weights."""

    tensors: dict[str, torch.Tensor]

    @staticmethod
    def make(n_phonemes: int, style_row: torch.Tensor, seed: int) -> ProbeInput:
        gen = torch.Generator().manual_seed(seed)
        n = 2 * n_phonemes + 1
        x = torch.zeros(1, n, dtype=torch.long)
        tone = torch.zeros(1, n, dtype=torch.long)
        language = torch.zeros(1, n, dtype=torch.long)
        x[0, 1::2] = torch.randint(1, len(SYMBOLS), (n_phonemes,), generator=gen)
        tone[0, 1::2] = JP_TONE_OFFSET + torch.randint(0, 2, (n_phonemes,), generator=gen)
        language[0, 1::2] = JP_LANGUAGE
        return ProbeInput(
            {
                "x": x,
                "x_lengths": torch.tensor([n]),
                "sid": torch.tensor([0]),
                "tone": tone,
                "language": language,
                # the synthetic BERTs give features of about unit variance
                "bert": torch.randn(1, BERT_OUTPUT_DIM, n, generator=gen),
                "style_vec": style_row.reshape(1, -1).float(),
                "noise_scale": torch.tensor([0.6]),
                "length_scale": torch.tensor([1.0]),
                "noise_scale_w": torch.tensor([0.8]),
                "sdp_ratio": torch.tensor([0.2]),
            }
        )

    def args(self, names: list[str]) -> tuple[torch.Tensor, ...]:
        return tuple(self.tensors[name] for name in names)


def build_synthesizer(
    shape: SynthShape, n_speakers: int, seed: int, style_row: torch.Tensor
) -> ExportableSynthesizer:
    torch.manual_seed(seed)
    model = ExportableSynthesizer(
        n_vocab=len(SYMBOLS),
        spec_channels=FILTER_LENGTH // 2 + 1,
        segment_size=SEGMENT_SIZE // HOP_LENGTH,
        inter_channels=shape.inter_channels,
        hidden_channels=shape.hidden_channels,
        filter_channels=shape.filter_channels,
        n_heads=shape.n_heads,
        n_layers=shape.n_layers,
        kernel_size=shape.kernel_size,
        p_dropout=0.1,
        resblock=shape.resblock,
        resblock_kernel_sizes=list(shape.resblock_kernel_sizes),
        resblock_dilation_sizes=[list(d) for d in shape.resblock_dilation_sizes],
        upsample_rates=list(shape.upsample_rates),
        upsample_initial_channel=shape.upsample_initial_channel,
        upsample_kernel_sizes=list(shape.upsample_kernel_sizes),
        n_speakers=n_speakers,
        gin_channels=shape.gin_channels,
        n_layers_trans_flow=shape.n_layers_trans_flow,
        use_spk_conditioned_encoder=True,
        use_noise_scaled_mas=True,
    ).eval()
    model.weight_norm_modules = _fold_weight_norm(model)
    probe = ProbeInput.make(24, style_row, seed)
    with torch.no_grad():
        _tune_durations(model, probe)
        _wake_flows(model, shape.hidden_channels)
        torch.manual_seed(seed + 1)
        decoder_weights.spread_taps(model.dec, seed + 300)
        _tune_decoder(model, probe)
    _LOGGER.info(
        "Synthesizer: %.1f M parameters (%.1f M in the decoder)",
        sum(p.numel() for p in model.parameters()) / 1e6,
        sum(p.numel() for p in model.dec.parameters()) / 1e6,
    )
    return model


def _fold_weight_norm(model: nn.Module) -> tuple[str, ...]:
    """Plain weights export as plain initializers, as in the public exports. Returns the
    names of the modules that had weight norm (an exporter may put it back)."""
    names = []
    for name, module in model.named_modules():
        if parametrize.is_parametrized(module, "weight"):
            parametrize.remove_parametrizations(module, "weight")
            names.append(name)
    return tuple(names)


def _round2(value: float) -> float:
    # Two significant digits: a factor measured on this CPU stays the same on another one.
    return float(f"{value:.2g}")


def _tune_durations(model: ExportableSynthesizer, probe: ProbeInput) -> None:
    """Mean exp(logw) ~ TARGET_FRAMES on the probe for both predictors (after ceil: 7-8)."""
    target = math.log(TARGET_FRAMES - 0.5)  # ceil adds half a frame on average
    proj = model.dp.proj
    # The LayerNorm-ed input has unit variance: this weight std gives log-durations of std
    # about DP_SPREAD around a text-independent offset, removed through the bias below.
    proj.weight.normal_(0.0, DP_SPREAD / math.sqrt(proj.in_channels))
    proj.bias.zero_()
    # Stochastic predictor, run in reverse: its last step is (z - m) * exp(-logs) on channel 0.
    affine = model.sdp.flows[0]
    affine.logs[0].fill_(math.log(2.0))  # halves the noise
    affine.m.zero_()
    for flow in model.sdp.flows:
        if hasattr(flow, "proj"):  # ConvFlow: zero at init (identity); make it depend on text
            flow.proj.weight.normal_(0.0, 0.02 / math.sqrt(flow.proj.in_channels))

    g, hidden, _, _, x_mask = model.encode_text(probe.tensors)
    dp_mean = float(model.dp(hidden, x_mask, g=g).mean())
    sdp_mean = float(model.sdp(hidden, x_mask, g=g, reverse=True, noise_scale=0.0).mean())
    # Rounded so that the stored value does not depend on the CPU's last bits.
    proj.bias.fill_(round(target - dp_mean, 2))
    affine.m[0].fill_(round(2.0 * (sdp_mean - target), 2))


def _wake_flows(model: ExportableSynthesizer, hidden: int) -> None:
    """The coupling layers' output convs start at zero (identity flows): give them small
    weights so the flow does real work, as trained weights do."""
    for layer in model.flow.flows:
        if hasattr(layer, "post"):
            layer.post.weight.normal_(0.0, 0.1 / math.sqrt(hidden))


def _tune_decoder(model: ExportableSynthesizer, probe: ProbeInput) -> None:
    """Scale each upsampling stage to unit RMS, then the output conv to DECODER_RMS; check
    that the decoder's context matters."""
    latent, g, frames = model.latent(probe.tensors)
    _LOGGER.info("Synthesizer probe: %d phones -> %d frames", frames.shape[-1], latent.shape[-1])
    z = latent[:, :, :CALIBRATION_FRAMES]  # enough for statistics; the decoder is slow in torch
    dec = model.dec
    for conv in [*dec.ups, dec.conv_post]:
        rms = _output_rms(dec, conv, z, g)
        target = DECODER_RMS if conv is dec.conv_post else 1.0
        factor = _round2(target / rms)
        conv.weight.mul_(factor)
        if conv.bias is not None:
            conv.bias.mul_(factor)
    audio = dec(z, g=g)
    _LOGGER.info(
        "Synthesizer probe audio: %d samples, peak %.3f, RMS %.3f",
        audio.shape[-1],
        float(audio.abs().max()),
        float(audio.pow(2).mean().sqrt()),
    )
    decoder_weights.check_context(dec, latent[:, :, :CONTEXT_CHECK_FRAMES], g, HOP_LENGTH)


def _output_rms(dec: nn.Module, conv: nn.Module, z: torch.Tensor, g: torch.Tensor) -> float:
    seen: list[torch.Tensor] = []
    handle = conv.register_forward_hook(lambda _m, _i, out: seen.append(out))
    try:
        dec(z, g=g)
    finally:
        handle.remove()
    return float(seen[0].pow(2).mean().sqrt())
