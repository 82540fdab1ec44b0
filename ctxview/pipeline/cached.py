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
holds a `_RowMaker` at their positions, which makes a row (or finds it in
those tables) when it is first read, and the inspector reads a screenful. A
first run under new settings still builds a Message and counts its tokens
per message whose prepared form changed: that, not the lookups, is what such
a run costs. The cache also keeps the last view: a keep_recent change with
no summary or budget is applied to it as a delta (only the tool results
between the old and new boundary are recomputed, see
_prepare_keep_recent_delta). Other changes run the full path, which reuses
every cached piece (see benchmarks/bench_pipeline.py).
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools
from typing import Any, Callable, Iterator, Sequence

from .. import compression, reminders
from . import changes as made
from ..budget import EXCERPT_CHARS, fit_to_budget, plan_summary
from ..clearing import plan_clearing, tool_name_of
from ..compression import DEFAULT_POLICY
from ..gcpause import paused_gc
from ..grouping import unit_runs
from ..identity_table import IdentityTable
from ..model import Content, Conversation, Message, slot_builder
from ..tokens import BpeCounter, CharsCounter, SwarmEstimate, TokenCounter, counter_for
from ..settings import AS_SENT, Settings
from ..view import Change, PreparedView, Row, Rows
from . import sent_history
from .reference import request_indices, whole_context_stages
from ..windows import resolve_context_window

__all__ = ["PipelineCache", "prepare", "request_indices"]

_CACHE_LIMIT = 1_000_000  # entries per cache before it is emptied
_VIEWS_KEPT = 8
_STAGES_KEPT = 8  # results of stages 1 and 4 kept per conversation (see PipelineCache.stages)
_SHORT_TEXT = 256  # texts up to this long (placeholders, markers) have their counts memoised by value

# Counters whose count_message reads only the role, the text and the tool
# calls: for them a short message without tool calls is counted once per text.
_TEXT_ONLY_COUNTERS = (SwarmEstimate, CharsCounter, BpeCounter)


assert not hasattr(Row, "__post_init__") and not hasattr(Change, "__post_init__")
_row = slot_builder(Row, "_row", {})
# Row(...) with every field given by position, without the frozen __init__:
# for callers building rows by the 100k (the inspector's stored-only layout).
make_row = _row
# Message.with_content(content) (model._replace) as straight-line slot copies.
_with_content = slot_builder(Message, "_with_content",
                             {f.name: f"src.{f.name}" for f in dataclasses.fields(Message) if f.name != "content"},
                             ("src",))


class _Specs:
    """What changed, per stored index: the key of each changed message's row, (index, *specs)
    (see _changes). Stage 1's compression is read from its messages (the bulk of a view: no
    tuple per result); the specs the later stages add are kept by index."""

    __slots__ = ("n", "tag", "stage1", "msgs", "compressed", "more")

    def __init__(self, n: int, tag: int, stage1: Sequence[Message], msgs: Sequence[Message],
                 compressed: Sequence[int]) -> None:
        self.n, self.tag = n, tag
        self.stage1, self.msgs = stage1, msgs   # stage 1's messages and the stored ones
        self.compressed = compressed             # the indices where they differ, in order
        self.more: dict[int, tuple] = {}

    def copy(self) -> _Specs:
        other = _Specs(self.n, self.tag, self.stage1, self.msgs, self.compressed)
        other.more = dict(self.more)
        return other

    def get(self, i: int) -> tuple:
        spec = self.more.get(i)
        if spec is None:
            spec = (i, "compressed", self.n - i, self.tag) if self.stage1[i] is not self.msgs[i] else (i,)
        return spec

    def add(self, i: int, *spec: Any) -> None:
        self.more[i] = self.get(i) + spec

    def indices(self) -> Iterator[int]:
        """Every index with a spec (some twice)."""
        yield from self.compressed
        yield from self.more


class _ConversationData:
    """What depends only on the conversation (and a counter): computed once."""

    __slots__ = ("conversation", "requests", "names", "tool_indices", "counts", "prefix", "totals", "base_rows", "units",
                 "ephemeral", "shared", "stages", "last_compressed")

    def __init__(self, conversation: Conversation) -> None:
        msgs = conversation.messages
        self.conversation = conversation
        self.requests = tuple(request_indices(msgs))
        self.names = compression.tool_names_by_call_id(msgs)
        self.tool_indices = [i for i, m in enumerate(msgs) if m.role == "tool"]
        self.counts: dict[str, list[int]] = {}      # counter name -> tokens per stored message
        self.prefix: dict[str, list[int]] = {}      # counter name -> prefix sums of counts (for callers)
        self.totals: dict[tuple[str, int], int] = {}  # (counter name, n) -> tokens of messages[:n]
        self.base_rows: dict[str, list[Row]] = {}   # counter name -> the unchanged row of each message
        self.units: dict[int, list[Sequence[int]]] = {}  # n -> grouping.unit_runs(messages[:n])
        self.ephemeral: dict[int, Sequence[str]] | None = None
        self.shared: set[int] | None = None
        # PipelineCache.stages()'s arguments -> its result, oldest first
        self.stages: dict[tuple, tuple] = {}
        # (counter name, policy tag) -> the last compression's messages and tokens (kept beyond the
        # stages: a tuple and a list per policy), whose counts the next one under the policy reuses
        self.last_compressed: dict[tuple[str, int], tuple[tuple[Message, ...], list[int]]] = {}

    def shared_texts(self) -> set[int]:
        """compression.shared_text_ids of the conversation's messages (valid for any prefix)."""
        if self.shared is None:
            msgs = self.conversation.messages
            self.shared = compression.shared_text_ids(msgs[i] for i in self.tool_indices)
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
        self.suffixes: dict[int, tuple] = {}  # id(ephemeral texts) -> suffix()'s entry
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

    def clear(self) -> None:
        """Forget everything, the memo tables of the modules the pipeline calls included."""
        self.__init__()
        _SHARED_CHANGES.clear()
        _SHARED_ONES.clear()
        made.clear_memos()
        compression.clear_caches()

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
            if len(self.compressed_rows) >= 64:
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
        if msg.role == "tool" and not msg.tool_calls and type(counter) in _TEXT_ONLY_COUNTERS:
            by_text = self.tool_text_counts.get(counter.name)
            if by_text is None:
                by_text = self.tool_text_counts[counter.name] = IdentityTable(_CACHE_LIMIT)
            text = msg.text
            n = by_text.get(text)
            if n is None:
                n = counter.count_message(msg)
                by_text.put(text, n)
            return n
        n = counter.count_message(msg)
        if len(table) >= _CACHE_LIMIT:
            table.clear()
        table[id(msg)] = (msg, n)
        return n

    def count_cleared(self, counter: TokenCounter, msg: Message) -> int:
        """count() for clearing's messages: a placeholder is counted once per text, not once per message."""
        if type(counter) in _TEXT_ONLY_COUNTERS and not msg.tool_calls:
            text = msg.text
            if len(text) <= _SHORT_TEXT:
                key = (counter.name, msg.role, text)
                n = self.short_counts.get(key)
                if n is None:
                    if len(self.short_counts) >= 4096:
                        self.short_counts.clear()
                    n = self.short_counts[key] = counter.count_message(msg)
                return n
        return self.count(counter, msg)

    def blanked(self, msg: Message, placeholder: str) -> Message:
        """`msg` with its content replaced by `placeholder` (clearing), the same object each time."""
        table = self.blanks.get(placeholder)
        if table is None:
            if len(self.blanks) >= 64:
                self.blanks.clear()
            table = self.blanks[placeholder] = IdentityTable(_CACHE_LIMIT)
        new = table.get(msg)
        if new is None:
            new = _with_content(msg, placeholder)
            table.put(msg, new)
        return new

    def embed_table(self, counter: TokenCounter) -> dict[int, tuple]:
        """embedded()'s table for a counter: {id(body): (body, texts, new, spans, tokens of new,
        reminder spans of new)}."""
        table = self.embeds.get(counter.name)
        if table is None:
            table = self.embeds[counter.name] = {}
        return table

    def embedded(self, counter: TokenCounter, body: Message, texts: Sequence[str]) -> tuple:
        """(body, texts, `body` with ephemeral `texts` appended, the spans of the appended pieces, its tokens,
        the reminder blocks in its text)."""
        table = self.embed_table(counter)
        hit = table.get(id(body))
        if hit is not None and hit[0] is body and hit[1] is texts:
            return hit
        base = body.text
        at = len(base) + 2  # where the first appended piece starts
        _, suffix, spans, found, stats = self.suffix(texts)
        new = _with_text(body, base + suffix)
        appended = _shifted(spans, at)
        if found is not None and "<system-reminder>" in base:
            own = self.reminder_spans(base)
            # (an opening tag after the base's last block could close in a piece: scan the whole)
            found = None if not own or "<system-reminder>" in base[own[-1][1]:] else own + _shifted(found, at)
        elif found:
            # one tuple for both when the pieces are whole reminder blocks (the common case)
            found = appended if found == spans else _shifted(found, at)
        if found is None:
            found = self.reminder_spans(new.text)
        if type(counter) is SwarmEstimate:  # length and code characters add up: only the base is scanned
            n, code = SwarmEstimate.text_stats(base)
            tokens = SwarmEstimate.count_stats(new.role, n + stats[0], code + stats[1])
        else:
            tokens = counter.count_message(new)
        if len(table) >= _CACHE_LIMIT:
            table.clear()
        hit = table[id(body)] = (body, texts, new, appended, tokens, found)
        return hit

    def suffix(self, texts: Sequence[str]) -> tuple:
        """What `texts` append to any message, once per texts tuple: (texts, the "\n\n"-joined suffix,
        the pieces' spans and their reminder blocks (None: a block could run across pieces), both
        relative to the first piece's start, the suffix's SwarmEstimate.text_stats)."""
        hit = self.suffixes.get(id(texts))
        if hit is not None and hit[0] is texts:
            return hit
        pieces = [piece if isinstance(piece, str) else ("" if piece is None else str(piece)) for piece in texts]
        spans, pos = [], 0
        for piece in pieces:
            spans.append((pos, pos + len(piece)))
            pos += len(piece) + 2
        suffix = "".join("\n\n" + piece for piece in pieces)
        if len(self.suffixes) >= _CACHE_LIMIT:
            self.suffixes.clear()
        hit = self.suffixes[id(texts)] = (texts, suffix, tuple(spans), _joined_spans(pieces, self.reminder_spans),
                                          SwarmEstimate.text_stats(suffix))
        return hit

    def reminder_spans(self, text: str) -> tuple:
        if "<system-reminder>" not in text:
            return ()
        hit = self.spans.get(id(text))
        if hit is not None and hit[0] is text:
            return hit[1]
        found = tuple(reminders.spans(text))
        if len(self.spans) >= _CACHE_LIMIT:
            self.spans.clear()
        self.spans[id(text)] = (text, found)
        return found

    def data(self, conversation: Conversation) -> _ConversationData:
        hit = self.per_conversation.get(id(conversation))
        if hit is not None and hit.conversation is conversation:
            return hit
        if len(self.per_conversation) > 64:
            self.per_conversation.clear()
        data = self.per_conversation[id(conversation)] = _ConversationData(conversation)
        return data

    def counts_of(self, data: _ConversationData, counter: TokenCounter) -> list[int]:
        """Tokens of each stored message, counted once per conversation and counter."""
        counts = data.counts.get(counter.name)
        if counts is None:
            count = counter.count_message
            counts = data.counts[counter.name] = [count(m) for m in data.conversation.messages]
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
            if len(data.totals) > 256:
                data.totals.clear()
            total = data.totals[key] = sum(self.counts_of(data, counter)[:n])
        return total

    def system_tokens(self, data: _ConversationData, counter: TokenCounter) -> int:
        prompt = data.conversation.system_prompt
        if not prompt:
            return 0
        key = (counter.name, -1)  # the system prompt's tokens, beside the totals
        tokens = data.totals.get(key)
        if tokens is None:
            tokens = data.totals[key] = counter.count_message(Message(role="system", content=prompt))
        return tokens

    def base_rows(self, data: _ConversationData, counter: TokenCounter) -> list[Row]:
        rows = data.base_rows.get(counter.name)
        if rows is None:
            counts = self.counts_of(data, counter)
            other = next(iter(data.base_rows.values()), None)  # another counter's: same names and spans
            rows = []
            if other is not None:
                for i, row in enumerate(other):
                    rows.append(_row(i, row.stored, row.stored, (), counts[i], counts[i], row.tool_name,
                                     row.stored_reminders, row.stored_reminders, ()))
            else:
                names = data.names
                find_spans = reminders.spans
                for i, msg in enumerate(data.conversation.messages):
                    text = msg.text
                    spans = tuple(find_spans(text)) if "<system-reminder>" in text else ()
                    tool = _tool_name(msg, names) if msg.role == "tool" else None
                    rows.append(_row(i, msg, msg, (), counts[i], counts[i], tool, spans, spans, ()))
            data.base_rows[counter.name] = rows
        return rows

    def stages(self, data: _ConversationData, counter: TokenCounter, policy: compression.CompressionPolicy | None,
               tag: int, n: int, keep_recent: int, embed: bool) -> tuple:
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
            eph_spans, eph_reminders = _embed_ephemeral(self, counter, data.valid_ephemeral(), n, current, counts,
                                                        specs, frozenset())
            done = (tuple(current), counts, specs, eph_spans, eph_reminders)
        elif policy is None:
            done = (msgs, self.counts_of(data, counter)[:n], _Specs(n, tag, msgs, msgs, ()), {}, {})
        else:
            current = compression.compress_tool_results(msgs, keep_recent, policy, shared_texts=data.shared_texts())
            cur_counts = self.counts_of(data, counter)[:n]
            tools = data.tool_indices
            changed = [i for i in tools[:bisect.bisect_left(tools, n - keep_recent)] if current[i] is not msgs[i]]
            # Another n or keep_recent under this policy left most results the same objects (a result
            # depends on its message and tier limit only): their tokens are that run's.
            ref_msgs, ref_counts = data.last_compressed.get((counter.name, tag), ((), []))
            m = len(ref_msgs)
            count_message = counter.count_message
            for i in changed:
                new = current[i]
                cur_counts[i] = ref_counts[i] if i < m and ref_msgs[i] is new else count_message(new)
            stage1 = tuple(current)
            done = (stage1, cur_counts, _Specs(n, tag, stage1, msgs, changed), {}, {})
            last = data.last_compressed
            last.pop((counter.name, tag), None)
            if len(last) >= _STAGES_KEPT:  # (it keeps its results alive: bounded like the stages)
                last.pop(next(iter(last)))
            last[(counter.name, tag)] = (done[0], cur_counts)
        if len(data.stages) >= _STAGES_KEPT:
            data.stages.pop(next(iter(data.stages)))
        data.stages[key] = done
        return done

    def units(self, data: _ConversationData, n: int) -> list[Sequence[int]]:
        found = data.units.get(n)
        if found is None:
            if len(data.units) > 8:
                data.units.clear()
            found = data.units[n] = unit_runs(data.conversation.messages[:n])
        return found


def _joined_spans(parts: list[str], spans_of: Callable[[str], tuple]) -> tuple | None:
    """reminders.spans("\n\n".join(parts)) from each part's spans (parts are mostly cached already: a
    message's text, a reminder), or None when a block could run from one part into the next (a part
    with an opening tag after its last block). Otherwise the blocks are the parts' own: the regex is
    non-greedy, and no tag can span the "\n\n" between parts."""
    out: list[tuple[int, int]] = []
    pos = 0
    for k, part in enumerate(parts):
        if k:
            pos += 2
        if "<system-reminder>" in part:
            found = spans_of(part)
            if not found or "<system-reminder>" in part[found[-1][1]:]:
                return None
            out.extend((start + pos, end + pos) for start, end in found)
        pos += len(part)
    return tuple(out)


def _shifted(spans: tuple, by: int) -> tuple:
    if len(spans) == 1:
        (start, end), = spans
        return ((start + by, end + by),)
    return tuple([(start + by, end + by) for start, end in spans])


def _tool_name(msg: Message, names: dict[str, str]) -> str | None:
    """A tool result's tool: its own field, its call's name, else detected from the text (cached by the
    compression module, which detects the same texts when it cuts them)."""
    name = msg.tool_name or (names.get(msg.tool_call_id) if msg.tool_call_id else None)
    return name if name is not None else compression.detect_tool_name_cached(msg.text)


def _with_text(msg: Message, text: str) -> Message:
    content = Content(text, msg.content.attachments) if isinstance(msg.content, Content) else text
    return _with_content(msg, content)


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
            done = _prepare_keep_recent_delta(conversation, settings, counter, cache, base[1], base[2])
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
    specs = _Specs(n, tag, msgs, msgs, ())
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
        eph_spans, eph_reminders = _embed_ephemeral(cache, counter, data.valid_ephemeral(), n, current, cur_counts,
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

    # Rows: each message's unchanged row; a changed one is made when first read (see _RowMaker).
    total_stored = system_tokens + cache.stored_total(data, counter, n)
    gone = removed_rows | dropped_rows
    base_rows = cache.base_rows(data, counter)
    items: list = base_rows[:n]
    maker = _RowMaker(cache, counter, policy, tag, n, msgs, current, cur_counts, stored_counts, specs,
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


def _embed_ephemeral(cache: PipelineCache, counter: TokenCounter, ephemeral: dict[int, Sequence[str]], n: int,
                     current: list[Message], counts: list[int], specs: _Specs,
                     removed: frozenset[int]) -> tuple[dict[int, tuple], dict[int, tuple]]:
    """Stage 4 in place: the reminders recorded for this request appended to the messages still
    sent among the first n (`ephemeral`: _ConversationData.valid_ephemeral()); returns the spans of
    the appended pieces and the reminder blocks of the new texts, by index."""
    eph_spans: dict[int, tuple] = {}
    eph_reminders: dict[int, tuple] = {}
    embeds = cache.embed_table(counter)
    for i, texts in ephemeral.items():
        if not (0 <= i < n) or i in removed:
            continue
        body = current[i]
        hit = embeds.get(id(body))  # cache.embedded inlined: most are known
        if hit is None or hit[0] is not body or hit[1] is not texts:
            hit = cache.embedded(counter, body, texts)
        current[i] = hit[2]
        eph_spans[i] = hit[3]
        tokens = hit[4]
        eph_reminders[i] = hit[5]
        specs.add(i, "ephemeral", len(texts), tokens - counts[i])
        counts[i] = tokens
    return eph_spans, eph_reminders


class _RowMaker:
    """Makes the changed rows of one view when they are first read (see view.Rows): the specs and
    the prepared messages and tokens a run left, and the row tables a made row is looked up in and
    remembered in, so that a row made once is the same object in every view that has it."""

    __slots__ = ("cache", "policy", "msgs", "current", "cur_counts", "stored_counts", "specs", "removed",
                 "removed_spec", "dropped", "budget", "eph_spans", "eph_reminders", "insert_at", "base",
                 "by_spec", "by_index", "cleared", "gone")

    def __init__(self, cache: PipelineCache, counter: TokenCounter, policy: compression.CompressionPolicy,
                 tag: int, n: int, msgs: Sequence[Message], current: list[Message], cur_counts: list[int],
                 stored_counts: list[int], specs: _Specs, removed: frozenset[int], removed_spec: tuple,
                 dropped: set[int], budget: int | None,
                 eph_spans: dict[int, tuple], eph_reminders: dict[int, tuple], clear: Any,
                 insert_at: int | None, base: list[Row]) -> None:
        self.base = base  # each message's unchanged row
        self.cache, self.policy = cache, policy
        self.msgs, self.current, self.cur_counts, self.stored_counts = msgs, current, cur_counts, stored_counts
        self.specs, self.eph_spans, self.eph_reminders = specs, eph_spans, eph_reminders
        # removed or dropped rows: their last spec is made with the row (tens of thousands may go)
        self.removed, self.removed_spec, self.dropped, self.budget = removed, removed_spec, dropped, budget
        self.insert_at = insert_at
        # the row tables (see _by_index, _cleared_by_index, _gone_by_index)
        self.by_spec = cache.row_table(counter)
        self.by_index = cache.compressed_row_table(counter, tag, n)
        self.cleared = cache.compressed_row_table(counter, tag, n, clear.keep) if clear is not None else None
        self.gone = cache.compressed_row_table(counter, tag, n, "gone") if removed or dropped else None

    def make(self, position: int) -> Row:
        i = position if self.insert_at is None or position < self.insert_at else position - 1
        key = self.specs.get(i)
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
        if prepared is None and _gone_by_index(key):
            # A removed or dropped message, maybe compressed before: kept by index, the guard
            # checks the changes (a hit's prepared is None too, so it cannot tell them apart).
            by_index, table = True, self.gone
            hit = table.get(i)  # type: ignore[union-attr]
            if (hit is not None and hit.stored is stored and len(hit.changes) == (2 if kind == "compressed" else 1)
                    and hit.changes[-1] is _shared_change(key[4 if kind == "compressed" else 1:])):
                return hit
        else:
            by_index = _by_index(key)
            table = self.by_index if by_index else self.by_spec
            if not by_index and self.cleared is not None and _cleared_by_index(key):
                by_index, table = True, self.cleared
            hit = table.get(i if by_index else key)  # type: ignore[union-attr]
            if hit is not None and hit.stored is stored and hit.prepared is prepared:
                return hit
        return _new_row(table, i if by_index else key, key, self.base[i], stored, prepared, self.policy, st, tp,
                        self.eph_spans.get(i, ()), self.cache.reminder_spans, self.eph_reminders.get(i))


def _new_row(row_cache: dict, cache_key: Any, key: tuple, base: Row, stored: Message, prepared: Message | None,
             policy: compression.CompressionPolicy, stored_tokens: int, prepared_tokens: int, eph: tuple,
             spans_of: Callable[[str], tuple], reminders: tuple | None = None) -> Row:
    """The row of a changed message (`base`: its unchanged row) with the changes of `key` ((index, *specs):
    see _changes), remembered in `row_cache` under `cache_key`. reminders: the reminder blocks of
    prepared.text when the caller knows them (an embedded message's)."""
    kind = key[1]
    if kind != "compressed" and len(key) == 1 + _SPEC_LENGTHS[kind]:
        changes = _shared_changes(key[1:])  # one tuple for every row with this one change
    else:
        changes = _changes(key, policy, stored_tokens, prepared_tokens, stored)
    if prepared is None:
        spans: tuple = ()
    elif prepared is stored:
        spans = base.stored_reminders
    else:
        spans = reminders if reminders is not None else spans_of(prepared.text)
    row = _row(base.index, stored, prepared, changes, stored_tokens, prepared_tokens, base.tool_name,
               base.stored_reminders, spans, eph if prepared is not None else ())
    if len(row_cache) >= _CACHE_LIMIT:
        row_cache.clear()
    row_cache[cache_key] = row
    return row


def _prepare_keep_recent_delta(
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
            _, _, cur, spans, after, _ = cache.embedded(counter, cur, texts)
            key += ("ephemeral", len(texts), after - tp)
            tp = after
        delta_tokens += tp
        prepared.append(cur)
        if len(key) == 1:
            rows.append(base_rows[i])
            continue
        by_index = _by_index(key)
        hit = compressed_rows.get(i) if by_index else row_cache.get(key)
        if hit is not None and hit.stored is stored and hit.prepared is cur:
            rows.append(hit)
            continue
        rows.append(_new_row(compressed_rows if by_index else row_cache, i if by_index else key,
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


def _by_index(key: tuple) -> bool:
    """Whether the row of `key` is kept by index in the compressed-rows table of (counter, policy
    tag, n): compressed, maybe then embedded. The table fixes the age and tag; the embedded message
    (one object per body and reminder tuple, so per piece count) and its tokens are fixed by the
    row's prepared message, which a hit must be."""
    return key[1] == "compressed" and (len(key) == 4 or (len(key) == 7 and key[4] == "ephemeral"))


def _cleared_by_index(key: tuple) -> bool:
    """Whether the row of `key` is kept by index in the table of (counter, policy tag, n, clear.keep):
    compressed then cleared (maybe then embedded), a tool result whose calls were not emptied. The
    table fixes age, tag and keep; the prepared message, which a hit must be, is the one blanked
    object of its compressed message (so fixes the tokens saved) or the one embedding of it."""
    return (key[1] == "compressed" and (len(key) == 9 or (len(key) == 12 and key[9] == "ephemeral"))
            and key[4] == "cleared" and key[6] is False and key[7] is True)


def _gone_by_index(key: tuple) -> bool:
    """Whether the row of `key` is kept by index in the table of (counter, policy tag, n, "gone"):
    removed, summarised or dropped, with at most a compression before. The table fixes the
    compression's age and tier; its figures then follow from the stored message (nothing is
    prepared), and the last spec is one shared Change, which a hit's last change must be."""
    p = 4 if key[1] == "compressed" else 1
    return len(key) > p and key[p] in ("removed", "summarised", "dropped") and len(key) == p + _SPEC_LENGTHS[key[p]]


# Length of each change spec (kind included): a row's specs are one flat tuple.
_NO_MESSAGE = Message("tool")  # _change reads the policy and message for compressed specs only
_SPEC_LENGTHS = {"compressed": 3, "cleared": 5, "ephemeral": 3, "excerpted": 4, "removed": 4, "summarised": 4,
                 "dropped": 3}


def _changes(key: tuple, policy: compression.CompressionPolicy, stored_tokens: int, prepared_tokens: int,
             stored: Message, start: int = 1) -> tuple[Change, ...]:
    """The Changes of a row key (index, *specs) from position `start` on, one per spec, in order."""
    out = []
    p, end = start, len(key)
    while p < end:
        kind = key[p]
        q = p + _SPEC_LENGTHS[kind]
        if kind == "compressed":
            out.append(_change(key[p:q], policy, stored_tokens, prepared_tokens, stored))
        else:
            out.append(_shared_change(key[p:q]))
        p = q
    return tuple(out)


_SHARED_CHANGES: dict[tuple, Change] = {}
_SHARED_ONES: dict[tuple, tuple[Change]] = {}


def _shared_change(spec: tuple) -> Change:
    """The Change of a spec of any kind but compressed: made of its spec alone, so one object per
    spec (tens of thousands of rows share a few specs: a removal, a budget drop, a placeholder)."""
    change = _SHARED_CHANGES.get(spec)
    if change is None:
        if len(_SHARED_CHANGES) >= 65536:
            _SHARED_CHANGES.clear()
            _SHARED_ONES.clear()  # (their changes must stay the shared ones: rows are checked by identity)
        change = _SHARED_CHANGES[spec] = _change(spec, DEFAULT_POLICY, 0, 0, _NO_MESSAGE)
    return change


def _shared_changes(spec: tuple) -> tuple[Change]:
    """(_shared_change(spec),), the same tuple for every row whose only change is this spec."""
    changes = _SHARED_ONES.get(spec)
    if changes is None:
        if len(_SHARED_ONES) >= 65536:
            _SHARED_ONES.clear()
        changes = _SHARED_ONES[spec] = (_shared_change(spec),)
    return changes


def _change(spec: tuple, policy: compression.CompressionPolicy, stored_tokens: int, prepared_tokens: int,
            stored: Message) -> Change:
    """The Change a spec tuple stands for (see changes.py)."""
    kind = spec[0]
    if kind == "compressed":  # spec[2]: the policy's tag, so rows of different tiers are cached apart
        return made.compressed(policy, spec[1], len(stored.text), stored_tokens - prepared_tokens)
    if kind == "cleared":
        _, saved, _inputs, is_result, keep = spec
        return made.cleared(saved, is_result, keep)
    if kind == "ephemeral":
        return made.ephemeral(spec[1], spec[2])
    if kind == "excerpted":
        return made.excerpted(spec[1], spec[2], spec[3])
    if kind in ("removed", "summarised"):
        return made.removed(*spec)
    if kind == "dropped":
        return made.dropped(spec[1], spec[2])
    raise AssertionError(f"unknown change {kind!r}")  # pragma: no cover
