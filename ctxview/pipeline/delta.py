"""A keep_recent step applied to the previous view as a delta (only the rows it changes)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import bisect
import dataclasses

from ctxview._fast import compression as fast
from ctxview.engine.clearing import tool_name_of
from ctxview.engine.context_tokens import COUNTED, TokenUnits
from ctxview.model import Conversation, Message
from ctxview.settings import Settings
from ctxview.engine.tokens import TokenCounter
from ctxview.engine.view import PreparedView, Row, Rows
from ctxview.pipeline import limits
from ctxview.pipeline.embedding import embedded
from ctxview.pipeline.reference import whole_context_stages
from ctxview.pipeline.row_keys import by_index
from ctxview.spliced import spliced
from ctxview.pipeline.rows import new_row

if TYPE_CHECKING:
    from ctxview.pipeline.cache import PipelineCache


def prepare_keep_recent_delta(
    conversation: Conversation,
    settings: Settings,
    counter: TokenCounter,
    cache: PipelineCache,
    prev: PreparedView,
    prev_saved: int | None,
    units: TokenUnits = COUNTED,
) -> tuple[PreparedView, int | None] | None:
    """The view for `settings` built from `prev`, when they differ only in keep_recent; else None.
    Also returns the tokens clearing saved (None: no clearing applied).

    keep_recent only decides which tool results compression leaves alone:
    those at n - keep_recent and later. When every stage that runs works
    message by message (each stage declares which do), the rows before
    n - max(old, new) and from n - min(old, new) on are the previous ones;
    only the tool results in between are recomputed, and the totals and
    counts move by their difference. Clearing is also per message once it
    applies, except for its trigger (on the total, so not taken here), its
    minimum saving (checked on the running saving) and the set of cleared
    results (a change in it takes the full path). The summary's default
    boundary and the budget's kept part depend on the whole: full path.
    """
    if not _is_a_keep_recent_step(prev, settings, counter, prev_saved):
        return None
    n = len(conversation.messages) if settings.request is None else settings.request
    if len(prev.rows) != n or len(prev.prepared) != n:  # pragma: no cover - guaranteed by the conditions
        return None
    old, k = prev.settings.keep_recent, settings.keep_recent
    lo, hi = max(n - max(k, old), 0), max(n - min(k, old), 0)
    if lo == hi:
        same = dataclasses.replace(prev, settings=settings, stats=dict(prev.stats))
        note_step(cache, prev, same, range(0))
        return same, prev_saved
    step = _Step(conversation, settings, counter, cache, prev, prev_saved, n, lo, hi, units)
    rows: list[Row] = []
    prepared: list[Message] = []
    for i in range(lo, hi):
        done = step.redo(i)
        if done is None:
            return None  # the step changes more than these rows: the full path
        rows.append(done[0])
        prepared.append(done[1])
    done = step.view(rows, prepared)
    if done is not None:
        note_step(cache, prev, done[0], range(lo, hi))
    return done


def note_step(cache: PipelineCache, a: PreparedView, b: PreparedView, positions: range) -> None:
    """Remember that b's rows are a's but at `positions` (both ways round, for the last few pairs)."""
    steps = cache.steps
    if len(steps) >= 2 * limits.KEPT:
        steps.clear()
    steps[id(a), id(b)] = (a, b, positions)
    steps[id(b), id(a)] = (b, a, positions)


def note_recalled_step(cache: PipelineCache, prev: PreparedView, view: PreparedView, counter: TokenCounter) -> None:
    """`view`, remembered, is recalled after `prev`: when the two differ in keep_recent alone and
    the delta would apply with no clearing (it then never falls back), the rows that differ are
    the delta's (the delta equals the full path), so note them."""
    settings = view.settings
    if (prev is view or settings.clear is not None or len(prev.rows) != len(view.rows)
            or not _is_a_keep_recent_step(prev, settings, counter, None)):
        return
    n = len(view.rows)
    old, k = prev.settings.keep_recent, settings.keep_recent
    note_step(cache, prev, view, range(max(n - max(k, old), 0), max(n - min(k, old), 0)))


def rows_changed(cache: PipelineCache, old: PreparedView, new: PreparedView) -> range | None:
    """The positions of `new`'s rows that may differ from `old`'s, when the pipeline knows: none
    when they are one view, those between the two keep_recent boundaries when a keep_recent delta
    made one from the other (this cache, the last few such steps); else None (compare them all)."""
    if old is new:
        return range(0)
    hit = cache.steps.get((id(old), id(new)))
    if hit is not None and hit[0] is old and hit[1] is new:
        return hit[2]
    return None


def _is_a_keep_recent_step(prev: PreparedView, settings: Settings, counter: TokenCounter,
                           prev_saved: int | None) -> bool:
    """Whether `settings` are `prev`'s but for keep_recent, and every stage that runs works per message."""
    old, k = prev.settings, settings.keep_recent
    if k == old.keep_recent or k < 0 or prev.counter_name != counter.name or whole_context_stages(settings):
        return False
    if settings.clear is not None and prev_saved is None:
        return False
    try:
        return dataclasses.replace(old, keep_recent=k) == settings
    except TypeError:
        return False


class _Step:
    """The tool results between the old and the new keep_recent boundary, redone one at a time."""

    def __init__(self, conversation: Conversation, settings: Settings, counter: TokenCounter,
                 cache: PipelineCache, prev: PreparedView, prev_saved: int | None, n: int, lo: int, hi: int,
                 units: TokenUnits = COUNTED):
        all_msgs = conversation.messages
        self.units = units  # the model's tokens, in which clearing's minimum saving is given
        self.settings, self.counter, self.cache, self.prev, self.n, self.lo, self.hi = (
            settings, counter, cache, prev, n, lo, hi)
        self.msgs = msgs = all_msgs if n == len(all_msgs) else all_msgs[:n]
        data = cache.data(conversation)
        self.stored_counts = cache.counts_of(data, counter)
        self.base_rows = cache.base_rows(data, counter)
        self.policy = policy = cache.policy(settings)
        self.tag = cache.policy_tag(policy)
        k = settings.keep_recent
        self.part = (fast.compress_tool_results_between(msgs, k, policy, lo, hi, cache.memo)
                     if settings.compression and policy.enabled and n - k > lo else list(msgs[lo:hi]))
        self.eph = data.valid_ephemeral() if settings.embed_ephemeral else {}
        self.row_cache = cache.row_table(counter)
        self.compressed_rows = cache.compressed_row_table(counter, self.tag, n)
        self.saved = prev_saved
        self.names_n: dict[str, str] | None = None
        self.clear_below = 0
        clear = settings.clear
        if clear is not None:
            # plan_clearing's "old" results: all but the last `keep` tool results of messages[:n].
            tools = data.tool_indices
            in_n = bisect.bisect_left(tools, n)
            cut = max(in_n - max(clear.keep, 0), 0)
            self.clear_below = tools[cut] if cut < in_n else n
        self.delta_tokens = self.delta_compressed = 0

    def redo(self, i: int) -> tuple[Row, Message] | None:
        """Message i's row and prepared message under the new keep_recent; None: take the full path."""
        stored, was = self.msgs[i], self.prev.rows[i]
        if stored.role != "tool":  # neither compression nor clearing touches it here
            return was, self.prev.prepared[i]
        cache, counter = self.cache, self.counter
        cur = self.part[i - self.lo]
        self.delta_tokens -= was.tokens_prepared
        if was.changes and was.changes[0].action == "compressed":
            self.delta_compressed -= 1
        key: tuple = (i,)
        tp = self.stored_counts[i]
        if cur is not stored:
            tp = cache.count(counter, cur)
            key = (i, "compressed", self.n - i, self.tag)
            self.delta_compressed += 1
        if self.settings.clear is not None:
            done = self.reclear(i, stored, was, cur, tp)
            if done is None:
                return None
            cur, tp, key = done[0], done[1], key + done[2]
        spans: tuple = ()
        texts = self.eph.get(i)
        if texts is not None:
            _, _, cur, spans, after, _ = embedded(cache, counter, cur, texts)
            key += ("ephemeral", len(texts), after - tp)
            tp = after
        self.delta_tokens += tp
        if len(key) == 1:
            return self.base_rows[i], cur
        indexed = by_index(key)
        hit = self.compressed_rows.get(i) if indexed else self.row_cache.get(key)
        if hit is not None and hit.stored is stored and hit.prepared is cur:
            return hit, cur
        return new_row(self.compressed_rows if indexed else self.row_cache, i if indexed else key, key,
                       self.base_rows[i], stored, cur, self.policy, self.stored_counts[i], tp, spans,
                       cache), cur

    def reclear(self, i: int, stored: Message, was: Row, cur: Message, tp: int) -> tuple | None:
        """Clearing of result i again: (message, tokens, the cleared spec or ()); None when the set of
        cleared results would change (or the result also holds calls): the full path."""
        clear = self.settings.clear
        if stored.tool_calls:
            return None
        cleared = i < self.clear_below and cur.text != clear.placeholder  # type: ignore[union-attr]
        if cleared and clear.exclude:  # type: ignore[union-attr]
            if self.names_n is None:
                self.names_n = {c.id: c.name for m in self.msgs for c in m.tool_calls if c.id}
            cleared = tool_name_of(cur, self.names_n) not in clear.exclude  # type: ignore[union-attr]
        was_saved = next((c.saved_tokens for c in was.changes if c.action == "cleared"), None)
        if cleared != (was_saved is not None):
            return None
        if not cleared:
            return cur, tp, ()
        new = self.cache.blanked(cur, clear.placeholder)  # type: ignore[union-attr]
        after = self.cache.count_cleared(self.counter, new)
        self.saved += (tp - after) - was_saved  # type: ignore[operator]
        return new, after, ("cleared", tp - after, False, True, clear.keep)  # type: ignore[union-attr]

    def view(self, rows: list[Row], prepared: list[Message]) -> tuple[PreparedView, int | None] | None:
        clear, prev, lo = self.settings.clear, self.prev, self.lo
        if clear is not None and self.units.part(self.saved) < clear.min_saving:  # type: ignore[operator]
            return None  # clearing would not apply at all now
        stats = dict(prev.stats)
        stats["compressed"] += self.delta_compressed
        # (no message is removed or inserted here: the rows' prepared column is the prepared tuple)
        # The previous view's sequences with lo..hi replaced, not copied: O(hi - lo), see spliced.py
        new_prepared = spliced(prev.prepared, lo, prepared)
        items = prev.rows.entries() if isinstance(prev.rows, Rows) else list(prev.rows)
        view = dataclasses.replace(
            prev, settings=self.settings, rows=Rows(spliced(items, lo, rows, list), range(self.n), self.msgs,
                                                    new_prepared),
            prepared=new_prepared, tokens_prepared=prev.tokens_prepared + self.delta_tokens, stats=stats)
        return view, self.saved
