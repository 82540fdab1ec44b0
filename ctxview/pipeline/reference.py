"""What `prepare` computes, as plain code: the stages in order, no cache.

This is the specification and the tests' oracle (`prepare` with any cache
must equal it, row by row). It composes the engine's public stage functions;
see the package docstring for why the stages run in this order.
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import Callable, Mapping, Sequence

from ctxview.engine import harness, reminders
from ctxview.engine.context_tokens import ContextTokens, TokenUnits
from ctxview.engine.api_edits import compaction_point, plan_thinking_clearing
from ctxview.engine.budget import EXCERPT_CHARS, budget_shortfall, fit_to_budget, plan_summary
from ctxview.engine.clearing import plan_clearing
from ctxview.engine.compression import (
    compress_tool_results,
    detect_tool_name,
    get_policy,
    tool_names_by_call_id,
)
from ctxview.engine.context_manager import embed_ephemeral
from ctxview.model import Conversation, Message, request_indices
from ctxview.settings import AS_SENT, Settings
from ctxview.engine.system_block import system_block_tokens, tool_definitions
from ctxview.engine.tokens import TokenCounter, counter_for
from ctxview.engine.view import PreparedView, Row
from ctxview.engine.windows import resolve_context_window
from ctxview.pipeline import changes as made

__all__ = ["prepare_reference", "request_indices", "harness_events", "whole_context_stages"]


def whole_context_stages(settings: Settings) -> tuple[str, ...]:
    """The parts of the stages running under `settings` whose result for one message depends on the
    others (each stage's declaration says, stages/declare.py). The cache steps keep_recent message by
    message only when there are none; a stage with a rule on one message is among them, for the
    step does not run it."""
    out: list[str] = []
    for stage in settings.STAGES:
        if stage.reads_whole is not None:
            out.extend(stage.reads_whole(settings))
        elif stage.rewrite is not None and stage.runs(settings):
            out.append(stage.name)
    return tuple(out)


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
                      summarizer: Callable[[Sequence[Message]], str] | None = None,
                      units: TokenUnits | None = None) -> PreparedView:
    """`conversation` at the request `settings` name, through the stages in order. The budget and
    the triggers are in the model's tokens: `units` turns the counter's into them (None: the
    request's own fit, as its figure is made)."""
    settings.check()
    counter = counter or counter_for(conversation, settings.counter)
    n, recorded = _request(conversation, settings.request)
    # the request's figure in the model's tokens (view.context), counted from scratch
    fit = ContextTokens.of(conversation, counter).fit(settings.request)
    run = _Run(conversation, settings, counter, n, fit.units() if units is None else units)
    run.harness()                  # 0. what the harness itself sent (the view "as sent")
    run.compress()                 # 1. what-if: tiers
    run.clear()                    # 2. what-if: clearing
    run.clear_thinking()           # 2b. what-if: the API's clear_thinking
    run.rewrite()                  # 2c. what-if: the stages declared with a rule on one message
    run.summarise(summarizer)      # 3. what-if: old messages
    run.embed()                    # 4. the recorded reminders, on the messages still sent
    run.fit_budget()               # 5. what-if: the budget
    view = run.view(recorded)
    return dataclasses.replace(view, context_fit=fit)


def _request(conversation: Conversation, request: int | None) -> tuple[int, int | None]:
    """(how many stored messages the request sends, the input it recorded)."""
    stored = conversation.messages
    if request is None:
        return len(stored), None
    if not (0 <= request < len(stored)) or stored[request].role != "assistant":
        raise ValueError(f"request {request} is not the index of an assistant message")
    usage = stored[request].usage
    return request, usage.context_tokens if usage is not None and usage.context_tokens > 0 else None


class _Run:
    """The messages of one request as each stage leaves them (position j is stored index start + j),
    their tokens, and per position the specs of what changed, made into Changes at the end."""

    def __init__(self, conversation: Conversation, settings: Settings, counter: TokenCounter, n: int,
                 units: TokenUnits) -> None:
        self.conversation, self.settings, self.counter, self.n = conversation, settings, counter, n
        self.units = units
        self.count = counter.count_message
        self.stored_tokens = [self.count(m) for m in conversation.messages]
        self.names = tool_names_by_call_id(conversation.messages)
        self.system_tokens = system_block_tokens(conversation, counter)  # the prompt and the tool definitions
        self.policy = get_policy(settings.tiers)
        if self.policy.tool_name_from != settings.tool_name_from:
            self.policy = dataclasses.replace(self.policy, tool_name_from=settings.tool_name_from)
        self.removed: set[int] = set()
        self.dropped: set[int | None] = set()
        self.inserted: Message | None = None
        self.insert_at = self.boundary = 0
        self.eph_spans: dict[int, tuple] = {}
        self.shortfall = 0
        self.stats = {"compressed": 0, "cleared": 0, "thinking_cleared": 0, "excerpted": 0, "removed": 0, "summarised": 0, "dropped": 0,
                      "ephemeral": 0, "inserted": 0}

    def harness(self) -> None:
        events = harness_events(self.conversation, self.settings, self.stored_tokens, self.system_tokens)
        self.sent = harness.history_as_sent(self.conversation, self.n, events)
        self.start = self.sent.start
        self.current = list(self.sent.messages)
        self.tokens = [self.count(x) for x in self.current]
        self.sent_tokens = list(self.tokens)
        self.specs: list[list[tuple]] = [[] for _ in self.current]

    def _replace(self, j: int, new: Message) -> int:
        """Position j becomes `new`; returns the tokens it had."""
        before, self.tokens[j], self.current[j] = self.tokens[j], self.count(new), new
        return before

    def compress(self) -> None:
        m, keep = len(self.current), self.settings.keep_recent
        if self.settings.compression and self.policy.enabled and m - keep > 0:
            for j, new in enumerate(compress_tool_results(self.current, keep, self.policy)):
                if new is not self.current[j]:
                    self._replace(j, new)
                    self.specs[j].append(("compressed", m - j))
                    self.stats["compressed"] += 1

    def clear(self) -> None:
        clear = self.settings.clear
        if clear is not None:
            result = plan_clearing(self.current, clear, self.counter, counts=self.tokens, base=self.system_tokens,
                                   units=self.units)
            for j in (*result.cleared, *result.inputs_cleared):
                new = result.messages[j]
                before = self._replace(j, new)
                self.specs[j].append(("cleared", before - self.tokens[j], new.role == "tool", clear.keep))
            self.stats["cleared"] = len(result.cleared)

    def clear_thinking(self) -> None:
        thinking = self.settings.clear_thinking
        if thinking is not None:
            result = plan_thinking_clearing(self.current, thinking.keep)
            for j in result.cleared:
                before = self._replace(j, result.messages[j])
                self.specs[j].append(("thinking_cleared", thinking.keep, before - self.tokens[j]))
            self.stats["thinking_cleared"] = len(result.cleared)

    def rewrite(self) -> None:
        for stage in self.settings.STAGES:
            if stage.rewrite is None or not stage.runs(self.settings):
                continue
            words = stage.describe(self.settings)
            for j, message in enumerate(self.current):
                new = stage.rewrite(message, self.settings)
                if new is not None and new is not message:
                    before = self._replace(j, new)
                    self.specs[j].append(("rewritten_by", stage.name, words, before - self.tokens[j]))
                    self.stats[stage.name] = self.stats.get(stage.name, 0) + 1

    def summarise(self, summarizer: Callable[[Sequence[Message]], str] | None) -> None:
        strategy, given = self.settings.old_messages, self.settings.summarize_before
        compact = self.settings.compact
        if compact is not None:  # the API's compaction: a summary of everything before its point
            strategy = "llm"
            before_index = compaction_point(self.current, self.tokens, self.system_tokens, compact.trigger,
                                            self.units)
        elif strategy == "keep":
            return
        else:
            before_index = len(self.current) - self.settings.keep_recent if given is None else max(given - self.start, 0)
        summary = plan_summary(self.current, before_index, strategy, summarizer=summarizer)
        self.boundary = summary.boundary + self.start  # (named by stored index)
        for j in summary.excerpted:
            cut = len(self.current[j].text) - EXCERPT_CHARS
            before = self._replace(j, summary.messages[j])
            self.specs[j].append(("excerpted", self.boundary, cut, before - self.tokens[j]))
        self.stats["excerpted"] = len(summary.excerpted)
        if summary.removed:
            self.removed = set(summary.removed)
            self.inserted, self.insert_at = summary.inserted, summary.insert_at
            self.stats["removed" if strategy == "remove" else "summarised"] = len(self.removed)
            self.stats["inserted"] = 1

    def embed(self) -> None:
        if not self.settings.embed_ephemeral:
            return
        start, n = self.start, self.n
        wanted = {i - start: texts for i, texts in (self.conversation.ephemeral or {}).items()
                  if type(i) is int and start <= i < n and i - start not in self.removed}
        for j, new in enumerate(embed_ephemeral(self.current, wanted)):
            if new is not self.current[j]:
                pieces = ["" if p is None else p.text if hasattr(p, "text") else str(p) for p in wanted[j]]
                pos, spans = len(self.current[j].text), []
                for piece in pieces:
                    spans.append((pos + 2, pos + 2 + len(piece)))
                    pos += 2 + len(piece)
                before = self._replace(j, new)
                self.specs[j].append(("ephemeral", len(pieces), self.tokens[j] - before))
                self.eph_spans[j] = tuple(spans)
        self.stats["ephemeral"] = len(self.eph_spans)

    def sequence(self) -> list[int | None]:
        """The positions sent, in order (None: the inserted message)."""
        seq: list[int | None] = [j for j in range(len(self.current)) if j not in self.removed]
        if self.inserted is not None:
            seq.insert(sum(1 for j in seq if j < self.insert_at), None)  # type: ignore[operator]
        return seq

    def fit_budget(self) -> None:
        self.seq = seq = self.sequence()
        self.inserted_tokens = self.count(self.inserted) if self.inserted is not None else 0
        budget = self.settings.budget
        if budget is None:
            return
        room = self.units.counted(budget) - self.system_tokens   # the budget is the model's tokens
        fit = fit_to_budget([self.inserted if j is None else self.current[j] for j in seq], max(room, 0),
                            self.settings.keep_recent,
                            counts=[self.inserted_tokens if j is None else self.tokens[j] for j in seq],
                            protected=[p for p, j in enumerate(seq) if j is None])
        self.shortfall = budget_shortfall(self.units, budget, self.system_tokens + fit.tokens)
        self.dropped = {seq[p] for p in fit.dropped}
        self.stats["dropped"] = len(fit.dropped)
        self.seq = [seq[p] for p in fit.kept]

    def view(self, recorded: int | None) -> PreparedView:
        conv, settings, seq = self.conversation, self.settings, self.seq
        rows = [self.row(i) for i in range(self.n)]
        if self.inserted is not None and None not in self.dropped:
            rows.insert(self.start + self.insert_at, Row(
                None, None, self.inserted, (made.inserted(settings.old_messages, len(self.removed),
                                                          self.inserted_tokens),),
                0, self.inserted_tokens, None, (), tuple(reminders.spans(self.inserted.text)), ()))
        rewrites = self.sent.rewrites.values()
        self.stats.update(tool_results=sum(1 for x in self.sent.messages if x.role == "tool"), compacted=self.start,
                          microcompacted=sum(1 for r in rewrites if r.kind == "microcompaction"),
                          harness_compressed=sum(1 for r in rewrites if r.kind == "compression"),
                          truncated=sum(1 for r in rewrites if r.kind == "truncation"),
                          persisted=sum(1 for r in rewrites if r.kind == "persisted"))
        return PreparedView(
            settings=settings, rows=tuple(rows),
            prepared=tuple(self.inserted if j is None else self.current[j] for j in seq),
            system_prompt=conv.system_prompt, tools=tool_definitions(conv), tokens_stored=self.system_tokens + sum(self.stored_tokens[:self.n]),
            tokens_prepared=self.system_tokens + sum(self.inserted_tokens if j is None else self.tokens[j]
                                                     for j in seq),
            system_tokens=self.system_tokens,
            context_window=resolve_context_window(settings.context_window, conv.context_window, conv.model),
            budget_shortfall=self.shortfall, recorded_input_tokens=recorded,
            requests=tuple(request_indices(conv.messages)), counter_name=self.counter.name, stats=self.stats)

    def row(self, i: int) -> Row:
        """The row of stored message i: what was sent for it and every change, in stage order."""
        msg, tokens = self.conversation.messages[i], self.stored_tokens[i]
        tool = _tool_name(msg, self.names) if msg.role == "tool" else None
        own = tuple(reminders.spans(msg.text))
        if i < self.start:
            return Row(i, msg, None, (made.compacted(self.sent.compaction, self.start, tokens),), tokens, 0, tool,
                       own, (), ())
        j = i - self.start
        gone = j in self.removed or j in self.dropped
        prepared, tp = (None, 0) if gone else (self.current[j], self.tokens[j])
        out = []
        rewrite = self.sent.rewrites.get(i)
        if rewrite is not None:
            out.append(made.rewritten(rewrite.kind, rewrite.event, rewrite.event.index - i,
                                      tokens - self.sent_tokens[j]))
        for kind, *figures in self.specs[j]:
            if kind == "compressed":
                out.append(made.compressed(self.policy, figures[0], len(self.sent.messages[j].text),
                                           self.sent_tokens[j] - tp))
            else:
                out.append(getattr(made, kind)(*figures))
        if j in self.removed:
            action = "removed" if self.settings.old_messages == "remove" else "summarised"
            out.append(made.removed(action, self.boundary, len(self.removed), self.tokens[j]))
        elif j in self.dropped:
            out.append(made.dropped(self.settings.budget, self.tokens[j]))
        spans = () if prepared is None else own if prepared is msg else tuple(reminders.spans(prepared.text))
        return Row(i, msg, prepared, tuple(out), tokens, tp, tool, own, spans,
                   self.eph_spans.get(j, ()) if prepared is not None else ())


def _tool_name(msg: Message, names: Mapping[str, str]) -> str | None:
    """A tool result's tool: its own field, its call's name, else detected from the text."""
    name = msg.tool_name or (names.get(msg.tool_call_id) if msg.tool_call_id else None)
    return name if name is not None else detect_tool_name(msg.text)
