"""SwarmSDK event logs: the LogStream events of `swarm.execute { |event| ... }`,
saved as a JSON array or as JSON lines.

Conversations are rebuilt per agent the way SwarmSDK's EventsToMessages
does: events sorted by timestamp; user_prompt → user, agent_step/agent_stop
→ assistant (with tool calls and usage), tool_result and delegation_result
→ tool. agent_start gives the system prompt and model; threshold and
compression events are kept as context events at the index they happened.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Iterable, Mapping

import orjson

from ctxview.model import ContextEvent, Conversation, Message, Session
from ctxview.formats.parsing.builders import message, swarm_usage, tool_call_from
from ctxview.formats.contract import ModuleFormat
from ctxview.formats.errors import LoadError
from ctxview.formats.parsing.jsonio import Input, LineReader, load_document
from ctxview.formats.parsing.linking import link_tool_results, unlinked_warning

FORMAT = "swarm-events"
EXPECTED = "SwarmSDK event log"

MESSAGE_EVENTS = frozenset({"user_prompt", "agent_step", "agent_stop", "tool_result", "delegation_result"})
_THRESHOLD = frozenset({"context_threshold_hit", "context_limit_warning"})
_COMPRESSION = frozenset({"compression_completed", "context_compression", "compression_started"})
EVENT_TYPES = MESSAGE_EVENTS | _THRESHOLD | _COMPRESSION | frozenset({
    "swarm_start", "swarm_stop", "agent_start", "tool_call", "agent_delegation", "llm_api_request",
    "llm_api_response", "llm_retry_attempt", "llm_retry_exhausted", "model_lookup_warning",
    "delegation_circular_dependency", "node_start", "node_stop", "breakpoint_enter", "breakpoint_exit",
})


def sniff_record(rec: Any) -> bool:
    return isinstance(rec, dict) and type(rec.get("type")) is str and rec["type"] in EVENT_TYPES and "timestamp" in rec and (
        "agent" in rec or "swarm_id" in rec)


def sniff_document(doc: Any) -> bool:
    if isinstance(doc, dict) and isinstance(doc.get("events"), list):
        doc = doc["events"]
    if not isinstance(doc, list) or not doc:
        return False
    head = [r for r in doc[:20] if isinstance(r, dict)]
    return bool(head) and sum(1 for r in head if sniff_record(r)) * 2 > len(head)


def _time_key(ts: Any) -> float:
    if isinstance(ts, str):
        try:
            return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()
        except ValueError:
            pass
    return 0.0  # SwarmSDK sorts unparseable timestamps first (Time.at(0))


def _result_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()


class _Agent:
    """One agent's conversation as its events rebuild it."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.messages: list[Message] = []
        self.events: list[ContextEvent] = []
        self.system_prompt: str | None = None
        self.model: str | None = None
        self.context_window: int | None = None
        self.compression: bool | None = None
        self.delegation = False

    def add(self, etype: str, ev: Mapping, origin: str, file: str) -> None:
        """Apply one of this agent's events (`file` names the log in errors)."""
        if etype == "agent_start":
            if isinstance(ev.get("system_prompt"), str):
                self.system_prompt = ev["system_prompt"]
            if isinstance(ev.get("model"), str):
                self.model = ev["model"]
            self.delegation = bool(ev.get("is_delegation_instance")) or "@" in self.name
        elif etype == "user_prompt":
            md = ev.get("metadata") if isinstance(ev.get("metadata"), Mapping) else {}
            prompt = md.get("prompt") or ev.get("prompt")
            if prompt:
                self.messages.append(message(role="user", content=str(prompt), origin=origin,
                                             meta={"source": ev["source"]} if isinstance(ev.get("source"), str) else {}))
        elif etype in ("agent_step", "agent_stop"):
            self._step(ev, origin, file)
        elif etype in ("tool_result", "delegation_result"):
            self.messages.append(message(role="tool", content=_result_text(ev.get("result")),
                                         tool_call_id=str(ev.get("tool_call_id") or ""), origin=origin,
                                         meta={"delegate_from": ev["delegate_from"]} if ev.get("delegate_from") else {}))
        elif etype in _THRESHOLD:
            self.events.append(ContextEvent(
                kind="threshold_hit", index=len(self.messages), origin=origin,
                tokens_before=ev.get("tokens_used") if type(ev.get("tokens_used")) is int else None,
                meta={k: ev[k] for k in ("threshold", "current_usage", "context_limit") if k in ev}))
            if type(ev.get("context_limit")) is int:
                self.context_window = ev["context_limit"]
        elif etype in _COMPRESSION:
            if etype != "compression_started":
                self.compression = True
            self.events.append(ContextEvent(
                kind="compression", index=len(self.messages), origin=origin,
                tokens_before=ev.get("tokens_before") if type(ev.get("tokens_before")) is int else None,
                meta={k: ev[k] for k in ("messages_compressed", "total_messages", "compression_strategy",
                                         "keep_recent", "current_usage") if k in ev} | {"event": etype},
            ))

    def _step(self, ev: Mapping, origin: str, file: str) -> None:
        """agent_step / agent_stop: an assistant message with its tool calls and usage."""
        listed = ev.get("tool_calls")
        if listed is not None and not isinstance(listed, list):
            raise LoadError(file, f"{origin}/tool_calls: expected a list of tool calls, "
                                  f"found {type(listed).__name__}", expected=EXPECTED)
        calls = tuple(
            tool_call_from(tc.get("id"), tc.get("name"), tc.get("arguments"))
            for tc in (listed or ()) if isinstance(tc, Mapping)
        )
        usage = ev.get("usage")
        if isinstance(usage, Mapping) and type(usage.get("context_limit")) is int:
            self.context_window = usage["context_limit"]
        model = ev.get("model") if isinstance(ev.get("model"), str) else None
        self.model = model or self.model
        content = ev.get("content")
        self.messages.append(message(role="assistant", content=content if isinstance(content, str) else "",
                                     tool_calls=calls, usage=swarm_usage(usage), model_id=model, origin=origin))


def _swarm_event(etype: str, ev: Mapping, meta: dict[str, Any], lead: str | None) -> str | None:
    """Apply swarm_start / swarm_stop to the session's metadata; the lead agent after it."""
    if etype == "swarm_start":
        lead = str(ev.get("lead_agent") or ev.get("agent") or "") or lead
        for k in ("swarm_id", "swarm_name"):
            if isinstance(ev.get(k), str):
                meta.setdefault(k, ev[k])
        if isinstance(ev.get("timestamp"), str):
            meta.setdefault("started_at", ev["timestamp"])
    else:
        for k in ("total_cost", "total_tokens", "duration", "success"):
            if k in ev:
                meta[k] = ev[k]
    return lead


def _conversations(agents: dict[str, _Agent], lead: str | None, warnings: list[str]) -> list[Conversation]:
    """The agents' conversations: the lead first, delegation instances last."""
    order = sorted(agents.values(), key=lambda a: (a.name != lead, a.delegation or "@" in a.name))
    convs = []
    for a in order:
        if not a.messages and a.system_prompt is None:
            continue
        msgs, unlinked = link_tool_results(a.messages)
        w = unlinked_warning(a.name, unlinked)
        if w:
            warnings.append(w)
        convs.append(Conversation(name=a.name, messages=tuple(msgs), system_prompt=a.system_prompt, model=a.model,
                                  context_window=a.context_window, compression_applied=a.compression,
                                  events=tuple(a.events)))
    return convs


def build(events: Iterable[tuple[str, Any]], name: str) -> tuple[list[Conversation], dict[str, Any], list[str]]:
    indexed = []
    other = 0
    for seq, (origin, ev) in enumerate(events):
        if not isinstance(ev, Mapping):
            other += 1
            continue
        indexed.append((_time_key(ev.get("timestamp")), seq, origin, ev))
    indexed.sort(key=lambda t: (t[0], t[1]))  # stable: equal times keep file order
    agents: dict[str, _Agent] = {}
    lead: str | None = None
    meta: dict[str, Any] = {}
    for _t, _seq, origin, ev in indexed:
        etype = ev.get("type")
        if type(etype) is not str:
            other += 1
            continue
        if etype == "swarm_start" or etype == "swarm_stop":
            lead = _swarm_event(etype, ev, meta, lead)
            continue
        agent_name = ev.get("agent")
        if agent_name is None:
            continue
        agent_name = str(agent_name)
        a = agents.get(agent_name)
        if a is None:
            a = agents[agent_name] = _Agent(agent_name)
        a.add(etype, ev, origin, name)
    if not indexed:
        raise LoadError(name, "the event log holds no events", expected=EXPECTED)
    warnings: list[str] = []
    convs = _conversations(agents, lead, warnings)
    if not convs:
        raise LoadError(name, "no agent messages in the event log (no user_prompt, agent_step, tool_result events)",
                        expected=EXPECTED)
    if other:
        warnings.append(f"skipped {other} entries that are not event objects")
    return convs, meta, warnings


def load(inp: Input, layout: str, lenient: bool = False, doc: Any = None) -> Session:
    skipped = 0
    if layout == "jsonl":
        reader = LineReader(inp, EXPECTED, lenient)
        pairs = [(f"line {n}", ev) for n, ev in reader]
        skipped = reader.skipped
        pre: list[str] = []
        reader.warn_skipped(pre)
    else:
        if doc is None:
            doc = load_document(inp, EXPECTED)
        base = ""
        if isinstance(doc, dict) and isinstance(doc.get("events"), list):
            doc, base = doc["events"], "/events"
        if not isinstance(doc, list):
            raise LoadError(inp.name, "expected a JSON array of events (or one event per line)", expected=EXPECTED)
        pairs = [(f"{base}/{i}", ev) for i, ev in enumerate(doc)]
        pre = []
    convs, meta, warnings = build(pairs, inp.name)
    return Session(format=FORMAT, source=inp.name, conversations=tuple(convs), metadata=meta,
                   skipped=skipped, warnings=tuple(pre + warnings))


SESSION_FORMAT = ModuleFormat(FORMAT, "SwarmSDK event log (JSON array or JSONL)", EXPECTED, 50, load,
                              sniff_record=sniff_record, sniff_document=sniff_document)
