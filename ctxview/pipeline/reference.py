"""What `prepare` computes, as plain code: the stages in order, no cache.

This is the specification and the tests' oracle (`prepare` with any cache
must equal it, row by row). It composes the engine's public stage functions;
see the package docstring for why the stages run in this order.
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import Callable, Sequence

from .. import harness, reminders
from ..budget import EXCERPT_CHARS, fit_to_budget, plan_summary
from ..clearing import plan_clearing
from ..compression import compress_tool_results, detect_tool_name, get_policy, tool_names_by_call_id
from ..context_manager import embed_ephemeral
from ..model import Conversation, Message
from ..settings import AS_SENT, Settings
from ..tokens import TokenCounter, counter_for
from ..view import PreparedView, Row
from ..windows import resolve_context_window
from . import changes as made

__all__ = ["STAGES", "Stage", "prepare_reference", "request_indices", "harness_events", "whole_context_stages"]


@dataclasses.dataclass(frozen=True)
class Stage:
    """One stage of the pipeline, as the cache needs to know it.

    `runs(settings)`: whether the stage does anything under these settings.
    `per_message`: while it runs, a message's result depends only on that message and on whether
    compression's keep_recent boundary lies before or after it (so a keep_recent step changes only
    the tool results between the old and new boundary, and the cache may apply it as a delta).
    A stage that is not per_message sends every keep_recent step through the full path."""

    name: str
    runs: Callable[[Settings], bool]
    per_message: bool


# In order. A new stage goes here (and into prepare_reference below): the cache's keep_recent
# delta reads this list, so a stage it does not know makes it take the full path.
STAGES: tuple[Stage, ...] = (
    Stage("harness", lambda s: True, True),  # (the delta runs on stage 0's history, per request)
    Stage("compression", lambda s: s.compression and s.tiers != "off", True),
    # clearing is per message once it applies; its token trigger reads the whole context
    Stage("clearing", lambda s: s.clear is not None, True),
    Stage("clearing trigger", lambda s: s.clear is not None and bool(s.clear.trigger), False),
    Stage("summary", lambda s: s.old_messages != "keep", False),   # its default boundary moves with keep_recent
    Stage("ephemeral", lambda s: s.embed_ephemeral, True),
    Stage("budget", lambda s: s.budget is not None, False),        # the kept part depends on the whole
)


def whole_context_stages(settings: Settings) -> tuple[str, ...]:
    """The stages that run under `settings` and read the whole context (see Stage.per_message)."""
    return tuple(stage.name for stage in STAGES if not stage.per_message and stage.runs(settings))


def request_indices(messages: Sequence[Message]) -> list[int]:
    """Indices of assistant messages that start a model call's reply (a run of assistant lines counts once)."""
    return [i for i, m in enumerate(messages) if m.role == "assistant" and (i == 0 or messages[i - 1].role != "assistant")]


def harness_events(conversation: Conversation, settings: Settings, counts: Sequence[int], system_tokens: int):
    """The rewrites stage 0 applies: the file's own, plus the swarm-auto what-if's compression when the
    tiers ask for it and the file recorded none."""
    events = harness.rewrite_events(conversation)
    if settings.compression and settings.tiers == "swarm-auto" and not any(e.kind == "compression" for e in events):
        window = resolve_context_window(settings.context_window, conversation.context_window, conversation.model)
        prefix = [0, *itertools.accumulate(counts)]
        auto = harness.swarm_auto_event(
            conversation, lambda k: harness.context_tokens(prefix, events, system_tokens, k), window)
        if auto is not None:
            events = tuple(sorted((*events, auto), key=lambda e: e.index))
    return events


def prepare_reference(conversation: Conversation, settings: Settings = AS_SENT, *,
                      counter: TokenCounter | None = None,
                      summarizer: Callable[[Sequence[Message]], str] | None = None) -> PreparedView:
    settings.check()
    counter = counter or counter_for(conversation, settings.counter)
    count = counter.count_message
    stored = conversation.messages
    n, recorded = len(stored), None
    if settings.request is not None:
        n = settings.request
        if not (0 <= n < len(stored)) or stored[n].role != "assistant":
            raise ValueError(f"request {n} is not the index of an assistant message")
        usage = stored[n].usage
        recorded = usage.context_tokens if usage is not None and usage.context_tokens > 0 else None
    stored_tokens = [count(m) for m in stored]
    system_tokens = count(Message(role="system", content=conversation.system_prompt)) if conversation.system_prompt else 0
    keep_recent = settings.keep_recent

    # 0. the harness: the history as sent at this request (positions j = stored index - start)
    sent = harness.history_as_sent(conversation, n, harness_events(conversation, settings, stored_tokens, system_tokens))
    start = sent.start
    current = list(sent.messages)
    m = len(current)
    tokens = [count(x) for x in current]
    sent_tokens = list(tokens)
    specs: list[list[tuple]] = [[] for _ in range(m)]  # per position: the what-if changes, made into Changes last

    # 1. compression
    policy = get_policy(settings.tiers)
    if policy.tool_name_from != settings.tool_name_from:
        policy = dataclasses.replace(policy, tool_name_from=settings.tool_name_from)
    compressed = 0
    if settings.compression and policy.enabled and m - keep_recent > 0:
        done = compress_tool_results(current, keep_recent, policy)
        for j, new in enumerate(done):
            if new is not current[j]:
                current[j], tokens[j] = new, count(new)
                specs[j].append(("compressed", m - j))
                compressed += 1

    # 2. clearing
    cleared = 0
    if settings.clear is not None:
        result = plan_clearing(current, settings.clear, counter, counts=tokens)
        for j in (*result.cleared, *result.inputs_cleared):
            new = result.messages[j]
            before, tokens[j] = tokens[j], count(new)
            specs[j].append(("cleared", before - tokens[j], new.role == "tool", settings.clear.keep))
            current[j] = new
        cleared = len(result.cleared)

    # 3. summarising old messages
    removed: set[int] = set()
    inserted = insert_at = None
    excerpted = 0
    strategy = settings.old_messages
    if strategy != "keep":
        before_index = (m - keep_recent if settings.summarize_before is None
                        else max(settings.summarize_before - start, 0))
        summary = plan_summary(current, before_index, strategy, summarizer=summarizer)
        for j in summary.excerpted:
            new = summary.messages[j]
            cut = len(current[j].text) - EXCERPT_CHARS
            before, tokens[j] = tokens[j], count(new)
            current[j] = new
            specs[j].append(("excerpted", summary.boundary + start, cut, before - tokens[j]))
        excerpted = len(summary.excerpted)
        if summary.removed:
            removed = set(summary.removed)
            inserted, insert_at = summary.inserted, summary.insert_at
            boundary = summary.boundary + start

    # 4. ephemeral reminders, on the messages still sent
    eph_spans: dict[int, tuple] = {}
    if settings.embed_ephemeral:
        wanted = {i - start: texts for i, texts in (conversation.ephemeral or {}).items()
                  if type(i) is int and start <= i < n and i - start not in removed}
        embedded = embed_ephemeral(current, wanted)
        for j, new in enumerate(embedded):
            if new is not current[j]:
                pieces = ["" if p is None else p.text if hasattr(p, "text") else str(p) for p in wanted[j]]
                pos, spans = len(current[j].text), []
                for piece in pieces:
                    spans.append((pos + 2, pos + 2 + len(piece)))
                    pos += 2 + len(piece)
                after = count(new)
                specs[j].append(("ephemeral", len(pieces), after - tokens[j]))
                current[j], tokens[j], eph_spans[j] = new, after, tuple(spans)

    # 5. the budget, over the sequence as sent (None: the inserted message)
    seq: list[int | None] = [j for j in range(m) if j not in removed]
    if inserted is not None:
        seq.insert(sum(1 for j in seq if j < insert_at), None)
    inserted_tokens = count(inserted) if inserted is not None else 0
    dropped: set[int | None] = set()
    shortfall = 0
    if settings.budget is not None:
        room = settings.budget - system_tokens
        fit = fit_to_budget([inserted if j is None else current[j] for j in seq], max(room, 0), keep_recent,
                            counts=[inserted_tokens if j is None else tokens[j] for j in seq],
                            protected=[p for p, j in enumerate(seq) if j is None])
        shortfall = fit.shortfall + max(0, -room)
        dropped = {seq[p] for p in fit.dropped}
        seq = [seq[p] for p in fit.kept]

    # The rows: one per stored message of the request, and the inserted message where it is sent.
    names = tool_names_by_call_id(stored)
    rows: list[Row] = []
    for i in range(n):
        msg = stored[i]
        tool = None
        if msg.role == "tool":
            tool = msg.tool_name or (names.get(msg.tool_call_id) if msg.tool_call_id else None)
            tool = tool if tool is not None else detect_tool_name(msg.text)
        own = tuple(reminders.spans(msg.text))
        if i < start:
            change = made.compacted(sent.compaction, start, stored_tokens[i])
            rows.append(Row(i, msg, None, (change,), stored_tokens[i], 0, tool, own, (), ()))
            continue
        j = i - start
        gone = j in removed or j in dropped
        prepared = None if gone else current[j]
        tp = 0 if gone else tokens[j]
        out = []
        rewrite = sent.rewrites.get(i)
        if rewrite is not None:
            out.append(made.rewritten(rewrite.kind, rewrite.event, rewrite.event.index - i,
                                      stored_tokens[i] - sent_tokens[j]))
        for spec in specs[j]:
            kind = spec[0]
            if kind == "compressed":
                out.append(made.compressed(policy, spec[1], len(sent.messages[j].text), sent_tokens[j] - tp))
            elif kind == "cleared":
                out.append(made.cleared(spec[1], spec[2], spec[3]))
            elif kind == "excerpted":
                out.append(made.excerpted(*spec[1:]))
            else:
                out.append(made.ephemeral(spec[1], spec[2]))
        if j in removed:
            out.append(made.removed("removed" if strategy == "remove" else "summarised", boundary, len(removed),
                                    tokens[j]))
        elif j in dropped:
            out.append(made.dropped(settings.budget, tokens[j]))
        if prepared is None:
            spans = ()
        elif prepared is msg:
            spans = own
        else:
            spans = tuple(reminders.spans(prepared.text))
        rows.append(Row(i, msg, prepared, tuple(out), stored_tokens[i], tp, tool, own, spans,
                        eph_spans.get(j, ()) if prepared is not None else ()))
    if inserted is not None and None not in dropped:
        rows.insert(start + insert_at, Row(None, None, inserted,
                                           (made.inserted(strategy, len(removed), inserted_tokens),),
                                           0, inserted_tokens, None, (), tuple(reminders.spans(inserted.text)), ()))

    stats = {"compressed": compressed, "cleared": cleared, "excerpted": excerpted, "removed": 0, "summarised": 0,
             "dropped": len(dropped), "ephemeral": len(eph_spans), "inserted": 1 if removed else 0,
             "tool_results": sum(1 for x in sent.messages if x.role == "tool"), "compacted": start,
             "microcompacted": sum(1 for r in sent.rewrites.values() if r.kind == "microcompaction"),
             "harness_compressed": sum(1 for r in sent.rewrites.values() if r.kind == "compression"),
             "truncated": sum(1 for r in sent.rewrites.values() if r.kind == "truncation")}
    if removed:
        stats["removed" if strategy == "remove" else "summarised"] = len(removed)
    prepared_seq = tuple(inserted if j is None else current[j] for j in seq)
    return PreparedView(
        settings=settings,
        rows=tuple(rows),
        prepared=prepared_seq,
        system_prompt=conversation.system_prompt,
        tokens_stored=system_tokens + sum(stored_tokens[:n]),
        tokens_prepared=system_tokens + sum(inserted_tokens if j is None else tokens[j] for j in seq),
        system_tokens=system_tokens,
        context_window=resolve_context_window(settings.context_window, conversation.context_window,
                                              conversation.model),
        budget_shortfall=shortfall,
        recorded_input_tokens=recorded,
        requests=tuple(request_indices(stored)),
        counter_name=counter.name,
        stats=stats,
    )
