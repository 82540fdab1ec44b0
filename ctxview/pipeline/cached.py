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

from ..budget import EXCERPT_CHARS, fit_to_budget, plan_summary
from ..clearing import plan_clearing
from ..gcpause import paused_gc
from ..model import Conversation, Message
from ..settings import AS_SENT, Settings
from ..tokens import TokenCounter
from ..view import PreparedView, Row, Rows
from ..windows import resolve_context_window
from . import changes as made
from . import sent_history
from .cache import _TEXT_ONLY_COUNTERS, _VIEWS_KEPT, PipelineCache
from .delta import prepare_keep_recent_delta
from .embedding import embed_ephemeral_into
from .reference import request_indices
from .row_keys import Specs
from .rows import RowMaker

__all__ = ["PipelineCache", "prepare", "request_indices"]


def prepare(
    conversation: Conversation,
    settings: Settings = AS_SENT,
    *,
    counter: TokenCounter | None = None,
    cache: PipelineCache | None = None,
    summarizer: Callable[[Sequence[Message]], str] | None = None,
) -> PreparedView:
    """Run `conversation` through `settings`: what reference.prepare_reference computes.

    counter: overrides settings.counter. summarizer: for old_messages="llm",
    a callable turning the old messages into the checkpoint's text (the
    offline extractive summary when None).
    """
    if cache is None:
        cache = PipelineCache()
    counter = counter or cache.counter(conversation, settings.counter)
    sent = sent_history.for_request(cache, conversation, settings, counter)
    if sent is None:  # the harness sent the stored messages as they are
        return _prepare_stored(conversation, settings, counter, cache, summarizer)
    inner = _prepare_stored(sent.conversation, sent.inner_settings(settings), counter, cache, summarizer)
    return sent.view(cache, counter, settings, inner)


def _prepare_stored(conversation: Conversation, settings: Settings, counter: TokenCounter, cache: PipelineCache,
                    summarizer: Callable[[Sequence[Message]], str] | None) -> PreparedView:
    """Stages 1-5 on a history the harness sent as stored (the conversation's own, or stage 0's)."""
    # Going back to settings seen a moment ago (+ then -) returns the same view.
    key = (id(conversation), settings, counter.name, id(summarizer))
    try:
        hit = cache.views.get(key)
    except TypeError:  # unhashable settings (a list where a tuple belongs): no memo
        key, hit = None, None
    base_key = (id(conversation), counter.name)
    if hit is not None and hit[0] is conversation and hit[1] is summarizer:
        cache.last[base_key] = (conversation, hit[2], hit[3])  # the base of the next delta
        return hit[2]
    base = cache.last.get(base_key)
    with paused_gc():
        done = None
        if base is not None and base[0] is conversation:
            done = prepare_keep_recent_delta(conversation, settings, counter, cache, base[1], base[2])
        if done is None:
            done = _prepare(conversation, settings, counter, cache, summarizer)
    view, clear_saved = done
    if len(cache.last) > 8:
        cache.last.clear()
    cache.last[base_key] = (conversation, view, clear_saved)
    if key is not None:
        if len(cache.views) >= _VIEWS_KEPT:
            cache.views.pop(next(iter(cache.views)))
        cache.views[key] = (conversation, summarizer, view, clear_saved)
    return view


def _prepare(
    conversation: Conversation,
    settings: Settings,
    counter: TokenCounter | None,
    cache: PipelineCache | None,
    summarizer: Callable[[Sequence[Message]], str] | None,
) -> tuple[PreparedView, int | None]:
    """The full path: the view, and the tokens clearing saved (None when it cleared nothing)."""
    if cache is None:
        cache = PipelineCache()
    settings.check()
    counter = counter or cache.counter(conversation, settings.counter)
    data = cache.data(conversation)
    all_msgs = conversation.messages
    recorded = None
    if settings.request is not None:
        k = settings.request
        if not (0 <= k < len(all_msgs)) or all_msgs[k].role != "assistant":
            raise ValueError(f"request {k} is not the index of an assistant message")
        n = k
        usage = all_msgs[k].usage
        if usage is not None and usage.context_tokens > 0:
            recorded = usage.context_tokens
    else:
        n = len(all_msgs)
    msgs = all_msgs if n == len(all_msgs) else all_msgs[:n]
    stored_counts = cache.counts_of(data, counter)
    count = cache.count

    current: list[Message] = list(msgs)
    cur_counts: list[int] = stored_counts[:n]
    policy = cache.policy(settings)
    tag = cache.policy_tag(policy)
    # index -> (index, *change specs): the key of the row in the row cache, the
    # specs (see _changes) one flat tuple from which Change objects are built
    # only when a row is made.
    specs = Specs(n, tag, msgs, msgs, ())
    stats: dict[str, int] = {"compressed": 0, "cleared": 0, "excerpted": 0, "removed": 0,
                             "summarised": 0, "dropped": 0, "ephemeral": 0, "inserted": 0,
                             "compacted": 0, "microcompacted": 0, "harness_compressed": 0,
                             "truncated": 0}
    keep_recent = settings.keep_recent

    # 1. compression (and 4., the ephemeral reminders, when no stage between them runs)
    compress = settings.compression and policy.enabled and n - keep_recent > 0
    embed = settings.embed_ephemeral and bool(data.valid_ephemeral())
    direct = settings.clear is None and settings.old_messages == "keep"
    eph_spans: dict[int, tuple] = {}
    eph_reminders: dict[int, tuple] = {}  # the reminder blocks of the embedded texts
    if compress or (embed and direct):
        done = cache.stages(data, counter, policy if compress else None, tag, n, keep_recent, embed and direct)
        # copies: the later stages change them, the memo is kept for the next run
        current, cur_counts, specs = list(done[0]), list(done[1]), done[2].copy()
        eph_spans, eph_reminders = done[3], done[4]
        stats["compressed"] = len(specs.compressed)
        stats["ephemeral"] = len(eph_spans)

    # 2. clearing
    clear = settings.clear
    clear_saved: int | None = None
    if clear is not None:
        count_cleared = cache.count_cleared
        placeholder = clear.placeholder
        by_role: dict[str, int] | None = {} if type(counter) in _TEXT_ONLY_COUNTERS else None

        def measure(m: Message) -> int:
            # Under a text-only counter a blanked result's tokens depend on its role alone.
            if by_role is not None and m.content is placeholder and not m.tool_calls:
                tokens = by_role.get(m.role)
                if tokens is None:
                    tokens = by_role[m.role] = count_cleared(counter, m)
                return tokens
            return count_cleared(counter, m)

        result = plan_clearing(current, clear, counter, counts=cur_counts, measure=measure, blank=cache.blanked)
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
        stats["cleared"] = len(result.cleared)
        if result.cleared:
            clear_saved = result.saved_tokens

    # 3. summarising old messages
    inserted: Message | None = None
    insert_at: int | None = None
    removed_rows: frozenset[int] = frozenset()
    removed_spec: tuple = ()  # (action, boundary, how many): with each one's tokens, a removed row's last spec
    strategy = settings.old_messages
    if strategy != "keep":
        offset = cache.offset_of(conversation)  # (boundaries are named by stored index)
        before_index = settings.summarize_before if settings.summarize_before is not None else n - keep_recent
        # Compression and clearing keep roles, call ids and tool calls: the stored units hold.
        summary = plan_summary(current, before_index, strategy, summarizer=summarizer,
                               unit_list=cache.units(data, n) if strategy != "truncate" else None)
        for i in summary.excerpted:
            new = summary.messages[i]
            cut = len(current[i].text) - EXCERPT_CHARS
            before = cur_counts[i]
            cur_counts[i] = count(counter, new)
            current[i] = new
            specs.add(i, "excerpted", summary.boundary + offset, cut, before - cur_counts[i])
        stats["excerpted"] = len(summary.excerpted)
        if summary.removed:
            action = "removed" if strategy == "remove" else "summarised"
            total = len(summary.removed)
            removed_spec = (action, summary.boundary + offset, total)
            removed_rows = frozenset(summary.removed)
            stats[action] = total
            stats["inserted"] = 1
            inserted, insert_at = summary.inserted, summary.insert_at

    # 4. ephemeral embedding (messages still sent only)
    if embed and not direct:
        eph_spans, eph_reminders = embed_ephemeral_into(cache, counter, data.valid_ephemeral(), n, current, cur_counts,
                                                    specs, removed_rows)
        stats["ephemeral"] = len(eph_spans)

    # The sequence as sent: (stored index, or None for the inserted message).
    if inserted is None:
        seq_index: list[int | None] = list(range(n))
    else:
        seq_index = [i for i in range(insert_at) if i not in removed_rows]  # type: ignore[arg-type]
        seq_index.append(None)
        seq_index.extend(i for i in range(insert_at, n) if i not in removed_rows)  # type: ignore[arg-type]
    inserted_tokens = count(counter, inserted) if inserted is not None else 0

    system_prompt = conversation.system_prompt
    system_tokens = cache.system_tokens(data, counter)

    # 5. budget
    shortfall = 0
    dropped_rows: set[int] = set()
    inserted_dropped = False
    if settings.budget is not None:
        if inserted is None:  # the sequence is current itself
            seq_msgs, seq_counts, protected = current, cur_counts, []
        else:
            seq_msgs = [inserted if j is None else current[j] for j in seq_index]
            seq_counts = [inserted_tokens if j is None else cur_counts[j] for j in seq_index]
            protected = [p for p, j in enumerate(seq_index) if j is None]
        room = settings.budget - system_tokens
        fit = fit_to_budget(seq_msgs, max(room, 0), keep_recent, counts=seq_counts, protected=protected,
                            unit_list=cache.units(data, n) if inserted is None else None)
        shortfall = fit.shortfall + max(0, -room)
        # (a dropped row's last spec, ("dropped", budget, its tokens), is added when it is made)
        dropped_rows = {seq_index[p] for p in fit.dropped}
        if None in dropped_rows:
            inserted_dropped = True
            dropped_rows.discard(None)
        stats["dropped"] = len(fit.dropped)
        if fit.dropped:
            seq_index = [seq_index[p] for p in fit.kept]

    # Rows: each message's unchanged row; a changed one is made when first read (see RowMaker).
    total_stored = system_tokens + cache.stored_total(data, counter, n)
    gone = removed_rows | dropped_rows
    base_rows = cache.base_rows(data, counter)
    items: list = base_rows[:n]
    maker = RowMaker(cache, counter, policy, tag, n, msgs, current, cur_counts, stored_counts, specs,
                      removed_rows, removed_spec, dropped_rows, settings.budget,
                      eph_spans, eph_reminders, clear, None if inserted is None or inserted_dropped else insert_at,
                      base_rows)
    for i in specs.indices():
        items[i] = maker
    for i in gone:
        items[i] = maker
    total_prepared = system_tokens + (sum([cur_counts[j] for j in seq_index if j is not None]) if gone
                                      else sum(cur_counts))
    spans_of = cache.reminder_spans
    prepared_seq = (tuple(current) if len(seq_index) == n and inserted is None
                    else tuple(inserted if j is None else current[j] for j in seq_index))
    indices: Sequence[int | None] = range(n)
    stored_col: Sequence[Message | None] = msgs
    prepared_col: Sequence[Message | None] = prepared_seq
    if gone:
        prepared_col = list(current)
        for i in gone:
            prepared_col[i] = None
    if inserted is not None and not inserted_dropped:
        total_prepared += inserted_tokens
        items.insert(insert_at, Row(  # type: ignore[arg-type]
            index=None, stored=None, prepared=inserted,
            changes=(made.inserted(strategy, len(removed_rows), inserted_tokens),),
            tokens_prepared=inserted_tokens, prepared_reminders=spans_of(inserted.text),
        ))
        indices = [*range(insert_at), None, *range(insert_at, n)]  # type: ignore[arg-type]
        stored_col = [*msgs[:insert_at], None, *msgs[insert_at:]]
        prepared_col = [*prepared_col[:insert_at], inserted, *prepared_col[insert_at:]]

    stats["tool_results"] = bisect.bisect_left(data.tool_indices, n)
    view = PreparedView(
        settings=settings,
        rows=Rows(items, indices, stored_col, prepared_col),
        prepared=prepared_seq,
        system_prompt=system_prompt,
        tokens_stored=total_stored,
        tokens_prepared=total_prepared,
        system_tokens=system_tokens,
        context_window=resolve_context_window(settings.context_window, conversation.context_window,
                                              conversation.model),
        budget_shortfall=shortfall,
        recorded_input_tokens=recorded,
        requests=data.requests,
        counter_name=counter.name,
        stats=stats,
    )
    return view, clear_saved
