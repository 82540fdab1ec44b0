"""Recorded requests (sent_requests.TraceRequest) as conversations: the Session of a capture log.

Requests become conversations by their shared history: a request joins the
conversation (same system prompt) whose latest request, reply included, is
the longest prefix of its messages; sub-agents (Task) and Claude Code's side
calls (titles, quota checks: another system prompt) are conversations of
their own. A request whose history starts with Claude Code's compaction
summary continues the conversation it summarises, after a compaction event.
Stored messages are each conversation's union; each request is the assistant
message it produced (model.request_indices). A tool result a later request
sends with other text (Claude Code's microcompaction) is a microcompaction
event from that request on, any other message sent other than before (a reply
re-sent otherwise than the response gave it) a "resent" event, so the harness
stage (harness.history_as_sent) shows each request as its body sent it.
"""

from __future__ import annotations

from typing import Any, Sequence

from ctxview.model import ContextEvent, Conversation, Message, Session
from ctxview.formats.errors import LoadError
from ctxview.formats.parsing.linking import compaction_events, link_tool_results, unlinked_warning
from ctxview.formats.sent_requests import TraceRequest, message_key

__all__ = ["COMPACTION_OPENING", "group_requests", "requests_session"]

# How Claude Code's compaction summary opens the history that replaces the conversation.
COMPACTION_OPENING = "This session is being continued from a previous conversation"


def _shared_prefix(a: Sequence[tuple], b: Sequence[tuple]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def _continues(req: TraceRequest) -> bool:
    first = req.messages[0]
    return first.role == "user" and first.text.lstrip().startswith(COMPACTION_OPENING)


class _Thread:
    """One conversation as it is built: stored messages, what is sent now, its requests' lines."""

    def __init__(self, req: TraceRequest, source: str) -> None:
        self.system, self.requests, self.source = req.system_raw, [req], source
        self.stored: list[Message] = []
        self.start = 0                       # first stored index sent (after a compaction)
        self.compactions: list[dict] = []
        self.rewrites: list[ContextEvent] = []
        # the keys of what the next request would re-send (stored start.., as now sent; the last reply),
        # and their thinking (apart: grouping compares keys only)
        self.tip: list[tuple] = []
        self.thinking: list[str | None] = []
        self._add(req)

    def extends(self, req: TraceRequest) -> int:
        """How many messages of `req` repeat this conversation's history (0: not its next request)."""
        if req.system_raw != self.system or len(req.messages) < len(self.tip):
            return 0
        return _shared_prefix(self.tip, req.keys)

    def add(self, req: TraceRequest, compaction: bool = False) -> None:
        self.requests.append(req)
        if compaction:
            self.compactions.append({"index": len(self.stored), "summary": req.messages[0].text,
                                     "origin": f"line {req.line}", "meta": {"from": self.source}})
            self.start, self.tip, self.thinking = len(self.stored), [], []
        self._add(req)

    def _add(self, req: TraceRequest) -> None:
        start, stored = self.start, self.stored
        at = start + len(req.messages)          # the request's index: its reply goes there
        tip, thinking = self.tip, self.thinking
        for j, (m, key) in enumerate(zip(req.messages, req.keys)):
            i = start + j
            if i >= len(stored):
                stored.append(m)
                tip.append(key)
                thinking.append(m.thinking)
                continue
            if tip[j] == key and thinking[j] == m.thinking:
                continue
            tip[j], thinking[j] = key, m.thinking
            origin = f"line {req.line}"
            if m.role == "tool" and stored[i].role == "tool" and m.tool_call_id == stored[i].tool_call_id:
                # a tool result sent with other text: Claude Code's microcompaction
                self.rewrites.append(ContextEvent(kind="microcompaction", index=at, origin=origin,
                                                  replaced=(stored[i],),
                                                  meta={"placeholder": m.text, "tool_ids": [m.tool_call_id],
                                                        "from": self.source}))
            else:  # any other message sent other than before (harness.py: "resent")
                meta = {k: v for k, v in stored[i].meta.items() if k != "thinking_blocks"}
                if "thinking_blocks" in m.meta:  # (what an export sends back)
                    meta["thinking_blocks"] = m.meta["thinking_blocks"]
                sent = stored[i].replace(role=m.role, content=m.content, tool_calls=m.tool_calls,
                                         tool_call_id=m.tool_call_id, injected=m.injected, thinking=m.thinking,
                                         meta=meta)
                self.rewrites.append(ContextEvent(kind="resent", index=at, origin=origin, replaced=(stored[i],),
                                                  meta={"messages": {i: sent}, "from": self.source}))
        stored.append(req.reply)
        tip.append(message_key(req.reply))
        thinking.append(req.reply.thinking)


def group_requests(requests: Sequence[TraceRequest], source: str = "claude-trace") -> list[_Thread]:
    """The requests as conversations, in order of their first request (see the module's docstring);
    `source` names the format in the events' meta ("from")."""
    threads: list[_Thread] = []
    for req in requests:
        best, best_len = None, 0
        for t in threads:
            k = t.extends(req)
            if k >= best_len and k > 0:  # ties: the latest conversation
                best, best_len = t, k
        if best is not None:
            best.add(req)
            continue
        if _continues(req):
            same = [t for t in threads if t.system == req.system_raw]
            if same:
                same[-1].add(req, compaction=True)
                continue
        threads.append(_Thread(req, source))
    return threads


def _label(t: _Thread) -> str:
    first = next((m for m in t.requests[0].messages if m.role == "user" and m.text.strip()), None)
    head = " ".join(first.text.split())[:48] if first else ""
    n = len(t.requests)
    return f"{head!r}, {n} request{'s' if n != 1 else ''}" if head else f"{n} request{'s' if n != 1 else ''}"


def _conversation(name: str, t: _Thread, warnings: list[str]) -> Conversation:
    messages, unlinked = link_tool_results(t.stored)
    w = unlinked_warning(name, unlinked)
    if w:
        warnings.append(w)
    events = compaction_events(messages, t.compactions) + t.rewrites
    events.sort(key=lambda e: e.index)
    last = t.requests[-1]
    meta: dict[str, Any] = {"trace_lines": tuple(r.line for r in t.requests)}
    if last.tools:
        meta["tools"] = last.tools
    if isinstance(last.system_raw, list):
        meta["system_blocks"] = tuple(last.system_raw)
    if name != "main":
        meta["label"] = _label(t)
    if any(r.tools != last.tools for r in t.requests):
        warnings.append(f"{name}: the tool definitions changed between requests (#sys shows the last request's)")
    return Conversation(name=name, messages=tuple(messages), system_prompt=last.system,
                        model=last.model or last.reply.model_id, events=tuple(events), metadata=meta)


def requests_session(source_name: str, format: str, expected: str, requests: Sequence[TraceRequest],
                     skipped: dict[str, int], malformed: int = 0, warnings: Sequence[str] = (),
                     what: str = "logged pair(s)", meta: dict[str, Any] | None = None) -> Session:
    """The Session of a capture log's kept `requests` (in log order): its conversations, the main one
    (the most requests) first; `skipped`: the records left out, by reason (said in a warning);
    LoadError when no request was kept."""
    out = list(warnings)
    if not requests:
        why = ", ".join(f"{k} ×{v}" for k, v in sorted(skipped.items())) or "no records"
        raise LoadError(source_name, f"no /v1/messages request with a response ({why})", expected=expected)
    threads = group_requests(requests, format)
    main = max(range(len(threads)), key=lambda k: (len(threads[k].requests), -k))
    convs = []
    for k, t in enumerate(threads):
        name = "main" if k == main else f"line-{t.requests[0].line}"  # where it starts in the log
        convs.append(_conversation(name, t, out))
    convs.sort(key=lambda c: c.name != "main")
    if skipped:
        out.append(f"skipped {sum(skipped.values())} {what} that are no request of a conversation ("
                   + ", ".join(f"{k} ×{v}" for k, v in sorted(skipped.items())) + ")")
    metadata = {"requests": len(requests), "streaming": sum(r.streaming for r in requests),
                "skipped_pairs": dict(skipped), **(meta or {})}
    return Session(format=format, source=source_name, conversations=tuple(convs), metadata=metadata,
                   skipped=malformed, warnings=tuple(out))
