"""The cached pipeline: `prepare`, which computes what reference.prepare_reference does (see
the package docstring for the stages) and remembers what it can between calls.

Speed: a long-lived `PipelineCache` (pass the same one to every call) keeps
per-message token counts, reminder spans and finished rows, keyed by object
identity or by (index, *change specs) (rows compression changed, then maybe
clearing and embedding: by index per policy, see _by_index and
_cleared_by_index). The compression module caches compressed texts per
(message, tier limit); the cache keeps the result of stage 1 (then of stage
4, when nothing runs between them) per (policy, n, keep_recent) for the last
few (PipelineCache.stages), so that another budget, request or clearing
starts from it. A run does not make the changed rows: the view's `Rows`
holds a `RowMaker` at their positions, which makes a row (or finds it in
those tables) when it is first read, and the inspector reads a screenful. A
first run under new settings still builds a Message and counts its tokens
per message whose prepared form changed: that, not the lookups, is what such
a run costs. The cache also keeps the last view: a keep_recent change with
no summary or budget is applied to it as a delta (only the tool results
between the old and new boundary are recomputed, see
prepare_keep_recent_delta). Other changes run the full path, which reuses
every cached piece (see benchmarks/bench_pipeline.py).
"""

from __future__ import annotations

import bisect
from typing import Callable, Sequence

from ctxview._fast.summary import extractive_summary as fast_summary
from ctxview.engine.api_edits import compaction_point, plan_thinking_clearing
from ctxview.engine.budget import EXCERPT_CHARS, budget_shortfall, fit_to_budget, plan_summary
from ctxview.engine.clearing import plan_clearing
from ctxview.engine.context_tokens import COUNTED, TokenUnits
from ctxview.gcpause import paused_gc
from ctxview.model import Conversation, Message
from ctxview.settings import AS_SENT, Settings
from ctxview.engine.system_block import tool_definitions
from ctxview.engine.tokens import TokenCounter
from ctxview.engine.view import PreparedView, Row, Rows
from ctxview.engine.windows import resolve_context_window
from ctxview.pipeline import limits
from ctxview.pipeline import changes as made
from ctxview.pipeline import sent_history
from ctxview.pipeline.context import context_fit
from ctxview.pipeline.cache import TEXT_ONLY_COUNTERS, PipelineCache
from ctxview.pipeline.delta import note_recalled_step, prepare_keep_recent_delta
from ctxview.pipeline.embedding import embed_ephemeral_into
from ctxview.model import request_indices
from ctxview.pipeline.row_keys import Specs
from ctxview.pipeline.rows import RowMaker

__all__ = ["PipelineCache", "prepare", "request_indices"]


def prepare(
    conversation: Conversation,
    settings: Settings = AS_SENT,
    *,
    counter: TokenCounter | None = None,
    cache: PipelineCache | None = None,
    summarizer: Callable[[Sequence[Message]], str] | None = None,
    units: TokenUnits | None = None,
) -> PreparedView:
    """Run `conversation` through `settings`: what reference.prepare_reference computes.

    counter: overrides settings.counter. summarizer: for old_messages="llm",
    a callable turning the old messages into the checkpoint's text (the
    offline extractive summary when None). units: how the counter's tokens
    become the model's, in which the budget and the triggers are given (None:
    the request's own fit, as its figure is made).
    """
    if cache is None:
        cache = PipelineCache()
    counter = counter or cache.counter(conversation, settings.counter)
    # The figure in the model's tokens: the same for every view of this request (a memoised view is
    # one of this request: the memo's key holds the settings, and so the request).
    fit = context_fit(cache, conversation, counter, settings.request)
    if units is None:
        units = fit.units() if thresholds_in_tokens(settings) else COUNTED
    sent = sent_history.for_request(cache, conversation, settings, counter)
    if sent is None:  # the harness sent the stored messages as they are
        view = _prepare_stored(conversation, settings, counter, cache, summarizer, units)
    else:
        inner = _prepare_stored(sent.conversation, sent.inner_settings(settings), counter, cache, summarizer, units)
        view = sent.view(cache, counter, settings, inner)
    object.__setattr__(view, "context_fit", fit)
    return view


def thresholds_in_tokens(settings: Settings) -> bool:
    """Whether a stage under `settings` compares tokens with a threshold the user gave (a budget,
    a clearing trigger or minimum saving, the API compaction's trigger): those are the model's."""
    clear = settings.clear
    return (settings.budget is not None or settings.compact is not None
            or (clear is not None and (clear.min_saving > 0
                                       or (clear.trigger > 0 and clear.trigger_unit == "input_tokens"))))


def _prepare_stored(conversation: Conversation, settings: Settings, counter: TokenCounter, cache: PipelineCache,
                    summarizer: Callable[[Sequence[Message]], str] | None, units: TokenUnits) -> PreparedView:
    """Stages 1-5 on a history the harness sent as stored (the conversation's own, or stage 0's)."""
    # Going back to settings seen a moment ago (+ then -) returns the same view.
    key = (id(conversation), settings, counter.name, id(summarizer), units)
    try:
        hit = cache.views.get(key)
    except TypeError:  # unhashable settings (a list where a tuple belongs): no memo
        key, hit = None, None
    base_key = (id(conversation), counter.name, units)
    base = cache.last.get(base_key)
    if hit is not None and hit[0] is conversation and hit[1] is summarizer:
        if base is not None and base[0] is conversation:
            note_recalled_step(cache, base[1], hit[2], counter)
        cache.last[base_key] = (conversation, hit[2], hit[3])  # the base of the next delta
        return hit[2]
    with paused_gc():
        done = None
        if base is not None and base[0] is conversation:
            done = prepare_keep_recent_delta(conversation, settings, counter, cache, base[1], base[2], units)
        if done is None:
            done = _prepare(conversation, settings, counter, cache, summarizer, units)
    view, clear_saved = done
    if len(cache.last) > limits.KEPT:
        cache.last.clear()
    cache.last[base_key] = (conversation, view, clear_saved)
    if key is not None:
        if len(cache.views) >= limits.KEPT:
            cache.views.pop(next(iter(cache.views)))
        cache.views[key] = (conversation, summarizer, view, clear_saved)
    return view


def _prepare(
    conversation: Conversation,
    settings: Settings,
    counter: TokenCounter | None,
    cache: PipelineCache | None,
    summarizer: Callable[[Sequence[Message]], str] | None,
    units: TokenUnits = COUNTED,
) -> tuple[PreparedView, int | None]:
    """The full path: the view, and the tokens clearing saved (None when it cleared nothing)."""
    run = _Run(conversation, settings, counter, cache or PipelineCache(), units)
    run.compress()              # 1 (and 4, when no stage between them runs)
    run.clear()                 # 2
    run.clear_thinking()        # 2b
    run.rewrite()               # 2c
    run.summarise(summarizer)   # 3
    run.embed()                 # 4
    run.fit_budget()            # 5
    return run.view(), run.clear_saved


class _Run:
    """One full-path run: the working state the stages change in place (messages, their tokens, the
    specs of what changed), then the view made of it."""

    def __init__(self, conversation: Conversation, settings: Settings, counter: TokenCounter | None,
                 cache: PipelineCache, units: TokenUnits = COUNTED) -> None:
        settings.check()
        self.conversation, self.settings, self.cache = conversation, settings, cache
        self.units = units  # the model's tokens, in which the budget and the triggers are given
        self.counter = counter = counter or cache.counter(conversation, settings.counter)
        self.data = data = cache.data(conversation)
        all_msgs = conversation.messages
        self.recorded: int | None = None
        n = len(all_msgs)
        if settings.request is not None:
            n = settings.request
            if not (0 <= n < len(all_msgs)) or all_msgs[n].role != "assistant":
                raise ValueError(f"request {n} is not the index of an assistant message")
            usage = all_msgs[n].usage
            if usage is not None and usage.context_tokens > 0:
                self.recorded = usage.context_tokens
        self.n = n
        self.msgs = msgs = all_msgs if n == len(all_msgs) else all_msgs[:n]
        self.stored_counts = cache.counts_of(data, counter)
        self.current: list[Message] = list(msgs)
        self.counts: list[int] = self.stored_counts[:n]
        self.policy = cache.policy(settings)
        self.tag = cache.policy_tag(self.policy)
        # index -> (index, *change specs): the key of the row in the row tables (see row_keys), from
        # which Change objects are made only when a row is read
        self.specs = Specs(n, self.tag, msgs, msgs, ())
        self.stats: dict[str, int] = {"compressed": 0, "cleared": 0, "thinking_cleared": 0, "excerpted": 0, "removed": 0,
                                      "summarised": 0, "dropped": 0, "ephemeral": 0, "inserted": 0,
                                      "compacted": 0, "microcompacted": 0, "harness_compressed": 0,
                                      "truncated": 0, "persisted": 0}
        self.embeds = settings.embed_ephemeral and bool(data.valid_ephemeral())
        self.rewrites = tuple(stage for stage in settings.STAGES if stage.rewrite is not None and stage.runs(settings))
        self.direct = (settings.clear is None and settings.old_messages == "keep"  # nothing between 1 and 4
                       and settings.clear_thinking is None and settings.compact is None and not self.rewrites)
        self.eph_spans: dict[int, tuple] = {}
        self.eph_reminders: dict[int, tuple] = {}  # the reminder blocks of the embedded texts
        self.clear_saved: int | None = None
        self.inserted: Message | None = None
        self.insert_at: int | None = None
        self.removed: frozenset[int] = frozenset()
        self.removed_spec: tuple = ()  # (action, boundary, how many): with its tokens, a removed row's last spec
        self.dropped: set[int] = set()
        self.inserted_dropped = False
        self.shortfall = 0
        self.seq_index: list[int | None] | None = None  # the sequence as sent, once a stage moves a message

    def compress(self) -> None:
        """Stage 1 from the cache's remembered stages (with stage 4 when nothing runs between them)."""
        settings, n = self.settings, self.n
        compress = settings.compression and self.policy.enabled and n - settings.keep_recent > 0
        if compress or (self.embeds and self.direct):
            done = self.cache.stages(self.data, self.counter, self.policy if compress else None, self.tag, n,
                                     settings.keep_recent, self.embeds and self.direct)
            # copies: the later stages change them, the memo is kept for the next run
            self.current, self.counts, self.specs = list(done.messages), list(done.counts), done.specs.copy()
            self.eph_spans, self.eph_reminders = done.ephemeral_spans, done.ephemeral_reminders
            self.stats["compressed"] = len(self.specs.compressed)
            self.stats["ephemeral"] = len(self.eph_spans)

    def clear(self) -> None:
        """Stage 2: Anthropic-style clearing, its placeholders counted once per text."""
        clear, cache, counter = self.settings.clear, self.cache, self.counter
        if clear is None:
            return
        current, cur_counts, specs = self.current, self.counts, self.specs
        count_cleared = cache.count_cleared
        placeholder = clear.placeholder
        by_role: dict[str, int] | None = {} if type(counter) in TEXT_ONLY_COUNTERS else None

        def measure(m: Message) -> int:
            # Under a text-only counter a blanked result's tokens depend on its role alone.
            if by_role is not None and m.content is placeholder and not m.tool_calls:
                tokens = by_role.get(m.role)
                if tokens is None:
                    tokens = by_role[m.role] = count_cleared(counter, m)
                return tokens
            return count_cleared(counter, m)

        base = cache.system_tokens(self.data, counter) if clear.api else 0
        result = plan_clearing(current, clear, counter, counts=cur_counts, measure=measure, blank=cache.blanked,
                               base=base, units=self.units)
        inputs = frozenset(result.inputs_cleared)
        blanked_tokens = by_role.get("tool") if by_role is not None else None
        for i in (*result.cleared, *result.inputs_cleared):
            new = result.messages[i]
            before = cur_counts[i]
            # (measure() inlined for the usual blanked tool result)
            if new.content is placeholder and blanked_tokens is not None and new.role == "tool" and not new.tool_calls:
                cur_counts[i] = blanked_tokens
            else:
                cur_counts[i] = measure(new)
            specs.add(i, "cleared", before - cur_counts[i], i in inputs, new.role == "tool", clear.keep)
            current[i] = new
        self.stats["cleared"] = len(result.cleared)
        if result.cleared:
            self.clear_saved = result.saved_tokens

    def clear_thinking(self) -> None:
        """Stage 2b: the API's clear_thinking, the thinking of all but the latest turns left out."""
        thinking = self.settings.clear_thinking
        if thinking is None:
            return
        result = plan_thinking_clearing(self.current, thinking.keep)
        count, counter, cur_counts = self.cache.count, self.counter, self.counts
        for i in result.cleared:
            new = result.messages[i]
            before = cur_counts[i]
            cur_counts[i] = count(counter, new)
            self.current[i] = new
            self.specs.add(i, "thinking_cleared", thinking.keep, before - cur_counts[i])
        self.stats["thinking_cleared"] = len(result.cleared)

    def rewrite(self) -> None:
        """Stage 2c: the stages declared with a rule on one message (stages/declare.py), in order."""
        count, counter, current, cur_counts = self.cache.count, self.counter, self.current, self.counts
        for stage in self.rewrites:
            words = stage.describe(self.settings)
            for i, message in enumerate(current):
                new = stage.rewrite(message, self.settings)  # type: ignore[misc]
                if new is not None and new is not message:
                    before = cur_counts[i]
                    cur_counts[i] = count(counter, new)
                    current[i] = new
                    self.specs.add(i, "rewritten_by", stage.name, words, before - cur_counts[i])
                    self.stats[stage.name] = self.stats.get(stage.name, 0) + 1

    def summarise(self, summarizer: Callable[[Sequence[Message]], str] | None) -> None:
        """Stage 3: old messages excerpted, or removed for a marker or a summary checkpoint (the
        API's compaction: a summary of everything before its point)."""
        settings, cache, n = self.settings, self.cache, self.n
        strategy = settings.old_messages
        current, cur_counts, count, counter = self.current, self.counts, cache.count, self.counter
        if settings.compact is not None:
            strategy = "llm"
            before_index = compaction_point(current, cur_counts, cache.system_tokens(self.data, counter),
                                            settings.compact.trigger, self.units)
        elif strategy == "keep":
            return
        else:
            before_index = (settings.summarize_before if settings.summarize_before is not None
                            else n - settings.keep_recent)
        offset = cache.offset_of(self.conversation)  # (boundaries are named by stored index)
        # Compression and clearing keep roles, call ids and tool calls: the stored units hold.
        # (no summarizer given: the offline summary's fast twin, which gives the rule's text)
        summary = plan_summary(current, before_index, strategy, summarizer=summarizer or fast_summary,
                               unit_list=cache.units(self.data, n) if strategy != "truncate" else None)
        for i in summary.excerpted:
            new = summary.messages[i]
            cut = len(current[i].text) - EXCERPT_CHARS
            before = cur_counts[i]
            cur_counts[i] = count(counter, new)
            current[i] = new
            self.specs.add(i, "excerpted", summary.boundary + offset, cut, before - cur_counts[i])
        self.stats["excerpted"] = len(summary.excerpted)
        if summary.removed:
            action = "removed" if strategy == "remove" else "summarised"
            total = len(summary.removed)
            self.removed_spec = (action, summary.boundary + offset, total)
            self.removed = frozenset(summary.removed)
            self.stats[action] = total
            self.stats["inserted"] = 1
            self.inserted, self.insert_at = summary.inserted, summary.insert_at
            removed, insert_at = self.removed, summary.insert_at
            seq: list[int | None] = [i for i in range(insert_at) if i not in removed]
            seq.append(None)
            seq.extend(i for i in range(insert_at, n) if i not in removed)
            self.seq_index = seq

    def embed(self) -> None:
        """Stage 4 (when stage 1's memo did not already): the reminders on the messages still sent."""
        if self.embeds and not self.direct:
            self.eph_spans, self.eph_reminders = embed_ephemeral_into(
                self.cache, self.counter, self.data.valid_ephemeral(), self.n, self.current, self.counts,
                self.specs, self.removed)
            self.stats["ephemeral"] = len(self.eph_spans)

    def fit_budget(self) -> None:
        """Stage 5: the oldest units dropped until what is sent fits (the system prompt counted in)."""
        settings, cache = self.settings, self.cache
        if settings.budget is None:
            return
        current, cur_counts, inserted = self.current, self.counts, self.inserted
        seq_index = self.seq_index if self.seq_index is not None else list(range(self.n))
        if inserted is None:  # the sequence is current itself
            seq_msgs, seq_counts, protected = current, cur_counts, []
        else:
            inserted_tokens = cache.count(self.counter, inserted)
            seq_msgs = [inserted if j is None else current[j] for j in seq_index]
            seq_counts = [inserted_tokens if j is None else cur_counts[j] for j in seq_index]
            protected = [p for p, j in enumerate(seq_index) if j is None]
        # the budget is the model's tokens of the whole request: the messages get what the system
        # block leaves of it, in the counter's tokens
        system = cache.system_tokens(self.data, self.counter)
        room = self.units.counted(settings.budget) - system
        fit = fit_to_budget(seq_msgs, max(room, 0), settings.keep_recent, counts=seq_counts, protected=protected,
                            unit_list=cache.units(self.data, self.n) if inserted is None else None)
        self.shortfall = budget_shortfall(self.units, settings.budget, system + fit.tokens)
        # (a dropped row's last spec, ("dropped", budget, its tokens), is added when it is made)
        dropped = {seq_index[p] for p in fit.dropped}
        if None in dropped:
            self.inserted_dropped = True
            dropped.discard(None)
        self.dropped = dropped  # type: ignore[assignment]
        self.stats["dropped"] = len(fit.dropped)
        if fit.dropped:
            self.seq_index = [seq_index[p] for p in fit.kept]

    def view(self) -> PreparedView:
        """The view: each message's unchanged row, a RowMaker where a row changed (made when read)."""
        cache, counter, data, n, msgs = self.cache, self.counter, self.data, self.n, self.msgs
        current, cur_counts, inserted, insert_at = self.current, self.counts, self.inserted, self.insert_at
        seq_index = self.seq_index
        system_tokens = cache.system_tokens(data, counter)
        gone = self.removed | self.dropped
        base_rows = cache.base_rows(data, counter)
        shown_at = None if inserted is None or self.inserted_dropped else insert_at
        maker = RowMaker(cache, counter, self.policy, self.tag, n, msgs, current, cur_counts, self.stored_counts,
                         self.specs, self.removed, self.removed_spec, self.dropped, self.settings.budget,
                         self.eph_spans, self.eph_reminders, self.settings.clear, shown_at, base_rows)
        items: list = base_rows.entries(n, maker)  # (an unchanged row not made yet: the maker makes it)
        for i in self.specs.indices():
            items[i] = maker
        for i in gone:
            items[i] = maker
        total_prepared = system_tokens + (sum([cur_counts[j] for j in seq_index if j is not None])  # type: ignore[union-attr]
                                          if gone else sum(cur_counts))
        prepared_seq = (tuple(current) if seq_index is None or (len(seq_index) == n and inserted is None)
                        else tuple(inserted if j is None else current[j] for j in seq_index))
        indices: Sequence[int | None] = range(n)
        stored_col: Sequence[Message | None] = msgs
        prepared_col: Sequence[Message | None] = prepared_seq
        if gone:
            prepared_col = list(current)
            for i in gone:
                prepared_col[i] = None
        if shown_at is not None:
            inserted_tokens = cache.count(counter, inserted)  # type: ignore[arg-type]
            total_prepared += inserted_tokens
            items.insert(shown_at, Row(  # type: ignore[arg-type]
                index=None, stored=None, prepared=inserted,
                changes=(made.inserted(self.settings.old_messages, len(self.removed), inserted_tokens),),
                tokens_prepared=inserted_tokens, prepared_reminders=cache.reminder_spans(inserted.text),  # type: ignore[union-attr]
            ))
            indices = [*range(shown_at), None, *range(shown_at, n)]  # type: ignore[arg-type]
            stored_col = [*msgs[:shown_at], None, *msgs[shown_at:]]
            prepared_col = [*prepared_col[:shown_at], inserted, *prepared_col[shown_at:]]
        self.stats["tool_results"] = bisect.bisect_left(data.tool_indices, n)
        conv, settings = self.conversation, self.settings
        return PreparedView(
            settings=settings, rows=Rows(items, indices, stored_col, prepared_col), prepared=prepared_seq,
            system_prompt=conv.system_prompt, tools=tool_definitions(conv), tokens_stored=system_tokens + cache.stored_total(data, counter, n),
            tokens_prepared=total_prepared, system_tokens=system_tokens,
            context_window=resolve_context_window(settings.context_window, conv.context_window, conv.model),
            budget_shortfall=self.shortfall, recorded_input_tokens=self.recorded, requests=data.requests,
            counter_name=counter.name, stats=self.stats)
