"""The replay by age (age_replay.py) against the request-by-request replay, on generated
conversations: results of every length, reminders on any message, tiers of any shape, budgets,
both kinds of counter, calibrated or not."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxview.engine.harness import history_as_sent
from ctxview.analysis.age_replay import by_age
from ctxview.analysis.prompt_cache import replay, replay_naive
from ctxview._fast.bloat import scan_linear
from ctxview.analysis.bloat_as_sent import conversation_bloat
from ctxview.analysis.stepwise_replay import (SCANNED_UNITS, NotStepwise, StepwiseReplay, calls_before_results,
                                              checked_unit_heads, unit_heads)
from ctxview.model import Conversation, Message, ToolCall
from ctxview.pipeline import PipelineCache
from ctxview.settings import ClearSettings, Settings
from test_fast_equals_plain import messages

READ = "".join(f"{i:6d}\u2192    line {i}\n" for i in range(1, 30))
# (clearing's placeholder too: test_rank_replay.py draws its conversations here)
TEXTS = st.sampled_from([READ, "x" * 90, "y" * 700, "{[()]};" * 40, "ok", "", ClearSettings().placeholder]) \
    | st.text(max_size=300)
PREVIEW = ("<persisted-output>\nOutput too large (31.2KB). Full output saved to: /tmp/r.txt\n\n"
           "Preview (first 2KB):\n" + "z" * 300 + "\n</persisted-output>")
TIERS = st.sampled_from(["default", "aggressive", "light", "2:full,*:40", "1:full,3:200,6:30,*:5",
                         "3:full,5:60,*:full", "off"])


@st.composite
def conversations(draw) -> Conversation:
    msgs: list[Message] = [Message("user", draw(TEXTS) or "go")]
    for k in range(draw(st.integers(0, 25))):
        calls = tuple(ToolCall(f"c{k}.{c}", draw(st.sampled_from(["Read", "Bash", "Grep"])), {"p": c})
                      for c in range(draw(st.integers(0, 3))))
        msgs.append(Message("assistant", draw(st.sampled_from(["", "ok", "a" * 120])), tool_calls=calls))
        for call in calls:
            # (at times sent as Claude Code's persisted-output preview: the history as sent is not the stored)
            meta = draw(st.sampled_from([{}, {}, {}, {"persisted_output": {"sent": PREVIEW}}]))
            msgs.append(Message("tool", draw(TEXTS), tool_call_id=call.id,
                                tool_name=draw(st.sampled_from([None, call.name])), meta=meta))
        if draw(st.booleans()):
            msgs.append(Message("user", draw(TEXTS) or "more"))
    msgs.append(Message("assistant", "done"))
    ephemeral = {i: (draw(st.sampled_from(["<system-reminder>r</system-reminder>", "note " * 30])),)
                 for i in draw(st.lists(st.integers(0, len(msgs) - 1), max_size=4))}
    return Conversation("main", tuple(msgs), system_prompt=draw(st.sampled_from([None, "s" * 400])),
                        ephemeral=ephemeral, model="claude-sonnet-4-5-20250929")


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(conv=conversations(), tiers=TIERS, keep=st.integers(0, 6), counter=st.sampled_from(["swarm", "chars4"]),
       embed=st.booleans(), overhead=st.sampled_from([0, 700]), scale=st.sampled_from([1.0, 1.37]),
       budget=st.sampled_from([None, None, 1_000, 2_500, 6_000]), names=st.sampled_from(["content", "tool_call"]))
def test_the_replay_by_age_equals_request_by_request(conv, tiers, keep, counter, embed, overhead, scale, budget,
                                                     names):
    s = Settings(tiers=tiers, keep_recent=keep, counter=counter, embed_ephemeral=embed, budget=budget,
                 tool_name_from=names)
    assert by_age(StepwiseReplay(conv, s, PipelineCache(), overhead, scale))
    assert replay(conv, s, overhead=overhead, scale=scale) == replay_naive(conv, s, overhead=overhead, scale=scale)


def test_clearing_is_not_replayed_by_age():
    conv = Conversation("main", (Message("user", "u"), Message("assistant", "a")))
    assert not by_age(StepwiseReplay(conv, Settings(clear=ClearSettings(keep=1)), PipelineCache(), 0, 1.0))
    assert by_age(StepwiseReplay(conv, Settings(budget=1000), PipelineCache(), 0, 1.0))


def test_a_result_past_two_boundaries_between_requests_may_be_back_where_it_was():
    # "3:full,5:60,*:full": whole to age 3, cut to 60 at ages 4-5, whole again from 6. Between the
    # requests at 4 and 8 messages the first results go from age 2 to age 6: past both
    # boundaries, and sent whole in both prompts, so the later prompt shares them.
    read = "".join(f"{i:6d}\u2192    line {i}\n" for i in range(1, 30))

    def turn(k: int) -> list[Message]:
        calls = (ToolCall(f"c{k}.0", "Read", {"p": 0}), ToolCall(f"c{k}.1", "Read", {"p": 1}))
        return [Message("assistant", "", tool_calls=calls), *(Message("tool", read, tool_call_id=c.id) for c in calls)]

    msgs = (Message("user", "go"), *turn(0), Message("assistant", ""), *turn(1),
            *(Message("assistant", "") for _ in range(4)))
    conv = Conversation("main", msgs, model="claude-sonnet-4-5-20250929")
    s = Settings(tiers="3:full,5:60,*:full", keep_recent=0)
    prompts = replay(conv, s)
    assert [(p.index, p.shared_blocks) for p in prompts] == [(1, 0), (4, 1), (8, 3)]
    assert prompts == replay_naive(conv, s)


def test_one_text_cut_for_two_tools_gets_each_tools_hint():
    # Under tool_name_from="tool_call" a cut's hint follows the result's call: the same text read by
    # Read and printed by Bash is cut alike but hinted apart, and measured apart, under both counters.
    text = "".join(f"{i:6d}\u2192    line {i}\n" for i in range(1, 400))
    msgs = [Message("user", "go")]
    for k, tool in enumerate(["Read", "Bash"] * 6):
        call = ToolCall(f"c{k}", tool, {"p": k})
        msgs += [Message("assistant", "", tool_calls=(call,)), Message("tool", text, tool_call_id=call.id)]
    msgs += [Message("assistant", "done")] * 2
    conv = Conversation("main", tuple(msgs), model="claude-sonnet-4-5-20250929")
    for counter in ("swarm", "chars4"):
        s = Settings(tiers="1:full,*:200", keep_recent=1, counter=counter, tool_name_from="tool_call")
        assert replay(conv, s) == replay_naive(conv, s), counter


def _heads_or_not_stepwise(heads) -> list[int] | str:
    try:
        return heads()
    except NotStepwise:
        return "not stepwise"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(msgs=conversations().map(lambda c: c.messages) | messages().map(tuple))
def test_the_units_the_bloat_scan_leaves_give_the_rules_unit_heads(msgs):
    # The budget's replay takes the units the bloat analysis's one-pass scan found, unchecked:
    # where the scan finds them, calls_before_results finds nothing wrong, and the heads are the same.
    found = scan_linear(msgs, [1] * len(msgs))
    if found is None:
        return
    expected = _heads_or_not_stepwise(lambda: unit_heads(msgs, calls_before_results(msgs)))
    assert _heads_or_not_stepwise(lambda: unit_heads(msgs, runs=found.units)) == expected
    conv = Conversation("main", msgs)
    cache = PipelineCache()
    conversation_bloat(conv, Settings(), 200_000, cache)
    kept = cache.data(conv).derived.get(SCANNED_UNITS)
    # (left only where the analysis scans the stored messages: not where the file says they were sent
    # otherwise, a persisted output's preview say; checked_unit_heads then checks them itself)
    if history_as_sent(conv, len(msgs)).plain:
        assert kept is not None and kept[0] is conv.messages
    else:
        assert kept is None
    assert _heads_or_not_stepwise(lambda: checked_unit_heads(cache, conv, conv.messages)) == expected
