"""Claude Code's compaction records: compact_boundary (the conversation replaced by a summary) and
microcompact_boundary (old tool results cleared in place), from their lines to ContextEvents."""

from __future__ import annotations

from typing import Sequence

from ctxview.model import ContextEvent, Message
from ctxview.formats.parsing.builders import is_count
from ctxview.formats.parsing.linking import compaction_events
from ctxview.formats.claude_code.records import DATA, KIND, MICRO, O, origin_text


def boundary_data(rec: dict) -> tuple:
    """A compact_boundary line's entry data: (trigger, tokens before, timestamp)."""
    meta = rec.get("compactMetadata")
    meta = meta if type(meta) is dict else {}
    tokens = meta.get("preTokens")
    return (meta.get("trigger"), tokens if is_count(tokens) else None, rec.get("timestamp"))


def microcompaction_data(rec: dict) -> tuple:
    """A microcompact_boundary line's entry data: (trigger, tokens before, tokens saved, cleared tool ids)."""
    meta = rec.get("microcompactMetadata")
    meta = meta if type(meta) is dict else {}
    tokens, saved, ids = meta.get("preTokens"), meta.get("tokensSaved"), meta.get("compactedToolIds")
    return (meta.get("trigger") if type(meta.get("trigger")) is str else None,
            tokens if is_count(tokens) else None, saved if is_count(saved) else None,
            tuple(i for i in ids if type(i) is str) if type(ids) is list else ())


def compaction_spec(index: int, entry: tuple, messages: Sequence[Message], summary_at: set[int]) -> dict:
    """What a boundary entry found before message `index` records (summary: the message there,
    when it is the compact summary)."""
    if entry[KIND] == MICRO:
        trigger, tokens, saved, ids = entry[DATA]
        return {"kind": "microcompaction", "index": index, "trigger": trigger, "tokens_before": tokens,
                "origin": origin_text(entry[O]), "tool_ids": ids,
                "meta": {"tokens_saved": saved, "tool_ids": list(ids)}}
    trigger, tokens, ts = entry[DATA]
    return {"index": index, "trigger": trigger, "tokens_before": tokens, "origin": origin_text(entry[O]),
            "summary": messages[index].text if index in summary_at else None,
            "meta": {"timestamp": ts} if ts else {}}


def context_events(messages: Sequence[Message], specs: list[dict]) -> list[ContextEvent]:
    """The conversation's compaction and microcompaction events, in message order."""
    events = compaction_events(messages, [s for s in specs if "kind" not in s])
    for spec in specs:
        if spec.get("kind") == "microcompaction":
            ids = set(spec["tool_ids"])
            cleared = tuple(m for m in messages[:spec["index"]] if m.role == "tool" and m.tool_call_id in ids)
            events.append(ContextEvent(kind="microcompaction", index=spec["index"], trigger=spec["trigger"],
                                       tokens_before=spec["tokens_before"], replaced=cleared, origin=spec["origin"],
                                       meta=spec["meta"]))
    events.sort(key=lambda ev: ev.index)
    return events
