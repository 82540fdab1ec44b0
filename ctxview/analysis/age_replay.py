"""The stepwise replay when a message as sent depends on its age alone: the tiers (or nothing),
maybe under a budget.

With no clearing and no rewrite of the harness's between requests, what is sent at position i
of a request that sends n messages depends only on the age n - i: the tier whose limit cuts it
(a budget then keeps a suffix of those messages, found as StepwiseReplay finds it). The limit
changes only where the age crosses a tier boundary. So each position is measured when it is
first sent and again at each boundary it crosses where its limit changes (`due`: the request
size at which that happens), and nothing else is looked at. A prompt that keeps what the one
before kept shares with it every message up to the first position that changed (else they are
compared message by message); its tokens and those of the shared part are sums over a Fenwick
tree of each position's tokens.

Nothing is built: under SwarmSDK's estimate a cut is measured from its text (_fast/cut_tokens.py),
once for each text, limit and tool; under other counters it is made and counted.
`prompt_cache.replay` takes this path where it applies (`by_age`). The replay equals the
request-by-request one (replay_naive) on every sample (tests/test_prompt_cache.py) and on
generated conversations (tests/test_age_replay.py).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Iterator, Sequence

from ctxview._fast.cut_tokens import CutTokens
from ctxview.analysis.fenwick import UNREAD, Fenwick
from ctxview.analysis.stepwise_replay import (PromptFields, StepwiseReplay, calls_before_results, request_times,
                                              shared_messages, unit_heads)
from ctxview.engine.compression import text_of
from ctxview.engine.context_manager import embed_ephemeral
from ctxview.engine.harness import SentHistory, history_as_sent
from ctxview.engine.tokens import SwarmEstimate
from ctxview.engine.tool_names import detect_tool_name
from ctxview.model import Message, request_indices
from ctxview.pipeline.sent_history import truncations

__all__ = ["by_age", "replay_by_age"]


def by_age(step: StepwiseReplay) -> bool:
    """Whether the replay's messages as sent depend on their age alone (this module's replay applies)."""
    return step.clear is None and not step.events


class _Positions:
    """Each position's tokens now, and what a budget reads of them (the attributes StepwiseReplay's
    _kept and _tokens read of an epoch)."""

    def __init__(self, budget: bool) -> None:
        self.toks: list[int] = []            # scaled, as the prompts give them
        self.tree = Fenwick()
        self.raw: list[int] = []             # as counted, as the budget measures them
        self.raw_tree = Fenwick() if budget else UNREAD
        self.heads: list[int] = []           # each unit's first position
        self.turns: list[int] = []           # positions of user turns (the kept part starts at one)
        self.lone_turns: list[int] = []      # those without tool calls


def replay_by_age(step: StepwiseReplay) -> Iterator[PromptFields]:
    """StepwiseReplay.run's prompts, for a replay where by_age(step)."""
    conv, cache, system, scale = step.conversation, step.cache, step.system, step.scale
    msgs = conv.messages
    sent = history_as_sent(conv, len(msgs), ()) if truncations(cache, conv) else SentHistory(0, msgs)
    start, base, plan, budget = sent.start, sent.messages, step.plan, step.budget is not None
    at = _Positions(budget)
    if budget:
        calls_before_results(base)   # (NotStepwise if a result comes before its call, or an id repeats)
        at.heads = unit_heads(base)
    whole = _whole_tokens(step, start, base)
    whole_toks = [round(raw * scale) for raw in whole]   # (stepwise_replay.scaled)
    cut = _Cuts(step, start, base)
    # the shortest text a tier cuts: a result no longer than that is never cut
    shortest = min((c for b in step.boundaries if (c := plan.limit(b + 1)) is not None), default=None) \
        if plan is not None else None
    limits: dict[int, int | None] = {}  # the limit now of each position a tier may cut (None: sent whole)
    lengths: dict[int, int] = {}        # and its text's length
    keep, table = step.keep, plan.limits if plan is not None else []
    toks, raws, tree, raw_tree = at.toks, at.raw, at.tree, at.raw_tree
    due: dict[int, list[int]] = defaultdict(list)  # request size -> positions whose age crosses a boundary there
    boundaries = step.boundaries
    total = n_prev = 0
    prev: tuple[int | None, int, int] = (None, 0, 0)   # the last prompt: (kept turn, cut, end)
    for r, time in zip(request_indices(msgs), request_times(cache, conv)):
        n, m = r, r - start
        # positions whose limit changed since the last prompt (budget: with the limit before)
        changed: dict[int, int | None] = {}
        first_change = prev[2]
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
                    if budget:
                        changed.setdefault(j, limits[j])
                    elif j < first_change:
                        first_change = j
                    limits[j] = new
                    raw = whole[j] if new is None else cut.raw(j, new)
                    t_new = whole_toks[j] if new is None else round(raw * scale)
                    tree.add(j, t_new - toks[j])
                    total += t_new - toks[j]
                    toks[j] = t_new
                    if budget:
                        raw_tree.add(j, raw - raws[j])
                        raws[j] = raw
        if shortest is None and not budget:   # (nothing is cut: each position's whole tokens, in bulk)
            added = whole_toks[prev[2]:m]
            toks.extend(added)
            tree.extend(added)
            total += sum(added)
        for j in range(prev[2], m) if shortest is not None or budget else ():
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
            total += t
            if budget:
                raws.append(raw)
                raw_tree.append(raw)
                if msg.role == "user":
                    _add_turn(at, j, cut.sent(j, None))
        if not budget:
            shared = min(first_change, prev[2])
            yield r, m, system + total, shared, system + (tree.prefix(shared) if shared else 0), system, time
            n_prev, prev = n, (None, 0, m)
            continue
        turn, kept = step._kept(at, m)
        blocks = (turn is not None) + m - kept
        if (turn, kept) == prev[:2]:
            # the same messages kept: shared up to the first one that changed
            first_change = min((j for j in changed if j >= kept), default=prev[2])
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


def _whole_tokens(step: StepwiseReplay, start: int, base: Sequence[Message]) -> list[int]:
    """Each position's tokens sent whole (the recorded reminders embedded), as counted."""
    stored, counts, ephemeral = step.stored, step.stored_counts, step.ephemeral
    out = list(counts[start:start + len(base)])
    for j, m in enumerate(base):
        i = start + j
        texts = ephemeral.get(i)
        if texts is not None:
            m = embed_ephemeral([m], {0: texts})[0]
        elif m is stored[i]:
            continue
        out[j] = step._count(m, i)
    return out


class _Cuts:
    """Each position as sent when cut to a limit, and its tokens as counted: measured from the text
    under SwarmSDK's estimate, else made and counted. A text that several results hold (a file
    read again, an output seen twice) is measured once for each limit and tool it is cut with."""

    def __init__(self, step: StepwiseReplay, start: int, base: Sequence[Message]) -> None:
        self.step, self.start, self.base = step, start, base
        self.measure = (CutTokens(step.policy, self._detect)
                        if step.plan is not None and type(step.counter) is SwarmEstimate else None)
        self.names: dict[int, str | None] = {}          # position -> the tool whose hint its cuts get
        self.detected: dict[str, str | None] = {}       # text -> the tool it names (a "content" policy)
        self.measured: dict[tuple, int] = {}            # (text, limit, tool) -> tokens

    def _detect(self, text: str) -> str | None:
        name = self.detected.get(text, _UNSEEN)
        if name is _UNSEEN:
            name = self.detected[text] = detect_tool_name(text)
        return name

    def sent(self, j: int, limit: int | None) -> Message:
        """Position j as sent when cut to `limit` (None: whole), the reminders recorded for it embedded."""
        step, i = self.step, self.start + j
        m = self.base[j] if limit is None else step._compressed(i, 0, self.base[j], limit)
        texts = step.ephemeral.get(i)
        return m if texts is None else embed_ephemeral([m], {0: texts})[0]

    def raw(self, j: int, limit: int) -> int:
        step, i, msg = self.step, self.start + j, self.base[j]
        if self.measure is None or i in step.ephemeral:
            return step._count(self.sent(j, limit), i)
        text = text_of(msg.content)
        name = self.names.get(j, _UNSEEN)
        if name is _UNSEEN:
            name = self.names[j] = self.measure.name(text, msg.tool_name or (
                step.names.get(msg.tool_call_id) if msg.tool_call_id else None))
        key = (text, limit, name)
        tokens = self.measured.get(key)
        if tokens is None:
            tokens = self.measured[key] = self.measure.tokens(text, limit, name)
        return tokens


_UNSEEN = object()
