"""Synthetic HayaKoe voices: the real architectures with seeded random weights.

A development tool (not part of the ``wyoming_hayakoe`` package). It writes a voice root laid
out like the public HayaKoe repository, so the engine and the reference implementation can be
compared on the same models when the real weights cannot be downloaded. It needs torch, onnx,
transformers and the reference package ``hayakoe`` (for its model classes).
"""
