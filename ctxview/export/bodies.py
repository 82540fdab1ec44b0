"""Prepared messages as request bodies the model APIs accept as they are.

`to_openai(view, model)` gives an OpenAI Chat Completions body (`{"model",
"messages"}`: the system prompt first, tool calls as `function` calls with
JSON-string arguments); `to_anthropic(view, model)` a Messages API body
(`{"model", "max_tokens", "system", "messages"}`, `system` only when there is
one): tool calls as `tool_use` blocks, tool results as `tool_result` blocks
that open their user turn (consecutive results share one), same-role turns
merged since the API wants them alternating. Bodies hold only keys of the
providers' request schemas (the tests validate every sample against the
official SDKs' types); ctxview's own figures are in `export_stats`.

Not exported: attachments (images and files are placeholders in the model,
"[image: image/png, 48.2 KB]": an image goes out as one where export.media reads
it back from the source file, else as that text, which `images_as_text` lists)
and, for OpenAI, thinking (chat requests have no field for it); the stats count them. `LeftOut` says, message
by message, what the body leaves out or changes (the inspector's prepared pane
marks it); `body_messages` says whether a body holds any message at all
(`prepare` refuses to write one that does not). The first message is the
user's because the budget and the summary keep it so (see `budget`), not
because this module patches it.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ctxview.engine.api_edits import (
    api_edits_of,
    beta_headers,
    context_management,
    without_api_edits,
)
from ctxview.atomic import write_atomic
from ctxview.export.json_text import arguments_json, dumps, escape_unsafe
from ctxview.export.media import (
    PLACEHOLDER,
    body_messages,
    images_as_text,
    recorded_images,
    split_at_images,
)
from ctxview.model import Content, Conversation, Message
from ctxview.engine.view import PreparedView, row_columns

__all__ = ["DEFAULT_MAX_TOKENS", "SHAPES", "LeftOut", "arguments_json", "body_for", "body_messages", "default_shape",
           "dumps", "escape_unsafe", "export_stats", "images_as_text", "paired", "recorded_images", "recorded_max_tokens",
           "stats_text", "to_anthropic", "to_openai", "to_shape", "write_atomic"]

SHAPES = ("openai", "anthropic")
DEFAULT_MAX_TOKENS = 8192   # Anthropic requires max_tokens; used when the source recorded none


def _with_model(body: dict[str, Any], model: str | None) -> dict[str, Any]:
    # The APIs require a model; with none known the body leaves it out rather than
    # send null (`prepare` refuses to write such a body unless --model names one).
    return {"model": model, **body} if model else body


# --- tool calls and their results ------------------------------------------------------

def paired(messages: Sequence[Message]) -> tuple[list[Message], int, int]:
    """The messages with each assistant's tool results right after it, and what could not be paired.

    Both APIs want an assistant's tool calls answered by the next messages (OpenAI: tool
    messages right after it; Anthropic: tool_result blocks opening the next user turn). A
    source may store other messages in between (Claude Code puts its compaction summary
    between a call and its result): results answering the call move up to it, before them.
    A call without a result before the next assistant message (the session was interrupted)
    is left out of its message, and so is a result without its call; returns the messages,
    then how many calls and how many results were left out.
    """
    out: list[Message] = []
    calls_out = results_out = 0
    n = len(messages)
    i = 0
    while i < n:
        msg = messages[i]
        if msg.role == "tool":  # not in an assistant's window below: its call is not in the request
            results_out += 1
            i += 1
            continue
        if msg.role != "assistant" or not msg.tool_calls:
            out.append(msg)
            i += 1
            continue
        j = i + 1
        while j < n and messages[j].role != "assistant":
            j += 1
        ids = {c.id for c in msg.tool_calls}
        results: list[Message] = []
        others: list[Message] = []
        answered: set[str | None] = set()
        for m in messages[i + 1:j]:
            if m.role != "tool":
                others.append(m)
            elif m.tool_call_id in ids and m.tool_call_id not in answered:
                results.append(m)
                answered.add(m.tool_call_id)
            else:
                results_out += 1
        calls = tuple(c for c in msg.tool_calls if c.id in answered)
        calls_out += len(msg.tool_calls) - len(calls)
        out.append(msg if len(calls) == len(msg.tool_calls) else msg.replace(tool_calls=calls))
        out.extend(results)
        out.extend(others)
        i = j
    return out, calls_out, results_out


# --- OpenAI Chat Completions --------------------------------------------------------

def _openai_message(msg: Message) -> dict[str, Any]:
    role = msg.role
    if role == "assistant":
        if not msg.tool_calls:
            return {"role": "assistant", "content": msg.text}
        calls = [{"id": c.id, "type": "function",
                  "function": {"name": c.name,
                               "arguments": arguments_json(dict(c.arguments))}}
                 for c in msg.tool_calls]
        return {"role": "assistant", "content": msg.text or None, "tool_calls": calls}
    if role == "tool":
        return {"role": "tool", "tool_call_id": msg.tool_call_id or "", "content": msg.text}
    if role in ("system", "developer"):
        return {"role": role, "content": msg.text}
    return {"role": "user", "content": msg.text}   # user, and any role the chat API has no name for


def _openai_user_parts(text: str, images: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A user message's text and its images read back (export.media) as Chat Completions parts."""
    parts: list[dict[str, Any]] = []
    for k, piece in enumerate(split_at_images(text)):
        if piece.strip():
            parts.append({"type": "text", "text": piece.strip("\n")})
        if k < len(images):
            src = images[k]
            url = src["url"] if src["type"] == "url" else f"data:{src['media_type']};base64,{src['data']}"
            parts.append({"type": "image_url", "image_url": {"url": url}})
    return parts


def to_openai(view: PreparedView, model: str | None = None,
              images: Mapping[int, list[dict[str, Any]]] | None = None) -> dict[str, Any]:
    """`images` (media.recorded_images): a user message's go out as image parts (a tool message
    is text only in Chat Completions)."""
    out: list[dict[str, Any]] = []
    if view.system_prompt:
        out.append({"role": "system", "content": view.system_prompt})
    for m in paired(view.prepared)[0]:
        found = images.get(id(m)) if images else None
        if found and m.role == "user":
            out.append({"role": "user", "content": _openai_user_parts(m.text, found)})
        else:
            out.append(_openai_message(m))
    body: dict[str, Any] = {"messages": out}
    tools = [t for t in (_tool_definition(t, "openai") for t in view.tools) if t is not None]
    if tools:
        body["tools"] = tools
    return _with_model(body, model)


# --- tool definitions, from whichever shape the file recorded them in ---------------------

def _tool_parts(tool: Mapping[str, Any]) -> tuple[str, str | None, Any] | None:
    """(name, description, JSON schema of the input) of a recorded tool definition: Anthropic's
    {name, input_schema}, Chat Completions' {type: function, function: {...}} or Responses' flat
    {type: function, name, parameters}; None for another kind (a provider's own server tool)."""
    inner = tool.get("function") if isinstance(tool.get("function"), Mapping) else tool
    name = inner.get("name")
    if not isinstance(name, str) or not name:
        return None
    schema = inner.get("input_schema", inner.get("parameters"))
    if not isinstance(schema, Mapping):
        if "input_schema" in tool or tool.get("type") == "function":
            schema = {"type": "object", "properties": {}}
        else:
            return None
    description = inner.get("description")
    return name, description if isinstance(description, str) else None, dict(schema)


def _tool_definition(tool: Mapping[str, Any], shape: str) -> dict[str, Any] | None:
    """A recorded tool definition in `shape`'s request form (None: not a function tool)."""
    parts = _tool_parts(tool)
    if parts is None:
        return None
    name, description, schema = parts
    out: dict[str, Any] = {"name": name, "parameters" if shape == "openai" else "input_schema": schema}
    if description:
        out["description"] = description
    return {"type": "function", "function": out} if shape == "openai" else out


# --- Anthropic Messages -------------------------------------------------------------

def _thinking_blocks(msg: Message) -> list[dict[str, Any]]:
    """The thinking blocks the source recorded for this message (Message.meta["thinking_blocks"]),
    with only the keys the API takes.

    Message.thinking alone is never turned into a block: the API checks each
    thinking block's signature and rejects an unsigned or altered one.
    """
    recorded = msg.meta.get("thinking_blocks") if msg.meta else None
    out: list[dict[str, Any]] = []
    for b in recorded if isinstance(recorded, (list, tuple)) else ():
        if not isinstance(b, Mapping):
            continue
        if b.get("type") == "thinking" and isinstance(b.get("thinking"), str) and isinstance(b.get("signature"), str):
            out.append({"type": "thinking", "thinking": b["thinking"], "signature": b["signature"]})
        elif b.get("type") == "redacted_thinking" and isinstance(b.get("data"), str):
            out.append({"type": "redacted_thinking", "data": b["data"]})
    return out


def _text_blocks(text: str) -> list[dict[str, Any]]:
    # The API rejects text blocks that are empty or only whitespace.
    return [{"type": "text", "text": text}] if text.strip() else []


def _assistant_blocks(msg: Message) -> list[dict[str, Any]]:
    blocks = _thinking_blocks(msg)   # first, as recorded
    blocks.extend(_text_blocks(msg.text))
    blocks.extend({"type": "tool_use", "id": c.id, "name": c.name, "input": dict(c.arguments)}
                  for c in msg.tool_calls)
    return blocks


def _with_images(text: str, images: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Text and image blocks in the order the placeholders held (Anthropic's shape)."""
    blocks: list[dict[str, Any]] = []
    for k, piece in enumerate(split_at_images(text)):
        blocks.extend(_text_blocks(piece.strip("\n")))
        if k < len(images):
            blocks.append({"type": "image", "source": dict(images[k])})
    return blocks


def _tool_result(msg: Message, images: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": msg.tool_call_id or ""}
    if images or msg.text:
        block["content"] = _with_images(msg.text, images) if images else msg.text
    if msg.meta and msg.meta.get("is_error") is True:
        block["is_error"] = True
    return block


def _add(turns: list[dict[str, Any]], role: str, blocks: list[dict[str, Any]]) -> None:
    # (paired() has put the results right after their call, so they open their user turn)
    if not blocks:
        return
    if turns and turns[-1]["role"] == role:
        turns[-1]["content"].extend(blocks)
    else:
        turns.append({"role": role, "content": blocks})


def to_anthropic(view: PreparedView, model: str | None = None, *, max_tokens: int = DEFAULT_MAX_TOKENS,
                 images: Mapping[int, list[dict[str, Any]]] | None = None) -> dict[str, Any]:
    """`images`: media.recorded_images of the view, sent as image blocks where the
    placeholders were (in a user turn or a tool result)."""
    system_parts = [view.system_prompt] if view.system_prompt and view.system_prompt.strip() else []
    turns: list[dict[str, Any]] = []
    for msg in paired(view.prepared)[0]:
        found = images.get(id(msg)) if images else None
        if msg.role == "system":
            if msg.text.strip():
                system_parts.append(msg.text)
        elif msg.role == "assistant":
            _add(turns, "assistant", _assistant_blocks(msg))
        elif msg.role == "tool":
            _add(turns, "user", [_tool_result(msg, found)])
        else:
            _add(turns, "user", _with_images(msg.text, found) if found else _text_blocks(msg.text))
    body: dict[str, Any] = {"max_tokens": max_tokens}
    if system_parts:
        body["system"] = "\n\n".join(system_parts)
    body["messages"] = turns
    tools = [t for t in (_tool_definition(t, "anthropic") for t in view.tools) if t is not None]
    if tools:
        body["tools"] = tools
    return _with_model(body, model)


def to_shape(view: PreparedView, shape: str = "openai", model: str | None = None, *,
             max_tokens: int = DEFAULT_MAX_TOKENS, images: Mapping[int, list[dict[str, Any]]] | None = None
             ) -> dict[str, Any]:
    """The body in `shape`; `max_tokens` goes into Anthropic bodies (OpenAI's is optional, left out);
    `images`: the view's images read back from its source (media.recorded_images)."""
    if shape == "openai":
        return to_openai(view, model, images)
    if shape == "anthropic":
        return to_anthropic(view, model, max_tokens=max_tokens, images=images)
    raise ValueError(f"unknown shape {shape!r} (choices: {', '.join(SHAPES)})")


def body_for(conversation: Conversation, view: PreparedView, shape: str = "openai", model: str | None = None, *,
             max_tokens: int = DEFAULT_MAX_TOKENS, cache: Any = None, source: str | None = None
             ) -> tuple[dict[str, Any], tuple[str, ...], dict[int, list[dict[str, Any]]]]:
    """(the request body of `view` in `shape`, the anthropic-beta headers it needs, the images read
    back from `source` that it carries: media.recorded_images).

    With the Anthropic API's own edits in force (api_edits: clear_tool_uses_20250919,
    clear_thinking_20251015, compact_20260112) an Anthropic body asks the API for them: its
    messages are those prepared without them (the client sends them whole, the server edits
    them) and its `context_management` block names the edits with the values tried. Any other
    body holds the messages as prepared, every what-if applied.
    """
    settings = view.settings
    if shape != "anthropic" or not api_edits_of(settings):
        images = recorded_images(source, view.prepared)
        return to_shape(view, shape, model, max_tokens=max_tokens, images=images), (), images
    from ctxview.pipeline import PipelineCache, prepare

    client = prepare(conversation, without_api_edits(settings), cache=cache or PipelineCache())
    images = recorded_images(source, client.prepared)
    body = to_anthropic(client, model, max_tokens=max_tokens, images=images)
    body["context_management"] = context_management(settings)
    return body, beta_headers(settings), images


# Where a source's requests went: Claude Code and Anthropic request files to Anthropic's Messages
# API; SwarmSDK sessions and ctxview's own files to whichever provider serves their model.
_ANTHROPIC_FORMATS = frozenset({"claude-code", "anthropic", "claude-trace", "claude-tap", "context-lens", "har"})
_BY_MODEL_FORMATS = frozenset({"swarm-snapshot", "swarm-events", "ctxview"})


def default_shape(source_format: str, model: str | None) -> str:
    """The shape a body is written in unless asked otherwise: the source's own, "anthropic" for
    Claude Code and Anthropic files and for SwarmSDK (or ctxview) sessions on a Claude model,
    "openai" otherwise (Codex, OpenAI chat and Responses files)."""
    if source_format in _ANTHROPIC_FORMATS:
        return "anthropic"
    if source_format in _BY_MODEL_FORMATS and isinstance(model, str) and "claude" in model.lower():
        return "anthropic"
    return "openai"


def recorded_max_tokens(*metadata: Mapping[str, Any]) -> int | None:
    """The max_tokens a source recorded for its request (the Anthropic loader keeps a request's in
    Session.metadata), from the first of `metadata` (e.g. a conversation's, then the session's) holding one."""
    for meta in metadata:
        value = meta.get("max_tokens") if meta else None
        if type(value) is int and value > 0:
            return value
    return None


# --- what the body leaves out and what the pipeline did ---------------------------------

def export_stats(view: PreparedView, shape: str, images: Mapping[int, Any] | None = None) -> dict[str, Any]:
    """ctxview's figures for an export: messages and tokens stored → prepared, what changed
    (the pipeline's counts), and what the shape could not carry."""
    _, stored, _ = row_columns(view.rows)
    prepared = view.prepared
    if shape == "openai":
        thinking = sum(1 for m in prepared if m.thinking or (m.meta and m.meta.get("thinking_blocks")))
    else:
        thinking = sum(1 for m in prepared if m.thinking and not _thinking_blocks(m))
    _, calls_out, results_out = paired(prepared)
    return {
        "messages": {"stored": sum(1 for m in stored if m is not None), "prepared": len(prepared)},
        "tokens": {"stored": view.tokens_stored, "prepared": view.tokens_prepared},
        "counter": view.counter_name,
        "changes": {k: v for k, v in view.stats.items() if v and k not in ("tool_results", "inserted")},
        "budget_shortfall": view.budget_shortfall,
        "not_exported": {"attachments": sum(len(m.content.attachments) for m in prepared
                                            if isinstance(m.content, Content)),
                         "images_as_text": len(images_as_text(prepared, images, shape)),
                         "thinking": thinking, "unanswered_calls": calls_out, "orphan_results": results_out},
    }


class LeftOut:
    """What a body leaves out of, or changes in, each prepared message ("" for nothing): paired's left-out
    results and calls, an image not read back (export.media). Worked out per message when asked.

    paired's rule, read from one message: a tool result is kept when the nearest assistant before it
    called that id and no earlier result in that assistant's window (up to the next assistant) answered
    it; an assistant's calls are cut when one of them has no result in its window. So a message needs
    its window only, not the whole view: the inspector asks for the few rows on screen.
    """

    __slots__ = ("prepared", "source", "_at", "_owner", "_windows", "_images")

    def __init__(self, prepared: Sequence[Message], source: str | None = None) -> None:
        self.prepared, self.source = prepared, source
        self._at: dict[int, Any] | None = None             # id(message) -> its position(s), made on the first ask
        self._owner: dict[int, int] = {}                   # position -> the nearest assistant's before it (-1: none)
        self._windows: dict[int, tuple[set[int], bool]] = {}   # assistant's position -> (results kept, calls cut)
        self._images: dict[int, Any] | None = None   # media.recorded_images, read on the first image

    def _window(self, a: int) -> tuple[set[int], bool]:
        """The positions of the results kept in the window of the assistant at `a`, and whether
        some of its calls go unanswered there (paired's loop over one window)."""
        hit = self._windows.get(a)
        if hit is None:
            msgs, calls = self.prepared, self.prepared[a].tool_calls
            ids = {c.id for c in calls}
            kept: set[int] = set()
            answered: set[str | None] = set()
            j = a + 1
            while j < len(msgs) and msgs[j].role != "assistant":
                m = msgs[j]
                if m.role == "tool" and m.tool_call_id in ids and m.tool_call_id not in answered:
                    kept.add(j)
                    answered.add(m.tool_call_id)
                j += 1
            hit = self._windows[a] = (kept, any(c.id not in answered for c in calls))
        return hit

    def _assistant_before(self, p: int) -> int:
        """The position of the nearest assistant before `p`, or -1 (each position scanned once)."""
        msgs, owner = self.prepared, self._owner
        scanned = []
        k = p - 1
        while k >= 0 and msgs[k].role != "assistant":
            if k in owner:
                found = owner[k]
                break
            scanned.append(k)
            k -= 1
        else:
            found = k
        for q in scanned:
            owner[q] = found
        owner[p] = found
        return found

    def _kept_and_cut(self, message: Message) -> tuple[bool, bool]:
        """(the message is in the body, its calls are cut), as paired(self.prepared) has them: a message
        object the view holds twice is in the body if one place keeps it, cut if every place cuts it."""
        if self._at is None:
            at: dict[int, Any] = {id(m): i for i, m in enumerate(self.prepared)}
            if len(at) < len(self.prepared):   # some message object is there twice: all its places
                at = {}
                for i, m in enumerate(self.prepared):
                    at.setdefault(id(m), []).append(i)
            self._at = at
        where = self._at.get(id(message))
        if where is None:
            return message.role != "tool", False
        places = [self._at_position(message, p) for p in (where if type(where) is list else (where,))]
        return any(kept for kept, _ in places), all(cut for _, cut in places)

    def _at_position(self, message: Message, p: int) -> tuple[bool, bool]:
        if message.role == "assistant":
            return True, bool(message.tool_calls) and self._window(p)[1]
        if message.role != "tool":
            return True, False
        a = self._assistant_before(p)
        return a >= 0 and bool(self.prepared[a].tool_calls) and p in self._window(a)[0], False

    def reason(self, message: Message | None, short: bool = False) -> str:
        """"not exported: no call" (short "!exp"), "calls not exported: no result" ("!calls"), "image sent as text"
        ("img→txt"), or ""."""
        if message is None:
            return ""
        kept, cut = self._kept_and_cut(message)
        if not kept:
            return "!exp" if short else "not exported: no call"
        if cut:
            return "!calls" if short else "calls not exported: no result"
        if "[" in message.text and PLACEHOLDER.search(message.text):
            if self._images is None:
                self._images = recorded_images(self.source, self.prepared)
            if id(message) not in self._images:
                return "img→txt" if short else "image sent as text"
            if message.role == "tool":  # Chat Completions' tool messages carry text only
                return "img→txt oai" if short else "image as text in openai"
        return ""


_LEFT_OUT = {"thinking": "messages' thinking", "unanswered_calls": "tool calls without a result",
             "orphan_results": "tool results without their call",
             "images_as_text": "images (or files) sent as their placeholder text"}


def stats_text(stats: Mapping[str, Any], name: str, shape: str, source: str) -> str:
    """`export_stats` as a short block for a human (what `prepare --stats` prints)."""
    m, t = stats["messages"], stats["tokens"]
    lines = [f"{name!r} from {source} as {shape}: messages {m['stored']:,} stored → {m['prepared']:,} prepared; "
             f"tokens {t['stored']:,} → {t['prepared']:,} ({stats['counter']})"]
    changes = ", ".join(f"{v:,} {k}" for k, v in stats["changes"].items())
    lines.append(f"changed: {changes or 'nothing'}")
    if stats["budget_shortfall"]:
        lines.append(f"budget: still {stats['budget_shortfall']:,} tokens over")
    missing = [f"{v:,} {_LEFT_OUT.get(k, k)}" for k, v in stats["not_exported"].items() if v]
    if missing:
        lines.append("not exported: " + ", ".join(missing))
    return "\n".join(lines)
