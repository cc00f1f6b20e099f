"""The Home Assistant add-on's start-up: its options to the server's command line (`supervisor`),
the VOICEVOX-compatible API port's (`voicevox`)."""
