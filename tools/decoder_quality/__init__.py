"""The fast decoder's quality oracle: how int8 variants of a real trained VITS decoder sound,
measured apart from the product, and the gate's thresholds derived from it.

A development tool (not part of the ``wyoming_hayakoe`` package, which never imports it). The
product gates a variant by a log-mel distance a board can afford (quality.py); whether that
distance says what a listener would is a question for a measure the product does not compute:
PESQ-WB (ITU-T P.862.2) and STOI, on Piper's en_US-joe-medium decoder, whose weights were
trained, so its int8 errors are those of a real voice (a synthetic voice's random weights hide
them).

- joe.py cuts the decoder out of the voice graph and makes latents from espeak-ng phonemes,
  seeded (the same on every run).
- corpus.py holds the sentences in three sets: calibration (the product's ranges and search),
  tuning (the thresholds are derived on it), check (judged only).
- examples.py lays them out as the product's ``fast_decoder`` command reads them.
- oracle.py scores a sentence: PESQ-WB, STOI, and the product's distance.
- variants.py makes every variant by the product's VariantMaker (no quantizing here) and times
  it against FP32.
- derivation.py derives the thresholds: the largest distance with no counterexample.
- report.py writes the study's topic of BENCHMARKS.md; cli.py is the command line.

tests/devtools/test_decoder_quality.py runs the product's gate against this oracle.
"""
