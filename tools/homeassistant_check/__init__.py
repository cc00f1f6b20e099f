"""A real Home Assistant against this server: see script/test-homeassistant."""
