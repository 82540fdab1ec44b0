"""PipelineCache: what the cached pipeline remembers between calls, and its limits.

Every table is the cache's own (PipelineCache.clear() empties them, and the
memos of the modules the pipeline calls). Keys are object ids, guarded by
keeping the object in the value (an id is not reused while it lives); each
table is emptied when it reaches its limit.
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools
from typing import Any, NamedTuple, Sequence

from ctxview._fast import compression as fast
from ctxview.engine import compression, reminders
from ctxview.engine.grouping import unit_runs
from ctxview.identity_table import IdentityTable
from ctxview.model import Conversation, Message
from ctxview.settings import Settings
from ctxview.engine.tokens import (
    BpeCounter,
    CharsCounter,
    SwarmEstimate,
    TokenCounter,
    count_messages,
    counter_for,
)
from ctxview.engine.view import PreparedView, Row
from ctxview.pipeline import limits
from ctxview.pipeline.base_rows import BaseRows
from ctxview.pipeline.builders import with_content as _with_content
from ctxview.pipeline.embedding import embed_ephemeral_into
from ctxview.model import request_indices
from ctxview.pipeline.interned import Interned
from ctxview.pipeline.row_keys import Specs
from ctxview.engine.system_block import system_block_tokens

__all__ = ["PipelineCache", "StageResult"]


class StageResult(NamedTuple):
    """What stage 1 (then maybe stage 4) left for a request: the messages, their tokens, the specs of
    the changed ones, and the ephemeral pieces' spans and reminder blocks by index."""

    messages: Sequence[Message]
    counts: list[int]
    specs: Specs
    ephemeral_spans: dict[int, tuple]
    ephemeral_reminders: dict[int, tuple]


# Counters whose count_message reads only the role, the text and the tool
# calls: for them a short message without tool calls is counted once per text.
TEXT_ONLY_COUNTERS = (SwarmEstimate, CharsCounter, BpeCounter)



class _ConversationData:
    """What depends only on the conversation (and a counter): computed once."""

    __slots__ = ("conversation", "requests", "_names", "tool_indices", "counts", "prefix", "totals", "base_rows", "units",
                 "ephemeral", "shared", "stages", "last_compressed", "context", "derived")

    def __init__(self, conversation: Conversation) -> None:
        msgs = conversation.messages
        self.conversation = conversation
        self.requests = tuple(request_indices(msgs))
        self._names: dict[str, str] | None = None
        self.tool_indices = [i for i, m in enumerate(msgs) if m.role == "tool"]
        self.counts: dict[str, list[int]] = {}      # counter name -> tokens per stored message
        self.prefix: dict[str, list[int]] = {}      # counter name -> prefix sums of counts (for callers)
        self.totals: dict[tuple[str, int], int] = {}  # (counter name, n) -> tokens of messages[:n]
        self.base_rows: dict[str, BaseRows] = {}    # counter name -> the unchanged row of each message
        self.units: dict[int, list[Sequence[int]]] = {}  # n -> grouping.unit_runs(messages[:n])
        self.ephemeral: dict[int, Sequence[str]] | None = None
        self.shared: set[int] | None = None
        # PipelineCache.stages()'s arguments -> its result, oldest first
        self.stages: dict[tuple, tuple] = {}
        # (counter name, policy tag) -> the last compression's messages and tokens (kept beyond the
        # stages: a tuple and a list per policy), whose counts the next one under the policy reuses
        self.last_compressed: dict[tuple[str, int], tuple[tuple[Message, ...], list[int]]] = {}
        self.context: dict[str, Any] = {}  # counter name -> its context_tokens.ContextTokens (pipeline.context)
        # what the analysis works out of the stored messages alone, by its name (each request's time,
        # say), with what else it depends on (the counter, the scale) where it does
        self.derived: dict[Any, Any] = {}

    @property
    def names(self) -> dict[str, str]:
        """compression.tool_names_by_call_id of the messages, when first wanted (a row on screen)."""
        if self._names is None:
            self._names = compression.tool_names_by_call_id(self.conversation.messages)
        return self._names

    def shared_texts(self) -> set[int]:
        """compression.shared_text_ids of the conversation's messages (valid for any prefix)."""
        if self.shared is None:
            msgs = self.conversation.messages
            self.shared = fast.shared_text_ids(msgs[i] for i in self.tool_indices)
        return self.shared

    def valid_ephemeral(self) -> dict[int, Sequence[str]]:
        """The conversation's ephemeral reminders that get embedded: int index, some text."""
        if self.ephemeral is None:
            self.ephemeral = {i: texts for i, texts in (self.conversation.ephemeral or {}).items()
                              if type(i) is int and not all(x is None or x is False for x in texts)}
        return self.ephemeral


class PipelineCache:
    """What survives between recomputes. Keys are object ids, guarded by
    keeping the object in the value (an id is not reused while it lives)."""

    def __init__(self) -> None:
        # the compressor's plans, its cuts by message and by text, and the call-id maps (_fast.compression)
        self.memo = fast.Memo()
        self.interned = Interned()  # the changes, tier names and detail lines its rows share
        self.counts: dict[str, dict[int, tuple[Any, int]]] = {}
        self.short_counts: dict[tuple[str, str, str], int] = {}  # (counter, role, short text) -> tokens
        # counter name -> {text: tokens} for tool results without calls under a text-only counter:
        # results that share one text are counted (and remembered) once
        self.tool_text_counts: dict[str, IdentityTable] = {}
        self.spans: dict[int, tuple[str, tuple]] = {}
        # counter name -> {(index, *change specs): row}; a row holds its stored and
        # prepared messages, which guard the entry (another conversation's row at
        # the same index and specs fails the guard and is replaced).
        self.rows: dict[str, dict[tuple, Row]] = {}
        # (counter name, policy tag, messages in the request) -> {index: row}: the rows
        # compression alone (then maybe embedding) changed, the bulk of a view, by index (the age
        # is the request's length minus the index; guarded by stored and prepared) instead of by
        # spec tuple (see _by_index)
        self.compressed_rows: dict[tuple[str, int, int], dict[int, Row]] = {}
        self.policy_tags: dict[int, tuple[compression.CompressionPolicy, int]] = {}
        self.per_conversation: dict[int, _ConversationData] = {}
        self.counters: dict[tuple, TokenCounter] = {}
        self.policies: dict[tuple, compression.CompressionPolicy] = {}
        self.embeds: dict[str, dict[int, tuple]] = {}  # counter name -> embedded()'s table
        self.suffixes: dict[Any, tuple] = {}  # ephemeral texts (a tuple of str; else its id) -> suffix_of()'s entry
        # placeholder -> {message: the message blanked with it}
        self.blanks: dict[str, IdentityTable] = {}
        self.views: dict[tuple, tuple] = {}   # the last few views, oldest first
        # (id(conversation), counter name) -> (conversation, the last view computed,
        # the tokens its clearing saved or None): the base a keep_recent change is applied to.
        self.last: dict[tuple, tuple[Conversation, PreparedView, int | None]] = {}

        # stage 0 (sent_history.py): the rewrite events of (conversation, counter, swarm-auto), the
        # conversations stage 0 made (the history as sent from a compaction on), and their wrapped views
        self.harness: dict[tuple, tuple] = {}
        self.sent: dict[tuple, Any] = {}
        self.offsets: dict[int, tuple[Conversation, int]] = {}
        self.sent_views: dict[int, tuple[PreparedView, PreparedView]] = {}
        # (id(a), id(b)) -> (a, b, positions): the only rows of b that may differ from a's, for the
        # last few pairs a keep_recent delta made (either way round): see delta.rows_changed
        self.steps: dict[tuple[int, int], tuple[PreparedView, PreparedView, range]] = {}

    def clear(self) -> None:
        """Forget everything this cache holds: its tables, the compressor's (`memo`, with its tool-name
        detections) and the changes its rows share (`interned`)."""
        self.__init__()

    def forget_derived(self) -> None:
        """Forget the messages made from the stored ones (cut, cleared, embedded), their counts and rows,
        keeping what was worked out of the stored ones: between settings that are not looked at again
        (report --compare replays one after the other), so that memory holds one setting's, not all."""
        for table in (self.counts, self.tool_text_counts, self.rows, self.compressed_rows, self.embeds,
                      self.blanks, self.views, self.last, self.steps, self.sent_views):
            table.clear()
        for data in self.per_conversation.values():
            data.stages.clear()

    def offset_of(self, conversation: Conversation) -> int:
        """The stored index of `conversation`'s first message: > 0 for a history stage 0 made."""
        hit = self.offsets.get(id(conversation))
        return hit[1] if hit is not None and hit[0] is conversation else 0

    # -- helpers ---------------------------------------------------------------
    def counter(self, conversation: Conversation, name: str) -> TokenCounter:
        key = (name, conversation.model)
        c = self.counters.get(key)
        if c is None:
            c = self.counters[key] = counter_for(conversation, name)
        return c

    def policy(self, settings: Settings) -> compression.CompressionPolicy:
        key = (settings.tiers, settings.tool_name_from)
        p = self.policies.get(key)
        if p is None:
            p = compression.get_policy(settings.tiers)
            if p.tool_name_from != settings.tool_name_from:
                p = dataclasses.replace(p, tool_name_from=settings.tool_name_from)
            self.policies[key] = p
            self.policy_tags.setdefault(id(p), (p, len(self.policy_tags)))
        return p

    def policy_tag(self, policy: compression.CompressionPolicy) -> int:
        """A small number naming a policy from policy(), so that rows of different tiers are cached apart."""
        return self.policy_tags[id(policy)][1]

    def compressed_row_table(self, counter: TokenCounter, tag: int, n: int,
                             keep: int | str | None = None) -> dict[int, Row]:
        """The by-index rows of (counter, policy tag, n); with `keep`, those also cleared under
        clear.keep=keep (keep "gone": the removed or dropped ones, see _gone_by_index)."""
        key = (counter.name, tag, n) if keep is None else (counter.name, tag, n, keep)
        table = self.compressed_rows.get(key)
        if table is None:
            if len(self.compressed_rows) >= limits.TABLES:
                self.compressed_rows.clear()
            table = self.compressed_rows[key] = {}
        return table

    def row_table(self, counter: TokenCounter) -> dict[tuple, Row]:
        table = self.rows.get(counter.name)
        if table is None:
            table = self.rows[counter.name] = {}
        return table

    def count(self, counter: TokenCounter, msg: Message) -> int:
        table = self.counts.get(counter.name)
        if table is None:
            table = self.counts[counter.name] = {}
        hit = table.get(id(msg))
        if hit is not None and hit[0] is msg:
            return hit[1]
        if msg.role == "tool" and not msg.tool_calls and type(counter) in TEXT_ONLY_COUNTERS:
            by_text = self.tool_text_counts.get(counter.name)
            if by_text is None:
                by_text = self.tool_text_counts[counter.name] = IdentityTable(limits.ENTRIES)
            text = msg.text
            n = by_text.get(text)
            if n is None:
                n = counter.count_message(msg)
                by_text.put(text, n)
            return n
        n = counter.count_message(msg)
        if len(table) >= limits.ENTRIES:
            table.clear()
        table[id(msg)] = (msg, n)
        return n

    def count_cleared(self, counter: TokenCounter, msg: Message) -> int:
        """count() for clearing's messages: a placeholder is counted once per text, not once per message."""
        if type(counter) in TEXT_ONLY_COUNTERS and not msg.tool_calls:
            text = msg.text
            if len(text) <= limits.SHORT_TEXT:
                key = (counter.name, msg.role, text)
                n = self.short_counts.get(key)
                if n is None:
                    if len(self.short_counts) >= limits.SHORT_TEXTS:
                        self.short_counts.clear()
                    n = self.short_counts[key] = counter.count_message(msg)
                return n
        return self.count(counter, msg)

    def blanked(self, msg: Message, placeholder: str) -> Message:
        """`msg` with its content replaced by `placeholder` (clearing), the same object each time."""
        table = self.blanks.get(placeholder)
        if table is None:
            if len(self.blanks) >= limits.TABLES:
                self.blanks.clear()
            table = self.blanks[placeholder] = IdentityTable(limits.ENTRIES)
        new = table.get(msg)
        if new is None:
            new = _with_content(msg, placeholder)
            table.put(msg, new)
        return new

    def reminder_spans(self, text: str) -> tuple:
        if "<system-reminder>" not in text:
            return ()
        hit = self.spans.get(id(text))
        if hit is not None and hit[0] is text:
            return hit[1]
        found = tuple(reminders.spans(text))
        if len(self.spans) >= limits.ENTRIES:
            self.spans.clear()
        self.spans[id(text)] = (text, found)
        return found

    def data(self, conversation: Conversation) -> _ConversationData:
        hit = self.per_conversation.get(id(conversation))
        if hit is not None and hit.conversation is conversation:
            return hit
        if len(self.per_conversation) > limits.TABLES:
            self.per_conversation.clear()
        data = self.per_conversation[id(conversation)] = _ConversationData(conversation)
        return data

    def counts_of(self, data: _ConversationData, counter: TokenCounter) -> list[int]:
        """Tokens of each stored message, counted once per conversation and counter."""
        counts = data.counts.get(counter.name)
        if counts is None:
            counts = data.counts[counter.name] = count_messages(counter, data.conversation.messages)
        return counts

    def stored_counts(self, data: _ConversationData, counter: TokenCounter) -> tuple[list[int], list[int]]:
        """(tokens per stored message, their prefix sums); the sums are built on first request."""
        counts = self.counts_of(data, counter)
        prefix = data.prefix.get(counter.name)
        if prefix is None:
            prefix = data.prefix[counter.name] = [0, *itertools.accumulate(counts)]
        return counts, prefix

    def stored_total(self, data: _ConversationData, counter: TokenCounter, n: int) -> int:
        """Tokens of the first n stored messages (a handful of n per conversation: the requests viewed)."""
        key = (counter.name, n)
        total = data.totals.get(key)
        if total is None:
            if len(data.totals) > limits.TOTALS:
                data.totals.clear()
            total = data.totals[key] = sum(self.counts_of(data, counter)[:n])
        return total

    def system_tokens(self, data: _ConversationData, counter: TokenCounter) -> int:
        """system_block.system_block_tokens (the system prompt and the tool definitions), once."""
        key = (counter.name, -1)  # beside the totals
        tokens = data.totals.get(key)
        if tokens is None:
            tokens = data.totals[key] = system_block_tokens(data.conversation, counter)
        return tokens

    def base_rows(self, data: _ConversationData, counter: TokenCounter) -> BaseRows:
        """Each stored message's unchanged row (a row is made when first read: BaseRows)."""
        rows = data.base_rows.get(counter.name)
        if rows is None:
            rows = data.base_rows[counter.name] = BaseRows(data, self.counts_of(data, counter), self.memo.names)
        return rows

    def stages(self, data: _ConversationData, counter: TokenCounter, policy: compression.CompressionPolicy | None,
               tag: int, n: int, keep_recent: int, embed: bool) -> StageResult:
        """Stage 1 of messages[:n] under (policy, keep_recent) (None: no compression), then stage 4
        with `embed` (for a run with no clearing or summary between them): (the messages, their
        tokens, the specs of the changed ones (a _Specs), the ephemeral spans and reminder blocks
        by index). Remembered for the last few sets of arguments: the other
        settings (a budget, a request seen before, clearing or a summary) start from it. A new
        compression counts only the results no remembered run of the policy had."""
        key = (counter.name, tag if policy is not None else None, n, keep_recent if policy is not None else None, embed)
        hit = data.stages.pop(key, None)
        if hit is not None:
            data.stages[key] = hit  # the most recently used last
            return hit
        msgs = data.conversation.messages
        msgs = msgs if n == len(msgs) else msgs[:n]
        if embed:
            current, counts, specs, _, _ = self.stages(data, counter, policy, tag, n, keep_recent, False)
            current, counts, specs = list(current), list(counts), specs.copy()
            eph_spans, eph_reminders = embed_ephemeral_into(self, counter, data.valid_ephemeral(), n, current, counts,
                                                        specs, frozenset())
            done = StageResult(tuple(current), counts, specs, eph_spans, eph_reminders)
        elif policy is None:
            done = StageResult(msgs, self.counts_of(data, counter)[:n], Specs(n, tag, msgs, msgs, ()), {}, {})
        else:
            current = fast.compress_tool_results(msgs, keep_recent, policy, shared_texts=data.shared_texts(),
                                                 memo=self.memo)
            cur_counts = self.counts_of(data, counter)[:n]
            tools = data.tool_indices
            changed = [i for i in tools[:bisect.bisect_left(tools, n - keep_recent)] if current[i] is not msgs[i]]
            # Another n or keep_recent under this policy left most results the same objects (a result
            # depends on its message and tier limit only): their tokens are that run's.
            ref_msgs, ref_counts = data.last_compressed.get((counter.name, tag), ((), []))
            m = len(ref_msgs)
            new_ones = []
            for i in changed:
                if i < m and ref_msgs[i] is current[i]:
                    cur_counts[i] = ref_counts[i]
                else:
                    new_ones.append(i)
            for i, tokens in zip(new_ones, count_messages(counter, [current[i] for i in new_ones])):
                cur_counts[i] = tokens
            stage1 = tuple(current)
            done = StageResult(stage1, cur_counts, Specs(n, tag, stage1, msgs, changed), {}, {})
            last = data.last_compressed
            last.pop((counter.name, tag), None)
            if len(last) >= limits.KEPT:  # (it keeps its results alive: bounded like the stages)
                last.pop(next(iter(last)))
            last[(counter.name, tag)] = (done[0], cur_counts)
        if len(data.stages) >= limits.KEPT:
            data.stages.pop(next(iter(data.stages)))
        data.stages[key] = done
        return done

    def units(self, data: _ConversationData, n: int) -> list[Sequence[int]]:
        found = data.units.get(n)
        if found is None:
            if len(data.units) > limits.KEPT:
                data.units.clear()
            found = data.units[n] = unit_runs(data.conversation.messages[:n])
        return found
