"""The stepwise replay when a message as sent depends on its age alone: the tiers, or nothing.

With no clearing, no budget and no rewrite of the harness's between requests, what is sent at
position i of a request that sends n messages depends only on the age n - i: the tier whose
limit cuts it. The limit changes only where the age crosses a tier boundary. So each position is
measured when it is first sent and again at each boundary it crosses where its limit changes
(`due`: the request size at which that happens), and nothing else is looked at. A prompt shares
with the one before every message up to the first position that changed; its tokens and those
of the shared part are sums over a Fenwick tree of each position's tokens.

Nothing is built: under SwarmSDK's estimate a cut is measured from its text (_fast/cut_tokens.py);
under other counters it is made and counted. `prompt_cache.replay` takes this path where
it applies (`by_age`); tests/test_prompt_cache.py holds the replay equal to the request-by-request
one (replay_naive) on every sample and on generated conversations.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Iterator, Sequence

from ctxview._fast.cut_tokens import CutTokens
from ctxview.analysis.fenwick import Fenwick
from ctxview.analysis.stepwise_replay import PromptFields, StepwiseReplay, request_times
from ctxview.engine.compression import text_of
from ctxview.engine.context_manager import embed_ephemeral
from ctxview.engine.harness import SentHistory, history_as_sent
from ctxview.engine.tokens import SwarmEstimate
from ctxview.model import Message, request_indices
from ctxview.pipeline.sent_history import truncations

__all__ = ["by_age", "replay_by_age"]


def by_age(step: StepwiseReplay) -> bool:
    """Whether the replay's messages as sent depend on their age alone (this module's replay applies)."""
    return step.clear is None and step.budget is None and not step.events


def replay_by_age(step: StepwiseReplay) -> Iterator[PromptFields]:
    """StepwiseReplay.run's prompts, for a replay where by_age(step)."""
    conv, cache, system = step.conversation, step.cache, step.system
    msgs = conv.messages
    sent = history_as_sent(conv, len(msgs), ()) if truncations(cache, conv) else SentHistory(0, msgs)
    start, base, plan = sent.start, sent.messages, step.plan
    whole = _whole_tokens(step, start, base)
    cut = _Cuts(step, start, base)
    # the shortest text a tier cuts: a result no longer than that is never cut
    shortest = min((c for b in step.boundaries if (c := plan.limit(b + 1)) is not None), default=None) \
        if plan is not None else None
    limits: dict[int, int | None] = {}  # the limit now of each position a tier may cut (None: sent whole)
    toks: list[int] = []                # each position's tokens now, scaled
    tree = Fenwick()
    due: dict[int, list[int]] = defaultdict(list)  # request size -> positions whose age crosses a boundary there
    boundaries = step.boundaries
    total = n_prev = prev_m = 0
    for r, time in zip(request_indices(msgs), request_times(cache, conv)):
        n, m = r, r - start
        first_change = prev_m
        if due:
            for t in range(n_prev + 1, n + 1):
                for j in due.pop(t, ()):
                    new = step._limit(start + j, n, base[j])
                    if new == limits[j]:
                        continue
                    limits[j] = new
                    t_new = whole[j] if new is None else cut.tokens(j, new)
                    tree.add(j, t_new - toks[j])
                    total += t_new - toks[j]
                    toks[j] = t_new
                    if j < first_change:
                        first_change = j
        for j in range(prev_m, m):
            t = whole[j]
            if shortest is not None:
                msg = base[j]
                if msg.role == "tool" and len(msg.text) > shortest:
                    i = start + j
                    limit = limits[j] = step._limit(i, n, msg)
                    if limit is not None:
                        t = cut.tokens(j, limit)
                    for b in boundaries:
                        if i + b + 1 > n:
                            due[i + b + 1].append(j)
            toks.append(t)
            tree.append(t)
            total += t
        shared = max(min(first_change, prev_m), 0)
        yield r, m, system + total, shared, system + (tree.prefix(shared) if shared else 0), system, time
        n_prev, prev_m = n, m


def _whole_tokens(step: StepwiseReplay, start: int, base: Sequence[Message]) -> list[int]:
    """Each position's tokens sent whole (the recorded reminders embedded), scaled."""
    scale, stored, counts, ephemeral = step.scale, step.stored, step.stored_counts, step.ephemeral
    out = [round(c * scale) for c in counts[start:start + len(base)]]   # (stepwise_replay.scaled)
    for j, m in enumerate(base):
        i = start + j
        texts = ephemeral.get(i)
        if texts is not None:
            m = embed_ephemeral([m], {0: texts})[0]
        elif m is stored[i]:
            continue
        out[j] = round(step._count(m, i) * scale)
    return out


class _Cuts:
    """The tokens of a position cut to a limit, scaled: measured from the text under SwarmSDK's
    estimate (the name of the tool whose hint is added found once per position), else made and counted."""

    def __init__(self, step: StepwiseReplay, start: int, base: Sequence[Message]) -> None:
        self.step, self.start, self.base = step, start, base
        self.measure = (CutTokens(step.policy, step.cache.memo.names.detect)
                        if step.plan is not None and type(step.counter) is SwarmEstimate else None)
        self.names: dict[int, str | None] = {}

    def tokens(self, j: int, limit: int) -> int:
        step, i, msg = self.step, self.start + j, self.base[j]
        texts = step.ephemeral.get(i)
        if self.measure is None or texts is not None:
            m = step._compressed(i, 0, msg, limit)
            if texts is not None:
                m = embed_ephemeral([m], {0: texts})[0]
            return round(step._count(m, i) * step.scale)
        text = text_of(msg.content)
        name = self.names.get(j, _UNSEEN)
        if name is _UNSEEN:
            name = self.names[j] = self.measure.name(text, msg.tool_name or (
                step.names.get(msg.tool_call_id) if msg.tool_call_id else None))
        return round(self.measure.tokens(text, limit, name) * step.scale)


_UNSEEN = object()
