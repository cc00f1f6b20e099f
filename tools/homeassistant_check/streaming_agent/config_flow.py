"""One step, no questions: the check adds the agent through the config flow."""

from typing import Any

from homeassistant.config_entries import ConfigFlow, ConfigFlowResult


class StreamAgentFlow(ConfigFlow, domain="hayakoe_stream_agent"):
    VERSION = 1

    async def async_step_user(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        return self.async_create_entry(title="streaming agent", data={})
