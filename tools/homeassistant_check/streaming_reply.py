"""A reply that a conversation agent streams, spoken as Home Assistant speaks it.

Home Assistant 2025.7 and later stream a language model's reply to the TTS server while the
agent writes it: the Assist pipeline (intent, then TTS) hands the agent's text deltas to the
Wyoming TTS entity, which sends them on as ``synthesize-chunk`` events, the whole text in a
``synthesize``, then ``synthesize-stop``. The agent here is streaming_agent/, a custom
integration that writes a 73-character reply three characters every 40 ms. What is checked:
the text reached the server in deltas and whole, the server answered with speech before the
reply's text was complete (more audio than the opening silence before the whole text was
sent) and ended with ``synthesize-stopped``, and the audio Home Assistant serves is the
reply's.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from .audio import parse_audio
from .homeassistant import CheckFailed, HomeAssistant
from .wire_tap import Connection, WireTap

AGENT_DOMAIN = "hayakoe_stream_agent"
AGENT_SOURCE = Path(__file__).resolve().parent / "streaming_agent"
OPENING_SILENCE_SECONDS = 0.1  # wyoming_hayakoe.server.audio_events (not importable here)
TIMEOUT = 120


def install_agent(config_dir: Path) -> None:
    """Put the agent among the custom integrations of a Home Assistant about to start."""
    target = config_dir / "custom_components" / AGENT_DOMAIN
    shutil.copytree(AGENT_SOURCE, target, ignore=shutil.ignore_patterns("__pycache__"))


def reply_text() -> str:
    """What the agent answers (streaming_agent/reply.txt)."""
    return (AGENT_SOURCE / "reply.txt").read_text(encoding="utf-8").strip()


async def agent_entity(ha: HomeAssistant) -> str:
    """Add the agent through its config flow; its conversation entity's id."""
    status, flow = await ha.post("/api/config/config_entries/flow", {"handler": AGENT_DOMAIN})
    if status != 200 or flow.get("type") != "create_entry":
        raise CheckFailed(f"the agent's config flow answered {status}: {flow}")
    entities = await ha.ws_command({"type": "config/entity_registry/list"})
    ours = [e["entity_id"] for e in entities if e.get("platform") == AGENT_DOMAIN]
    if not ours:
        raise CheckFailed("the streaming agent has no entity")
    return str(ours[0])


async def streamed_reply(ha: HomeAssistant, tap: WireTap, tts_engine: str) -> str:
    agent = await agent_entity(ha)
    pipeline = await ha.ws_command(
        {
            "type": "assist_pipeline/pipeline/create",
            "name": "hayakoe streaming agent",
            "language": "ja",
            "conversation_engine": agent,
            "conversation_language": "ja",
            "stt_engine": None,
            "stt_language": None,
            "tts_engine": tts_engine,
            "tts_language": "ja",
            "tts_voice": "tiny",
            "wake_word_entity": None,
            "wake_word_id": None,
        }
    )
    before = len(tap.synthesis_connections())
    events = await ha.ws_subscription(
        {
            "type": "assist_pipeline/run",
            "start_stage": "intent",
            "end_stage": "tts",
            "input": {"text": "今日の予定は？"},
            "pipeline": pipeline["id"],
        },
        until="run-end",
        timeout=TIMEOUT,
    )
    kinds = [event["type"] for event in events]
    if any(kind == "error" for kind in kinds):
        raise CheckFailed(f"pipeline events {kinds}: {events}")
    if not any((e.get("data") or {}).get("tts_start_streaming") for e in events):
        raise CheckFailed(f"the pipeline did not stream the reply to TTS: {kinds}")
    (tts_end,) = [event for event in events if event["type"] == "tts-end"]
    url = tts_end["data"]["tts_output"]["url"]
    status, content_type, body = await ha.fetch(
        ha.base + url if url.startswith("/") else url, TIMEOUT
    )
    if status != 200:
        raise CheckFailed(f"{url} answered {status}: {body[:200]!r}")
    audio = parse_audio(body, content_type)
    connections = tap.synthesis_connections()[before:]
    if len(connections) != 1:
        raise CheckFailed(f"{len(connections)} synthesis connections for one reply")
    return f"{check_wire(connections[0], reply_text())}; {content_type}: {audio}"


def check_wire(connection: Connection, reply: str) -> str:
    """The text in deltas and whole, speech before the text was complete, the stream ended."""
    sent = [p for p in connection.timeline if p.sent]
    deltas = [p.data.get("text", "") for p in sent if p.type == "synthesize-chunk"]
    if len(deltas) < 2 or "".join(deltas).strip() != reply:
        raise CheckFailed(f"the text came in {len(deltas)} deltas: {''.join(deltas)!r}")
    whole = next((i for i, p in enumerate(connection.timeline) if p.type == "synthesize"), None)
    if whole is None or connection.timeline[whole].data.get("text", "").strip() != reply:
        raise CheckFailed(f"no whole synthesize with the reply: {connection.sent}")
    if not connection.stopped:
        raise CheckFailed(f"the server did not end with synthesize-stopped: {connection.answered}")
    early = connection.timeline[:whole]
    rate = next((p.data.get("rate") for p in early if p.type == "audio-start"), None)
    audio_bytes = sum(p.payload_bytes for p in early if p.type == "audio-chunk")
    if rate is None or audio_bytes <= 2 * OPENING_SILENCE_SECONDS * int(rate):
        raise CheckFailed(f"{audio_bytes} bytes of audio before the text was complete")
    seconds = audio_bytes / (2 * int(rate))
    return f"{len(deltas)} deltas; {seconds:.2f} s of audio before the text was complete"
