"""compress_tool_results and its kin, with the same results as the rule (engine.compression), faster.

What makes it fast: a plan per policy and memo tables of what each message and each text was cut
into, kept between calls in a `Memo` (memo.py; a PipelineCache's own, so that a keep_recent step
redoes only the results that changed tier), the tool-name detections remembered per text, a loop
with all of that inlined for the default policy (which names tools by their text), and stores
handed to the tables in bulk after the run. tests/test_fast_equals_plain.py holds every function here equal to its rule.
"""

from __future__ import annotations

from itertools import compress, count
from typing import Any, Container, Iterable, Mapping, Sequence

from ctxview._fast.tool_names import UNNAMED as _UNNAMED
from ctxview._fast.memo import CACHE_LIMIT, Memo, Plan, table_for
from ctxview._slots import slot_builder
from ctxview.engine.compression import text_of as _text_of
from ctxview.engine.tool_names import detect_tool_name, tool_names_by_call_id
from ctxview.gcpause import paused_gc
from ctxview.identity_table import IdentityTable
from ctxview.model import Message
from ctxview.spliced import Spliced
from ctxview.tiers import DEFAULT_POLICY, CompressionPolicy

__all__ = ["MEMO", "Memo", "Plan", "as_tool_result", "clear_caches", "compress_tool_message", "compress_tool_results",
           "compress_tool_results_between", "plan_for", "shared_text_ids"]

# Message(role="tool", content=...) with every other field of `src`.
as_tool_result = slot_builder(Message, "_as_tool_result",
                               {f: ('"tool"' if f == "role" else f"src.{f}") for f in Message.__slots__
                                if f != "content"}, ("src",))


MEMO = Memo()


def plan_for(policy: CompressionPolicy, memo: Memo = MEMO) -> Plan:
    return memo.plan_for(policy)


def clear_caches() -> None:
    """Forget every cached result of MEMO, its tool-name detections too (they are bounded; this frees
    memory at once)."""
    MEMO.clear()


def compress_tool_message(
    message: Message,
    age: int,
    policy: CompressionPolicy = DEFAULT_POLICY,
    tool_name: str | None = None,
) -> Message:
    """One tool message compressed for its age (the original's compress_tool_message).

    The result's role is "tool" and its content a plain string, as the
    original rebuilds it; every other field is kept.
    tool_name: with a "tool_call" policy, the linked call's name (message.tool_name wins).
    """
    if not policy.enabled:
        return message
    plan = plan_for(policy)
    limit = plan.limit(age)
    if limit is None:
        return message
    text = _text_of(message.content)
    if len(text) <= limit:
        return message
    return as_tool_result(message, plan.cut(text, limit, message.tool_name or tool_name))


def compress_tool_results(
    messages: Sequence[Message],
    keep_recent: int = 10,
    policy: CompressionPolicy = DEFAULT_POLICY,
    *,
    shared_texts: Container[int] | None = None,
    memo: Memo = MEMO,
) -> list[Message]:
    """A new list with old tool results compressed by age (the original's compress_tool_results).

    The last `keep_recent` messages and every non-tool message are returned as
    they are; a tool result at index i has age len(messages) - i.
    shared_texts: when the caller has it, shared_text_ids() of these messages (or of a sequence
    they start): a text outside it is cut without the by-text table (one lookup and two
    stores less per result; its message's result is still remembered). memo: the tables kept for
    the next call (a PipelineCache's own).
    """
    out = list(messages)
    if not policy.enabled:
        return out
    n = len(out)
    stop = min(n - keep_recent, n)
    if stop <= 0:
        return out
    plan = memo.plan_for(policy)
    names = memo.names_of(messages)
    if stop > 2000:
        # (keep: the cut messages live on in `out`; see gcpause, no collection walks them at once)
        with paused_gc(keep=True):
            names = _compress(out, stop, plan, names, shared=shared_texts)
    else:
        names = _compress(out, stop, plan, names, shared=shared_texts)
    memo.keep_names(messages, names)
    return out


def compress_tool_results_between(
    messages: Sequence[Message],
    keep_recent: int,
    policy: CompressionPolicy,
    start: int,
    stop: int,
    memo: Memo = MEMO,
) -> list[Message]:
    """`compress_tool_results(messages, keep_recent, policy)[start:stop]`, computing only that range.

    Ages still count from the end of `messages`; the results come from the
    same memo, so they are the very objects a full call with it returns.
    """
    start, stop = max(start, 0), max(stop, 0)   # (positions, as the rule's: never counted from the end)
    part = list(messages[start:stop])
    end = min(stop, len(messages) - keep_recent, len(messages))
    if not policy.enabled or end <= start:
        return part
    out = Spliced(messages, {})  # (written in start..end only: a copy of the rest would be O(n))
    _compress(out, end, memo.plan_for(policy), memo.names_of(messages), start)  # type: ignore[arg-type]
    return list(out[start:stop])


def shared_text_ids(messages: Iterable[Message]) -> set[int]:
    """Ids of the content strings that more than one tool result holds (a loader may share
    repeated texts): only these need cutting into one shared string."""
    seen: set[int] = set()
    shared: set[int] = set()
    for msg in messages:
        if msg.role == "tool":
            key = id(msg.content)
            if key in seen:
                shared.add(key)
            else:
                seen.add(key)
    return shared


def _compress(out: list[Message], stop: int, plan: Plan, names: Mapping[str, str] | None,
              start: int = 0, shared: Container[int] | None = None) -> Mapping[str, str] | None:
    """_compress_into, by its fast path when the policy names tools by their text."""
    if plan.by_content:
        _compress_by_text(out, stop, plan, start, shared)
        return names
    return _compress_into(out, stop, plan, names, start, shared)


def _compress_into(out: list[Message], stop: int, plan: Plan, names: Mapping[str, str] | None,
                   start: int = 0, shared: Container[int] | None = None) -> Mapping[str, str] | None:
    """Compress out[start:stop] in place; returns the call-id map if one was built or given.
    shared: see compress_tool_results' shared_texts."""
    n = len(out)
    limits, n_limits, limit_of = plan.limits, len(plan.limits), plan.limit
    top, last_limit = plan.top, plan.last_limit
    cache = plan.msgs
    by_content = plan.by_content
    cut = plan.cut
    name = None
    current = None
    keep = None
    names_of: dict = {}
    results: dict = {}
    entries: IdentityTable | None = None
    for i in range(start, stop):
        msg = out[i]
        if msg.role != "tool":
            continue
        age = n - i
        # (plan.limit inlined: past the last finite tier age every age has the last limit)
        limit = limits[age] if age < n_limits else (last_limit if age > top else limit_of(age))
        if limit is None:
            continue
        if limit != current:  # ages run in long stretches of one tier
            current = limit
            entries = table_for(cache, limit)
            keep, names_of, results, kept = entries.kept.append, entries.names, entries.results, entries.kept
        if not by_content:
            name = msg.tool_name
            if name is None and msg.tool_call_id:
                if names is None:
                    names = tool_names_by_call_id(out)
                name = names.get(msg.tool_call_id)
        key = id(msg)
        hit = results.get(key)
        if hit is not None and (by_content or names_of.get(key) == name):
            out[i] = hit
            continue
        text = msg.content
        if type(text) is str:
            remember = shared is None or id(text) in shared
        else:
            text = _text_of(text)
            remember = True  # (the set holds content ids: a Content's text may be shared)
        result = msg if len(text) <= limit else as_tool_result(msg, cut(text, limit, name, remember))
        if len(kept) >= CACHE_LIMIT or name is not None or names_of:
            entries.put(msg, result, name)  # type: ignore[union-attr]
        else:  # IdentityTable.put inlined for the common case (no name to store)
            keep(msg)
            results[key] = result
        out[i] = result
    return names


class _Made:
    """What a run of _compress_by_text computed at one tier limit, handed to the tables after the
    run (IdentityTable.put_later), in index order: the cut messages whose text no other message
    holds (the caller said so: see shared_texts) with their results; the others (every one when
    the caller said nothing) with their positions and results, and then their texts too (a text
    the caller says is shared has its cut stored as the run goes); the detections made."""

    __slots__ = ("sources", "results", "at", "shared_sources", "texts", "shared_results", "detected", "names")

    def __init__(self) -> None:
        self.sources: list[Message] = []
        self.results: list[Message] = []
        self.at: list[int] = []
        self.shared_sources: list[Message] = []
        self.texts: list[str] = []
        self.shared_results: list[Message] = []
        self.detected: list[str] = []
        self.names: list[str | None] = []


def _compress_by_text(out: list[Message], stop: int, plan: Plan, start: int = 0,
                      shared: Container[int] | None = None) -> None:
    """_compress_into for a policy that names tools by their text (the default): the same results
    and, once stored, the same cache entries, with plan.cut, plan.render and plan.names.detect
    written out in the loop.

    What this run computes is handed to the tables in bulk (_store_later) and stored when they
    are next read, not one entry at a time: on a cold run storing each entry into a big dict as
    it went was a large share of the work. tests/test_compression_fastpath.py holds this equal
    to _compress_into.
    """
    n = len(out)
    limits, n_limits, limit_of = plan.limits, len(plan.limits), plan.limit
    top, last_limit = plan.top, plan.last_limit
    marker_parts, hints = plan.marker_parts, plan.hints
    marker_head, marker_tail = marker_parts if len(marker_parts) == 2 else (None, None)
    names = plan.names
    named = names.results
    # the names a run handed over are stored when a detection is first looked up, by a run as long
    # as they are many; a shorter one (a keep_recent step) detects again what it does not find
    settle_names = bool(names.pending) and names.waiting() <= stop - start
    made: dict[int, _Made] = {}
    current = None
    for i in range(start, stop):
        msg = out[i]
        if msg.role != "tool":
            continue
        age = n - i
        limit = limits[age] if age < n_limits else (last_limit if age > top else limit_of(age))
        if limit is None:
            continue
        if limit != current:  # ages run in long stretches of one tier
            current = limit
            results = table_for(plan.msgs, limit).results
            cuts = table_for(plan.cuts, limit)
            cut_results, cut_names = cuts.results, cuts.names
            now = made.get(limit)
            if now is None:
                now = made[limit] = _Made()
            source, result_of = now.sources.append, now.results.append
            shared_at, shared_source, text_of, shared_result = (
                now.at.append, now.shared_sources.append, now.texts.append, now.shared_results.append)
            detected, name_of = now.detected.append, now.names.append
        hit = results.get(id(msg))  # (a by-text policy stores no names with messages)
        if hit is not None:
            out[i] = hit
            continue
        text = msg.content
        if type(text) is str:
            remember = shared is None or id(text) in shared
        else:
            text = _text_of(text)
            remember = True
        if len(text) <= limit:
            continue  # (out[i] is msg)
        # plan.cut: a text several messages hold is cut into one string
        text_key = id(text)
        cut = cut_results.get(text_key) if remember else None
        if cut is None or (cut_names and cut_names.get(text_key) is not None):
            # plan.render, with the detection remembered per text (plan.names.detect)
            name = named.get(text_key, _UNNAMED)
            if name is _UNNAMED and settle_names:
                names.settle()
                settle_names = False
                name = named.get(text_key, _UNNAMED)
            if name is _UNNAMED:
                name = detect_tool_name(text)
                detected(text)
                name_of(name)
            hint = hints.get(name, "")  # type: ignore[arg-type]
            if marker_tail is None:
                cut = text[:limit] + str(len(text) - limit).join(marker_parts) + hint
            else:  # one "{n}" in the marker: built in one step (the hint's emoji makes it 4 bytes a char)
                cut = f"{text[:limit]}{marker_head}{len(text) - limit}{marker_tail}{hint}"
            if remember and shared is not None:
                # the caller says other messages hold this text: stored now, so that they find it
                cuts.put(text, cut)
        result = out[i] = as_tool_result(msg, cut)
        if remember:
            shared_at(i)
            shared_source(msg)
            shared_result(result)
            if shared is None:  # (else its cut is stored already)
                text_of(text)
        else:
            source(msg)
            result_of(result)
    _store_later(out, plan, made)


def _content(message: Message) -> Any:
    return message.content


def _store_later(out: list[Message], plan: Plan, made: dict[int, _Made]) -> None:
    """Hand what a run of _compress_by_text made to the tables, to be stored when next read."""
    for limit, now in made.items():
        # every text remembered (the caller said nothing): a text met twice is put right after the
        # run; else its texts were stored as it went, and only a message listed twice is left
        keys = now.texts or now.shared_sources
        if len(set(map(id, keys))) < len(keys):
            _share_repeats(out, now, keys)
        msgs = table_for(plan.msgs, limit)
        msgs.put_later(now.sources, now.results)
        msgs.put_later(now.shared_sources, now.shared_results)
        table_for(plan.cuts, limit).put_later(now.texts, map(_content, now.shared_results))
        plan.names.put_later(now.detected, now.names)


def _share_repeats(out: list[Message], now: _Made, keys: list[Any]) -> None:
    """A text or message met more than once at one limit in a run (`keys`: the texts or the
    messages of now's shared entries): as one entry at a time would have done, the later ones take
    the first one's result (the same message) or cut string (another message). Rare but for texts
    the caller said nothing about; only the entries of repeated keys are visited."""
    ids = list(map(id, keys))
    seen: set[int] = set()
    repeated = {key for key in ids if key in seen or seen.add(key)}  # type: ignore[func-returns-value]
    first_result: dict[int, Message] = {}
    first_cut: dict[int, str] = {}
    at, sources, results = now.at, now.shared_sources, now.shared_results
    for k in compress(count(), map(repeated.__contains__, ids)):
        msg, result = sources[k], results[k]
        hit = first_result.get(id(msg))
        if hit is None:
            cut = first_cut.setdefault(id(_text_of(msg.content)), result.content)  # type: ignore[arg-type]
            hit = first_result[id(msg)] = result if cut is result.content else as_tool_result(msg, cut)
        out[at[k]] = results[k] = hit
