"""The agent: whatever it is asked, it answers REPLY (reply.txt) in deltas of
DELTA_CHARACTERS characters every DELTA_EVERY_S seconds (the pace
tools/benchmark/conversation.py times)."""

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Literal

from homeassistant.components import conversation
from homeassistant.config_entries import ConfigEntry
from homeassistant.const import MATCH_ALL
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

REPLY = Path(__file__).with_name("reply.txt").read_text(encoding="utf-8").strip()
DELTA_CHARACTERS = 3
DELTA_EVERY_S = 0.04


async def async_setup_entry(
    hass: HomeAssistant, entry: ConfigEntry, async_add_entities: AddConfigEntryEntitiesCallback
) -> None:
    async_add_entities([StreamingAgent(entry)])


class StreamingAgent(conversation.ConversationEntity):
    _attr_supports_streaming = True
    _attr_name = "HayaKoe check streaming agent"

    def __init__(self, entry: ConfigEntry) -> None:
        self._attr_unique_id = entry.entry_id

    @property
    def supported_languages(self) -> list[str] | Literal["*"]:
        return MATCH_ALL

    async def _async_handle_message(
        self, user_input: conversation.ConversationInput, chat_log: conversation.ChatLog
    ) -> conversation.ConversationResult:
        async for _ in chat_log.async_add_delta_content_stream(self.entity_id, _deltas()):
            pass
        return conversation.async_get_result_from_chat_log(user_input, chat_log)


async def _deltas() -> AsyncIterator[Any]:
    yield {"role": "assistant"}
    for start in range(0, len(REPLY), DELTA_CHARACTERS):
        await asyncio.sleep(DELTA_EVERY_S)
        yield {"content": REPLY[start : start + DELTA_CHARACTERS]}
