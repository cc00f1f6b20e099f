"""Compiling models for this machine: the one place that makes what the server loads.

A layer below the request-time engine (engine/), which only opens what this made, through
compiled.py, the one module of this folder it imports. The graph edits are in graphs/; the
self-check runs the compiled models with the code that will serve them (inference/, the
layer below).

The first time a model is used on a machine it is compiled, in a child process that exits
(child.py, the only entry point), one step after another and freeing as it goes: the shared
BERT (bert.py) and each voice (voice_job.py: its synthesizer split at the decoder, the
decoder cut into stages, every model optimized for this CPU, and the self-check of all that
against the published synthesizer, self_check.py). The result is one folder of the cache per
compilation, written in a staging folder and published when complete (staging.py), with a
record of what it was made from (cache.py). The server only opens what a record names
(bert.py, voice_models.py).

A child that cannot finish is never taken for a bad file: children.py says why it ended
(memory, with the limit and peak seen, memory.py; a timeout; a full disk; an error), and the
server goes on with a leaner form of the model, saying once what that costs and how to get it
back.
"""
