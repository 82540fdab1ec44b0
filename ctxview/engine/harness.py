"""Stage 0: what the harness itself sent at a request, from the file's own records.

A stored history is not what the model read at every request. The harness
rewrote it, and the file says where:

- a **compaction** (Claude Code `compact_boundary`, Codex `compacted`): from
  its index on, the messages before it are no longer sent; the summary (and,
  for Codex, the replacement history) is stored right after the boundary;
- a **microcompaction** (Claude Code `microcompact_boundary`): from its index
  on, the tool results it names are sent as Claude Code's placeholder;
- a **truncation** (Codex): a rollout stores each tool output whole, and
  Codex sends it cut to the turn's `truncation_policy` (its history.rs
  truncates what it records into the history, not what it writes to the
  rollout), with Codex's own "…N chars truncated…" marker;
- a **persisted output** (Claude Code's `<persisted-output>`: a tool result over
  its size limit saved to a file and sent as its first 2 KB and the path):
  from the start, the tool message is sent as the preview the file records
  (meta["persisted_output"]["sent"], from a content-replacement record), or
  as it is stored when the stored text is the preview already; either way
  marked (formats/claude_code/persisted.py);
- a **resend** (a claude-trace log, which records every request body): from
  its index on, the messages it holds are sent as it gives them;
- a **compression** (SwarmSDK's `context_compression` event): SwarmSDK's
  `auto_compress_on_threshold` cut the old tool results of the history as it
  then was (`compress_tool_results(messages, keep_recent: 10)`, default
  tiers) and replaced the history with the result, once.

`history_as_sent(conversation, n)` applies the rewrites recorded before
request n (the request that sends messages[:n]) and returns a `SentHistory`.
`swarm_auto_event` finds where SwarmSDK's own rule would have compressed a
history that was never compressed (the `swarm-auto` what-if): at the end of
the first reply whose context reached 60% of the window.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

from ctxview.engine.codex_truncation import truncate_output
from ctxview.engine.compression import DEFAULT_POLICY, compress_tool_results
from ctxview.model import Content, ContextEvent, Conversation, Message

__all__ = ["MICROCOMPACT_PLACEHOLDER", "SWARM_COMPRESSION_SHARE", "SWARM_KEEP_RECENT", "Rewrite", "SentHistory",
           "context_tokens", "history_as_sent", "rewrite_events", "sent_tokens", "swarm_auto_event"]

# Claude Code's text for a tool result that microcompaction cleared (used when the record
# does not carry one).
MICROCOMPACT_PLACEHOLDER = "[Old tool result content cleared]"
SWARM_COMPRESSION_SHARE = 0.6  # SwarmSDK's Context::COMPRESSION_THRESHOLD (60%)
SWARM_KEEP_RECENT = 10         # trigger_automatic_compression's keep_recent
_KINDS = ("compaction", "microcompaction", "compression", "resent")


@dataclass(frozen=True, slots=True)
class Rewrite:
    """One message the harness sent other than stored: its stored index, what it sent, and why."""

    index: int
    message: Message
    kind: str            # "microcompaction", "compression", "truncation", "persisted" or "resent"
    event: ContextEvent


@dataclass(frozen=True, slots=True)
class SentHistory:
    """The history the harness sent for one request: messages[start:n], some rewritten."""

    start: int                                  # first stored index sent (0: no compaction applies)
    messages: tuple[Message, ...]               # what was sent for stored indices start..n-1, in order
    rewrites: Mapping[int, Rewrite] = field(default_factory=dict)  # stored index -> its rewrite
    compaction: ContextEvent | None = None      # the compaction that set `start`

    @property
    def plain(self) -> bool:
        """Nothing rewritten: the stored messages as they are."""
        return self.start == 0 and not self.rewrites


def rewritten_outputs(conversation: Conversation) -> tuple[list[int], list[int]]:
    """The indices of the tool outputs sent other than stored from the first request that sends them,
    in one pass: (those that carry the truncation policy they were recorded under: Codex stores an
    output whole and sends it cut to the turn's policy, codex_truncation.truncate_output; those
    Claude Code sent as a `<persisted-output>` preview)."""
    truncated: list[int] = []
    persisted: list[int] = []
    # (`m.meta` first: most messages have an empty meta, so one test rules them out, and
    # isinstance(x, Mapping) is slow on 100k of them; an empty mapping holds no policy either way)
    for i, m in enumerate(conversation.messages):
        meta = m.meta
        if meta and m.role == "tool" and isinstance(meta, Mapping):
            if isinstance(meta.get("truncation_policy"), Mapping):
                truncated.append(i)
            if isinstance(meta.get("persisted_output"), Mapping):
                persisted.append(i)
    return truncated, persisted


def rewritten_from_start(conversation: Conversation) -> bool:
    """Whether some tool result is sent other than stored, or marked, from the first request that sends
    it, whatever the events (a Codex truncation, a Claude Code persisted output)."""
    return any(rewritten_outputs(conversation))


def rewrite_events(conversation: Conversation) -> tuple[ContextEvent, ...]:
    """The conversation's events that rewrite what is sent, in index order."""
    return tuple(sorted((e for e in conversation.events if e.kind in _KINDS and type(e.index) is int),
                        key=lambda e: e.index))


def _placeholder(event: ContextEvent) -> str:
    text = event.meta.get("placeholder") if isinstance(event.meta, Mapping) else None
    return text if isinstance(text, str) else MICROCOMPACT_PLACEHOLDER


def _with_text(msg: Message, text: str) -> Message:
    if isinstance(msg.content, Content):
        return msg.with_content(Content(text, msg.content.attachments))
    return msg.with_content(text)


def _keep_recent(event: ContextEvent) -> int:
    value = event.meta.get("keep_recent") if isinstance(event.meta, Mapping) else None
    return value if type(value) is int and value >= 0 else SWARM_KEEP_RECENT


def history_as_sent(conversation: Conversation, n: int | None = None,
                    events: Sequence[ContextEvent] | None = None) -> SentHistory:
    """The history sent at the request that sends messages[:n] (None: the next request), with the
    rewrite events recorded at an index ≤ n applied in order (`events`: those to apply instead of
    the conversation's own, e.g. with the swarm-auto what-if's)."""
    msgs = conversation.messages
    n = len(msgs) if n is None else n
    todo = [e for e in (rewrite_events(conversation) if events is None else events) if e.index <= n]
    current: dict[int, Message] = {}   # stored index -> the message sent, where it differs
    kinds: dict[int, tuple[str, ContextEvent]] = {}
    truncated, persisted = rewritten_outputs(conversation)
    for i in truncated:  # Codex cut these when it recorded them: from the start
        if i >= n:
            break
        msg = msgs[i]
        policy = msg.meta["truncation_policy"]
        cut = truncate_output(msg.text, policy)
        if cut != msg.text:
            current[i] = _with_text(msg, cut)
            kinds[i] = ("truncation", ContextEvent("truncation", i, meta={"policy": policy}))
    for i in persisted:  # sent as the preview from the first request that sent it
        if i >= n:
            break
        msg = msgs[i]
        info = msg.meta["persisted_output"]
        sent = info.get("sent")
        # (a preview stored as it was sent is marked all the same: the badge says what Claude Code did)
        current[i] = _with_text(msg, sent) if isinstance(sent, str) and sent != msg.text else msg
        kinds[i] = ("persisted", ContextEvent("persisted_output", i, meta={
            k: v for k, v in info.items() if k != "sent"}))
    if not todo and not current:
        return SentHistory(0, msgs if n == len(msgs) else msgs[:n])
    start = 0
    compaction = None
    for event in todo:
        if event.kind == "compaction":
            start, compaction = event.index, event
            current = {i: m for i, m in current.items() if i >= start}
            kinds = {i: k for i, k in kinds.items() if i >= start}
        elif event.kind == "microcompaction":
            ids = set(event.meta.get("tool_ids") or ()) if isinstance(event.meta, Mapping) else set()
            ids |= {m.tool_call_id for m in event.replaced if m.tool_call_id}
            text = _placeholder(event)
            for i in range(start, min(event.index, n)):
                msg = current.get(i, msgs[i])
                if msg.role == "tool" and msg.tool_call_id in ids and msg.text != text:
                    current[i], kinds[i] = _with_text(msg, text), ("microcompaction", event)
        elif event.kind == "resent":
            sent = event.meta.get("messages") if isinstance(event.meta, Mapping) else None
            for i, m in (sent.items() if isinstance(sent, Mapping) else ()):
                if type(i) is int and start <= i < min(event.index, n) and isinstance(m, Message):
                    current[i], kinds[i] = m, ("resent", event)
        else:  # compression: the history as it then was, compressed once
            stop = min(event.index, n)
            before = [current.get(i, msgs[i]) for i in range(start, event.index)]
            done = compress_tool_results(before, _keep_recent(event), DEFAULT_POLICY)
            for off, new in enumerate(done[:stop - start]):
                if new is not before[off]:
                    current[start + off], kinds[start + off] = new, ("compression", event)
    sent = tuple(current.get(i, msgs[i]) for i in range(start, n))
    rewrites = {i: Rewrite(i, current[i], kinds[i][0], kinds[i][1]) for i in sorted(current) if start <= i < n}
    return SentHistory(start, sent, rewrites, compaction)


def swarm_auto_event(conversation: Conversation, tokens_of: Callable[[int], int],
                     window: int | None) -> ContextEvent | None:
    """Where SwarmSDK's own rule compresses this history: after the first reply (an assistant message
    at index k) whose context, tokens_of(k + 1) (the tokens of messages[:k + 1] as sent,
    system prompt included), reaches 60% of the window; None without a window or when no reply does.
    `tokens_of` must not decrease with its argument (a prefix sum)."""
    if not window:
        return None
    limit = SWARM_COMPRESSION_SHARE * window
    for k, msg in enumerate(conversation.messages):
        if msg.role == "assistant" and tokens_of(k + 1) >= limit:
            return ContextEvent(kind="compression", index=k + 1, trigger="swarm-auto",
                                meta={"keep_recent": SWARM_KEEP_RECENT, "what_if": True})
    return None


def context_tokens(counts_prefix: Sequence[int], events: Sequence[ContextEvent], system_tokens: int,
                   upto: int) -> int:
    """The tokens of messages[:upto] as sent, estimated from the stored messages' prefix sums: the
    system prompt and the messages since the latest compaction at or before `upto` (the estimate
    swarm-auto's threshold reads; rewrites inside the history are not subtracted)."""
    start = 0
    for e in events:
        if e.kind == "compaction" and e.index <= upto:
            start = e.index
    return system_tokens + counts_prefix[upto] - counts_prefix[start]


def sent_tokens(conversation: Conversation, counts: Sequence[int], count_message: Callable[[Message], int],
                system_tokens: int = 0, prefix: Sequence[int] | None = None) -> Callable[[int], int]:
    """A function k -> the tokens of the history as sent at the request that sends messages[:k]
    (system prompt included), from the stored messages' tokens `counts`: one history_as_sent per
    set of rewrites (a handful), then a prefix sum per request."""
    if prefix is None:  # (a caller that has the prefix sums of `counts` gives them: one list, not two)
        prefix = [0]
        for c in counts:
            prefix.append(prefix[-1] + c)
    events = rewrite_events(conversation)
    at_index = [e.index for e in events]   # (sorted, as the events are)
    epochs: dict[int, tuple[int, int]] = {}  # events applied -> (start, tokens the rewrites add)

    def tokens(k: int) -> int:
        applied = bisect.bisect_right(at_index, k)  # the events at or before k: the first `applied`
        hit = epochs.get(applied)
        if hit is None:
            sent = history_as_sent(conversation, len(conversation.messages), events[:applied])
            at = sorted(sent.rewrites)  # rewrite indices, and the tokens they add up to each
            deltas = [0]
            for i in at:
                deltas.append(deltas[-1] + count_message(sent.rewrites[i].message) - counts[i])
            hit = epochs[applied] = (sent.start, at, deltas)
        start, at, deltas = hit
        return system_tokens + prefix[k] - prefix[start] + deltas[bisect.bisect_left(at, k)]

    return tokens
