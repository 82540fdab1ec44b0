"""_fast.compression._compress_by_text (the loop for policies that name tools by their text) gives
exactly what the general loop, _fast.compression._compress_into, gives: equal messages, the same
messages kept as they are, one cut string per shared text, and the same cache entries."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_engine_properties import SETTINGS, message_lists, texts

from ctxview._fast import compression as comp
from ctxview.engine import compression as rules
from ctxview.engine.compression import CompressionPolicy, Tier
from ctxview.formats import load_session
from ctxview.model import Message

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = sorted(p for d in (ROOT / "sample_sessions", ROOT / "tests" / "fixtures" / "samples")
                 for p in d.rglob("*") if p.is_file() and p.suffix in (".json", ".jsonl"))

by_text_policies = st.builds(
    lambda tiers, marker, hint: CompressionPolicy(name="drawn", tiers=tiers, marker=marker, hint=hint),
    st.sampled_from([rules.DEFAULT_TIERS, (Tier(0, None), Tier(3, 40), Tier(None, 5)), (Tier(None, 1),),
                     (Tier(2, 1), Tier(None, None))]),
    st.sampled_from([rules.DEFAULT_MARKER, " [{n} cut]", "", "{n}/{n}"]),  # one, no, two "{n}"
    st.sampled_from([rules.DEFAULT_HINT, "", " ({tool})"]),
)


def _run(loop, msgs, keep_recent, policy, shared=None):
    out = list(msgs)
    stop = min(len(out) - keep_recent, len(out))
    if stop > 0:
        if loop is comp._compress_by_text:
            loop(out, stop, comp.plan_for(policy), 0, shared)
        else:
            loop(out, stop, comp.plan_for(policy), None, 0, shared)
    return out


def _shape(msgs, out):
    """Which messages were kept as they are, and which results share a content string."""
    first: dict[int, int] = {}
    return [(o is m, first.setdefault(id(o.content), i) if o is not m else None)
            for i, (m, o) in enumerate(zip(msgs, out))]


def _assert_same(msgs, keep_recent, policy, shared=None):
    comp.clear_caches()
    simple = _run(comp._compress_into, msgs, keep_recent, policy, shared)
    comp.clear_caches()
    fast = _run(comp._compress_by_text, msgs, keep_recent, policy, shared)
    assert fast == simple
    assert _shape(msgs, fast) == _shape(msgs, simple)
    # warm: each loop finds what the other stored, as the very objects
    assert all(a is b for a, b in zip(_run(comp._compress_into, msgs, keep_recent, policy, shared), fast))
    _assert_each_kept_once(policy)
    comp.clear_caches()
    simple = _run(comp._compress_into, msgs, keep_recent, policy, shared)
    assert all(a is b for a, b in zip(_run(comp._compress_by_text, msgs, keep_recent, policy, shared), simple))


def _assert_each_kept_once(policy):
    # what the by-text loop handed over in bulk (put_later) is stored as put() would have: one
    # entry and one kept source per object
    plan = comp.plan_for(policy)
    for table in [*plan.msgs.values(), *plan.cuts.values(), plan.names]:
        table.settle()
        assert len(table.kept) == len(table.results) == len({id(k) for k in table.kept})


@SETTINGS
@given(message_lists, st.integers(0, 12), by_text_policies, st.booleans())
def test_the_by_text_loop_equals_the_general_one(msgs, keep_recent, policy, told):
    # repeated texts and repeated messages: what the caches by text and by message are for
    msgs = msgs + msgs[: len(msgs) // 3] + [Message("tool", m.content) for m in msgs[:5] if m.role == "tool"]
    _assert_same(msgs, keep_recent, policy, comp.shared_text_ids(msgs) if told else None)


@SETTINGS
@given(st.lists(texts, min_size=1, max_size=30), st.integers(0, 30))
def test_the_by_text_loop_detects_as_detect_tool_name(bodies, filler):
    msgs = [Message("tool", b) for b in bodies] + [Message("user", "u")] * filler
    _assert_same(msgs, 0, rules.DEFAULT_POLICY)


def test_a_cut_stored_with_a_tool_name_is_not_taken_for_the_detected_one():
    # compress_tool_message stores a by-text plan's cut under the message's own tool name
    text = "Found 3 files matching *.py\n" + "a.py\n" * 400
    comp.clear_caches()
    named = comp.compress_tool_message(Message("tool", text, tool_name="Bash"), 100)
    out = comp.compress_tool_results([Message("tool", text)] + [Message("user", "u")] * 99, 0)
    assert out[0].content == named.content == rules.compress_text(text, 100, "Glob")
    assert out[0].content is not named.content


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_by_text_loop_equals_the_general_one_on_the_samples(path):
    try:
        session = load_session(path)
    except Exception:  # noqa: BLE001 - some fixtures are partial files; the loaders' tests cover them
        pytest.skip("not a loadable session on its own")
    for conv in session.conversations:
        for keep_recent in (0, 3, 10):
            for policy in (rules.DEFAULT_POLICY, rules.get_policy("aggressive")):
                _assert_same(conv.messages, keep_recent, policy)


def test_a_long_cold_run_leaves_no_young_collection_pending():
    # compress_tool_results pauses the collector with keep=True (gcpause) past 2,000 messages: the
    # cut messages it made live on in its result, so they are moved to the oldest generation as
    # they stand rather than walked by a young collection at the caller's next allocation
    import gc

    comp.clear_caches()
    msgs = []
    for i in range(1500):
        msgs.append(Message("assistant", "Checking.", tool_calls=()))
        msgs.append(Message("tool", f"     1\tline {i}\n" * 200, tool_call_id=f"c{i}"))
    gc.unfreeze()  # (keep is skipped while anything is frozen: an inspector test run before froze its views)
    gc.collect()
    out = comp.compress_tool_results(msgs, 10)
    cut = {id(a) for a, b in zip(out, msgs) if a is not b}
    assert len(cut) > 1000 and gc.get_freeze_count() == 0
    # a young collection would have moved them to generation 1; kept, they are in the oldest
    assert not cut & {id(o) for o in gc.get_objects(generation=0) + gc.get_objects(generation=1)}
    assert len(cut & {id(o) for o in gc.get_objects(generation=2)}) == len(cut)


def _session(n_results, repeat=0):
    """n_results tool results; with `repeat`, every repeat-th holds the text of the one before (one string)."""
    msgs = [Message("user", "go")]
    for i in range(n_results):
        msgs.append(Message("assistant", "Checking."))
        body = (f"{i} matches in 2 files\n" if i % 3 else f"     1→line {i}\n") + f"src/a.py:{i}: x\n" * 40
        if repeat and i % repeat == 0 and i:
            body = msgs[-2].content
        msgs.append(Message("tool", body, tool_call_id=f"c{i}"))
    return tuple(msgs)


@pytest.mark.parametrize("repeat", [0, 2])
@pytest.mark.parametrize("keep_recent", [0, 10, 25])
def test_a_range_after_a_full_run_holds_its_very_objects(keep_recent, repeat):
    # a cold run hands its results to the tables in bulk (put_later); a range read after finds them
    msgs = _session(60, repeat)
    comp.clear_caches()
    full = comp.compress_tool_results(msgs, keep_recent)
    for start, stop in ((0, len(msgs)), (5, 40), (len(msgs) - 30, len(msgs))):
        part = comp.compress_tool_results_between(msgs, keep_recent, rules.DEFAULT_POLICY, start, stop)
        assert all(a is b for a, b in zip(part, full[start:stop]))
    comp.clear_caches()
    part = comp.compress_tool_results_between(msgs, keep_recent, rules.DEFAULT_POLICY, 5, 40)
    assert all(a is b for a, b in zip(part, comp.compress_tool_results(msgs, keep_recent)[5:40]))
    comp.clear_caches()
    simple = _run(comp._compress_into, msgs, keep_recent, rules.DEFAULT_POLICY)[5:40]
    comp.clear_caches()
    part = comp.compress_tool_results_between(msgs, keep_recent, rules.DEFAULT_POLICY, 5, 40)
    assert part == simple and _shape(msgs[5:40], part) == _shape(msgs[5:40], simple)
    _assert_each_kept_once(rules.DEFAULT_POLICY)


def test_a_short_run_detects_again_what_a_long_run_has_not_stored_yet():
    # the long run's detections wait (IdentityTable.put_later); a short run does not store them
    # all (a keep_recent step would pay for a whole session's names), and its results are the same
    names = comp.MEMO.names
    msgs = _session(300)
    aggressive = rules.get_policy("aggressive")
    comp.clear_caches()
    expected = comp.compress_tool_results(msgs, 0, aggressive)[-40:]
    comp.clear_caches()
    comp.compress_tool_results(msgs, 0)
    waiting = names.waiting()
    assert waiting > 40
    part = comp.compress_tool_results_between(msgs, 0, aggressive, len(msgs) - 40, len(msgs))
    assert part == expected
    assert names.waiting() >= waiting  # not stored by the short run
    assert comp.compress_tool_results(msgs, 0, aggressive)[-40:] == expected  # a long one stores them
    assert not names.pending
