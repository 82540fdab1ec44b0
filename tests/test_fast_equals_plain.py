"""Every function of ctxview._fast, and every table of the pipeline's, beside the rule it stands
for: equal results, always.

One row per pair: the fast twin, the plain rule, and how to draw their arguments. Each pair is
called warm (after other calls have filled the memo tables) and cold, so a stale memo entry
shows up as a difference.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxview._fast import compression as fast
from ctxview._fast.cut_tokens import CutTokens
from ctxview._fast import bloat as fast_bloat
from ctxview._fast import summary as fast_summary
from ctxview._fast import tool_names as fast_names
from ctxview.engine import bloat, bloat_scan, budget, clearing, tiers_saving
from ctxview.engine.tokens import SwarmEstimate
from ctxview.settings import ClearSettings
from ctxview.engine import compression as rule
from ctxview.engine import tool_names
from ctxview.engine import tokens as rule_tokens
from ctxview.model import Content, Message, ToolCall
from ctxview.pipeline import changes as made
from ctxview.pipeline.interned import Interned
from ctxview.pipeline.row_keys import change_of
from ctxview.tiers import PRESETS, CompressionPolicy, Tier

READ = "".join(f"{i:6d}→    line {i}\n" for i in range(1, 40))
GLOB = "Found 3 files matching *.py\na.py\nb.py\nc.py\n" * 5
GREP = "12 matches in 3 files\nsrc/a.py:3: x\n" * 10
TEXTS = [READ, GLOB, GREP, "ok", "y" * 300, "z" * 1200, "memory://notes\nStored at memory://notes\n" * 20]

texts = st.sampled_from(TEXTS) | st.text(max_size=400)


@st.composite
def messages(draw) -> list[Message]:
    out = []
    for i in range(draw(st.integers(0, 40))):
        kind = draw(st.sampled_from(["tool", "tool", "tool_content", "assistant", "user"]))
        if kind == "assistant":
            out.append(Message("assistant", "a", tool_calls=(ToolCall(f"c{i}", draw(st.sampled_from(["Read", "Bash"])), {}),)))
        elif kind == "user":
            out.append(Message("user", "u"))
        else:
            text = draw(texts)
            content: Any = Content(text) if kind == "tool_content" else text
            out.append(Message("tool", content, tool_call_id=f"c{draw(st.integers(0, 40))}",
                               tool_name=draw(st.sampled_from([None, None, "Read", "Grep"]))))
    return out


policies = st.sampled_from(list(PRESETS.values())) | st.builds(
    CompressionPolicy,
    tiers=st.sampled_from([(Tier(0, None), Tier(3, 40), Tier(None, 5)), (Tier(None, 1),), (Tier(2, None), Tier(None, 3))]),
    marker=st.sampled_from([" [{n} cut]", "", "{n}/{n}"]),
    hint=st.sampled_from(["", " ({tool})"]),
    tool_name_from=st.sampled_from(["content", "tool_call"]),
)


@dataclass(frozen=True)
class Pair:
    name: str
    fast: Callable[..., Any]
    plain: Callable[..., Any]
    arguments: st.SearchStrategy   # a tuple of positional arguments


@st.composite
def between(draw):
    msgs = draw(messages())
    start = draw(st.integers(-2, len(msgs) + 2))
    return msgs, draw(st.integers(-3, 15)), draw(policies), start, draw(st.integers(start, len(msgs) + 3))


# A memo of its own, as a PipelineCache passes (clear_caches leaves it: its entries stay warm)
OWN_MEMO = fast.Memo()

# The changes a cache's rows share (a small table: it is emptied as it fills, and refilled)
INTERNED = Interned()
specs = st.one_of(
    st.tuples(st.just("cleared"), st.integers(0, 900), st.booleans(), st.booleans(), st.integers(0, 9)),
    st.tuples(st.just("thinking_cleared"), st.integers(1, 5), st.integers(0, 900)),  # ("all" clears nothing)
    st.tuples(st.just("ephemeral"), st.integers(1, 4), st.integers(0, 900)),
    st.tuples(st.just("excerpted"), st.integers(0, 90), st.integers(0, 9000), st.integers(0, 900)),
    st.tuples(st.sampled_from(["removed", "summarised"]), st.integers(0, 90), st.integers(1, 90), st.integers(0, 900)),
    st.tuples(st.just("dropped"), st.integers(1, 10**6), st.integers(0, 900)),
    st.tuples(st.just("rewritten_by"), st.sampled_from(["squeeze", "x"]), st.text(max_size=20), st.integers(-9, 900)),
)
details = st.tuples(st.sampled_from(["removed", "summarised"]), st.integers(0, 90), st.integers(1, 90)) | st.tuples(
    st.just("dropped"), st.integers(1, 10**6))

# The bloat analysis's measures: each drawn with the tokens of its messages, under SwarmSDK's
# estimate (where the twins take their short cuts) or chars/4 (where they take the rule's way).
COUNTERS = st.sampled_from([SwarmEstimate(), rule_tokens.CharsCounter()])


@st.composite
def counted(draw):
    msgs, counter = draw(messages()), draw(COUNTERS)
    return msgs, [counter.count_message(m) for m in msgs], counter


def scan_of(scan) -> tuple:
    """A Scan, comparable: its units as lists, its calls by identity."""
    return (scan.by_role, list(scan.by_role), scan.results, [id(c) for c in scan.calls], scan.reminded,
            [list(u) for u in scan.units])


@st.composite
def savings_of_tiers(draw):
    msgs, per, counter = draw(counted())
    return msgs, draw(st.integers(-2, 12)), draw(policies), per, counter, counter.count_message


@st.composite
def savings_of_clearing(draw):
    msgs, per, counter = draw(counted())
    clear = ClearSettings(keep=draw(st.integers(0, 4)), exclude=draw(st.sampled_from([(), ("Read",)])),
                          trigger=draw(st.sampled_from([0, 50])), min_saving=draw(st.sampled_from([0, 20])))
    return msgs, clear, counter, per, counter.count_message


@st.composite
def bloat_analyses(draw):
    msgs, per, counter = draw(counted())
    return msgs, draw(st.sampled_from([0.5, 0.9])), draw(st.sampled_from([None, 400, 100_000])), counter


# What the summary draws on: requests (with reminders, blank, injected), errors, files touched
SUMMARISED = [Message("user", "fix the parser"), Message("user", "  "), Message("user", "u", injected=True),
              Message("user", "<system-reminder>x</system-reminder>\nthen"), Message("tool", "Error: boom\nx"),
              Message("assistant", "a", tool_calls=(ToolCall("c1", "Read", {"file_path": "a.py"}),
                                                    ToolCall("c2", "", {"path": 3})))]


@st.composite
def cuts(draw):
    """A tool result longer than the limit it is cut to, a policy, and the name its call gives."""
    text = draw(texts.filter(lambda t: len(t) > 1))
    return (Message("tool", text, tool_call_id="c1"), draw(st.integers(0, len(text) - 1)), draw(policies),
            draw(st.sampled_from([None, "Read", "Grep"])))


def cut_tokens_made(msg, limit, policy, name):
    """The rule: the cut made and counted (compress_tool_message's: the name detected from the text
    under a "content" policy)."""
    if policy.tool_name_from == "content":
        name = tool_names.detect_tool_name(msg.content)
    return SwarmEstimate().count_message(rule.as_tool_result(msg, rule.compress_text(msg.content, limit, name, policy)))


def cut_tokens_measured(msg, limit, policy, name):
    measure = CutTokens(policy)
    return measure.tokens(msg.content, limit, measure.name(msg.content, name))


@st.composite
def cuts_at(draw):
    """A tool result, several limits shorter than it (or None), a policy, and the name its call gives;
    the text long enough at times that the numbers of characters cut differ in their digits."""
    msg, _, policy, name = draw(cuts())
    msg = Message("tool", msg.content * draw(st.sampled_from([1, 1, 30])), tool_call_id="c1")
    limits = draw(st.lists(st.none() | st.integers(0, len(msg.content) - 1), max_size=5))
    return msg, limits, policy, name


def cut_tokens_of_a_memo(msg, limits, policy, name):
    """tokens_at by the measure a memo keeps for the policy (the bloat analysis's and the replays'):
    the tools of the texts of earlier examples remembered."""
    measure = OWN_MEMO.cut_tokens(policy)
    return measure.tokens_at(msg.content, limits, measure.name(msg.content, name))


def cut_tokens_at_made(msg, limits, policy, name):
    return [None if limit is None else cut_tokens_made(msg, limit, policy, name) for limit in limits]


def cut_tokens_at_measured(msg, limits, policy, name):
    measure = CutTokens(policy)
    return measure.tokens_at(msg.content, limits, measure.name(msg.content, name))


def analysis(measures):
    return lambda msgs, threshold, window, counter: bloat.analyze_context_bloat(
        msgs, threshold, window, counter, measures=measures).to_dict()


PAIRS = [
    Pair("compress_tool_results", fast.compress_tool_results, rule.compress_tool_results,
         st.tuples(messages(), st.integers(-3, 45), policies)),
    Pair("compress_tool_results with a memo of its own",
         lambda msgs, keep, policy: fast.compress_tool_results(msgs, keep, policy, memo=OWN_MEMO),
         rule.compress_tool_results, st.tuples(messages().map(tuple), st.integers(0, 20), policies)),
    Pair("compress_tool_results on a tuple", fast.compress_tool_results, rule.compress_tool_results,
         st.tuples(messages().map(tuple), st.integers(0, 20), policies)),
    Pair("compress_tool_results_between", fast.compress_tool_results_between, rule.compress_tool_results_between,
         between()),
    Pair("compress_tool_message", fast.compress_tool_message, rule.compress_tool_message,
         st.tuples(messages().filter(bool).map(lambda m: m[0]), st.integers(-2, 80), policies,
                   st.sampled_from([None, "Read", "Bash"]))),
    Pair("detect_tool_name", fast.MEMO.names.detect, tool_names.detect_tool_name, st.tuples(texts)),
    Pair("the bloat scan", lambda msgs, per, _: scan_of(fast_bloat.scan_messages(msgs, per)),
         lambda msgs, per, _: scan_of(bloat_scan.scan_by_id(msgs, per)), counted()),
    Pair("what the tiers would save", fast_bloat.tiers_saving, tiers_saving.tiers_saving, savings_of_tiers()),
    Pair("what the tiers would save, with a memo", functools.partial(fast_bloat.tiers_saving, memo=OWN_MEMO),
         tiers_saving.tiers_saving, savings_of_tiers()),
    Pair("the tokens of a cut", cut_tokens_measured, cut_tokens_made, cuts()),
    Pair("the tokens of a text cut to several limits", cut_tokens_at_measured, cut_tokens_at_made, cuts_at()),
    Pair("the tokens of a text cut, measured by a memo's", cut_tokens_of_a_memo, cut_tokens_at_made, cuts_at()),
    Pair("what clearing would save", fast_bloat.clearing_saving, clearing.clearing_saving, savings_of_clearing()),
    Pair("the offline summary", fast_summary.extractive_summary, budget.extractive_summary,
         st.tuples(st.lists(st.sampled_from(SUMMARISED), max_size=40) | messages())),
    Pair("the bloat analysis", analysis(fast_bloat.FAST), analysis(bloat.PLAIN), bloat_analyses()),
    Pair("interned change", INTERNED.change,
         lambda spec: change_of(spec, rule.DEFAULT_POLICY, 0, 0, Message("tool")), st.tuples(specs)),
    Pair("interned tier", INTERNED.tier, made.tier_of, st.tuples(policies, st.integers(-3, 200))),
    Pair("interned detail line", INTERNED.detail, made.detail_line, details),
    Pair("detect_tool_name in a table of its own", fast_names.NameTable(limit=8).detect, tool_names.detect_tool_name,
         st.tuples(texts)),
]


@pytest.mark.parametrize("pair", PAIRS, ids=[p.name for p in PAIRS])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_the_fast_twin_equals_the_rule(pair, data):
    args = data.draw(pair.arguments)
    expected = pair.plain(*args)
    assert pair.fast(*args) == expected      # warm: with whatever earlier examples left in the tables
    assert pair.fast(*args) == expected      # again: from its own entries
    fast.clear_caches()
    assert pair.fast(*args) == expected      # cold


def test_an_interned_change_is_one_object_per_spec():
    interned = Interned()
    spec = ("removed", 40, 39, 7)
    assert interned.change(spec) is interned.change(tuple(list(spec)))
    assert interned.only(spec) == (interned.change(spec),) and interned.only(spec) is interned.only(tuple(list(spec)))
    assert Interned().change(spec) is not interned.change(spec)  # a cache's own: nothing shared between caches


def test_every_public_function_of_the_fast_compression_has_a_row():
    twins = {p.fast for p in PAIRS}
    public = {getattr(fast, name) for name in ("compress_tool_results", "compress_tool_results_between",
                                               "compress_tool_message")}
    assert public <= twins and fast.MEMO.names.detect in twins
