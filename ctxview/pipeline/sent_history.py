"""Stage 0 for the cached pipeline: the history as the harness sent it, as a Conversation.

When the rewrites recorded before a request (harness.history_as_sent) change
what was sent, stages 1-5 run on a Conversation of the history as sent from
the latest compaction on (made once per set of rewrites and kept, so that
the cache's per-conversation tables work on it as on any other), and the
view is mapped back to stored indices here: the messages before the
compaction become "compacted" rows, rewritten ones carry the harness's
Change first, and every row is named by its stored index.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Sequence

from ctxview.engine import harness
from ctxview.model import ContextEvent, Conversation
from ctxview.settings import Settings
from ctxview.engine.tokens import TokenCounter
from ctxview.engine.view import PreparedView, Row, Rows, row_columns
from ctxview.pipeline import changes as made
from ctxview.pipeline.delta import note_step
from ctxview.pipeline.reference import harness_events
from ctxview.pipeline import limits

if TYPE_CHECKING:
    from ctxview.pipeline.cache import PipelineCache



class SentHistory:
    """One set of rewrites of one conversation: the history as sent, and how to map a view back."""

    def __init__(self, original: Conversation, sent: harness.SentHistory) -> None:
        self.original, self.sent, self.start = original, sent, sent.start
        start = sent.start
        self.conversation = Conversation(
            name=original.name, messages=sent.messages, system_prompt=original.system_prompt,
            ephemeral={i - start: texts for i, texts in (original.ephemeral or {}).items()
                       if type(i) is int and i >= start},
            model=original.model, context_window=original.context_window,
            compression_applied=original.compression_applied, settings=original.settings,
            metadata=original.metadata)

    def inner_settings(self, settings: Settings) -> Settings:
        """The settings for the history as sent: indices relative to its first message."""
        start = self.start
        changes: dict[str, Any] = {}
        if settings.request is not None:
            changes["request"] = settings.request - start
        if settings.summarize_before is not None:
            changes["summarize_before"] = max(settings.summarize_before - start, 0)
        return dataclasses.replace(settings, **changes) if changes else settings

    def view(self, cache: PipelineCache, counter: TokenCounter, settings: Settings,
             inner: PreparedView) -> PreparedView:
        """`inner` (the view of the history as sent) with its rows named by stored index."""
        hit = cache.sent_views.get(id(inner))
        if hit is not None and hit[0] is inner and hit[1].settings == settings:
            self._note_steps(cache, inner, hit[1])
            return hit[1]
        data = cache.data(self.original)
        msgs = self.original.messages
        start = self.start
        n = len(msgs) if settings.request is None else settings.request
        indices_in, _, prepared_in = row_columns(inner.rows)
        maker = _Rows(self, cache.base_rows(data, counter), cache.counts_of(data, counter), inner.rows)
        if type(indices_in) is range and indices_in.start == 0 and indices_in.step == 1:
            indices: Sequence[int | None] = range(start + len(indices_in))  # (no int object per row)
        else:
            indices = [*range(start), *(None if i is None else i + start for i in indices_in)]
        stored = [*msgs[:start], *(None if i is None else msgs[i + start] for i in indices_in)]
        prepared = [None] * start + list(prepared_in)
        rewrites = self.sent.rewrites
        stats = dict(inner.stats)
        stats["compacted"] = start
        stats["microcompacted"] = sum(1 for i, r in rewrites.items() if r.kind == "microcompaction" and i < n)
        stats["harness_compressed"] = sum(1 for i, r in rewrites.items() if r.kind == "compression" and i < n)
        stats["truncated"] = sum(1 for i, r in rewrites.items() if r.kind == "truncation" and i < n)
        stats["persisted"] = sum(1 for i, r in rewrites.items() if r.kind == "persisted" and i < n)
        view = dataclasses.replace(
            inner, settings=settings, rows=Rows([maker] * len(indices), indices, stored, prepared),
            tokens_stored=inner.system_tokens + cache.stored_total(data, counter, n),
            requests=data.requests, stats=stats)
        if len(cache.sent_views) >= limits.KEPT:
            cache.sent_views.pop(next(iter(cache.sent_views)))
        cache.sent_views[id(inner)] = (inner, view)
        self._note_steps(cache, inner, view)
        return view

    def _note_steps(self, cache: PipelineCache, inner: PreparedView, view: PreparedView) -> None:
        """The rows a keep_recent delta changed in `inner`, named in `view` (stored positions): for
        each view of this history mapped before that the delta's step joins to `inner`."""
        start = self.start
        for a, b, positions in list(cache.steps.values()):
            if b is not inner:
                continue
            mapped = cache.sent_views.get(id(a))
            if mapped is not None and mapped[0] is a and len(mapped[1].rows) == len(view.rows):
                note_step(cache, mapped[1], view, range(positions.start + start, positions.stop + start))


class _Rows:
    """Makes a row of the mapped view from the inner view's row at the same place (view.RowMaker)."""

    __slots__ = ("history", "base", "counts", "inner")

    def __init__(self, history: SentHistory, base: Sequence[Row], counts: Sequence[int], inner: Sequence[Row]):
        self.history, self.base, self.counts, self.inner = history, base, counts, inner

    def make(self, position: int) -> Row:
        start = self.history.start
        if position < start:
            base = self.base[position]
            change = made.compacted(self.history.sent.compaction, start, self.counts[position])
            return Row(position, base.stored, None, (change,), self.counts[position], 0, base.tool_name,
                       base.stored_reminders, (), ())
        row = self.inner[position - start]
        if row.index is None:  # a message stage 3 inserted
            return row
        i = row.index + start
        rewrite = self.history.sent.rewrites.get(i)
        if rewrite is None and start == 0:
            return row
        base = self.base[i]
        changes = row.changes
        if rewrite is not None:
            saved = self.counts[i] - row.tokens_stored
            changes = (made.rewritten(rewrite.kind, rewrite.event, rewrite.event.index - i, saved), *changes)
        return Row(i, base.stored, row.prepared, changes, self.counts[i], row.tokens_prepared, base.tool_name,
                   base.stored_reminders, row.prepared_reminders, row.ephemeral_spans)


def events_for(cache: PipelineCache, conversation: Conversation, settings: Settings,
               counter: TokenCounter) -> tuple[ContextEvent, ...]:
    """reference.harness_events, once per (conversation, counter, swarm-auto or not, window)."""
    auto = settings.compression and settings.tiers == "swarm-auto"
    key = (id(conversation), counter.name, auto, settings.context_window if auto else None)
    hit = cache.harness.get(key)
    if hit is not None and hit[0] is conversation:
        return hit[1]
    if auto:
        data = cache.data(conversation)
        events = harness_events(conversation, settings, cache.counts_of(data, counter),
                                cache.system_tokens(data, counter))
    else:
        events = harness.rewrite_events(conversation)
    if len(cache.harness) >= limits.TABLES:
        cache.harness.clear()
    cache.harness[key] = (conversation, events)
    return events


def truncations(cache: PipelineCache, conversation: Conversation) -> bool:
    """Whether the conversation holds tool outputs its harness sent truncated, or as a persisted preview,
    from the start (harness.rewritten_from_start)."""
    key = (id(conversation), "truncations")
    hit = cache.harness.get(key)
    if hit is None or hit[0] is not conversation:
        hit = cache.harness[key] = (conversation, harness.rewritten_from_start(conversation))
    return hit[1]


def sent_as_stored(cache: PipelineCache, conversation: Conversation) -> bool:
    """Whether the harness sent every request's history as stored: no rewrite event recorded and no
    output sent rewritten from the start (looked for once: truncations)."""
    return not harness.rewrite_events(conversation) and not truncations(cache, conversation)


def for_request(cache: PipelineCache, conversation: Conversation, settings: Settings,
                counter: TokenCounter) -> SentHistory | None:
    """The stage-0 history for the request `settings` ask for; None when the harness sent the stored
    messages as they are (no rewrite recorded before it, or none that changed anything)."""
    events = events_for(cache, conversation, settings, counter)
    if not events and not truncations(cache, conversation):
        return None
    msgs = conversation.messages
    n = len(msgs) if settings.request is None else settings.request
    if type(n) is not int or not (0 <= n <= len(msgs)):
        return None  # (stages 1-5 name the bad request)
    todo = tuple(e for e in events if e.index <= n)
    if not todo and not truncations(cache, conversation):
        return None
    key = (id(conversation), tuple(id(e) for e in todo))
    hit = cache.sent.get(key)
    if hit is not None and hit[0] is conversation:
        return hit[1]
    sent = harness.history_as_sent(conversation, len(msgs), todo)
    history = None if sent.plain else SentHistory(conversation, sent)
    if len(cache.sent) >= limits.KEPT:
        cache.sent.pop(next(iter(cache.sent)))
    cache.sent[key] = (conversation, history, todo)  # (todo keeps its events' ids alive)
    if history is not None:
        if len(cache.offsets) >= limits.KEPT:
            cache.offsets.clear()
        cache.offsets[id(history.conversation)] = (history.conversation, history.start)
    return history
