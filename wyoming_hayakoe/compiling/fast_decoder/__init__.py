"""A generator graph's fast variant: int8 where it does not hurt, FP32 where it does.

The decoder (a HiFi-GAN generator at 44.1 kHz) is 85-90 % of a sentence's work; in FP32 a
Raspberry Pi decodes slower than speech. Integer convolutions halve that time where the
activations can bear 8 bits, and a real trained decoder showed where they cannot: at the
audio rate (the last stage's few channels and conv_post, which feeds tanh), 8-bit activations
are heard; weights in int8 are not (docs/fast-decoder.md).

What is made here works on the generator graph alone (generator.py finds its layers by name),
for any VITS-family decoder: Style-Bert-VITS2's, Piper's. make.py runs the steps: activation
ranges from short calibration chunks (ranges.py: asymmetric percentiles, one chunk in memory),
the activation type by timing both, the int8 groups by measured sensitivity (search.py, with
cross-layer equalization tried, equalization.py), the graph itself by ONNX Runtime's quantizer
(variant.py), and a quality gate on examples the calibration never saw (quality.py, a measure
a board can afford, its thresholds derived from PESQ on the real decoder). timing.py compares
decoders as this machine runs them.

Nothing here decides what a voice serves: compiling/decoder_choice.py does, from what
compiling/decoder_job.py measured. The ``fast_decoder`` command runs make.py on any graph.
"""
