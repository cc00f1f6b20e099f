"""The server's command line: its options, the HTTP side's access options, the value checks."""
