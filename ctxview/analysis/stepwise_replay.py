"""Every request of a conversation as prepared, each stepped from the one before.

`prompt_cache.replay` needs, for every request, how many messages and tokens were sent and how
many of them the request shares with the one before. Preparing each request whole is n²
(`prompt_cache.replay_naive`, the oracle the tests hold this module to). Here each request is
derived from the previous one:

- tiers: between two requests a tool result changes only where its age crosses a tier boundary,
  so a request touches the results that just crossed one;
- clearing (keep, trigger, min_saving, exclude): the old results are a prefix of the results that
  only grows, and Fenwick trees of their savings and of the context's tokens decide the trigger
  and the minimum saving; a tool excluded by name is a result that never counts as clearable;
- the budget: what is kept is a suffix of the messages (no system message and every call next to
  its results: checked, else the replay falls back), found by a binary search over the tokens
  from each unit's start; then, as `budget.fit_to_budget` does, the kept part starts at a user turn.

A Fenwick tree (fenwick.py) of the tokens as sent gives every prompt's size and shared prefix. Clearing of call
arguments (clear_inputs) and summaries are not stepped: `prompt_cache.incremental` sends them
request by request. Where an assumption above does not hold (a call id used twice, a result before
its call, a system message or interleaved calls under a budget), `StepwiseReplay.run` raises
`NotStepwise` and the caller replays request by request.
"""

from __future__ import annotations

import bisect
import itertools
from functools import cached_property
from typing import Callable, Iterator, NamedTuple, Sequence

from ctxview.engine.clearing import tool_name_of
from ctxview._fast.compression import Plan, as_tool_result
from ctxview.engine.compression import text_of
from ctxview.engine.context_manager import embed_ephemeral
from ctxview.engine.context_tokens import TokenUnits
from ctxview.engine.grouping import unit_runs
from ctxview.engine.harness import SentHistory, history_as_sent
from ctxview.model import Conversation, Message
from ctxview.pipeline import PipelineCache
from ctxview.pipeline.cache import TEXT_ONLY_COUNTERS
from ctxview.pipeline.sent_history import events_for, truncations
from ctxview.settings import Settings
from ctxview.analysis.fenwick import UNREAD, Fenwick
from ctxview.analysis.usage import seconds, timestamp_of

__all__ = ["SCANNED_UNITS", "CallTable", "NotStepwise", "StepwiseReplay", "calls_before_results",
           "checked_unit_heads", "request_times", "scaled", "shared_messages", "unit_heads"]

# (request index, blocks, tokens, shared blocks, shared tokens, system tokens, time): a Prompt's fields
PromptFields = tuple[int, int, int, int, int, int, "float | None"]


def request_times(cache: PipelineCache, conversation: Conversation) -> list[float | None]:
    """seconds() of each request's recorded time, in request order: worked out once per conversation
    (every replay of a report reads them)."""
    data = cache.data(conversation)
    times = data.derived.get("request times")
    if times is None:
        msgs = conversation.messages
        times = data.derived["request times"] = [seconds(timestamp_of(msgs[r])) for r in data.requests]
    return times


SCANNED_UNITS = "scanned units"
"""The key in a conversation's derived table of (its stored messages, unit_runs of them) as the bloat
analysis's one-pass scan found them (_fast/bloat.scan_linear): it found them only where no call id
is used twice and each result answers a call before it, so calls_before_results would find nothing
wrong in them."""


def checked_unit_heads(cache: PipelineCache, conversation: Conversation, base: Sequence[Message]) -> list[int]:
    """unit_heads(base, calls_before_results(base)): from the units the bloat analysis's scan left where
    `base` is what it scanned."""
    kept = cache.data(conversation).derived.get(SCANNED_UNITS)
    if kept is not None and kept[0] is base:
        return unit_heads(base, runs=kept[1])
    return unit_heads(base, calls_before_results(base))


def scaled(tokens: int, scale: float) -> int:
    return round(tokens * scale)


class NotStepwise(Exception):
    """The conversation breaks an assumption of the stepwise replay (see the module docstring)."""


class CallTable(NamedTuple):
    """What calls_before_results finds of the calls and results of a history."""

    names: dict[str, str]   # tool name by call id
    owner: dict[str, int]   # position of the call, by call id (grouping.call_owner)
    results: list[int]      # positions of the tool results, in order


def calls_before_results(base: Sequence[Message]) -> CallTable:
    """The calls and results of `base`, checking that each id is used once and that every result
    comes after its call (then a result's call is in every window that holds the result)."""
    names: dict[str, str] = {}
    owner: dict[str, int] = {}
    results: list[int] = []
    early: set[str] = set()   # ids of results met before any call with their id
    for i, msg in enumerate(base):
        if msg.role == "tool":
            results.append(i)
            if msg.tool_call_id and msg.tool_call_id not in names:
                early.add(msg.tool_call_id)
        for call in msg.tool_calls:
            if call.id:
                if call.id in names:
                    raise NotStepwise(f"call id {call.id!r} used twice")
                if call.id in early:
                    raise NotStepwise("a tool result before its call")
                names[call.id] = call.name
                owner[call.id] = i
    return CallTable(names, owner, results)


def unit_heads(messages: Sequence[Message], calls: CallTable | None = None,
               runs: Sequence[Sequence[int]] | None = None) -> list[int]:
    """Each unit's first position, for the budget's stepping; NotStepwise where the units are not
    runs of positions or a system message is among them (the budget keeps it wherever it is).
    `calls`: calls_before_results(messages), when the caller has it; `runs`: unit_runs(messages)."""
    if any(m.role == "system" for m in messages):
        raise NotStepwise("a system message among the messages (the budget keeps it wherever it is)")
    if runs is None:
        runs = unit_runs(messages) if calls is None else unit_runs(messages, calls.owner, calls.results)
    if runs and not isinstance(runs[0], range):
        raise NotStepwise("a call whose results are interleaved with another unit")
    return [u[0] for u in runs]


def shared_messages(prev: tuple[int | None, int, int], now: tuple[int | None, int, int],
                    same: Callable[[int, int], bool], before: Callable[[int], Message],
                    after: Callable[[int], Message]) -> int:
    """How many leading messages the prompt `now` shares with `prev` (each a kept turn or None, and
    the positions [cut, end)), compared message by message as replay_naive does. same(p, q): known
    equal without looking (one position, unchanged since); before(p), after(q): the message sent at
    a position in the previous prompt, in this one."""
    p_turn, p_cut, p_end = prev
    turn, cut, end = now
    earlier = itertools.chain(() if p_turn is None else (p_turn,), range(p_cut, p_end))
    later = itertools.chain(() if turn is None else (turn,), range(cut, end))
    shared = 0
    for p, q in zip(earlier, later):
        if not same(p, q):
            a, b = before(p), after(q)
            if a is not b and a != b:
                break
        shared += 1
    return shared


def _is_user_turn(msg: Message) -> bool:
    # budget._is_user_turn: a blank user message is no turn
    return msg.role == "user" and bool(msg.text.strip())


class _Epoch:
    """One history as sent (between two of the harness's rewrites) and what each position of it
    holds now: the message cut by the tiers, its limit, whether clearing blanked it, its tokens."""

    def __init__(self, start: int, base: Sequence[Message], names: dict[str, str], clearing: bool,
                 budget: bool) -> None:
        self.start, self.base, self.names = start, base, names
        self.comp: list[Message] = []
        self.limits: list[int | None] = []
        self.counts: list[int] = []       # tokens before clearing (its trigger and saving read these)
        self.cleared: list[bool] = []
        self.raw: list[int] = []          # tokens as sent (the budget reads these)
        self.toks: list[int] = []         # the same, scaled (the prompts report these)
        self.tree = Fenwick()
        self.raw_tree = Fenwick() if budget else UNREAD
        self.saving = Fenwick() if clearing else UNREAD     # by position: what blanking a clearable result saves
        self.clearable = Fenwick() if clearing else UNREAD  # by position: 1 for a clearable result
        self.results: list[int] = []      # positions of tool results, in order
        self.turns: list[int] = []        # positions of user turns (budget: the kept part starts at one)
        self.lone_turns: list[int] = []   # those without tool calls (the one budget keeps before a reply)
        self.heads: list[int] = []        # each unit's first position (budget)
        self.total = 0                    # sum of counts
        self.active, self.old = False, 0  # clearing at the last request: on, and how many results were old


class StepwiseReplay:
    """`prompt_cache.replay` for the settings `prompt_cache.incremental` accepts; `run()` gives each
    request's Prompt fields."""

    def __init__(self, conversation: Conversation, settings: Settings, cache: PipelineCache, overhead: int,
                 scale: float) -> None:
        self.conversation, self.settings, self.cache, self.scale = conversation, settings, cache, scale
        # the budget, the trigger and the minimum saving are the model's tokens, as the prompts' are
        self.units = TokenUnits(overhead, scale)
        self.counter = counter = cache.counter(conversation, settings.counter)
        data = cache.data(conversation)
        self.system_raw = cache.system_tokens(data, counter)
        self.system = overhead + scaled(self.system_raw, scale)
        self.events = events_for(cache, conversation, settings, counter)
        policy = cache.policy(settings)
        self.policy = policy if settings.compression and policy.enabled else None
        # its own plan, used directly: the texts it cuts go with the replay (not kept per setting compared);
        # the tools the texts name are the cache's detections
        self.plan = Plan(policy, {}, cache.memo.names) if self.policy is not None else None
        self.keep = settings.keep_recent
        ages = {t.max_age for t in policy.tiers if t.max_age is not None} if self.policy is not None else set()
        self.boundaries = sorted(a for a in ages | {self.keep} if a >= self.keep) if self.policy is not None else []
        self.stored, self.stored_counts = conversation.messages, cache.counts_of(data, counter)
        self.ephemeral = data.valid_ephemeral() if settings.embed_ephemeral else {}
        self.clear = settings.clear
        # a result cleared, under a counter that reads only the role, the text and the calls: the
        # same tokens for every result without calls (the placeholder's)
        self.cleared_tokens = (counter.count_message(Message("tool", settings.clear.placeholder))
                               if settings.clear is not None and type(counter) in TEXT_ONLY_COUNTERS else None)
        self.exclude = set(settings.clear.exclude) if settings.clear is not None else set()
        self.budget = settings.budget
        # the budget's room for the messages, as counted (the budget is the model's tokens)
        self.room = max(self.units.counted(self.budget) - self.system_raw, 0) if self.budget is not None else 0
        self.lengths: dict[int, int] = {}

    @cached_property
    def names(self) -> dict[str, str]:
        """{call id: tool name} of the stored messages (the cache's, made when a cut's hint first
        asks for a result's tool: a "content" policy reads the text instead)."""
        return self.cache.data(self.conversation).names

    # -- one position
    def _limit(self, i: int, n: int, msg: Message) -> int | None:
        age = n - i
        if self.plan is None or age <= self.keep or msg.role != "tool":
            return None
        limit = self.plan.limit(age)
        if limit is None:
            return None
        length = self.lengths.get(id(msg))
        if length is None:
            length = self.lengths[id(msg)] = len(msg.text)
        return None if length <= limit else limit

    def _compressed(self, i: int, n: int, msg: Message, limit: int | None) -> Message:
        if limit is None:
            return msg
        name = msg.tool_name or (self.names.get(msg.tool_call_id) if msg.tool_call_id else None)
        # (not remembered by text: the replay cuts each result once for each limit it reaches)
        return as_tool_result(msg, self.plan.cut(text_of(msg.content), limit, name, shared=False))

    def _sent(self, e: _Epoch, j: int) -> Message:
        """Position j of epoch e as sent now: cut, maybe cleared, the recorded reminders embedded."""
        m = e.comp[j]
        if e.cleared[j]:
            m = self.cache.blanked(m, self.clear.placeholder)
        texts = self.ephemeral.get(e.start + j)
        return m if texts is None else embed_ephemeral([m], {0: texts})[0]

    def _count(self, m: Message, i: int) -> int:
        """Tokens of `m`, sent at stored index i: the stored count when it is the stored message."""
        return self.stored_counts[i] if m is self.stored[i] else self.cache.count(self.counter, m)

    def _results(self, start: int, base: Sequence[Message]) -> Sequence[int]:
        """The positions of the tool results, in order (the cache's list where `base` is the stored messages)."""
        if start == 0 and base is self.stored:
            return self.cache.data(self.conversation).tool_indices
        return [j for j, msg in enumerate(base) if msg.role == "tool"]

    def _counts(self, start: int, base: Sequence[Message]) -> Sequence[int]:
        """Each position's tokens as stored or as the harness rewrote it, before clearing and without
        the recorded reminders (what _measure counts first; the cache's list where `base` is stored)."""
        stored, counts = self.stored, self.stored_counts
        if start == 0 and base is stored:
            return counts
        count = self.counter.count_message
        return [counts[start + j] if m is stored[start + j] else count(m) for j, m in enumerate(base)]

    def _whole(self, start: int, base: Sequence[Message]) -> tuple[list[int], list[int]]:
        """Each position's tokens sent whole (the recorded reminders embedded): as counted, and
        scaled. Of the stored messages they are the same for every setting a report replays under
        one counter and scale: those are kept with the conversation (read, never changed)."""
        plain = start == 0 and base is self.stored
        key = ("whole tokens", self.counter.name, bool(self.ephemeral), self.scale)
        derived = self.cache.data(self.conversation).derived
        if plain and key in derived:
            return derived[key]
        raw = self._whole_counted(start, base)
        whole = raw, [round(t * self.scale) for t in raw]   # (scaled)
        if plain:
            derived[key] = whole
        return whole

    def _whole_counted(self, start: int, base: Sequence[Message]) -> list[int]:
        stored, ephemeral = self.stored, self.ephemeral
        out = list(self.stored_counts[start:start + len(base)])
        # (the stored messages themselves: only those with reminders differ from their stored count)
        todo = sorted(i for i in ephemeral if i < len(base)) if start == 0 and base is stored else range(len(base))
        for j in todo:
            i, m = start + j, base[j]
            texts = ephemeral.get(i)
            if texts is not None:
                m = embed_ephemeral([m], {0: texts})[0]
            elif m is stored[i]:
                continue
            out[j] = self._count(m, i)
        return out

    def _measure(self, e: _Epoch, j: int) -> tuple[int, int, int]:
        """(tokens before clearing, saving if cleared, clearable) of position j."""
        cache, counter, clear, m, i = self.cache, self.counter, self.clear, e.comp[j], e.start + j
        # the stored message, or a cut this replay just made: counted directly (kept in the cache's
        # tables, a replay's 150k cuts would only fill them)
        c = self.stored_counts[i] if m is self.stored[i] else counter.count_message(m)
        if (clear is None or m.role != "tool" or m.text == clear.placeholder
                or (self.exclude and tool_name_of(m, e.names) in self.exclude)):
            return c, 0, 0
        if self.cleared_tokens is not None and not m.tool_calls:
            return c, c - self.cleared_tokens, 1
        return c, c - cache.count_cleared(counter, cache.blanked(m, clear.placeholder)), 1

    def _update_sent(self, e: _Epoch, j: int, raw: int | None = None) -> None:  # (raw: its count, if known)
        if raw is None:
            i = e.start + j
            if (e.cleared[j] and self.cleared_tokens is not None and not e.comp[j].tool_calls
                    and i not in self.ephemeral):
                raw = self.cleared_tokens
            else:
                raw = self._count(self._sent(e, j), i)
        t = scaled(raw, self.scale)
        e.raw_tree.add(j, raw - e.raw[j])
        e.tree.add(j, t - e.toks[j])
        e.raw[j], e.toks[j] = raw, t

    def _append(self, e: _Epoch, i: int, n: int) -> None:
        j = i - e.start
        msg = e.base[j]
        limit = self._limit(i, n, msg) if self.plan is not None else None
        e.limits.append(limit)
        e.comp.append(msg if limit is None else self._compressed(i, n, msg, limit))
        e.cleared.append(False)
        c, s, k = self._measure(e, j)
        e.counts.append(c)
        e.total += c
        e.saving.append(s)
        e.clearable.append(k)
        if i in self.ephemeral:
            sent = self._sent(e, j)
            raw = self.cache.count(self.counter, sent)
        else:  # (not cleared yet: sent as cut, and counted already)
            sent, raw = e.comp[j], c
        e.raw.append(raw)
        e.raw_tree.append(raw)
        t = scaled(raw, self.scale)
        e.toks.append(t)
        e.tree.append(t)
        if msg.role == "tool":
            e.results.append(j)
        if self.budget is not None and _is_user_turn(sent):
            e.turns.append(j)
            if not sent.tool_calls:
                e.lone_turns.append(j)

    def _epoch(self, applied: int) -> _Epoch:
        conv = self.conversation
        if applied == 0 and not truncations(self.cache, conv):  # (the pipeline looked once for what is rewritten)
            sent = SentHistory(0, conv.messages)   # history_as_sent's answer when nothing is
        else:
            sent = history_as_sent(conv, len(conv.messages), self.events[:applied])
        calls = calls_before_results(sent.messages) if (self.exclude or self.budget is not None) else None
        e = _Epoch(sent.start, sent.messages, calls.names if calls else {}, self.clear is not None,
                   self.budget is not None)
        if self.budget is not None:
            e.heads = unit_heads(sent.messages, calls)
        return e

    # -- between two requests
    def _age(self, e: _Epoch, n_prev: int, n: int, changed: dict[int, Message | None]) -> None:
        """Re-cut the results whose age went past a tier boundary since the last request; each
        position whose message as sent changed goes into `changed`, with what it was (budget)."""
        for b in self.boundaries:
            for i in range(max(e.start, n_prev - b), min(n - b, n_prev)):
                j = i - e.start
                new = self._limit(i, n, e.base[j])
                if new == e.limits[j]:
                    continue
                was = self._sent(e, j) if self.budget is not None else None
                e.limits[j] = new
                e.comp[j] = self._compressed(i, n, e.base[j], new)
                c, s, k = self._measure(e, j)
                e.total += c - e.counts[j]
                e.counts[j] = c
                e.saving.add(j, s - e.saving.at(j))
                e.clearable.add(j, k - e.clearable.at(j))
                if not e.cleared[j] or not k:
                    e.cleared[j] = False
                    self._update_sent(e, j, c if e.start + j not in self.ephemeral else None)  # (sent as cut)
                    changed.setdefault(j, was)

    def _apply_clearing(self, e: _Epoch, changed: dict[int, Message | None]) -> None:
        """clearing.plan_clearing: all but the `keep` newest results, once over the trigger, if that
        saves enough; the positions it changes go into `changed`, as in _age."""
        clear = self.clear
        now_old = max(len(e.results) - clear.keep, 0)
        bound = e.results[now_old - 1] + 1 if now_old else 0
        units = self.units
        now_active = ((not clear.trigger or units.part(e.total) > clear.trigger) and e.clearable.prefix(bound) > 0
                      and units.part(e.saving.prefix(bound)) >= clear.min_saving)
        if now_active and e.active:
            todo, first = e.results[e.old:now_old], e.old
        elif now_active != e.active:
            todo, first = e.results[:max(e.old, now_old)], 0
        else:
            todo, first = [], 0
        for k, j in enumerate(todo, first):
            want = now_active and k < now_old and e.clearable.at(j) == 1
            if want != e.cleared[j]:
                was = self._sent(e, j) if self.budget is not None else None
                e.cleared[j] = want
                self._update_sent(e, j)
                changed.setdefault(j, was)
        e.active, e.old = now_active, now_old

    def _kept(self, e: _Epoch, m: int) -> tuple[int | None, int]:
        """budget.fit_to_budget on positions [0, m): (the user turn kept before the rest, or None;
        the first position of the kept suffix)."""
        total = e.raw_tree.prefix(m)
        room = self.room
        if total <= room:
            return None, 0
        heads = e.heads
        units = bisect.bisect_left(heads, m)            # the units of the window
        recent_from = m - max(self.keep, 0)
        # droppable: the units wholly before recent_from (the window's last unit ends at m)
        droppable = units if recent_from >= m else max(bisect.bisect_right(heads, recent_from) - 1, 0)
        droppable = min(droppable, units)
        # (unit k starts at heads[k]; "unit" `units`, past the window, at m)
        # the fewest units dropped whose tokens reach total - room, else all droppable: the sums
        # only grow, so the first unit that starts where they have reached it
        lo = min(bisect.bisect_left(heads, e.raw_tree.reaching(total - room), 0, units), droppable)
        if lo == 0:
            return None, 0
        cut = heads[lo] if lo < units else m
        # budget._user_first: drop on to the next user turn; at a protected unit that is no user
        # turn, keep the user turn nearest before it
        t = bisect.bisect_left(e.turns, cut)
        turn = e.turns[t] if t < len(e.turns) else None
        protected_from = heads[droppable] if droppable < units else m
        if turn is not None and turn < protected_from:
            return None, turn
        if droppable == units:
            return None, m
        if turn == protected_from:
            return None, protected_from
        k = bisect.bisect_left(e.lone_turns, protected_from)
        return (e.lone_turns[k - 1] if k else None), protected_from

    def run(self) -> Iterator[PromptFields]:
        epoch, e = -1, None
        prev: tuple[int | None, int, int] = (None, 0, 0)   # the last prompt: (kept turn, cut, end)
        n_prev = 0
        conv, cache = self.conversation, self.cache
        for r, time in zip(cache.data(conv).requests, request_times(cache, conv)):
            n = r
            applied = sum(1 for ev in self.events if ev.index <= n)
            changed: dict[int, Message | None] = {}   # positions whose message as sent changed
            old = None
            if applied != epoch:   # a rewrite of the harness's: a new history from here on
                old, e, epoch = e, self._epoch(applied), applied
                first = e.start
            else:
                first = n_prev
                self._age(e, n_prev, n, changed)
            for i in range(first, n):
                self._append(e, i, n)
            if self.clear is not None:
                self._apply_clearing(e, changed)
            m = n - e.start
            turn, cut = (None, 0) if self.budget is None else self._kept(e, m)
            blocks = (turn is not None) + m - cut
            if old is None and (turn, cut) == prev[:2]:
                # the same messages kept: shared up to the first one that changed
                first_change = min((j for j in changed if j >= cut), default=prev[2])
                shared = (turn is not None) + max(min(first_change, prev[2]) - cut, 0)
            else:
                shared = self._shared(old or e, prev, e, turn, cut, m, changed)
            tokens = self._tokens(e, turn, cut, m)
            shared_tokens = self._tokens(e, turn, cut, cut + shared - (turn is not None)) if shared else 0
            yield r, blocks, self.system + tokens, shared, self.system + shared_tokens, self.system, time
            prev, n_prev = (turn, cut, m), n

    def _tokens(self, e: _Epoch, turn: int | None, cut: int, end: int) -> int:
        """Scaled tokens of the kept turn (if any) and positions [cut, end)."""
        return (e.toks[turn] if turn is not None else 0) + e.tree.prefix(end) - e.tree.prefix(cut)

    def _shared(self, old: _Epoch, prev: tuple[int | None, int, int], e: _Epoch, turn: int | None, cut: int,
                end: int, changed: dict[int, Message | None]) -> int:
        """shared_messages with the previous prompt (`old`: its epoch, `e` itself when no rewrite came
        between; `changed`: positions changed since, with what they were)."""
        def before(p: int) -> Message:
            was = changed.get(p) if old is e else None
            return was if was is not None else self._sent(old, p)

        return shared_messages(prev, (turn, cut, end), lambda p, q: old is e and p == q and p not in changed,
                               before, lambda q: self._sent(e, q))
