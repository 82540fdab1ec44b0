"""The data model every other layer speaks: messages, conversations, sessions.

Plain frozen, slotted values with no I/O. Roles are plain strings ("system",
"user", "assistant", "tool", ...) so that any source format fits.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

__all__ = [
    "Content",
    "ContextEvent",
    "Conversation",
    "Message",
    "Session",
    "ToolCall",
    "Usage",
    "content_text",
    "is_request",
    "request_indices",
]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call requested by an assistant message."""

    id: str
    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def coerce(cls, value: ToolCall | Mapping[str, Any]) -> ToolCall:
        if isinstance(value, ToolCall):
            return value
        if isinstance(value, Mapping):
            args = value.get("arguments")
            return cls(
                id=str(value.get("id") or ""),
                name=str(value.get("name") or ""),
                arguments=args if isinstance(args, Mapping) else ({} if args is None else {"input": args}),
            )
        raise TypeError(f"tool call must be a ToolCall or a mapping, not {type(value).__name__}")


@dataclass(frozen=True, slots=True)
class Content:
    """Text plus attachments (RubyLLM::Content). Attachments are opaque values."""

    text: str
    attachments: tuple[Any, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.attachments, tuple):
            object.__setattr__(self, "attachments", tuple(self.attachments or ()))


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage a source recorded for one model call."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    # What else the provider recorded that changes the price (Anthropic's usage object): the part of
    # cache_write_tokens written for an hour (usage.cache_creation.ephemeral_1h_input_tokens; the
    # rest lives 5 minutes), the speed ("fast": fast mode), where inference ran ("us", "global"), and
    # the cost the harness itself wrote beside the call (older Claude Code's costUSD), if any.
    cache_write_1h_tokens: int = 0
    speed: str | None = None
    inference_geo: str | None = None
    recorded_usd: float | None = None

    @property
    def context_tokens(self) -> int:
        """Everything the model read for this call: fresh input plus cache."""
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens


def content_text(content: str | Content | None) -> str:
    """The text of a message's content, as Ruby's `content.to_s` would give."""
    if content is None:
        return ""
    if isinstance(content, Content):
        return content.text
    return content


@dataclass(frozen=True, slots=True)
class Message:
    """One message of a conversation; immutable.

    `role`, `content` and `tool_call_id` are the fields SwarmSDK's
    ContextManager reads and writes. The others are kept as they are by every
    engine function: `tool_calls` (assistant), `tool_name` (the tool that
    produced a tool result, where the source links it), `usage` (what the
    source recorded for the call that produced this assistant message),
    `thinking` (reasoning text, kept apart from the content), `injected` (text
    the harness added, not the user: Claude Code's isMeta lines, reminder-only
    lines), `origin` (where in the source file it came from: "line 12" or a
    JSON pointer), `id`, and free-form `meta`.
    """

    role: str
    content: str | Content | None = None
    tool_call_id: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    model_id: str | None = None
    tool_name: str | None = None
    usage: Usage | None = None
    thinking: str | None = None
    injected: bool = False
    origin: str | None = None
    id: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        role = self.role
        if not isinstance(role, str):  # accept enums such as RubyLLM-style roles
            object.__setattr__(self, "role", str(getattr(role, "value", role)))
        calls = self.tool_calls
        if calls is None:
            object.__setattr__(self, "tool_calls", ())
        elif not isinstance(calls, tuple) or not all(type(c) is ToolCall for c in calls):
            object.__setattr__(self, "tool_calls", tuple(ToolCall.coerce(c) for c in calls))
        if isinstance(self.content, list):
            raise TypeError("Message content must be a str, a Content or None, not a list")

    @property
    def text(self) -> str:
        """The content's text ('' for None)."""
        return content_text(self.content)

    def with_content(self, content: str | Content | None) -> Message:
        """A copy with new content and every other field kept."""
        return _replace(self, content=content)

    def replace(self, **changes: Any) -> Message:
        """A copy with the given fields changed."""
        return _replace(self, **changes)


_MESSAGE_FIELDS = Message.__slots__


def _replace(msg: Message, **changes: Any) -> Message:
    # dataclasses.replace re-runs __init__ validation on every field; this
    # copies slots directly, which matters on 100k-message conversations.
    new = object.__new__(Message)
    for name in _MESSAGE_FIELDS:
        object.__setattr__(new, name, changes.pop(name) if name in changes else getattr(msg, name))
    if changes:
        raise TypeError(f"unknown Message fields: {', '.join(sorted(changes))}")
    return new


@dataclass(frozen=True, slots=True)
class ContextEvent:
    """Something the source itself did to the context.

    kind: "compaction" (history replaced by a summary), "threshold_hit",
    "compression" (SwarmSDK's automatic tool-result compression), or another
    source-specific name. `index` is the message index the event precedes.
    """

    kind: str
    index: int
    trigger: str | None = None
    tokens_before: int | None = None
    summary: str | None = None
    replaced: tuple[Message, ...] = ()
    origin: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Conversation:
    """The messages of one agent, sub-agent or side chain, in model order."""

    name: str
    messages: tuple[Message, ...] = ()
    system_prompt: str | None = None
    ephemeral: Mapping[int, tuple[str, ...]] = field(default_factory=dict)
    model: str | None = None
    context_window: int | None = None
    compression_applied: bool | None = None
    events: tuple[ContextEvent, ...] = ()
    settings: Mapping[str, Any] = field(default_factory=dict)
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.messages, tuple):
            object.__setattr__(self, "messages", tuple(self.messages))
        if not isinstance(self.events, tuple):
            object.__setattr__(self, "events", tuple(self.events))


@dataclass(frozen=True, slots=True)
class Session:
    """Everything loaded from one file."""

    format: str
    source: str
    conversations: tuple[Conversation, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)
    skipped: int = 0
    warnings: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.conversations, tuple):
            object.__setattr__(self, "conversations", tuple(self.conversations))

    def conversation(self, name: str) -> Conversation:
        """The conversation called `name`; KeyError naming the choices otherwise."""
        for conv in self.conversations:
            if conv.name == name:
                return conv
        names = ", ".join(c.name for c in self.conversations) or "none"
        raise KeyError(f"no conversation named {name!r} (choices: {names})")


def request_indices(messages: Sequence[Message]) -> list[int]:
    """Indices of assistant messages that start a model call's reply: the requests, in order.

    A run of consecutive assistant messages (a transcript may store one reply
    as several lines) counts once, at its first message.
    """
    return [i for i, m in enumerate(messages)
            if m.role == "assistant" and (i == 0 or messages[i - 1].role != "assistant")]


def is_request(messages: Sequence[Message], index: int) -> bool:
    """Whether `index` is one of request_indices(messages)."""
    return (0 <= index < len(messages) and messages[index].role == "assistant"
            and (index == 0 or messages[index - 1].role != "assistant"))


def messages_from(items: Iterable[Message | Mapping[str, Any]]) -> list[Message]:
    """Messages from Message values or plain dicts with Message's field names."""
    out = []
    for item in items:
        if isinstance(item, Message):
            out.append(item)
        else:
            data = dict(item)
            c = data.get("content")
            if isinstance(c, Mapping):
                data["content"] = Content(str(c.get("text", "")), tuple(c.get("attachments") or ()))
            out.append(Message(**data))
    return out
