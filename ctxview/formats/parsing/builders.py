"""Building the model's values from parsed records: the one place for messages, tool calls and usage.

    message(role="tool", content=text, tool_call_id=cid, origin="line 4")   # any field, by name
    tool_call_from(raw_id, raw_name, raw_arguments)                         # a call from a record's values
    anthropic_usage(u) / openai_usage(u) / swarm_usage(u) / swarm_message_usage(d)

Loaders build hundreds of thousands of messages. `message`, `tool_call` and
`usage` fill the slots of the frozen classes without their __init__
(_slots.slot_builder; a test checks each equals the class's own constructor),
so they are for values of the right types: a str role, a tuple of ToolCalls,
content a str, Content or None. The `*_from` and `*_usage` functions take a
record's raw JSON values and decide what each becomes, once for every format.
"""

from __future__ import annotations

import sys
from typing import Any, Mapping

import orjson

from ctxview._slots import slot_builder
from ctxview.model import Message, ToolCall, Usage
from ctxview.formats.parsing.json_decode import loads

__all__ = ["COUNTS", "EMPTY_META", "anthropic_usage", "arguments_from", "is_count", "message", "openai_usage", "recorded_tools", "swarm_message_usage", "swarm_usage",
           "tool_call", "tool_call_from", "usage"]

# Every field of a Message by name (or position, in field order), with Message's defaults.
message = slot_builder(Message, "message")
# The meta a loader may give every message that has none: Message.meta is a Mapping, read-only by
# its type, and a big session's messages would otherwise hold 300k empty dicts (20 MB at 1 GB).
# (`message` itself, like Message(), gives each a dict of its own.)
EMPTY_META: Mapping[str, Any] = {}
tool_call = slot_builder(ToolCall, "tool_call")
usage = slot_builder(Usage, "usage")


# --- tool calls ----------------------------------------------------------------------------

def arguments_from(value: Any) -> Mapping[str, Any]:
    """Tool-call arguments as a mapping: JSON strings are decoded, other values wrapped."""
    if type(value) is not str and isinstance(value, Mapping):  # (a str first: the common case)
        return value
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        try:
            parsed = loads(value)
        except orjson.JSONDecodeError:
            return {"input": value}
        return parsed if isinstance(parsed, dict) else {"input": parsed}
    return {"input": value}


def tool_call_from(id: Any, name: Any, arguments: Any) -> ToolCall:
    """A tool call from a record's raw values: id and name as strings ("" for a missing one),
    the arguments as arguments_from gives them. (The type checks first: the common case.)"""
    return tool_call(id if type(id) is str else str(id or ""), name if type(name) is str else str(name or ""),
                     arguments if type(arguments) is dict else arguments_from(arguments))


# --- usage ---------------------------------------------------------------------------------

# The integers a count may be: those orjson reads as integers (64 bits, signed or not). msgspec and
# the standard library read a longer one as written; as a count it is damage, and it is 0, as any
# count that is not an integer is (orjson read it as a float), not a figure no float can hold.
COUNTS = range(-2**63, 2**64)


def is_count(value: Any) -> bool:
    return type(value) is int and value in COUNTS


def _count(value: Any) -> int:
    return value if is_count(value) else 0


def anthropic_usage(u: dict) -> Usage:
    """Usage from an Anthropic (and Claude Code) usage object; a count that is not an integer is 0.
    (_count written out: one call per assistant message of a transcript.) What else changes the
    price is kept where recorded: the writes' split by lifetime (cache_creation.ephemeral_1h_input_tokens,
    the rest being 5-minute writes), `speed`, `inference_geo`, and a `costUSD` the loader put beside it."""
    get = u.get
    i, o, r, w = get("input_tokens"), get("output_tokens"), get("cache_read_input_tokens"), \
        get("cache_creation_input_tokens")
    counts = COUNTS
    w = w if type(w) is int and w in counts else 0
    split = get("cache_creation")
    h = split.get("ephemeral_1h_input_tokens") if type(split) is dict else None
    geo = get("inference_geo")
    speed = get("speed")
    usd = get("costUSD")
    return usage(i if type(i) is int and i in counts else 0, o if type(o) is int and o in counts else 0,
                 r if type(r) is int and r in counts else 0, w,
                 (h if h <= w else w) if type(h) is int and h > 0 else 0,
                 # (kept only where it changes the price: a string on every message would cost memory)
                 speed if type(speed) is str and speed and speed != "standard" else None,
                 geo if type(geo) is str and geo and geo != "not_available" else None,
                 None if usd is None else _usd(usd))


def _usd(value: Any) -> float | None:
    return float(value) if type(value) in (int, float) and 0 <= value <= _LARGEST_FLOAT else None


_LARGEST_FLOAT = sys.float_info.max   # (an integer past it has no float: no cost either)


def openai_usage(u: Any) -> Usage | None:
    """Usage from an OpenAI / Codex usage object (cached tokens are part of input there)."""
    if type(u) is not dict and not isinstance(u, Mapping):
        return None
    inp = u.get("input_tokens", u.get("prompt_tokens"))
    out = u.get("output_tokens", u.get("completion_tokens"))
    cached = u.get("cached_input_tokens")
    if cached is None:
        details = u.get("input_tokens_details") or u.get("prompt_tokens_details") or {}
        cached = details.get("cached_tokens") if isinstance(details, Mapping) else None
    counts = COUNTS   # (_count, inline: a rollout holds tens of thousands)
    inp = inp if type(inp) is int and inp in counts else 0
    out = out if type(out) is int and out in counts else 0
    cached = cached if type(cached) is int and cached in counts else 0
    return usage(inp - cached if inp > cached else 0, out, cached)


def swarm_usage(u: Any) -> Usage | None:
    """Usage from a SwarmSDK event's usage object (either spelling of the cache counts)."""
    if not isinstance(u, Mapping):
        return None
    return usage(input_tokens=_count(u.get("input_tokens")), output_tokens=_count(u.get("output_tokens")),
                 cache_read_tokens=_count(u.get("cached_tokens")) or _count(u.get("cache_read_tokens")),
                 cache_write_tokens=_count(u.get("cache_creation_tokens")) or _count(u.get("cache_write_tokens")))


def swarm_message_usage(d: Mapping) -> Usage | None:
    """Usage from the token counts of a SwarmSDK (RubyLLM) message hash; None when it holds neither."""
    it, ot = d.get("input_tokens"), d.get("output_tokens")
    if type(it) is not int and type(ot) is not int:
        return None
    return usage(input_tokens=_count(it), output_tokens=_count(ot), cache_read_tokens=_count(d.get("cached_tokens")),
                 cache_write_tokens=_count(d.get("cache_creation_tokens")))


def recorded_tools(doc: Any) -> dict[str, Any]:
    """{"tools": [...]} when a request body recorded its tool definitions (a list of objects), else {}:
    the conversation's metadata (system_block.tool_definitions reads it)."""
    tools = doc.get("tools") if isinstance(doc, Mapping) else None
    if isinstance(tools, list) and tools and all(isinstance(t, Mapping) for t in tools):
        return {"tools": tuple(tools)}
    return {}
