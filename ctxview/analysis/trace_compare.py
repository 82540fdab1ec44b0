"""A transcript's as-sent reconstruction against what a claude-trace log says was really sent.

A Claude Code transcript stores the history; ctxview rebuilds each request from
it (pipeline, default settings: the view "as sent"). A claude-trace log of the
same session holds the request bodies themselves. `compare(session, requests)`
matches each trace request to a transcript request (by the reply's message id,
which both record; else by order among the requests of the conversation that
opens with the same prompt) and says, per request, whether the reconstruction
equals the body and where it first differs: a message the reconstruction lacks
or has in excess, a text that differs (with a short diff), a `<system-reminder>`
the harness added that the transcript does not store. What no transcript stores
(the system prompt and the tool definitions) is said once, in `not_in_transcript`.
"""

from __future__ import annotations

import difflib
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping, Sequence

from ctxview.engine import reminders
from ctxview.formats.parsing.request_threads import group_requests
from ctxview.formats.sent_requests import TraceRequest, message_key
from ctxview.engine.harness import MICROCOMPACT_PLACEHOLDER, history_as_sent
from ctxview.model import Conversation, Message, Session, request_indices
from ctxview.pipeline import PipelineCache, prepare
from ctxview.settings import Settings

__all__ = ["MessageDifference", "RequestComparison", "TraceComparison", "TraceMatch", "compare", "compare_request",
           "match", "short_diff"]

DIFF_CHARS = 160  # how much of a differing text a difference shows


@dataclass(frozen=True, slots=True)
class MessageDifference:
    """One place where the reconstruction and the body part."""

    kind: str              # "missing" (sent, not reconstructed), "extra" (reconstructed, not sent),
                           # "text" (both, other text or calls), "reminder" (only <system-reminder> blocks differ),
                           # "thinking" (the same message, other thinking)
    sent_index: int        # position in the request as sent (the trace's body, 0-based)
    stored_index: int | None  # the transcript's stored index of the reconstructed message, where there is one
    role: str
    detail: str


@dataclass(frozen=True, slots=True)
class RequestComparison:
    """One transcript request against its trace request."""

    conversation: str
    number: int            # 1-based among the conversation's requests (as the inspector numbers them)
    index: int             # the assistant message's stored index
    trace_line: int
    matched_by: str        # "id" or "order"
    sent_messages: int
    reconstructed_messages: int
    differences: tuple[MessageDifference, ...] = ()

    @property
    def matches(self) -> bool:
        return not self.differences

    @property
    def first_difference(self) -> MessageDifference | None:
        return self.differences[0] if self.differences else None

    def summary(self) -> str:
        """"✓ matches trace" or "✗ differs at message #k (...)", the one line the inspector shows."""
        if self.matches:
            return f"✓ matches trace (line {self.trace_line})"
        d = self.differences[0]
        at = f"#{d.stored_index}" if d.stored_index is not None else f"#{d.sent_index} as sent"
        more = f", {len(self.differences) - 1} more" if len(self.differences) > 1 else ""
        return f"✗ differs from trace (line {self.trace_line}) at message {at}: {_KIND_WORDS[d.kind]}{more}"


_KIND_WORDS = {"missing": "sent, not in the transcript", "extra": "in the transcript, not sent",
               "text": "text differs", "reminder": "reminder injected by the harness", "thinking": "thinking differs"}


@dataclass(frozen=True, slots=True)
class TraceComparison:
    trace: str
    requests: tuple[RequestComparison, ...]
    unmatched_trace_lines: tuple[int, ...]         # trace requests no transcript request answers to
    unmatched_requests: tuple[tuple[str, int], ...]  # (conversation, stored index) with no trace request
    not_in_transcript: tuple[str, ...] = field(default=())  # said once: system prompt, tools

    def for_request(self, conversation: str, index: int) -> RequestComparison | None:
        for r in self.requests:
            if r.conversation == conversation and r.index == index:
                return r
        return None

    def to_dict(self) -> dict[str, Any]:
        """The `--json` form."""
        return {
            "trace": self.trace,
            "requests_compared": len(self.requests),
            "requests_matching": sum(r.matches for r in self.requests),
            "not_in_transcript": list(self.not_in_transcript),
            "unmatched_trace_lines": list(self.unmatched_trace_lines),
            "unmatched_requests": [{"conversation": c, "index": i} for c, i in self.unmatched_requests],
            "requests": [{"conversation": r.conversation, "request": r.number, "index": r.index,
                          "trace_line": r.trace_line, "matched_by": r.matched_by, "matches": r.matches,
                          "sent_messages": r.sent_messages, "reconstructed_messages": r.reconstructed_messages,
                          "first_difference": r.differences[0].sent_index if r.differences else None,
                          "differences": [asdict(d) for d in r.differences]} for r in self.requests],
        }


def short_diff(a: str, b: str, width: int = DIFF_CHARS) -> str:
    """Where two texts part: `…common tail «reconstructed» → «sent»…`, about `width` characters."""
    start = 0
    for x, y in zip(a, b):
        if x != y:
            break
        start += 1
    end = 0
    while end < min(len(a), len(b)) - start and a[len(a) - 1 - end] == b[len(b) - 1 - end]:
        end += 1
    side = max(8, (width - 20) // 2)

    def cut(s: str) -> str:
        mid = s[start:len(s) - end]
        return repr(mid if len(mid) <= side else mid[:side] + "…")

    lead = a[max(0, start - 20):start]
    return f"at char {start}: …{lead!r} then {cut(a)} (transcript) → {cut(b)} (sent)"


def _same_but_reminders(a: Message, b: Message) -> bool:
    return a.role == b.role and message_key(a)[2:] == message_key(b)[2:] and \
        reminders.remove(a.text).strip() == reminders.remove(b.text).strip()


def _pair_difference(a: Message, b: Message, j: int, stored: int) -> MessageDifference:
    if _same_but_reminders(a, b):
        return MessageDifference("reminder", j, stored, b.role,
                                 "the sent text holds <system-reminder> blocks the transcript does not store")
    if a.role != b.role:
        return MessageDifference("text", j, stored, b.role, f"role {a.role} (transcript) → {b.role} (sent)")
    if a.text != b.text:
        hint = " (Claude Code's microcompaction placeholder: the transcript records no microcompact_boundary " \
               "for it)" if a.role == "tool" and b.text == MICROCOMPACT_PLACEHOLDER else ""
        return MessageDifference("text", j, stored, b.role, short_diff(a.text, b.text) + hint)
    if a.tool_call_id != b.tool_call_id:
        return MessageDifference("text", j, stored, b.role, f"answers {a.tool_call_id} (transcript) → {b.tool_call_id} (sent)")
    names = lambda m: ", ".join(f"{c.name}({c.id})" for c in m.tool_calls) or "none"  # noqa: E731
    return MessageDifference("text", j, stored, b.role, f"tool calls {names(a)} (transcript) → {names(b)} (sent)")


def _one_sided(kind: str, m: Message, j: int, stored: int | None) -> MessageDifference:
    preview = " ".join(m.text.split())[:80]
    if kind == "missing" and m.role == "user" and m.text and not reminders.remove(m.text).strip():
        return MessageDifference("reminder", j, stored, m.role,
                                 f"a reminder-only message the harness injected: {preview!r}")
    what = "sent but not in the reconstruction" if kind == "missing" else "reconstructed but not sent"
    return MessageDifference(kind, j, stored, m.role, f"{m.role} message {what}: {preview!r}")


def differences(reconstructed: Sequence[Message], sent: Sequence[Message], start: int) -> list[MessageDifference]:
    """Where `reconstructed` (stored indices start, start + 1, ...) and `sent` differ, in sent order."""
    a = [message_key(m) for m in reconstructed]
    b = [message_key(m) for m in sent]
    out: list[MessageDifference] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":  # the same message; its thinking (kept apart from the key) may still differ
            for k in range(i2 - i1):
                x, y = reconstructed[i1 + k].thinking or "", sent[j1 + k].thinking or ""
                if x != y:
                    out.append(MessageDifference("thinking", j1 + k, start + i1 + k, sent[j1 + k].role,
                                                 "thinking " + (short_diff(x, y) if x and y else
                                                                "sent, not in the transcript" if y else
                                                                "in the transcript, not sent")))
            continue
        pairs = min(i2 - i1, j2 - j1) if op == "replace" else 0
        for k in range(pairs):
            out.append(_pair_difference(reconstructed[i1 + k], sent[j1 + k], j1 + k, start + i1 + k))
        for k in range(j1 + pairs, j2):
            out.append(_one_sided("missing", sent[k], k, None))
        for k in range(i1 + pairs, i2):
            out.append(_one_sided("extra", reconstructed[k], j2, start + k))
    return out


def _first_prompt(messages: Sequence[Message]) -> str | None:
    for m in messages:
        if m.role == "user":
            return reminders.remove(m.text).strip()
    return None


def _match(session: Session, requests: Sequence[TraceRequest]):
    """[(conversation, stored index, trace request, how)], trace lines unmatched, requests unmatched."""
    by_id = {r.reply.id: r for r in requests if r.reply.id}
    used: set[int] = set()
    pairs: list[tuple[Conversation, int, TraceRequest, str]] = []
    left: list[tuple[Conversation, int]] = []
    for conv in session.conversations:
        for idx in request_indices(conv.messages):
            hit = by_id.get(conv.messages[idx].id or "")
            if hit is not None and hit.line not in used:
                used.add(hit.line)
                pairs.append((conv, idx, hit, "id"))
            else:
                left.append((conv, idx))
    unmatched: list[tuple[str, int]] = []
    # By order: within the trace's conversation (group_requests) that opens with the same prompt, the
    # one with the most requests (a side call may repeat the user's prompt under another system prompt).
    threads = [[r for r in t.requests if r.line not in used] for t in group_requests(requests)]
    for conv in session.conversations:
        mine = [idx for c, idx in left if c is conv]
        if not mine:
            continue
        prompt = _first_prompt(conv.messages)
        same = [t for t in threads if t and _first_prompt(t[0].messages) == prompt]
        pool = max(same, key=len) if same else []
        k = min(len(mine), len(pool))
        for idx, r in zip(mine[:k], pool[:k]):
            used.add(r.line)
            pairs.append((conv, idx, r, "order"))
        del pool[:k]
        unmatched.extend((conv.name, idx) for idx in mine[k:])
    lines = tuple(r.line for r in requests if r.line not in used)
    return pairs, lines, tuple(unmatched)


def _not_in_transcript(session: Session, requests: Sequence[TraceRequest]) -> tuple[str, ...]:
    notes = []
    if requests and not any(c.system_prompt for c in session.conversations):
        sized = [len(r.system) for r in requests if r.system]
        if sized:
            notes.append(f"system prompt: the transcript stores none; the trace's requests sent one "
                         f"({min(sized):,}–{max(sized):,} characters)" if min(sized) != max(sized) else
                         f"system prompt: the transcript stores none; the trace's requests sent one of "
                         f"{sized[0]:,} characters")
    if requests and not any(c.metadata.get("tools") for c in session.conversations):
        counts = sorted({len(r.tools) for r in requests if r.tools})
        if counts:
            notes.append(f"tool definitions: the transcript stores none; the trace's requests sent "
                         f"{'/'.join(map(str, counts))} tool definition(s)")
    return tuple(notes)


def compare_request(conv: Conversation, idx: int, req: TraceRequest, how: str = "id", number: int | None = None,
                    cache: PipelineCache | None = None) -> RequestComparison:
    """Request `idx` of `conv` reconstructed as sent (the pipeline's default settings: no what-if, so
    the n-th message sent is stored index start + n) against the body `req` recorded."""
    view = prepare(conv, Settings(request=idx), cache=cache)
    start = history_as_sent(conv, idx).start
    if number is None:
        number = request_indices(conv.messages).index(idx) + 1
    return RequestComparison(conv.name, number, idx, req.line, how, len(req.messages), len(view.prepared),
                             tuple(differences(view.prepared, req.messages, start)))


@dataclass(frozen=True, slots=True)
class TraceMatch:
    """Which trace request answers to which transcript request (computed once; cheap)."""

    pairs: Mapping[tuple[str, int], tuple[TraceRequest, str]]  # (conversation, stored index) -> (request, how)
    unmatched_trace_lines: tuple[int, ...]
    unmatched_requests: tuple[tuple[str, int], ...]
    not_in_transcript: tuple[str, ...]


def match(session: Session, requests: Sequence[TraceRequest]) -> TraceMatch:
    """The trace's requests matched to the session's (see the module's docstring)."""
    pairs, lines, unmatched = _match(session, requests)
    found = {(conv.name, idx): (req, how) for conv, idx, req, how in pairs}
    return TraceMatch(found, lines, unmatched, _not_in_transcript(session, [p[2] for p in pairs]))


def compare(session: Session, requests: Sequence[TraceRequest], trace: str = "") -> TraceComparison:
    """Every transcript request that a trace request answers to, reconstructed as sent and compared."""
    m = match(session, requests)
    cache = PipelineCache()
    convs = {c.name: c for c in session.conversations}
    out = [compare_request(convs[name], idx, req, how, cache=cache)
           for (name, idx), (req, how) in sorted(m.pairs.items(), key=lambda kv: kv[1][0].line)]
    return TraceComparison(trace, tuple(out), m.unmatched_trace_lines, m.unmatched_requests, m.not_in_transcript)
