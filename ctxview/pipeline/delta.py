"""A keep_recent step applied to the previous view as a delta (only the rows it changes)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import bisect
import dataclasses

from .. import compression
from ..clearing import tool_name_of
from ..model import Conversation, Message
from ..settings import Settings
from ..tokens import TokenCounter
from ..view import PreparedView, Row, Rows
from .embedding import embedded
from .reference import whole_context_stages
from .row_keys import by_index
from .rows import new_row

if TYPE_CHECKING:
    from .cache import PipelineCache


def prepare_keep_recent_delta(
    conversation: Conversation,
    settings: Settings,
    counter: TokenCounter,
    cache: PipelineCache,
    prev: PreparedView,
    prev_saved: int | None,
) -> tuple[PreparedView, int | None] | None:
    """The view for `settings` built from `prev`, when they differ only in keep_recent; else None.
    Also returns the tokens clearing saved (None: no clearing applied).

    keep_recent only decides which tool results compression leaves alone:
    those at n - keep_recent and later. When every stage that runs works
    message by message (reference.STAGES says which do), the rows before
    n - max(old, new) and from n - min(old, new) on are the previous ones;
    only the tool results in between are recomputed, and the totals and
    counts move by their difference. Clearing is also per message once it
    applies, except for its trigger (on the total, so not taken here), its
    minimum saving (checked on the running saving) and the set of cleared
    results (a change in it takes the full path). The summary's default
    boundary and the budget's kept part depend on the whole: full path.
    """
    old = prev.settings
    k = settings.keep_recent
    clear = settings.clear
    if k == old.keep_recent or k < 0 or prev.counter_name != counter.name or whole_context_stages(settings):
        return None
    if clear is not None and prev_saved is None:
        return None
    try:
        if dataclasses.replace(old, keep_recent=k) != settings:
            return None
    except TypeError:
        return None
    all_msgs = conversation.messages
    n = len(all_msgs) if settings.request is None else settings.request
    if len(prev.rows) != n or len(prev.prepared) != n:  # pragma: no cover - guaranteed by the conditions
        return None
    lo = max(n - max(k, old.keep_recent), 0)
    hi = max(n - min(k, old.keep_recent), 0)
    stats = dict(prev.stats)
    if lo == hi:
        return dataclasses.replace(prev, settings=settings, stats=stats), prev_saved
    msgs = all_msgs if n == len(all_msgs) else all_msgs[:n]
    data = cache.data(conversation)
    stored_counts = cache.counts_of(data, counter)
    base_rows = cache.base_rows(data, counter)
    policy = cache.policy(settings)
    tag = cache.policy_tag(policy)
    if settings.compression and policy.enabled and n - k > lo:
        part = compression.compress_tool_results_between(msgs, k, policy, lo, hi)
    else:
        part = list(msgs[lo:hi])
    eph = data.valid_ephemeral() if settings.embed_ephemeral else {}
    count = cache.count
    count_cleared = cache.count_cleared
    row_cache = cache.row_table(counter)
    compressed_rows = cache.compressed_row_table(counter, tag, n)
    spans_of = cache.reminder_spans
    clear_below = 0
    saved = prev_saved
    names_n: dict[str, str] | None = None
    if clear is not None:
        # plan_clearing's "old" results: all but the last `keep` tool results of messages[:n].
        tools = data.tool_indices
        in_n = bisect.bisect_left(tools, n)
        cut = max(in_n - max(clear.keep, 0), 0)
        clear_below = tools[cut] if cut < in_n else n
    rows: list[Row] = []
    prepared: list[Message] = []
    delta_tokens = 0
    delta_compressed = 0
    prev_rows = prev.rows
    prev_prepared = prev.prepared
    for off in range(hi - lo):
        i = lo + off
        stored = msgs[i]
        was = prev_rows[i]
        if stored.role != "tool":  # neither compression nor clearing touches it here
            rows.append(was)
            prepared.append(prev_prepared[i])
            continue
        cur = part[off]
        delta_tokens -= was.tokens_prepared
        if was.changes and was.changes[0].action == "compressed":
            delta_compressed -= 1
        key: tuple = (i,)
        tp = stored_counts[i]
        if cur is not stored:
            tp = count(counter, cur)
            key = (i, "compressed", n - i, tag)
            delta_compressed += 1
        if clear is not None:
            if stored.tool_calls:  # a result that also holds calls: leave its bookkeeping to the full path
                return None
            cleared = i < clear_below and cur.text != clear.placeholder
            if cleared and clear.exclude:
                if names_n is None:
                    names_n = {c.id: c.name for m in msgs for c in m.tool_calls if c.id}
                cleared = tool_name_of(cur, names_n) not in clear.exclude
            was_saved = next((c.saved_tokens for c in was.changes if c.action == "cleared"), None)
            if cleared != (was_saved is not None):
                return None  # the set of cleared results changes: the full path
            if cleared:
                new = cache.blanked(cur, clear.placeholder)
                after = count_cleared(counter, new)
                key += ("cleared", tp - after, False, True, clear.keep)
                saved += (tp - after) - was_saved  # type: ignore[operator]
                cur, tp = new, after
        spans: tuple = ()
        texts = eph.get(i)
        if texts is not None:
            _, _, cur, spans, after, _ = embedded(cache, counter, cur, texts)
            key += ("ephemeral", len(texts), after - tp)
            tp = after
        delta_tokens += tp
        prepared.append(cur)
        if len(key) == 1:
            rows.append(base_rows[i])
            continue
        indexed = by_index(key)
        hit = compressed_rows.get(i) if indexed else row_cache.get(key)
        if hit is not None and hit.stored is stored and hit.prepared is cur:
            rows.append(hit)
            continue
        rows.append(new_row(compressed_rows if indexed else row_cache, i if indexed else key,
                             key, base_rows[i], stored, cur, policy, stored_counts[i], tp, spans, spans_of))
    if clear is not None and saved < clear.min_saving:  # type: ignore[operator]
        return None  # clearing would not apply at all now
    stats["compressed"] += delta_compressed
    # (no message is removed or inserted here: the rows' prepared column is the prepared tuple)
    new_prepared = prev_prepared[:lo] + tuple(prepared) + prev_prepared[hi:]
    items = prev_rows.entries() if isinstance(prev_rows, Rows) else list(prev_rows)
    view = dataclasses.replace(
        prev,
        settings=settings,
        rows=Rows(items[:lo] + rows + items[hi:], range(n), msgs, new_prepared),
        prepared=new_prepared,
        tokens_prepared=prev.tokens_prepared + delta_tokens,
        stats=stats,
    )
    return view, saved
