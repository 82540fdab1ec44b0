"""The stepwise replay of clearing when a result's fate depends on its rank alone: clearing with
no tiers, no budget and no rewrite of the harness's between requests.

Then every message is sent as it is stored, except that clearing blanks the clearable results
older than the `keep` newest once it is on. A request of m positions holds R results; the old
ones are those before the (R - keep)-th, all before a position `bound`. Clearing is on where the
context (before clearing) is over the trigger and blanking the old clearable results saves at
least the minimum; each of those is a running total over positions that does not change from
request to request (a message's count, what blanking it saves, whether it may be blanked). So
is a prompt's size: every position's tokens as sent whole, less what blanking saved before
`bound` while clearing is on. Between two prompts only the clearable results between the two
bounds change (all before a bound, where clearing went on or off), so the first of them is where
the prompts part.

`prompt_cache.replay` takes this path where it applies (`by_rank`). The replay equals the
request-by-request one (replay_naive) on every sample (tests/test_prompt_cache.py) and on
generated conversations (tests/test_rank_replay.py).
"""

from __future__ import annotations

import bisect
import itertools
from typing import Iterator

from ctxview.analysis.stepwise_replay import (PromptFields, StepwiseReplay, calls_before_results, request_times,
                                              _Epoch)
from ctxview.engine.harness import SentHistory, history_as_sent
from ctxview.pipeline.sent_history import truncations

__all__ = ["by_rank", "replay_by_rank"]


def by_rank(step: StepwiseReplay) -> bool:
    """Whether the replay's clearing depends on each result's rank alone (this module's replay applies)."""
    return step.clear is not None and not step.events and step.plan is None and step.budget is None


def replay_by_rank(step: StepwiseReplay) -> Iterator[PromptFields]:
    """StepwiseReplay.run's prompts, for a replay where by_rank(step)."""
    conv, cache, clear, units, system, scale = (step.conversation, step.cache, step.clear, step.units,
                                                 step.system, step.scale)
    msgs = conv.messages
    sent = history_as_sent(conv, len(msgs), ()) if truncations(cache, conv) else SentHistory(0, msgs)
    start, base = sent.start, sent.messages
    names = calls_before_results(base).names if step.exclude else {}
    e = _Epoch(start, base, names, True, False)   # (what StepwiseReplay's own measures read of a position)
    e.comp = list(base)
    e.cleared = [False] * len(base)
    counts = step._counts(start, base)
    whole = step._whole(start, base)[1]   # (scaled)
    # what blanking each position saves, whether it may be blanked, and what that saves as sent:
    # nothing but for a tool result (StepwiseReplay._measure)
    savings, clearable, saved = [0] * len(base), [0] * len(base), [0] * len(base)
    results = step._results(start, base)
    # (a result without calls, not spared by name, no placeholder already and without reminders, under
    # a counter that reads only the text: blanked, it is the placeholder's tokens, as _measure and
    # _count find; most results are such, and are so not measured one by one)
    plain_blank = step.cleared_tokens is not None and not step.exclude
    placeholder, cleared_raw = clear.placeholder, step.cleared_tokens
    for j in results:
        msg = base[j]
        if plain_blank and not msg.tool_calls and start + j not in step.ephemeral and msg.text != placeholder:
            savings[j], clearable[j], saved[j] = counts[j] - cleared_raw, 1, whole[j] - round(cleared_raw * scale)
            continue
        _, s, k = step._measure(e, j)
        if not k:
            continue
        i = start + j
        savings[j], clearable[j] = s, k
        e.cleared[j] = True
        if step.cleared_tokens is not None and not base[j].tool_calls and i not in step.ephemeral:
            raw = step.cleared_tokens
        else:
            raw = step._count(step._sent(e, j), i)
        e.cleared[j] = False
        saved[j] = whole[j] - round(raw * scale)
    blankable = [j for j in results if clearable[j]]   # the positions clearing may blank, in order
    count_sum, saving_sum, clearable_sum, sent_sum, saved_sum = (
        list(itertools.accumulate(v, initial=0)) for v in (counts, savings, clearable, whole, saved))
    was_on, was_bound, m_prev = False, 0, 0
    for r, time in zip(cache.data(conv).requests, request_times(cache, conv)):
        m = r - start
        old = max(bisect.bisect_left(results, m) - clear.keep, 0)
        bound = results[old - 1] + 1 if old else 0
        on = ((not clear.trigger or units.part(count_sum[m]) > clear.trigger) and clearable_sum[bound] > 0
              and units.part(saving_sum[bound]) >= clear.min_saving)
        # the results blanked now and not before, or before and not now: those before one bound and not the other
        lo, hi = (was_bound, bound) if on and was_on else (0, max(bound if on else 0, was_bound if was_on else 0))
        at = bisect.bisect_left(blankable, lo)
        shared = min(blankable[at], m_prev) if at < len(blankable) and blankable[at] < hi else m_prev
        tokens = sent_sum[m] - (saved_sum[bound] if on else 0)
        shared_tokens = sent_sum[shared] - (saved_sum[min(bound, shared)] if on else 0)
        yield r, m, system + tokens, shared, system + shared_tokens if shared else system, system, time
        was_on, was_bound, m_prev = on, bound, m
