"""Pacing: which synthesis steps next (turns.py), and how large its next decoder window is."""
