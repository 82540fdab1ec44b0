"""pipeline.prepare: the side-by-side view the inspector and the report read."""

from __future__ import annotations

import dataclasses
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxview.engine.compression import (
    compress_tool_results,
    describe_tier,
    get_policy,
    tier_for_age,
)
from ctxview.model import Content, Conversation, Message, ToolCall, Usage
from ctxview.pipeline import PipelineCache, prepare, request_indices
from ctxview.engine.tokens import CharsCounter, SwarmEstimate
from ctxview.engine.view import ClearSettings, Row, Rows, Settings, row_columns

C4 = CharsCounter()
REMINDER = "<system-reminder>Keep the todo list current.</system-reminder>"


def make_conversation(steps: int = 40, *, ephemeral: dict | None = None, usage: bool = True) -> Conversation:
    msgs: list[Message] = [Message("user", "Fix the parser. " + REMINDER)]
    for i in range(steps):
        name = ("Read", "Grep", "Bash")[i % 3]
        msgs.append(Message("assistant", f"step {i}", tool_calls=(ToolCall(f"c{i}", name, {"n": i}),),
                            usage=Usage(input_tokens=100 * (i + 1)) if usage else None))
        if name == "Read":
            body = "\n".join(f"{n:6d}→code line {n}" for n in range(1, 120))
        elif name == "Grep":
            body = "Found 4 matches in 2 files\n" + "src/a.py:1: x\n" * 100
        else:
            body = "ok\n" * (50 + i)
        msgs.append(Message("tool", body, tool_call_id=f"c{i}"))
        if i % 10 == 9:
            msgs.append(Message("user", f"next {i} {REMINDER}"))
    msgs.append(Message("assistant", "All done."))
    return Conversation("main", tuple(msgs), system_prompt="You are a coder.", model="claude-sonnet-4-5",
                        ephemeral=ephemeral or {})


def check_view_invariants(conv: Conversation, view, counter=C4) -> None:
    n = len(conv.messages) if view.settings.request is None else view.settings.request
    stored_rows = [r for r in view.rows if r.stored is not None]
    assert [r.stored for r in stored_rows] == list(conv.messages[:n])
    assert [r.index for r in stored_rows] == list(range(n))
    assert [r.prepared for r in view.rows if r.prepared is not None] == list(view.prepared)
    # the columns a layout reads without making rows are the rows' own
    assert isinstance(view.rows, Rows)
    indices, stored, prepared = row_columns(view.rows)
    assert len(indices) == len(stored) == len(prepared) == len(view.rows)
    assert list(indices) == [r.index for r in view.rows]
    assert all(a is r.stored for a, r in zip(stored, view.rows))
    assert all(a is r.prepared for a, r in zip(prepared, view.rows))
    for r in view.rows:
        if r.stored is not None:
            assert r.tokens_stored == counter.count_message(r.stored)
        assert r.tokens_prepared == (counter.count_message(r.prepared) if r.prepared is not None else 0)
        assert bool(r.changes) == (r.prepared is not r.stored), r  # (the inspector's "next changed" relies on it)
        for ch in r.changes:
            if ch.action == "compressed":  # the tier named is the one the policy gives that age
                policy = get_policy(view.settings.tiers)
                assert ch.age == n - r.index
                assert ch.tier == tier_for_age(policy, ch.age)[0]
                assert ch.detail.startswith(f"tier {ch.tier + 1} ({describe_tier(policy, ch.tier)}), age {ch.age}:")
        for start, end in r.ephemeral_spans:
            assert r.prepared is not None and 0 <= start <= end <= len(r.prepared.text)
        for start, end in r.prepared_reminders:
            assert r.prepared.text[start:end].startswith("<system-reminder>")
        for start, end in r.stored_reminders:
            assert r.stored.text[start:end].endswith("</system-reminder>")
    system = counter.count_message(Message("system", conv.system_prompt)) if conv.system_prompt else 0
    assert view.system_tokens == system
    assert view.tokens_stored == system + sum(counter.count_message(m) for m in conv.messages[:n])
    assert view.tokens_prepared == system + sum(counter.count_message(m) for m in view.prepared)


def test_default_settings_equal_the_seed_compression():
    conv = make_conversation()
    view = prepare(conv, Settings(tiers="default"), counter=C4)
    assert list(view.prepared) == compress_tool_results(conv.messages, 10, get_policy("default"))
    check_view_invariants(conv, view)
    assert view.stats["compressed"] > 0
    assert view.stats["tool_results"] == 40


def test_compressed_row_says_rule_tier_and_age():
    conv = make_conversation()
    view = prepare(conv, Settings(tiers="default"), counter=C4)
    n = len(conv.messages)
    row = next(r for r in view.rows if r.changes and r.changes[0].action == "compressed" and r.changes[0].age > 40)
    ch = row.changes[0]
    assert ch.rule == "compression" and ch.age == n - row.index
    assert ch.tier == 3 if ch.age <= 60 else ch.tier == 4
    cut = len(row.stored.text) - (200 if ch.age <= 60 else 100)
    assert re.fullmatch(rf"tier {ch.tier + 1} \(ages \d+(-\d+|\+) → \d+ chars\), age {ch.age}: {cut:,} chars cut",
                        ch.detail), ch.detail
    assert ch.saved_tokens == row.tokens_stored - row.tokens_prepared > 0
    assert row.tool_name in ("Read", "Grep", "Bash")


def test_compression_off_and_keep_recent_everything():
    conv = make_conversation()
    for s in (Settings(compression=False), Settings(tiers="off"), Settings(keep_recent=10_000)):
        view = prepare(conv, s, counter=C4)
        assert list(view.prepared) == list(conv.messages)
        assert all(not r.changes for r in view.rows)


def test_ephemeral_is_appended_after_compression_and_spanned():
    conv = make_conversation(ephemeral={2: ("<system-reminder>eph A</system-reminder>", "plain B"),
                                        999: ("nowhere",)})
    view = prepare(conv, Settings(tiers="default", keep_recent=2), counter=C4)
    row = view.rows[2]
    assert row.stored.role == "tool"
    assert [c.action for c in row.changes] == ["compressed", "ephemeral"]
    text = row.prepared.text
    assert text.endswith("\n\n<system-reminder>eph A</system-reminder>\n\nplain B")
    assert [text[s:e] for s, e in row.ephemeral_spans] == ["<system-reminder>eph A</system-reminder>", "plain B"]
    assert "[" in text and "chars truncated for context management]" in text
    assert view.stats["ephemeral"] == 1
    check_view_invariants(conv, view)
    off = prepare(conv, Settings(tiers="default", keep_recent=2, embed_ephemeral=False), counter=C4)
    assert "eph A" not in off.rows[2].prepared.text


def test_ephemeral_on_content_keeps_attachments():
    conv = Conversation("c", (Message("user", Content("hi", ("img",))),), ephemeral={0: ("eph",)})
    row = prepare(conv, Settings(), counter=C4).rows[0]
    assert row.prepared.content == Content("hi\n\neph", ("img",))


def test_request_prepares_the_context_of_that_call():
    conv = make_conversation(ephemeral={5: ("E5",), 50: ("E50",)})
    view = prepare(conv, Settings(), counter=C4)
    assert view.requests == tuple(request_indices(conv.messages))
    k = view.requests[10]
    at = prepare(conv, Settings(request=k), counter=C4)
    assert len([r for r in at.rows if r.stored is not None]) == k
    assert at.recorded_input_tokens == conv.messages[k].usage.context_tokens
    assert list(at.prepared)[:5] == list(prepare(conv, Settings(request=k, embed_ephemeral=False),
                                                 counter=C4).prepared)[:5]
    assert at.rows[5].prepared.text.endswith("\n\nE5")
    assert not any("E50" in m.text for m in at.prepared)
    check_view_invariants(conv, at)
    with pytest.raises(ValueError, match="not the index of an assistant message"):
        prepare(conv, Settings(request=0))


def test_request_indices_count_a_run_of_assistant_messages_once():
    msgs = [Message("user", "a"), Message("assistant", "b"), Message("assistant", "c"), Message("tool", "t"),
            Message("assistant", "d")]
    assert request_indices(msgs) == [1, 4]


def test_clearing_in_the_pipeline():
    conv = make_conversation()
    view = prepare(conv, Settings(clear=ClearSettings(keep=3)), counter=C4)
    cleared = [r for r in view.rows if any(c.action == "cleared" for c in r.changes)]
    assert len(cleared) == 37 == view.stats["cleared"]
    for r in cleared:
        assert r.prepared.text == "[tool result cleared to save context]"
        ch = [c for c in r.changes if c.action == "cleared"][0]
        assert ch.rule == "clear" and "tokens saved" in ch.detail
    check_view_invariants(conv, view)


def test_remove_strategy_inserts_a_marker_row_and_ghosts():
    conv = make_conversation()
    # 21 is the user message after ten call/result pairs: a clean boundary
    view = prepare(conv, Settings(old_messages="remove", summarize_before=21), counter=C4)
    inserted = [r for r in view.rows if r.stored is None]
    assert len(inserted) == 1 and inserted[0].index is None
    pos = view.rows.index(inserted[0])
    assert pos == 0                                   # in place of the first removed message
    ghosts = [r for r in view.rows if r.prepared is None]
    assert [r.index for r in ghosts] == list(range(21)) == [r.index for r in view.rows[1:22]]
    assert all(r.changes[-1].action == "removed" for r in ghosts)
    assert {r.changes[-1].detail for r in ghosts} == {
        "removed: the 21 messages before index 21 are replaced by a removal marker"}
    assert view.prepared[0].text == "[21 earlier messages removed to save context]"
    check_view_invariants(conv, view)
    # a boundary inside a call/result pair moves down to keep them together
    split = prepare(conv, Settings(old_messages="remove", summarize_before=20), counter=C4)
    assert split.stats["removed"] == 19


def test_llm_strategy_uses_the_given_summarizer():
    conv = make_conversation()
    view = prepare(conv, Settings(old_messages="llm", summarize_before=11), counter=C4,
                   summarizer=lambda old: f"{len(old)} old messages")
    assert view.prepared[0].text == "[Summary of 11 earlier messages]\n11 old messages"
    assert view.stats["summarised"] == 11
    check_view_invariants(conv, view)


def test_truncate_strategy_excerpts_rows():
    conv = make_conversation()
    view = prepare(conv, Settings(old_messages="truncate", compression=False), counter=C4)
    ex = [r for r in view.rows if r.changes and r.changes[0].action == "excerpted"]
    assert ex and all(len(r.prepared.text) < len(r.stored.text) for r in ex)
    assert all(r.index < len(conv.messages) - 10 for r in ex)
    check_view_invariants(conv, view)


def test_budget_drops_oldest_and_reports_shortfall():
    conv = make_conversation()
    full = prepare(conv, Settings(), counter=C4)
    # the budget is the model's tokens of the whole request (the file recorded usage: calibrated)
    budget = full.context.tokens // 2
    view = prepare(conv, Settings(budget=budget), counter=C4)
    assert view.context.basis == "calibrated" and view.context_fit.scale != 1
    assert view.context.tokens <= budget and view.budget_shortfall == 0
    dropped = [r for r in view.rows if r.prepared is None]
    assert dropped and dropped[0].index == 0
    assert all(r.changes[-1].action == "dropped" and r.changes[-1].rule == "budget" for r in dropped)
    assert {r.changes[-1].detail for r in dropped} == {
        f"dropped to fit the budget of {budget:,} tokens (oldest first, calls kept with results)"}
    calls = {c.id for m in view.prepared for c in m.tool_calls}
    assert all(m.tool_call_id in calls for m in view.prepared if m.role == "tool")
    check_view_invariants(conv, view)
    tiny = prepare(conv, Settings(budget=1), counter=C4)
    assert tiny.budget_shortfall == tiny.context.tokens - 1 > 0


def test_context_window_and_counter_resolution():
    conv = make_conversation()
    view = prepare(conv, Settings())
    assert view.context_window == 200_000 and view.counter_name == "swarm"
    # the share is of the context in the model's tokens (the file recorded usage: calibrated)
    assert view.context.basis == "calibrated"
    assert view.window_share == view.context.tokens / 200_000
    assert prepare(conv, Settings(context_window=1000)).context_window == 1000
    assert prepare(conv, Settings(counter="chars4")).counter_name == "chars4"


def test_bad_settings():
    conv = make_conversation(steps=2)
    with pytest.raises(ValueError, match="old_messages"):
        prepare(conv, Settings(old_messages="shred"))
    with pytest.raises(ValueError, match="keep_recent"):
        prepare(conv, Settings(keep_recent=-1))


# --- the cache never changes a result ----------------------------------------------

CONV = make_conversation(steps=30, ephemeral={2: ("E2",), 40: ("<system-reminder>E40</system-reminder>",)})
REQUESTS = request_indices(CONV.messages)

SETTINGS = st.builds(
    Settings,
    keep_recent=st.integers(0, 30),
    tiers=st.sampled_from(["default", "light", "aggressive", "off", "5:full,15:300,*:50"]),
    compression=st.booleans(),
    tool_name_from=st.sampled_from(["content", "tool_call"]),
    clear=st.one_of(st.none(), st.builds(ClearSettings, keep=st.integers(0, 5), clear_inputs=st.booleans())),
    old_messages=st.sampled_from(["keep", "truncate", "remove", "llm"]),
    summarize_before=st.one_of(st.none(), st.integers(0, 60)),
    budget=st.one_of(st.none(), st.integers(1, 20_000)),
    embed_ephemeral=st.booleans(),
    request=st.one_of(st.none(), st.sampled_from([REQUESTS[0], REQUESTS[5], REQUESTS[20], REQUESTS[-1]])),
)



@settings(max_examples=120, deadline=None)
@given(st.lists(st.tuples(SETTINGS, st.sampled_from([SwarmEstimate(), CharsCounter()])), min_size=1, max_size=4))
def test_shared_cache_gives_the_same_views_as_a_fresh_one(sequence):
    cache = PipelineCache()
    for s, counter in sequence:
        warm = prepare(CONV, s, counter=counter, cache=cache)
        cold = prepare(CONV, s, counter=counter)
        assert warm == cold
        check_view_invariants(CONV, warm, counter)


# Steps that change one setting at a time, as the inspector's controls do;
# runs of keep_recent steps go through the pipeline's incremental path.
STEP = st.one_of(
    st.tuples(st.just("keep_recent"), st.integers(0, 140)),
    st.tuples(st.just("keep_recent"), st.integers(0, 30)),
    st.tuples(st.just("keep_recent"), st.integers(0, 60)),
    st.tuples(st.just("keep_recent"), st.integers(5, 15)),
    st.tuples(st.just("tiers"), st.sampled_from(["default", "light", "aggressive", "off", "5:full,15:300,*:50"])),
    st.tuples(st.just("compression"), st.booleans()),
    st.tuples(st.just("clear"), st.one_of(st.none(), st.builds(
        ClearSettings, keep=st.integers(0, 5), clear_inputs=st.booleans(),
        exclude=st.sampled_from([(), ("Read",), ("Bash", "Grep")]),
        trigger=st.sampled_from([0, 0, 5_000]), min_saving=st.sampled_from([0, 0, 300, 10**6]),
        placeholder=st.sampled_from(["[cleared]", "ok\nok\n"])))),
    st.tuples(st.just("budget"), st.one_of(st.none(), st.integers(1, 20_000))),
    st.tuples(st.just("old_messages"), st.sampled_from(["keep", "truncate", "remove"])),
    st.tuples(st.just("request"), st.one_of(st.none(), st.sampled_from([REQUESTS[3], REQUESTS[20], REQUESTS[-1]]))),
    st.tuples(st.just("embed_ephemeral"), st.booleans()),
)


@settings(max_examples=150, deadline=None)
@given(SETTINGS, st.lists(STEP, min_size=1, max_size=12), st.sampled_from([SwarmEstimate(), CharsCounter()]))
def test_one_setting_at_a_time_matches_a_fresh_cache(start, steps, counter):
    cache = PipelineCache()
    s = start
    prepare(CONV, s, counter=counter, cache=cache)
    for field_name, value in steps:
        s = dataclasses.replace(s, **{field_name: value})
        warm = prepare(CONV, s, counter=counter, cache=cache)
        cold = prepare(CONV, s, counter=counter)
        assert warm == cold
        assert warm.stats == cold.stats
        check_view_invariants(CONV, warm, counter)


@pytest.mark.parametrize("s", [Settings(tiers="aggressive", clear=ClearSettings(keep=2)),
                               Settings(old_messages="remove", budget=3_000), Settings(old_messages="llm")])
def test_changed_rows_are_made_when_first_read_and_kept(s):
    view = prepare(CONV, s, counter=C4, cache=PipelineCache())
    rows = view.rows
    assert isinstance(rows, Rows)
    assert any(type(item) is not Row for item in rows.entries())  # prepare made no changed row
    # read backwards, from the end (negative positions), then forwards: the same objects,
    # equal to the rows of a fresh run read in order
    backwards = [rows[-k] for k in range(1, len(rows) + 1)][::-1]
    assert all(type(item) is Row for item in rows.entries())
    assert all(a is b for a, b in zip(backwards, rows))
    assert backwards == list(prepare(CONV, s, counter=C4).rows)
    assert rows[2:5] == tuple(backwards[2:5]) and rows == tuple(backwards) and rows != backwards[1:]
    assert rows.index(backwards[7]) == 7


def test_keep_recent_steps_reuse_rows_outside_the_changed_range():
    cache = PipelineCache()
    n = len(CONV.messages)
    first = prepare(CONV, Settings(keep_recent=10), counter=C4, cache=cache)
    second = prepare(CONV, Settings(keep_recent=14), counter=C4, cache=cache)
    assert second == prepare(CONV, Settings(keep_recent=14), counter=C4)
    # Rows before n - 14 and from n - 10 on are the very same objects.
    assert all(a is b for a, b in zip(first.rows[: n - 14], second.rows[: n - 14]))
    assert all(a is b for a, b in zip(first.rows[n - 10:], second.rows[n - 10:]))
    assert second.stats is not first.stats


@pytest.mark.parametrize("clear", [ClearSettings(keep=1), ClearSettings(keep=2, clear_inputs=True),
                                   ClearSettings(keep=0, exclude=("Read",)), ClearSettings(keep=3, trigger=100)])
def test_keep_recent_steps_with_clearing_match_a_fresh_cache(clear):
    cache = PipelineCache()
    for k in [10, 11, 14, 3, 0, 1, 2, 25, 60, 7, 8, 9, 40, 39, 5, 130, 4]:
        s = Settings(keep_recent=k, clear=clear)
        assert prepare(CONV, s, counter=C4, cache=cache) == prepare(CONV, s, counter=C4), k


def _cleared_tokens(view) -> int:
    return sum(c.saved_tokens for r in view.rows for c in r.changes if c.action == "cleared")


def test_clearing_minimum_saving_is_checked_again_after_a_keep_recent_step():
    # Fewer compressed results (a larger keep_recent) leave more to clear, so
    # a minimum between the two savings lets clearing apply at 60, not at 0.
    low = _cleared_tokens(prepare(CONV, Settings(tiers="default", keep_recent=0, clear=ClearSettings(keep=0)), counter=C4))
    high = _cleared_tokens(prepare(CONV, Settings(tiers="default", keep_recent=60, clear=ClearSettings(keep=0)), counter=C4))
    assert 0 < low < high
    # the minimum is the model's tokens: the counter's savings scaled by the file's fit
    scale = prepare(CONV, Settings(), counter=C4).context_fit.scale
    assert scale != 1
    clear = ClearSettings(keep=0, min_saving=round(scale * (low + high) / 2))
    cache = PipelineCache()
    applied = prepare(CONV, Settings(tiers="default", keep_recent=60, clear=clear), counter=C4, cache=cache)
    assert applied.stats["cleared"] > 0
    after = prepare(CONV, Settings(tiers="default", keep_recent=0, clear=clear), counter=C4, cache=cache)
    assert after.stats["cleared"] == 0
    assert after == prepare(CONV, Settings(tiers="default", keep_recent=0, clear=clear), counter=C4)


def test_a_memoised_view_is_the_base_of_the_next_keep_recent_step(monkeypatch):
    import ctxview.pipeline.cached as pipeline

    full_runs = []
    full = pipeline._prepare
    monkeypatch.setattr(pipeline, "_prepare", lambda *a: full_runs.append(a[1]) or full(*a))
    cache = PipelineCache()
    aggressive = prepare(CONV, Settings(tiers="aggressive"), counter=C4, cache=cache)
    prepare(CONV, Settings(), counter=C4, cache=cache)
    assert prepare(CONV, Settings(tiers="aggressive"), counter=C4, cache=cache) is aggressive  # memo
    assert len(full_runs) == 2
    step = prepare(CONV, Settings(tiers="aggressive", keep_recent=12), counter=C4, cache=cache)
    assert len(full_runs) == 2  # a delta from the memoised view, not a full run
    assert step == prepare(CONV, Settings(tiers="aggressive", keep_recent=12), counter=C4)


def test_tool_results_sharing_a_text_are_counted_once_per_text(monkeypatch):
    calls = []
    real = CharsCounter.count_message
    monkeypatch.setattr(CharsCounter, "count_message", lambda self, m: calls.append(m) or real(self, m))
    counter, cache = CharsCounter(), PipelineCache()
    text = "".join(["shared ", "x" * 400])
    a, b = Message("tool", text, tool_call_id="a"), Message("tool", Content(text), tool_call_id="b")
    with_call = Message("tool", text, tool_calls=(ToolCall("c", "Read", {"p": "a long path"}),))
    assistant = Message("assistant", text)
    assert [cache.count(counter, m) for m in (a, b, with_call, assistant)] == [
        real(counter, m) for m in (a, b, with_call, assistant)]
    assert calls == [a, with_call, assistant]   # b shares a's text object
    assert cache.count(counter, Message("tool", text[:-1] + "y")) == real(counter, a)
    assert len(calls) == 4                       # an equal-length but other text is counted


def test_compression_is_remembered_for_other_settings_and_its_tokens_for_other_requests(monkeypatch):
    from ctxview._fast import compression

    runs = []
    real_compress = compression.compress_tool_results
    monkeypatch.setattr(compression, "compress_tool_results",
                        lambda *a, **k: runs.append(a[1]) or real_compress(*a, **k))
    counted = []
    real_count = CharsCounter.count_message
    monkeypatch.setattr(CharsCounter, "count_message", lambda self, m: counted.append(m) or real_count(self, m))
    counter, cache = CharsCounter(), PipelineCache()
    first = prepare(CONV, Settings(tiers="aggressive"), counter=counter, cache=cache)
    for other in (Settings(tiers="aggressive", clear=ClearSettings(keep=2)), Settings(tiers="aggressive", budget=4_000),
                  Settings(tiers="aggressive", old_messages="remove")):
        assert prepare(CONV, other, counter=counter, cache=cache) == prepare(CONV, other, counter=counter)
    assert len(runs) == 1 + 3  # the three fresh runs compress; the shared cache did it once
    # An earlier request: most results are the same objects, counted before; only the others are counted.
    earlier = dataclasses.replace(first.settings, request=REQUESTS[20])
    counted.clear()
    view = prepare(CONV, earlier, counter=counter, cache=cache)
    mine = [m for m in counted if m.role == "tool"]
    new_results = [m for m in view.prepared if m.role == "tool" and all(m is not p for p in first.prepared)]
    assert view == prepare(CONV, earlier, counter=CharsCounter())
    assert new_results and {id(m) for m in mine} <= {id(m) for m in new_results}


def test_remembered_stages_are_bounded_however_many_policies_are_tried():
    from ctxview.pipeline import limits as pipeline

    cache = PipelineCache()
    for k in range(3 * pipeline.KEPT):
        prepare(CONV, Settings(tiers=f"{k % 7}:full,*:{40 + k}", keep_recent=k % 5), counter=C4, cache=cache)
    data = cache.data(CONV)
    assert len(data.stages) <= pipeline.KEPT
    assert len(data.last_compressed) <= pipeline.KEPT


@pytest.mark.parametrize("reads_whole, full_paths", [(False, 1), (True, 2)])
def test_a_stage_that_reads_the_whole_context_sends_keep_recent_steps_through_the_full_path(
        monkeypatch, reads_whole, full_paths):
    import ctxview.pipeline.cached as pipeline
    from ctxview.settings import settings_class
    from ctxview.stages import STAGES, Option, Stage

    new_stage = Stage("a new stage", (Option("new", False, "a stage of the test's", kind="switch"),),
                      describe=lambda s: "new" if s.new else None,
                      reads_whole=lambda s: ("a new stage",) if s.new and reads_whole else ())
    Grown = settings_class((*STAGES, new_stage))
    full_runs = []
    full = pipeline._prepare
    monkeypatch.setattr(pipeline, "_prepare", lambda *a: full_runs.append(a[1]) or full(*a))
    cache = PipelineCache()
    prepare(CONV, Grown(tiers="default", new=True), counter=C4, cache=cache)
    stepped = prepare(CONV, Grown(tiers="default", keep_recent=12, new=True), counter=C4, cache=cache)
    assert len(full_runs) == full_paths  # the delta, unless the stage reads the whole context
    assert stepped.rows == prepare(CONV, Grown(tiers="default", keep_recent=12, new=True), counter=C4).rows


def test_what_a_cache_shares_is_its_own_and_clearing_forgets_it():
    cache, other = PipelineCache(), PipelineCache()
    settings = Settings(tiers="default", budget=2_000, old_messages="remove")
    prepare(CONV, settings, counter=C4, cache=cache)
    list(prepare(CONV, settings, counter=C4, cache=cache).rows)
    assert cache.interned.changes and cache.interned.tiers and len(cache.memo.names)
    assert not other.interned.changes and not len(other.memo.names)  # nothing in module globals
    cache.clear()
    assert not cache.interned.changes and not cache.interned.tiers and not len(cache.memo.names)
    assert not cache.views


