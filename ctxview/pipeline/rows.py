"""The changed rows of a view, made when first read (view.Rows calls RowMaker.make)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from ctxview.engine import compression
from ctxview.model import Message
from ctxview.engine.tokens import TokenCounter
from ctxview.engine.view import Row
from ctxview.pipeline.builders import make_row as _row
from ctxview.pipeline.row_keys import AFTER_COMPRESSED, SPEC_LENGTHS, Specs, by_index, changes_of, cleared_by_index, gone_by_index
from ctxview.pipeline import limits

if TYPE_CHECKING:
    from ctxview.pipeline.cache import PipelineCache



class RowMaker:
    """Makes the changed rows of one view when they are first read (see view.Rows): the specs and
    the prepared messages and tokens a run left, and the row tables a made row is looked up in and
    remembered in, so that a row made once is the same object in every view that has it."""

    __slots__ = ("cache", "policy", "msgs", "current", "cur_counts", "stored_counts", "specs", "removed",
                 "removed_spec", "dropped", "budget", "eph_spans", "eph_reminders", "insert_at", "base",
                 "by_spec", "by_index", "cleared", "gone")

    def __init__(self, cache: PipelineCache, counter: TokenCounter, policy: compression.CompressionPolicy,
                 tag: int, n: int, msgs: Sequence[Message], current: list[Message], cur_counts: list[int],
                 stored_counts: list[int], specs: Specs, removed: frozenset[int], removed_spec: tuple,
                 dropped: set[int], budget: int | None,
                 eph_spans: dict[int, tuple], eph_reminders: dict[int, tuple], clear: Any,
                 insert_at: int | None, base: Sequence[Row]) -> None:
        self.base = base  # each message's unchanged row
        self.cache, self.policy = cache, policy
        self.msgs, self.current, self.cur_counts, self.stored_counts = msgs, current, cur_counts, stored_counts
        self.specs, self.eph_spans, self.eph_reminders = specs, eph_spans, eph_reminders
        # removed or dropped rows: their last spec is made with the row (tens of thousands may go)
        self.removed, self.removed_spec, self.dropped, self.budget = removed, removed_spec, dropped, budget
        self.insert_at = insert_at
        # the row tables (see row_keys: by_index, cleared_by_index, gone_by_index)
        self.by_spec = cache.row_table(counter)
        self.by_index = cache.compressed_row_table(counter, tag, n)
        self.cleared = cache.compressed_row_table(counter, tag, n, clear.keep) if clear is not None else None
        self.gone = cache.compressed_row_table(counter, tag, n, "gone") if removed or dropped else None

    def tokens(self, position: int) -> tuple[int, int]:
        """(tokens_stored, tokens_prepared) of the row make(position) makes, without making it."""
        i = position if self.insert_at is None or position < self.insert_at else position - 1
        gone = i in self.removed or i in self.dropped
        return self.stored_counts[i], 0 if gone else self.cur_counts[i]

    def make(self, position: int) -> Row:
        i = position if self.insert_at is None or position < self.insert_at else position - 1
        key = self.specs.get(i)
        if len(key) == 1 and i not in self.removed and i not in self.dropped:
            return self.base[i]  # unchanged (base_rows.BaseRows makes it)
        stored = self.msgs[i]
        prepared = self.current[i]
        if i in self.removed:
            key += (*self.removed_spec, self.cur_counts[i])
            prepared = None
        elif i in self.dropped:
            key += ("dropped", self.budget, self.cur_counts[i])
            prepared = None
        tp = 0 if prepared is None else self.cur_counts[i]
        st = self.stored_counts[i]
        kind = key[1]
        # Everything a row depends on: the stored message, the counter, and the
        # specs in the key (which hold whatever the changes' texts and figures are made of).
        if prepared is None and gone_by_index(key):
            # A removed or dropped message, maybe compressed before: kept by index, the guard
            # checks the changes (a hit's prepared is None too, so it cannot tell them apart).
            indexed, table = True, self.gone
            hit = table.get(i)  # type: ignore[union-attr]
            if (hit is not None and hit.stored is stored and len(hit.changes) == (2 if kind == "compressed" else 1)
                    and hit.changes[-1] is self.cache.interned.change(key[AFTER_COMPRESSED if kind == "compressed" else 1:])):
                return hit
        else:
            indexed = by_index(key)
            table = self.by_index if indexed else self.by_spec
            if not indexed and self.cleared is not None and cleared_by_index(key):
                indexed, table = True, self.cleared
            hit = table.get(i if indexed else key)  # type: ignore[union-attr]
            if hit is not None and hit.stored is stored and hit.prepared is prepared:
                return hit
        return new_row(table, i if indexed else key, key, self.base[i], stored, prepared, self.policy, st, tp,
                       self.eph_spans.get(i, ()), self.cache, self.eph_reminders.get(i))


def new_row(row_cache: dict, cache_key: Any, key: tuple, base: Row, stored: Message, prepared: Message | None,
            policy: compression.CompressionPolicy, stored_tokens: int, prepared_tokens: int, eph: tuple,
            cache: PipelineCache, reminders: tuple | None = None) -> Row:
    """The row of a changed message (`base`: its unchanged row) with the changes of `key` ((index, *specs):
    see row_keys), remembered in `row_cache` under `cache_key`; its changes and reminder spans from
    `cache`'s tables. reminders: the reminder blocks of prepared.text when the caller knows them (an
    embedded message's)."""
    kind = key[1]
    if kind != "compressed" and len(key) == 1 + SPEC_LENGTHS[kind]:
        changes = cache.interned.only(key[1:])  # one tuple for every row with this one change
    else:
        changes = changes_of(key, policy, stored_tokens, prepared_tokens, stored, cache.interned)
    if prepared is None:
        spans: tuple = ()
    elif prepared is stored:
        spans = base.stored_reminders
    else:
        spans = reminders if reminders is not None else cache.reminder_spans(prepared.text)
    row = _row(base.index, stored, prepared, changes, stored_tokens, prepared_tokens, base.tool_name,
               base.stored_reminders, spans, eph if prepared is not None else ())
    if len(row_cache) >= limits.ENTRIES:
        row_cache.clear()
    row_cache[cache_key] = row
    return row
