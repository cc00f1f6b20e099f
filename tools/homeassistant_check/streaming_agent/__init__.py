"""A conversation agent that writes its reply as a language model does, a few characters at a
time, so that Home Assistant streams the reply's text to the TTS server as it comes (its
Assist pipeline does so for an agent that streams, once the reply passes 60 characters).
Installed into the checked Home Assistant's custom_components by tools/homeassistant_check;
not part of the server."""

from homeassistant.config_entries import ConfigEntry
from homeassistant.const import Platform
from homeassistant.core import HomeAssistant

PLATFORMS = [Platform.CONVERSATION]


async def async_setup_entry(hass: HomeAssistant, entry: ConfigEntry) -> bool:
    await hass.config_entries.async_forward_entry_setups(entry, PLATFORMS)
    return True


async def async_unload_entry(hass: HomeAssistant, entry: ConfigEntry) -> bool:
    return await hass.config_entries.async_unload_platforms(entry, PLATFORMS)
