"""The commands beside the server: `check` (compile a voice, its self-check), `reading` (how a
text is read), `health_check` (a `describe` round trip)."""
