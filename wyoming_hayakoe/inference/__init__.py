"""Running a voice's ONNX models, one call each: the BERT encoder, the synthesizer's front
and its decoder in windows, and the calibration that measures a voice's gain on them.

Both the request-time engine and the compiler's self-check run this code, so a compiled
model is checked by exactly the code that will serve it. Nothing here knows requests or
caches: blocking calls on sessions handed in.
"""
