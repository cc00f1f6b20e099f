"""Pacing: which synthesis steps next, and how large its next decoder window is.

A client plays every piece of audio as it arrives; a listener hears silence when a piece
comes after the audio before it has played. ONNX Runtime already spreads one step over every
core it is given, so syntheses take turns, one step at a time. A step cannot be cut short: a
sentence's front-end, BERT and text encoder, or one decoder window. Two decisions keep every
listener playing, and both read the same facts: when each listener runs out of audio
(:class:`~.scheduler.PlaybackClock`), how fast this machine decodes
(:class:`~.windows.DecodeSpeed`), and what a step costs.

**Which step runs next** (turns.py, on the event loop): the one whose listener needs it
first, its *deadline*: a request that has not sounded yet is due the moment it arrived (so a
new request goes ahead of those that still have audio to play, and an older one ahead of a
newer one: a request ages, it never starves); a playing one is due when its client runs out.
Two exceptions for a young new request: several arriving together first run each its first
sentence's front-end, then each its first windows (each then plans its start knowing the
others' first steps are done: all are heard close together, without gaps); and a playing
request whose audio would run out before the new request's next step goes first. A request
whose sentence has not sounded yet (a new one, or a playing one between two sentences) always
lets a request inside a sentence that would run dry go first: its wait is heard as a pause,
the other's as a cut word.

**How large the next window is** (windows.py, sentence.py, on the synthesis thread): as
large as the audio still to play allows on the speed learned here, so windows grow with the
lead and shrink when the machine slows down; below real time, the sound is held back
(pre-roll) until the rest of the sentence can follow without a gap. With others sharing the
machine, a request plans on its share of the speed, and each window's audio must last
through the others' steps due before its next one (:class:`~.windows.Sharing`).

**The speed** is learned from what each window's stages ran (a latent's first window has no
context before it, its last runs every stage's held-back samples), so short requests teach
the same speed as long ones. The pre-roll of a request alone keeps a margin read from how
steady the windows were; windows sized while sound plays keep the fixed one.

**More listeners than the machine keeps playing** (its speed divided among them below real
time): each sentence sounds only once it is decoded whole, so the shortage is heard as later
first sounds and longer pauses between sentences, never inside one.

**A text, alone on a slow machine** (plan.py): its first sentence is planned with the next
ones, estimated from their phonemes; the listener starts once the text can play through, and
what is made before is kept until then, so the wait comes once, before the first sound, and no
pause between sentences grows by more than a fraction of a second.

Every plan is tried on one simulation of decoding against a listener (simulation.py), and
what fits before a deadline is one rule (:func:`~.windows.frames_within`).

The two meet once per step: when the turn order grants a turn, it hands the request what it
saw of the others (:class:`~.scheduler.Others`), and the window is sized from that; the
engine never calls back. Each request's clock is written by its own steps and read by the
turn order only between steps (one step runs at a time).

Decoding without a listener (the self-check, the gain calibration, the warm-up) takes the
same decode loop with windows fixed in advance (fixed.py), so its audio compares bit for bit.

Every tuned value is in margins.py, each with its reason; what was measured to choose them,
and what was tried and not kept, is in docs/pacing.md.
"""
