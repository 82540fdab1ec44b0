"""The stepwise replay when a message as sent depends on its age alone: the tiers (or nothing),
maybe under a budget.

With no clearing and no rewrite of the harness's between requests, what is sent at position i
of a request that sends n messages depends only on the age n - i: the tier whose limit cuts it
(a budget then keeps a suffix of those messages, found as StepwiseReplay finds it). The limit
changes only where the age crosses a tier boundary.

- Without a budget (`_by_band`) a request's tokens are sums over bands of ages: each position's
  tokens whole, plus what going past each boundary changes them by, as running totals that do
  not change from request to request. Only the positions that went past a boundary since the
  prompt before are looked at, for where the two prompts part; where the limits only shrink with
  age, the first of them is read from a table by request size.
- Under a budget (`_under_budget`) each position is measured when it is first sent and again
  where its age crosses a boundary that changes its limit (`due`: the request size at which that
  happens), and a Fenwick tree of each position's tokens finds the kept suffix. A prompt that
  keeps what the one before kept shares with it every message up to the first position that
  changed; else they are compared message by message.

Nothing is built: under SwarmSDK's estimate a cut is measured from its text (_fast/cut_tokens.py),
once for each text, tool and set of limits; under other counters it is made and counted.
`prompt_cache.replay` takes this path where it applies (`by_age`). The replay equals the
request-by-request one (replay_naive) on every sample (tests/test_prompt_cache.py) and on
generated conversations (tests/test_age_replay.py).
"""

from __future__ import annotations

import bisect
import itertools
from collections import defaultdict
from typing import Callable, Iterator, Sequence

from ctxview.analysis.fenwick import Fenwick
from ctxview.analysis.stepwise_replay import (PromptFields, StepwiseReplay, checked_unit_heads, request_times,
                                              shared_messages)
from ctxview.engine.compression import text_of
from ctxview.engine.context_manager import embed_ephemeral
from ctxview.engine.harness import SentHistory, history_as_sent
from ctxview.engine.tokens import SwarmEstimate
from ctxview.model import Message
from ctxview.pipeline.sent_history import truncations

__all__ = ["by_age", "replay_by_age"]


def by_age(step: StepwiseReplay) -> bool:
    """Whether the replay's messages as sent depend on their age alone (this module's replay applies)."""
    return step.clear is None and not step.events


class _Positions:
    """Each position's tokens now, and what a budget reads of them (the attributes StepwiseReplay's
    _kept and _tokens read of an epoch)."""

    def __init__(self) -> None:
        self.toks: list[int] = []            # scaled, as the prompts give them
        self.tree = Fenwick()
        self.raw: list[int] = []             # as counted, as the budget measures them
        self.raw_tree = Fenwick()
        self.heads: list[int] = []           # each unit's first position
        self.turns: list[int] = []           # positions of user turns (the kept part starts at one)
        self.lone_turns: list[int] = []      # those without tool calls


def replay_by_age(step: StepwiseReplay) -> Iterator[PromptFields]:
    """StepwiseReplay.run's prompts, for a replay where by_age(step)."""
    conv, cache = step.conversation, step.cache
    msgs = conv.messages
    sent = history_as_sent(conv, len(msgs), ()) if truncations(cache, conv) else SentHistory(0, msgs)
    whole, toks = step._whole(sent.start, sent.messages)
    cut = _Cuts(step, sent.start, sent.messages)
    requests = zip(cache.data(conv).requests, request_times(cache, conv))
    if step.budget is None:
        return _by_band(step, sent.start, sent.messages, whole, toks, cut, requests)
    return _under_budget(step, sent.start, sent.messages, whole, toks, cut, requests)


def _by_band(step: StepwiseReplay, start: int, base: Sequence[Message], whole: list[int], toks: list[int],
             cut: _Cuts, requests: Iterator[tuple[int, float | None]]) -> Iterator[PromptFields]:
    """No budget: every message is sent, each as its age cuts it.

    The tier boundaries b[0] = keep_recent < b[1] < ... split the ages into bands, and within a
    band a position's limit, so its tokens, does not change. A request of m positions sends them
    whole, except that each position older than b[k] (those before m - b[k]) goes past boundary
    k: its tokens change by what crossing it changes them by (`past[k]`, 0 where the limit stays).
    A request's tokens, and those of any leading part of it, are so a running total of the
    positions' whole tokens plus one running total of each boundary's changes. What it shares with
    the prompt before ends at the first position that went past a boundary since where its limit
    changed."""
    system, scale = step.system, step.scale
    bounds = step.boundaries
    limits = _limits_past(step)
    requests = list(requests)
    oldest = requests[-1][0] - start if requests else 0   # the last request's size: no position gets older
    past = [[0] * len(base) for _ in bounds]
    # per boundary: the positions whose limit changes there (where the limits may grow with age)
    changes: list[list[int]] = [[] for _ in bounds]
    shortest = _shortest(limits)
    lengths: dict[int, int] = {}   # the text's length of each result a tier may cut

    # a position's limit only shrinks as it ages when each band's limit is at most the one before
    # (None, sent whole, being the largest)
    shrinking = all(a is None or (b is not None and b <= a) for a, b in zip([None, *limits], limits))

    # Where they only shrink, a position that goes past a boundary where its limit changes is sent
    # otherwise than before, whatever else it went past since: so the first position a request
    # changes is the least one whose crossing falls among the request sizes since the prompt before.
    # By request size: the least position whose limit changes when a request first reaches that size.
    first_change = [len(base)] * (oldest + 1) if shrinking and bounds else None

    def limit_at(j: int, age: int) -> int | None:
        k = bisect.bisect_left(bounds, age)   # (its band: past k boundaries)
        limit = limits[k - 1] if k else None
        return limit if limit is not None and lengths[j] > limit else None

    # what going past each boundary changes, by text, tool and whole tokens: the same for each
    # result that holds the same text (a file read again), where no reminder is embedded in it
    steps_of: dict[tuple, list[tuple[int, int]]] = {}
    for j in step._results(start, base) if shortest is not None else ():
        if (length := len(text := text_of(base[j].content))) <= shortest:
            continue
        lengths[j] = length
        reached = bisect.bisect_left(bounds, oldest - j)   # (the boundaries b < oldest - j: gone past at the end)
        key = (text, cut.given(j), toks[j]) if start + j not in step.ephemeral else None
        steps = steps_of.get(key) if key is not None else None
        if steps is None:
            steps = _steps(cut, j, [limit if limit is not None and length > limit else None for limit in limits],
                           toks[j], scale)
            if key is not None:
                steps_of[key] = steps
        for k, change in steps:
            if k >= reached:
                break
            past[k][j] = change
            if first_change is None:
                changes[k].append(j)
            elif j < first_change[size := j + bounds[k] + 1]:   # (past boundary k from this request size on)
                first_change[size] = j
    totals = list(itertools.accumulate(toks, initial=0))
    crossings = [(b, list(itertools.accumulate(p, initial=0))) for b, p in zip(bounds, past)]
    m_prev = 0
    for r, time in requests:
        m = r - start
        if first_change is not None:
            shared = min(m_prev, min(first_change[m_prev + 1:m + 1], default=m_prev))
        elif bounds:
            shared = _first_changed(changes, bounds, m_prev, m, limit_at)
        else:
            shared = m_prev   # (nothing is cut: each prompt sends the one before whole)
        tokens, shared_tokens = totals[m], totals[shared]
        for b, running in crossings:
            if m > b:
                tokens += running[m - b]
                shared_tokens += running[m - b if m - b < shared else shared]
        yield r, m, system + tokens, shared, system + shared_tokens if shared else system, system, time
        m_prev = m


def _first_changed(changes: list[list[int]], bounds: Sequence[int], m_prev: int, m: int,
                   limit_at: Callable[[int, int], int | None]) -> int:
    """The first position sent otherwise at m positions than at m_prev (m_prev where none is), where
    the limits may grow with age: of those that went past a boundary since where their limit
    changes (changes[k] for boundary k), one that went past several may be back at the limit it had."""
    shared = m_prev
    for k, b in enumerate(bounds):   # positions that went past boundary k since: [m_prev - b, m - b)
        lo, hi, listed = max(m_prev - b, 0), min(m - b, shared), changes[k]
        at = bisect.bisect_left(listed, lo) if lo < hi else len(listed)
        while at < len(listed) and listed[at] < hi:
            j = listed[at]
            if limit_at(j, m_prev - j) != limit_at(j, m - j):
                shared = j
                break
            at += 1
    return shared


def _limits_past(step: StepwiseReplay) -> list[int | None]:
    """The limit past each tier boundary (None: sent whole)."""
    return [step.plan.limit(b + 1) for b in step.boundaries]   # (no boundary without a plan)


def _shortest(limits: Sequence[int | None]) -> int | None:
    """The shortest text a tier cuts: a result no longer than that is never cut (None: none is)."""
    return min((limit for limit in limits if limit is not None), default=None)


def _steps(cut: _Cuts, j: int, limits: list[int | None], whole: int, scale: float) -> list[tuple[int, int]]:
    """(boundary k, what going past it changes position j's tokens by) for each boundary where the
    position's limit changes, given its limit past each one (None: sent whole) and its whole tokens."""
    out, was_limit, was = [], None, whole
    for k, (limit, raw) in enumerate(zip(limits, cut.raws(j, limits))):
        if limit != was_limit:
            now = whole if raw is None else round(raw * scale)
            out.append((k, now - was))
            was_limit, was = limit, now
    return out


def _under_budget(step: StepwiseReplay, start: int, base: Sequence[Message], whole: list[int],
                  whole_toks: list[int], cut: _Cuts,
                  requests: Iterator[tuple[int, float | None]]) -> Iterator[PromptFields]:
    """A budget keeps a suffix of the messages as their ages cut them: each position is measured
    when first sent and again where its age crosses a boundary that changes its limit, and a
    running total of each position's tokens finds the suffix."""
    system, scale, plan = step.system, step.scale, step.plan
    at = _Positions()
    # (NotStepwise if a result comes before its call, or an id repeats)
    at.heads = checked_unit_heads(step.cache, step.conversation, base)
    shortest = _shortest(_limits_past(step))
    limits: dict[int, int | None] = {}  # the limit now of each position a tier may cut (None: sent whole)
    lengths: dict[int, int] = {}        # and its text's length
    keep, table = step.keep, plan.limits if plan is not None else []
    toks, raws, tree, raw_tree = at.toks, at.raw, at.tree, at.raw_tree
    due: dict[int, list[int]] = defaultdict(list)  # request size -> positions whose age crosses a boundary there
    boundaries = step.boundaries
    n_prev = appended = 0
    if shortest is None:
        # nothing is cut: every position is known as it will be sent, so all are added at once (the
        # kept part and the sums read only the positions of the request at hand)
        toks.extend(whole_toks)
        tree.extend(whole_toks)
        raws.extend(whole)
        raw_tree.extend(whole)
        for j, msg in enumerate(base):
            if msg.role == "user":
                _add_turn(at, j, cut.sent(j, None))
        appended = len(base)
    prev: tuple[int | None, int, int] = (None, 0, 0)   # the last prompt: (kept turn, cut, end)
    for r, time in requests:
        n, m = r, r - start
        # positions whose limit changed since the last prompt, with the limit before
        changed: dict[int, int | None] = {}
        if due:
            for size in range(n_prev + 1, n + 1):
                for j in due.pop(size, ()):
                    # (StepwiseReplay._limit, inline: the position is a result longer than the shortest cut)
                    age = n - start - j
                    new = (table[age] if age < len(table) else plan.limit(age)) if age > keep else None
                    if new is not None and lengths[j] <= new:
                        new = None
                    if new == limits[j]:
                        continue
                    changed.setdefault(j, limits[j])
                    limits[j] = new
                    raw = whole[j] if new is None else cut.raw(j, new)
                    t_new = whole_toks[j] if new is None else round(raw * scale)
                    tree.add(j, t_new - toks[j])
                    toks[j] = t_new
                    raw_tree.add(j, raw - raws[j])
                    raws[j] = raw
        for j in range(appended, m):
            raw, t = whole[j], whole_toks[j]
            msg = base[j]
            if shortest is not None and msg.role == "tool" and (length := len(msg.text)) > shortest:
                i = start + j
                lengths[j] = length
                limit = limits[j] = step._limit(i, n, msg)
                if limit is not None:
                    raw = cut.raw(j, limit)
                    t = round(raw * scale)
                for b in boundaries:
                    if i + b + 1 > n:
                        due[i + b + 1].append(j)
            toks.append(t)
            tree.append(t)
            raws.append(raw)
            raw_tree.append(raw)
            if msg.role == "user":
                _add_turn(at, j, cut.sent(j, None))
        appended = max(appended, m)
        turn, kept = step._kept(at, m)
        blocks = (turn is not None) + m - kept
        if (turn, kept) == prev[:2]:
            # the same messages kept: shared up to the first one that changed
            first_change = min((j for j in changed if j >= kept), default=prev[2]) if changed else prev[2]
            shared = (turn is not None) + max(min(first_change, prev[2]) - kept, 0)
        else:
            shared = shared_messages(prev, (turn, kept, m), lambda p, q: p == q and p not in changed,
                                     lambda p: cut.sent(p, changed[p] if p in changed else limits.get(p)),
                                     lambda q: cut.sent(q, limits.get(q)))
        tokens = step._tokens(at, turn, kept, m)
        shared_tokens = step._tokens(at, turn, kept, kept + shared - (turn is not None)) if shared else 0
        yield r, blocks, system + tokens, shared, system + shared_tokens, system, time
        n_prev, prev = n, (turn, kept, m)


def _add_turn(at: _Positions, j: int, sent: Message) -> None:
    if sent.role == "user" and sent.text.strip():   # (budget._is_user_turn: a blank user message is no turn)
        at.turns.append(j)
        if not sent.tool_calls:
            at.lone_turns.append(j)


class _Cuts:
    """Each position as sent when cut to a limit, and its tokens as counted: measured from the text
    under SwarmSDK's estimate, else made and counted. A text that several results hold (a file
    read again, an output seen twice) is measured once for each tool and set of limits."""

    def __init__(self, step: StepwiseReplay, start: int, base: Sequence[Message]) -> None:
        self.step, self.start, self.base = step, start, base
        # (the pipeline cache's: the tools the texts name were detected by the bloat analysis)
        self.measure = (step.cache.memo.cut_tokens(step.policy)
                        if step.plan is not None and type(step.counter) is SwarmEstimate else None)
        self.measured: dict[tuple, list] = {}           # (text, tool given, limits) -> tokens at each

    def sent(self, j: int, limit: int | None) -> Message:
        """Position j as sent when cut to `limit` (None: whole), the reminders recorded for it embedded."""
        step, i = self.step, self.start + j
        m = self.base[j] if limit is None else step._compressed(i, 0, self.base[j], limit)
        texts = step.ephemeral.get(i)
        return m if texts is None else embed_ephemeral([m], {0: texts})[0]

    def given(self, j: int) -> str | None:
        """The tool the result at j or its call names, where a cut's hint follows it; None under a
        "content" policy (the hint follows the tool its text names, looked for when it is measured)."""
        policy = self.step.policy
        if policy is None or policy.tool_name_from == "content":
            return None
        msg = self.base[j]
        return msg.tool_name or (self.step.names.get(msg.tool_call_id) if msg.tool_call_id else None)

    def raw(self, j: int, limit: int) -> int:
        """The tokens of position j cut to `limit`, as counted."""
        return self.raws(j, (limit,))[0]

    def raws(self, j: int, limits: Sequence[int | None]) -> list[int | None]:
        """raw(j, limit) for each limit (None for None)."""
        step, i, msg = self.step, self.start + j, self.base[j]
        if self.measure is None or i in step.ephemeral:
            return [None if limit is None else step._count(self.sent(j, limit), i) for limit in limits]
        text = text_of(msg.content)
        given = self.given(j)
        key = (text, given, tuple(limits))
        tokens = self.measured.get(key)
        if tokens is None:
            tokens = self.measured[key] = self.measure.tokens_at(text, limits, self.measure.name(text, given))
        return tokens

