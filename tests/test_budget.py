"""truncate_to_fit / fit_to_budget, summarize_old_messages, clear_tool_uses."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxview import ContextManager
from ctxview.engine.budget import (
    extractive_summary,
    fit_to_budget,
    plan_summary,
    summarize_old_messages,
    truncate_to_fit,
)
from ctxview.engine.clearing import clear_tool_uses, plan_clearing
from ctxview.model import Content, Message, ToolCall
from ctxview.engine.tokens import CharsCounter
from ctxview.engine.view import ClearSettings

C4 = CharsCounter()


def call(cid: str, name: str = "Read", **args) -> ToolCall:
    return ToolCall(cid, name, args or {"file_path": f"/src/{cid}.py"})


def step(cid: str, size: int = 400, name: str = "Read") -> list[Message]:
    return [
        Message("assistant", "a" * 8, tool_calls=(call(cid, name),)),
        Message("tool", "r" * size, tool_call_id=cid),
    ]


# --- conversations for property tests ----------------------------------------------

@st.composite
def conversations(draw):
    msgs: list[Message] = []
    if draw(st.booleans()):
        msgs.append(Message("system", "s" * draw(st.integers(0, 80))))
    k = 0
    for _ in range(draw(st.integers(0, 14))):
        kind = draw(st.sampled_from(["user", "assistant", "tools", "system"]))
        if kind == "tools":
            n = draw(st.integers(1, 3))
            ids = [f"c{k}_{j}" for j in range(n)]
            k += 1
            msgs.append(Message("assistant", "", tool_calls=tuple(call(i) for i in ids)))
            for i in ids:
                msgs.append(Message("tool", "t" * draw(st.integers(0, 300)), tool_call_id=i))
        else:
            msgs.append(Message(kind, kind[0] * draw(st.integers(0, 200))))
    return msgs


def orphans(msgs: list[Message]) -> list[str]:
    """Tool results without their call, or calls without their results."""
    calls = {c.id for m in msgs for c in m.tool_calls}
    results = {m.tool_call_id for m in msgs if m.role == "tool"}
    return sorted((results - calls) | (calls - results))


@settings(max_examples=200, deadline=None)
@given(conversations(), st.integers(0, 600), st.integers(0, 6))
def test_truncate_to_fit_properties(msgs, budget, keep_recent):
    before = copy.deepcopy(msgs)
    fit = fit_to_budget(msgs, budget, keep_recent, C4)
    assert msgs == before                                      # input untouched
    out = list(fit.messages)
    assert out == truncate_to_fit(msgs, budget, keep_recent, C4)
    assert [m for m in out] == [msgs[i] for i in fit.kept]     # order kept, a subsequence
    assert not orphans(out) or orphans(msgs)                   # never orphans what was whole
    assert all(m in out for m in msgs if m.role == "system")
    recent = range(max(len(msgs) - keep_recent, 0), len(msgs))
    assert set(recent) <= set(fit.kept)
    total = sum(C4.count_message(m) for m in out)
    assert fit.tokens == total
    assert fit.shortfall == max(0, total - budget)
    if fit.shortfall:
        # everything droppable went: what is left is protected (system, recent, or grouped with them)
        assert fit.dropped == tuple(sorted(set(range(len(msgs))) - set(fit.kept)))
    else:
        assert total <= budget
    first = next((i for i in fit.kept if msgs[i].role != "system"), None)
    if fit.dropped and first is not None:  # the first turn is the user's, when the input has one before it
        assert msgs[first].role == "user" or not any(m.role == "user" and m.text.strip() for m in msgs[:first])


def test_truncate_drops_oldest_first_and_keeps_calls_with_results():
    msgs = [Message("system", "sys"), Message("user", "u" * 400), *step("a"), *step("b"), Message("user", "last")]
    fit = fit_to_budget(msgs, 150, keep_recent=1, counter=C4)
    # the user message (100 tokens) and step a (2 + 100) go; step b, now first, goes too (the first turn
    # must be the user's)
    assert fit.dropped == (1, 2, 3, 4, 5)
    assert [m.role for m in fit.messages] == ["system", "user"]
    assert fit.shortfall == 0


def test_a_protected_assistant_turn_keeps_the_user_message_before_it():
    msgs = [Message("user", "first"), Message("assistant", "b" * 40), Message("user", "u" * 400),
            *step("a"), *step("b"), Message("user", "last")]
    fit = fit_to_budget(msgs, 10, keep_recent=3, counter=C4)   # protects step b and the last message
    # everything before step b goes except the user message right before the steps (400 chars)
    assert fit.dropped == (0, 1, 3, 4)
    assert [m.role for m in fit.messages] == ["user", "assistant", "tool", "user"]
    assert fit.tokens == sum(C4.count_message(m) for m in fit.messages) and fit.shortfall == fit.tokens - 10


def test_a_conversation_starting_with_the_assistant_is_left_so():
    msgs = [Message("assistant", "hello"), *step("a"), Message("user", "u")]
    fit = fit_to_budget(msgs, 3, keep_recent=3, counter=C4)
    assert fit.dropped == (0,) and fit.messages[0].role == "assistant"   # no user message to keep


def test_truncate_reports_shortfall_when_protected_part_is_too_big():
    msgs = [Message("system", "s" * 400), Message("user", "u" * 400)]
    fit = fit_to_budget(msgs, 50, keep_recent=1, counter=C4)
    assert list(fit.messages) == msgs and fit.shortfall == 150
    assert truncate_to_fit(msgs, 50, 1, C4) == msgs


def test_keep_recent_extends_to_the_whole_unit():
    msgs = [Message("user", "u" * 40), *step("a", 400), Message("user", "x")]
    # keep_recent=2 protects the tool result, hence its call too
    fit = fit_to_budget(msgs, 10, keep_recent=2, counter=C4)
    assert fit.dropped == ()          # (the user message before the protected unit stays: first turn)
    assert not orphans(list(fit.messages))


def test_fit_to_budget_rejects_negative():
    with pytest.raises(ValueError):
        fit_to_budget([], -1)


# --- summarize_old_messages ---------------------------------------------------------


def sample() -> list[Message]:
    return [
        Message("system", "You are helpful."),
        Message("user", "Please fix the login bug <system-reminder>todo</system-reminder>"),
        Message("assistant", "Reading.", tool_calls=(call("a", "Read", file_path="/app/login.py"),)),
        Message("tool", "Traceback: KeyError 'user'\n" + "x" * 500, tool_call_id="a"),
        Message("assistant", "Running tests.", tool_calls=(call("b", "Bash", command="pytest"),
                                                           call("c", "Grep", pattern="login"))),
        Message("tool", "1 failed", tool_call_id="b"),
        Message("tool", "Found 3 matches in 2 files", tool_call_id="c"),
        Message("user", "Also update the docs"),
        Message("assistant", "Done."),
    ]


def test_remove_strategy_puts_one_marker_and_keeps_system():
    msgs = sample()
    out = summarize_old_messages(msgs, 4, "remove")
    assert out[0] == msgs[0]
    assert out[1].text == "[3 earlier messages removed to save context]"
    assert out[1].role == "user" and out[1].injected
    assert out[2:] == msgs[4:]
    assert not orphans(out)


def test_remove_never_splits_a_call_from_its_results():
    msgs = sample()
    # index 6 falls inside the unit 4-6: the boundary moves down to 4
    result = plan_summary(msgs, 6, "remove")
    assert result.boundary == 4 and result.removed == (1, 2, 3)
    assert not orphans(list(result.messages))
    assert summarize_old_messages(msgs, 3, "remove")[1].text.startswith("[1 earlier message removed")


def test_truncate_strategy_excerpts_with_the_seed_marker():
    msgs = sample()
    out = summarize_old_messages(msgs, 4, "truncate")
    assert len(out) == len(msgs)
    assert out[3].text == msgs[3].text[:200] + f"\n...[{len(msgs[3].text) - 200} chars truncated for context management]"
    assert out[3].tool_call_id == "a"
    assert out[1] is msgs[1] and out[0] is msgs[0]      # short enough / system: untouched
    assert out[4:] == msgs[4:]


def test_truncate_keeps_content_attachments():
    msg = Message("user", Content("y" * 300, ("img",)))
    out = summarize_old_messages([msg, Message("user", "z")], 1, "truncate")
    assert isinstance(out[0].content, Content) and out[0].content.attachments == ("img",)


def test_llm_strategy_uses_the_callable_or_the_extractive_summary():
    msgs = sample()
    seen = []

    def summarizer(old):
        seen.append(list(old))
        return "they fixed login"

    out = summarize_old_messages(msgs, 7, "llm", summarizer=summarizer)
    assert seen == [msgs[1:7]]
    assert out[0] == msgs[0] and out[1].text == "[Summary of 6 earlier messages]\nthey fixed login"
    assert out[2:] == msgs[7:]
    offline = summarize_old_messages(msgs, 7, "llm")[1].text
    assert "Please fix the login bug" in offline and "<system-reminder>" not in offline
    assert "Read ×1" in offline and "Bash ×1" in offline and "Grep ×1" in offline
    assert "/app/login.py" in offline
    assert "Traceback: KeyError 'user'" in offline and "1 failed" in offline


def test_extractive_summary_of_nothing():
    assert extractive_summary([]) == "(nothing to summarise)"


def test_unknown_strategy_names_the_valid_ones():
    with pytest.raises(ValueError, match="unknown strategy 'magic'.*truncate.*remove.*llm"):
        summarize_old_messages(sample(), 3, "magic")


@settings(max_examples=100, deadline=None)
@given(conversations(), st.integers(0, 20), st.sampled_from(["remove", "llm"]))
def test_summarising_leaves_the_user_first(msgs, before, strategy):
    result = plan_summary(msgs, before, strategy)
    first = next((m for m in result.messages if m.role != "system"), None)
    if result.removed:
        assert first is result.inserted and first.role == "user"


def test_summarize_does_not_mutate_and_keep_is_identity():
    msgs = sample()
    before = copy.deepcopy(msgs)
    for strategy in ("truncate", "remove", "llm", "keep"):
        summarize_old_messages(msgs, 5, strategy)
    assert msgs == before
    assert summarize_old_messages(msgs, 5, "keep") == msgs
    assert summarize_old_messages(msgs, 0, "remove") == msgs


@settings(max_examples=150, deadline=None)
@given(conversations(), st.integers(0, 20), st.sampled_from(["remove", "llm"]))
def test_summaries_never_orphan_and_keep_every_system_message(msgs, before, strategy):
    result = plan_summary(msgs, before, strategy)
    out = list(result.messages)
    assert not orphans(out) or orphans(msgs)
    assert [m for m in out if m.role == "system"] == [m for m in msgs if m.role == "system"]
    kept_after = [m for i, m in enumerate(msgs) if i >= result.boundary]
    assert out[len(out) - len(kept_after):] == kept_after if kept_after else True
    assert len(out) == len(msgs) - len(result.removed) + (1 if result.inserted else 0)


# --- clearing -------------------------------------------------------------------------


def tool_run(n: int) -> list[Message]:
    msgs = [Message("user", "go")]
    for i in range(n):
        msgs += step(f"c{i}", 400, "Read" if i % 2 == 0 else "Bash")
    return msgs


def test_clear_keeps_the_most_recent_and_clears_older():
    msgs = tool_run(5)
    result = plan_clearing(msgs, ClearSettings(keep=2), C4)
    cleared = [msgs[i].tool_call_id for i in result.cleared]
    assert cleared == ["c0", "c1", "c2"]
    for i in result.cleared:
        assert result.messages[i].text == "[tool result cleared to save context]"
        assert result.messages[i].tool_call_id == msgs[i].tool_call_id
    assert result.saved_tokens == 3 * (100 - C4.count("[tool result cleared to save context]"))
    assert len(result.messages) == len(msgs) and not orphans(list(result.messages))


def test_clear_exclude_inputs_trigger_and_min_saving():
    msgs = tool_run(5)
    ex = plan_clearing(msgs, ClearSettings(keep=1, exclude=("Bash",)), C4)
    assert [msgs[i].tool_call_id for i in ex.cleared] == ["c0", "c2"]
    inputs = plan_clearing(msgs, ClearSettings(keep=4, clear_inputs=True), C4)
    assert inputs.inputs_cleared == (1,)
    assert inputs.messages[1].tool_calls[0].arguments == {}
    assert msgs[1].tool_calls[0].arguments == {"file_path": "/src/c0.py"}    # input untouched
    total = sum(C4.count_message(m) for m in msgs)
    assert plan_clearing(msgs, ClearSettings(keep=1, trigger=total), C4).cleared == ()
    assert plan_clearing(msgs, ClearSettings(keep=1, trigger=total - 1), C4).cleared != ()
    assert plan_clearing(msgs, ClearSettings(keep=1, min_saving=10_000), C4).cleared == ()
    assert clear_tool_uses(msgs, keep=10) == msgs


def test_context_manager_delegates():
    cm = ContextManager()
    msgs = tool_run(4)
    assert cm.clear_tool_uses(msgs, keep=1, counter=C4) == clear_tool_uses(msgs, 1, counter=C4)
    assert cm.truncate_to_fit(msgs, 100, keep_recent=2) == truncate_to_fit(msgs, 100, 2)
    assert cm.summarize_old_messages(msgs, 3, "remove") == summarize_old_messages(msgs, 3, "remove")
    report = cm.analyze_context_bloat(msgs)
    assert set(report.to_dict()) >= {"bloated", "recommendations"}


@settings(max_examples=150, deadline=None)
@given(conversations(), st.integers(0, 4), st.booleans(), st.integers(0, 400))
def test_clearing_properties(msgs, keep, inputs, min_saving):
    before = copy.deepcopy(msgs)
    result = plan_clearing(msgs, ClearSettings(keep=keep, clear_inputs=inputs, min_saving=min_saving), C4)
    out = list(result.messages)
    assert msgs == before and len(out) == len(msgs)
    assert [m.role for m in out] == [m.role for m in msgs]
    assert [m.tool_call_id for m in out] == [m.tool_call_id for m in msgs]
    assert [[c.id for c in m.tool_calls] for m in out] == [[c.id for c in m.tool_calls] for m in msgs]
    results = [i for i, m in enumerate(msgs) if m.role == "tool"]
    recent = results[len(results) - keep:] if keep else []
    assert all(out[i] is msgs[i] for i in recent)
    changed = [i for i in range(len(msgs)) if out[i] is not msgs[i]]
    assert sorted(set(result.cleared) | set(result.inputs_cleared)) == changed
    saved = sum(C4.count_message(a) - C4.count_message(b) for a, b in zip(msgs, out))
    assert result.saved_tokens == saved
    assert not result.cleared or saved >= min_saving
