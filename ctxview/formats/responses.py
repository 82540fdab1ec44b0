"""OpenAI Responses API items (also the body of Codex rollouts) into Messages.

The Responses API stores one item per output piece: reasoning, text
message, each function call. One model call's consecutive assistant items
become one assistant message (text, thinking, tool calls), which is the
shape the engine and SwarmSDK use; each *_output item is a tool message.
"""

from __future__ import annotations

from typing import Any, Mapping

import orjson

from ctxview.model import Message, ToolCall, Usage
from ctxview.formats.parsing.argument_depth import MAX_ARGUMENT_DEPTH, deeper_than
from ctxview.formats.parsing.blocks import openai_parts_text
from ctxview.formats.parsing.builders import message, openai_usage, tool_call_from

__all__ = ["ITEMS", "ResponsesBuilder", "output_text", "openai_usage", "INJECTED_PREFIXES"]

# User messages a harness writes (Codex: AGENTS.md, environment context), not the person.
INJECTED_PREFIXES = (
    "<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<permissions instructions>",
    "<turn_aborted>", "<user_shell_command>", "<INSTRUCTIONS>", "<collaboration_mode>",
)

_QUIET = frozenset({"ghost_snapshot", "compaction", "compaction_summary", "item_reference", "other"})


def output_text(output: Any) -> str:
    """A tool output as the model read it."""
    if isinstance(output, str):
        return output
    if (type(output) is dict or isinstance(output, Mapping)) and "content" in output:
        inner = output.get("content")
        return inner if isinstance(inner, str) else (openai_parts_text(inner) or "")
    if isinstance(output, list):
        return openai_parts_text(output) or ""
    if output is None:
        return ""
    return orjson.dumps(output).decode()


class _Group:
    __slots__ = ("texts", "thinking", "calls", "origin", "id", "usage", "model", "meta")

    def __init__(self, origin: str, model: str | None):
        self.texts: list[str] = []
        self.thinking: list[str] = []
        self.calls: list[ToolCall] = []
        self.origin = origin
        self.id: str | None = None
        self.usage: Usage | None = None
        self.model = model
        self.meta: dict = {}


class ResponsesBuilder:
    """Feed items in order with `item()`; read `messages` after `flush()`.

    Tool results are named after their calls as they come, as link_tool_results
    would name them (a call is always flushed before the next result); `unlinked`
    counts the results whose call no earlier item made. `too_deep` lists the messages
    (indices into `messages`) holding a call whose arguments nest deeper than
    MAX_ARGUMENT_DEPTH: what argument_depth.check_arguments refuses.
    """

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.unknown: dict[str, int] = {}
        self.model: str | None = None
        self.unlinked = 0
        self._group: _Group | None = None
        self._last_assistant: int | None = None
        self._call_names: dict[str, str] = {}   # call id -> tool name, of every call so far
        self.too_deep: list[int] = []

    # -- assistant groups
    def _open(self, origin: str) -> _Group:
        if self._group is None:
            self._group = _Group(origin, self.model)
        return self._group

    def flush(self) -> None:
        g = self._group
        if g is None:
            return
        self._group = None
        text = "\n".join(g.texts) if g.texts else ""
        self.messages.append(message(
            role="assistant", content=text, tool_calls=tuple(g.calls), model_id=g.model, usage=g.usage,
            thinking="\n\n".join(g.thinking) if g.thinking else None, origin=g.origin, id=g.id, meta=g.meta,
        ))
        self._last_assistant = len(self.messages) - 1

    def attach_usage(self, usage: Usage, timestamp: str | None = None) -> bool:
        """Give `usage` (and the time it was recorded, into meta) to the latest assistant message that
        has none; False if none is waiting."""
        if self._group is not None and self._group.usage is None:
            self._group.usage = usage
            if timestamp:
                self._group.meta = {"timestamp": timestamp}
            return True
        i = self._last_assistant
        if i is not None and self.messages[i].usage is None:
            m = self.messages[i]
            self.messages[i] = m.replace(usage=usage, meta={**m.meta, "timestamp": timestamp} if timestamp else m.meta)
            return True
        return False

    def add_message(self, msg: Message) -> None:
        self.flush()
        self.messages.append(msg)

    # -- items
    def item(self, item: Any, origin: str, injected: bool = False) -> None:
        if type(item) is not dict and not isinstance(item, Mapping):
            self._unknown(type(item).__name__)
            return
        itype = item.get("type")
        if type(itype) is not str:
            if itype is not None:
                self._unknown(repr(itype)[:40])
                return
            if "role" not in item:
                self._unknown("None")
                return
            itype = "message"
        # one table look-up instead of a chain of comparisons: this runs for every item of a rollout
        handler = ITEMS.get(itype)
        if handler is not None:
            handler(self, item, origin, injected)
        elif itype not in _QUIET:
            self._unknown(itype)

    def _message(self, item: Mapping, origin: str, injected: bool) -> None:
        role = str(item.get("role") or "user")
        text = openai_parts_text(item.get("content"))
        if role == "assistant":
            g = self._open(origin)
            if text:
                g.texts.append(text)
            if g.id is None and isinstance(item.get("id"), str):
                g.id = item["id"]
            return
        self.flush()
        text = text or ""
        inj = injected or role in ("developer", "system") or text.lstrip().startswith(INJECTED_PREFIXES)
        self.messages.append(message(role=role, content=text, injected=inj, origin=origin,
                                     id=item.get("id") if isinstance(item.get("id"), str) else None))

    def _reasoning(self, item: Mapping, origin: str, injected: bool) -> None:
        g = self._open(origin)
        parts = []
        for key in ("summary", "content"):
            t = openai_parts_text(item.get(key)) if isinstance(item.get(key), list) else None
            if t:
                parts.append(t)
        if parts:
            g.thinking.append("\n".join(parts))

    def _call(self, origin: str, call: ToolCall) -> None:
        self._open(origin).calls.append(call)
        if call.id:
            self._call_names[call.id] = call.name
        if deeper_than(call.arguments, MAX_ARGUMENT_DEPTH):  # (checked now, while the arguments are in the cache)
            index = len(self.messages)  # the open group's message, once flushed
            if not self.too_deep or self.too_deep[-1] != index:
                self.too_deep.append(index)

    def _function_call(self, item: Mapping, origin: str, injected: bool) -> None:
        self._call(origin, tool_call_from(item.get("call_id") or item.get("id"), item.get("name"),
                                          item.get("arguments")))

    def _custom_tool_call(self, item: Mapping, origin: str, injected: bool) -> None:
        self._call(origin, tool_call_from(item.get("call_id") or item.get("id"), item.get("name"),
                                          {"input": item.get("input")}))

    def _local_shell_call(self, item: Mapping, origin: str, injected: bool) -> None:
        action = item.get("action")
        self._call(origin, tool_call_from(item.get("call_id") or item.get("id"), "local_shell",
                                          action if isinstance(action, Mapping) else {"input": action}))

    def _server_tool_call(self, item: Mapping, origin: str, injected: bool) -> None:
        # Server-side tools: no output item follows, so show them as text, not as a call.
        g = self._open(origin)
        action = item.get("action")
        desc = orjson.dumps(action).decode() if action is not None else ""
        g.texts.append(f"[{item['type']}: {desc[:300]}]")

    def _output(self, item: Mapping, origin: str, injected: bool) -> None:
        self.output(item, origin)

    def output(self, item: Mapping, origin: str, meta: dict | None = None) -> None:
        """A *_output item's tool message, with `meta` (what the caller read from the item) if any."""
        self.flush()
        call_id = str(item.get("call_id") or "")
        name = self._call_names.get(call_id)
        if name is None:
            self.unlinked += 1
        self.messages.append(message(role="tool", content=output_text(item.get("output")), tool_call_id=call_id,
                                     tool_name=name, origin=origin, meta={} if meta is None else meta))

    def _unknown(self, what: str) -> None:
        self.unknown[what] = self.unknown.get(what, 0) + 1



# What item() does with each item type (_QUIET ones are dropped, any other is counted as unknown).
# Public for a reader that feeds many items and looks each handler up itself (the Codex loader).
ITEMS = {
    "message": ResponsesBuilder._message,
    "reasoning": ResponsesBuilder._reasoning,
    "function_call": ResponsesBuilder._function_call,
    "custom_tool_call": ResponsesBuilder._custom_tool_call,
    "local_shell_call": ResponsesBuilder._local_shell_call,
    **dict.fromkeys(("web_search_call", "tool_search_call", "image_generation_call"),
                    ResponsesBuilder._server_tool_call),
    **dict.fromkeys(("function_call_output", "custom_tool_call_output", "local_shell_call_output",
                     "tool_search_output"), ResponsesBuilder._output),
}
