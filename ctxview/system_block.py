"""What a request carried before its messages: the system prompt and the tool definitions.

Files that record the request body (Anthropic and OpenAI request lists)
record the tool definitions too; the loaders keep them, as recorded, in
`Conversation.metadata["tools"]`. They are part of what the model read, so
they count in the system block's tokens, show in the inspector's `#sys` row
and go into exported request bodies.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

from .model import Conversation, Message

__all__ = ["system_block_tokens", "tool_definitions", "tools_text"]


def tool_definitions(conversation: Conversation) -> tuple[Mapping[str, Any], ...]:
    """The tool definitions the file recorded for this conversation's requests, as recorded."""
    tools = conversation.metadata.get("tools") if isinstance(conversation.metadata, Mapping) else None
    if not isinstance(tools, (list, tuple)):
        return ()
    return tuple(t for t in tools if isinstance(t, Mapping))


def tools_text(tools: Sequence[Mapping[str, Any]]) -> str:
    """The tool definitions as the text that is counted and shown: one JSON object a line."""
    return "\n".join(json.dumps(t, ensure_ascii=False, sort_keys=True, default=str) for t in tools)


def system_block_tokens(conversation: Conversation, counter: Any) -> int:
    """Tokens of the system prompt (as a system message) plus those of the tool definitions."""
    prompt = conversation.system_prompt
    tokens = counter.count_message(Message(role="system", content=prompt)) if prompt else 0
    tools = tool_definitions(conversation)
    return tokens + (counter.count(tools_text(tools)) if tools else 0)
