"""Every tuned value of pacing, each with the reason it has its value.

They were chosen on the simulations (tests/support/machine_model.py, swinging_speed.py) and
the benchmark; what else was tried, and what it sounded like, is in docs/pacing.md.
"""

from __future__ import annotations

# --- Windows: how large one decoder step may be -------------------------------------------

MIN_WINDOW_FRAMES = 8
"""Smaller windows cost more in per-run overhead than they save."""
MAX_WINDOW_FRAMES = 128
"""Larger windows decode slower, not faster: their buffers outgrow the caches and the
allocator hands them out fresh, page by page (docs/pacing.md, "Why windows are capped")."""
WINDOW_OVERHEAD_S = 0.01
"""The fixed cost of one window (stage runs, copies), on top of its frames."""
HELD_WINDOW_FRAMES = 48
"""Windows decoded while the sound is held back, or once it has run dry: about 0.56 s of
audio each, so a late machine makes one short pause rather than a stutter."""

# --- Windows fixed in advance (no listener: self-check, calibration, warm-up) -------------

FIRST_WINDOW_FRAMES = 24
"""The first of the growing windows: about 0.28 s of audio at 44.1 kHz / hop 512."""
WINDOW_GROWTH = 4
"""Each fixed window this many times the one before, up to MAX_WINDOW_FRAMES: few cuts."""
MIN_WINDOWED_FRAMES = 96
"""Shorter latents are decoded in one piece: a cut would cost more than early sound saves."""

# --- The lead: how much of the audio still to play a window may spend ---------------------

LEAD_USE = 0.75
"""A window takes at most three quarters of the audio still to play: a machine that slows
down by a quarter while it decodes is still not heard, and while the speed holds the lead
grows."""
KEEP_UP = 1.1
"""A window decodes at least this much faster than it plays, or the lead shrinks."""
RESERVE_MARGIN = 1 / LEAD_USE
"""A sentence's first audio lasts this many times the other requests' work due after its
first window: the margin every window keeps on the lead. Less left a silence when four
arrived together; more delayed every first sound for nothing."""

# --- The speed: how much of what this machine showed a plan believes ---------------------

SPEED_MARGIN = 0.85
"""Plan on this share of the low percentile of the speed measured, until enough windows tell
how much this machine's speed swings (see STEADY_Z)."""
SPREAD_WINDOWS = 8
"""Windows seen before the margin is read from their spread."""
PREROLL_WINDOWS = 8
"""The sound held back at a text's start waits for the rest of the sentence, decoded in about
this many windows: their total swings by 1/sqrt(8) of what one window's speed does."""
STEADY_Z = 2.0
"""A held-back start plans on the median window less this many times that swing (the spread
read from how far the 10th percentile lies under the median): a steady board then starts
when it can, a swinging one keeps its margin."""
STEADY_RANGE = (0.6, 0.97)
"""The share of the median a held-back start keeps, however steady or not its windows."""
SEEN_SPEED_CAP = 1.5
"""A held-back sentence believes its own windows up to this many times the learned speed: a
few windows on a swinging machine overstate it (trusted fully, the sound went out early and
stopped); trusted no more than the learned speed, starts waited a window or two longer."""

# --- A text: its sentences planned together ----------------------------------------------

PAUSE_STRETCH_S = 0.2
"""How much longer than restored a pause between two sentences may be heard, planned: a
little later than the text needs is heard as a thoughtful pause, not as a stall (the ear
takes 0.5 s more without noticing); less than that leaves room for a machine that runs
slower than planned."""
TEXT_HOLD_S = 0.25
"""A text is held for its start only when that is this much later than its first sentence's
own plan: on a machine that keeps up, the few windows the whole text would add are not worth
the lead they take (held for less, one run in ten on a swinging decoder fell silent inside a
sentence)."""
LEAST_PAUSE_S = 0.08
"""The pause planned before a later sentence: the least one a sentence gets (its restored
pause is known only once it is predicted)."""
LOOKAHEAD_SENTENCES = 4
"""Sentences after the current one that its plan reaches to: the next ones plan further when
their turn comes, and a long text is not phonemized whole before its first sound."""

# --- The turn order: which synthesis steps next ------------------------------------------

FIRST_SOUND_WORK_S = 0.2
"""A request's work before its first audio, until requests have measured it: a short
sentence's front-end and first window on the full-size voice, 2 cores."""
FIRST_SOUND_WEIGHT = 0.3
"""The weight of the latest request in the running estimate of the work before a first
sound: a few requests move it, one odd one does not."""
RESCUE_AGE_S = 0.5
"""How long the first steps of requests arriving together, and playing requests that would
otherwise pause longer between two sentences, go before the earliest new request: less left
them silent longer, more delayed first sounds. Requests inside a sentence that would run dry
go first however long it has waited (TurnOrder.choose)."""
