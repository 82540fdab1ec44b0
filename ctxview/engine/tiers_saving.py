"""What the compression tiers would save on some messages, measured without cutting them where a
text's tokens can be told from its length (bloat's recommendation); `tiers_saving_built` is the
rule (cut, then count), which tests/test_bloat_fastpath.py holds the two to."""

from __future__ import annotations

import bisect
from typing import Any, Callable, Mapping, Sequence

from ctxview.engine.compression import CompressionPolicy, compress_tool_results, tool_names_by_call_id
from ctxview.engine.tokens import SwarmEstimate, TokenCounter
from ctxview.engine.tool_names import detect_tool_name
from ctxview.model import Message
from ctxview.tiers import limits_by_age

__all__ = ["result_text", "tiers_saving", "tiers_saving_built"]

_UNSEEN = object()


def _tier_limits(policy: CompressionPolicy) -> list[int | None] | None:
    """The policy's max_chars by age as a table whose last entry is the last tier's: an age of 0 or
    more has table[min(age, len(table) - 1)]. None for tiers going past age 4095 (no table that long)."""
    table, top = limits_by_age(policy)
    return None if top > 4095 else table + [policy.tiers[-1].max_chars]


def tiers_saving_built(messages: Sequence[Message], keep_recent: int, policy: CompressionPolicy,
                       per: Sequence[int], measure: Callable[[Message], int],
                       compress: Callable[..., list[Message]] = compress_tool_results) -> int:
    """Tokens compress_tool_results(messages, keep_recent, policy) saves: each result it cuts, measured."""
    compressed = compress(messages, keep_recent, policy)
    return sum(per[i] - measure(c) for i, c in enumerate(compressed) if c is not messages[i])


def tiers_saving(messages: Sequence[Message], keep_recent: int, policy: CompressionPolicy, per: Sequence[int],
                 counter: TokenCounter, measure: Callable[[Message], int],
                 tool_indices: Sequence[int] | None = None,
                 by_text: Mapping[str, Sequence[int]] | None = None,
                 compress: Callable[..., list[Message]] = compress_tool_results) -> int:
    """tiers_saving_built, where `measure` counts as `counter` does. Under SwarmSDK's estimate a
    message's tokens follow from its text's length and code characters, and a cut text is three
    pieces (the kept head, the marker, maybe the hint) whose lengths and code characters add up:
    so the cut is measured without building it (tests/test_bloat_fastpath.py holds the two equal).
    `tool_indices`: the indices of the tool results in order, when the caller has them (the others
    are not looked at); or `by_text`: the tool results with a text, in order, by their text (the
    tally's same_text): a text repeated in several results is then looked at once for each tier
    limit it is cut to, not once for each result."""
    limits = _tier_limits(policy)
    if type(counter) is not SwarmEstimate or limits is None:
        return tiers_saving_built(messages, keep_recent, policy, per, measure, compress)
    n = len(messages)
    stop = min(n - keep_recent, n)
    if not policy.enabled or stop <= 0:
        return 0
    stats, tokens_of = SwarmEstimate.text_stats, SwarmEstimate.count_stats
    marker_parts = policy.marker.split("{n}")
    marker_chars, marker_code = stats("".join(marker_parts))
    slots = len(marker_parts) - 1   # where the number of chars cut goes (digits: no code characters)
    hints = {tool: stats(policy.hint.replace("{tool}", tool)) for tool in policy.rerunnable_tools}
    by_content = policy.tool_name_from == "content"
    names: Mapping[str, str] | None = None
    oldest = len(limits) - 1
    if by_text is not None:
        groups = by_text.items()
    else:
        indices = range(stop) if tool_indices is None else tool_indices[:bisect.bisect_left(tool_indices, stop)]
        groups = ((result_text(messages[i]), (i,)) for i in indices if messages[i].role == "tool")
    detected: dict[str, str | None] = {}  # by text: a text repeated in several results is looked at once
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
                name = detected.get(text, _UNSEEN)
                if name is _UNSEEN:
                    name = detected[text] = detect_tool_name(text)
            if limit != cut_to or name is not cut_name:
                cut_to, cut_name = limit, name
                chars, code = stats(text[:limit])
                chars += marker_chars + slots * len(str(length - limit))
                code += marker_code
                hint = hints.get(name) if name is not None else None
                if hint is not None:
                    chars += hint[0]
                    code += hint[1]
                tokens = tokens_of("tool", chars, code)
            saved += per[i] - tokens
    return saved


def result_text(msg: Message) -> Any:
    """A tool result's text as the tally keys it: its content when that is a str, else Message.text
    (which tiers_saving makes a str, as compression's _text_of does)."""
    text = msg.content
    return text if type(text) is str else msg.text
