"""The bloat analysis's measures, fast: twins of the rules in engine/bloat_scan.py,
engine/tiers_saving.py and engine/clearing.py that give the same figures with less work.

- `scan_messages`: the scan in one pass without a table of the calls by id, for the usual shape
  (each result answers a call of the last message with calls before it); else the rule's scan.
- `tiers_saving`: under SwarmSDK's estimate a message's tokens follow from its text's length and
  code characters, and a cut text is three pieces (the kept head, the marker, maybe the hint) whose
  lengths and code characters add up: the cut is measured without making it.
- `clearing_saving`: under that estimate every cleared result has the same tokens, so nothing is
  made; with the results by text, the cleared ones are summed without a loop.

FAST bundles them, with the summary's twin (summary.py), for `analyze_context_bloat(measures=...)`; tests/test_fast_equals_plain.py holds
each equal to its rule.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from itertools import islice
from typing import Any, Callable, Mapping, Sequence

from ctxview._fast.cut_tokens import CutTokens
from ctxview._fast.memo import Memo
from ctxview._fast.summary import extractive_summary
from ctxview.engine import reminders
from ctxview.engine.bloat import Measures
from ctxview.engine.bloat_scan import Scan, scan_by_id
from ctxview.engine.clearing import clearing_saving as clearing_saving_rule
from ctxview.engine.clearing import tool_name_of
from ctxview.engine.compression import CompressionPolicy, compress_tool_results, tool_names_by_call_id
from ctxview.engine.grouping import units
from ctxview.engine.tiers_saving import result_text
from ctxview.engine.tiers_saving import tiers_saving as tiers_saving_rule
from ctxview.engine.tokens import SwarmEstimate, TokenCounter
from ctxview.model import Message
from ctxview.settings import ClearSettings
from ctxview.tiers import limits_by_age

__all__ = ["FAST", "clearing_saving", "scan_linear", "scan_messages", "tiers_saving"]

_UNSEEN = object()


def scan_messages(messages: Sequence[Message], per: Sequence[int]) -> Scan:
    """scan_by_id's scan: scan_linear's in the usual case, else the rule's."""
    found = scan_linear(messages, per)
    return found if found is not None else scan_by_id(messages, per)


def scan_linear(messages: Sequence[Message], per: Sequence[int]) -> Scan | None:
    """scan_by_id's scan in one pass, with no table of the calls by id, for the usual shape: each
    tool result answers a call of the last message with calls before it, and no call id is used
    twice. None when a result answers no call there (its call is elsewhere, or there is none) or a
    call id repeats: then scan_by_id. The units are found on the way (unit_runs': a result joins
    its call's unit; all of them runs when each result follows its call's message or another
    result of it)."""
    by_role: dict[str, int] = defaultdict(int)
    results = []
    answered = []
    reminded = []
    ids = []  # every call id, to see that none repeats
    heads = []  # the first message of each unit
    last_calls: Sequence[Any] = ()
    caller = -1  # the last message with calls
    previous = -1  # the first message of message i - 1's unit
    runs = True
    opening = reminders.OPEN
    for i, m in enumerate(messages):
        role = m.role
        by_role[role] += per[i]
        call = None
        if role == "tool":
            results.append(i)
            call_id = m.tool_call_id
            if call_id:
                for c in last_calls:
                    if c.id == call_id:
                        call = c
                if call is None:
                    return None
            answered.append(call)
        else:
            text = m.content
            if type(text) is not str:
                text = m.text
            if opening in text:
                reminded.append(text)
        if call is None:
            heads.append(i)
            previous = i
        elif previous != caller:
            runs = False  # joins a unit that another one interrupted (previous stays the caller's)
        if m.tool_calls:
            last_calls, caller = m.tool_calls, i
            for c in last_calls:
                if c.id:
                    ids.append(c.id)
    if len(set(ids)) != len(ids):
        return None
    if runs:
        heads.append(len(messages))
        found = list(map(range, heads, islice(heads, 1, None)))
    else:
        found = units(messages)  # (what unit_runs gives when the units are not all runs)
    return Scan(by_role, results, answered, reminded, found)


def _tier_limits(policy: CompressionPolicy) -> list[int | None] | None:
    """The policy's max_chars by age as a table whose last entry is the last tier's: an age of 0 or
    more has table[min(age, len(table) - 1)]. None for tiers going past age 4095 (no table that long)."""
    table, top = limits_by_age(policy)
    return None if top > 4095 else table + [policy.tiers[-1].max_chars]


def tiers_saving(messages: Sequence[Message], keep_recent: int, policy: CompressionPolicy, per: Sequence[int],
                 counter: TokenCounter, measure: Callable[[Message], int],
                 tool_indices: Sequence[int] | None = None,
                 by_text: Mapping[str, Sequence[int]] | None = None,
                 compress: Callable[..., list[Message]] = compress_tool_results,
                 memo: Memo | None = None) -> int:
    """engine.tiers_saving.tiers_saving, where `measure` counts as `counter` does. Under SwarmSDK's
    estimate a message's tokens follow from its text's length and code characters, and a cut text
    is three pieces (the kept head, the marker, maybe the hint) whose lengths and code characters
    add up: so the cut is measured without building it.
    `tool_indices`: the indices of the tool results in order, when the caller has them (the others
    are not looked at); or `by_text`: the tool results with a text, in order, by their text (the
    tally's same_text): a text repeated in several results is then looked at once for each tier
    limit it is cut to, not once for each result. `memo`: the pipeline cache's, whose measure of
    cuts remembers the tool each text names for the replays after."""
    limits = _tier_limits(policy)
    if type(counter) is not SwarmEstimate or limits is None:
        return tiers_saving_rule(messages, keep_recent, policy, per, counter, measure, compress=compress)
    n = len(messages)
    stop = min(n - keep_recent, n)
    if not policy.enabled or stop <= 0:
        return 0
    measure = CutTokens(policy) if memo is None else memo.cut_tokens(policy)
    by_content, detect = measure.by_content, measure.detect
    names: Mapping[str, str] | None = None
    oldest = len(limits) - 1
    if by_text is not None:
        groups = by_text.items()
    else:
        indices = range(stop) if tool_indices is None else tool_indices[:bisect.bisect_left(tool_indices, stop)]
        groups = ((result_text(messages[i]), (i,)) for i in indices if messages[i].role == "tool")
    saved = 0
    for text, results in groups:
        if type(text) is not str:
            text = str(text)
        length = len(text)
        name = _UNSEEN  # the tool whose hint is added (compression's _compress_into picks it so)
        # the last cut measured for this text: its limit, tool, and tokens
        cut_to, cut_name, tokens = None, _UNSEEN, 0
        for i in results:
            if i >= stop:
                break
            age = n - i
            limit = limits[age if age < oldest else oldest]
            if limit is None or length <= limit:
                continue
            if not by_content:
                msg = messages[i]
                name = msg.tool_name
                if name is None and msg.tool_call_id:
                    if names is None:
                        names = tool_names_by_call_id(messages)
                    name = names.get(msg.tool_call_id)
            elif name is _UNSEEN:
                name = detect(text)   # (remembered by text: a text in several results is looked at once)
            if limit != cut_to or name is not cut_name:
                cut_to, cut_name = limit, name
                tokens = measure.tokens(text, limit, name)
            saved += per[i] - tokens
    return saved


def clearing_saving(
    messages: Sequence[Message],
    settings: ClearSettings,
    counter: TokenCounter,
    counts: Sequence[int],
    measure: Callable[[Message], int],
    blank: Callable[[Message, str], Message] | None = None,
    results: Sequence[int] | None = None,
    by_text: Mapping[str, Sequence[int]] | None = None,
) -> tuple[int, int]:
    """(results cleared, tokens saved) of plan_clearing(messages, settings, counter, counts=counts,
    measure=measure, blank=blank), where `measure` counts as `counter` does. Under SwarmSDK's
    estimate every cleared result (a tool message holding the placeholder) has the same tokens,
    so nothing is built. `results`: the indices
    of the tool results, when the caller has them; with `by_text` too (the results with a text, in
    order, by their text: the bloat tally's same_text) and no tool excluded, the results cleared
    are the oldest ones less those holding the placeholder already, summed without a loop."""
    if (type(counter) is not SwarmEstimate or settings.clear_inputs or settings.api
            or settings.trigger_unit != "input_tokens"):
        return clearing_saving_rule(messages, settings, counter, counts, measure, blank)
    if settings.trigger and sum(counts) <= settings.trigger:
        return 0, 0
    names = {c.id: c.name for m in messages for c in m.tool_calls if c.id} if settings.exclude else {}
    if results is None:
        results = [i for i, m in enumerate(messages) if m.role == "tool"]
    placeholder, exclude = settings.placeholder, set(settings.exclude)
    oldest = results[: max(len(results) - max(settings.keep, 0), 0)]
    if by_text is not None and not exclude and placeholder and oldest:
        done = [i for i in by_text.get(placeholder, ()) if i <= oldest[-1]]  # cleared already
        cleared = len(oldest) - len(done)
        before = sum(map(counts.__getitem__, oldest)) - sum(map(counts.__getitem__, done))
    else:
        cleared = before = 0
        for i in oldest:
            msg = messages[i]
            text = msg.content
            if (text if type(text) is str else msg.text) == placeholder:
                continue  # cleared already
            if exclude and tool_name_of(msg, names) in exclude:
                continue
            cleared += 1
            before += counts[i]
    saved = before - cleared * counter.count_message(Message("tool", placeholder))
    if not cleared or saved < settings.min_saving:
        return 0, 0
    return cleared, saved



FAST = Measures(scan=scan_messages, tiers_saving=tiers_saving, clearing_saving=clearing_saving,
                summary=extractive_summary)
