"""Graph surgery on ONNX graphs whose weights stay on disk (external_weights.py): constant
folding, the synthesizer split at the decoder with the front's attention on its band, the
decoder's stages and receptive field, the position span, the duration branch, and the
offline optimization for this CPU. Only the compilation child runs these (and, where nothing
was compiled, the duration branch's cut: compiled.py)."""
