"""Fast paths of the pipeline's helpers give exactly what the general definitions give."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxview.engine.budget import plan_summary
from ctxview._fast.compression import plan_for as _plan
from ctxview.engine.compression import compress_text, detect_tool_name, get_policy
from ctxview.engine.grouping import unit_of, unit_runs, units
from ctxview.model import Message, ToolCall
from ctxview.pipeline import PipelineCache, prepare
from ctxview.pipeline.embedding import embedded
from ctxview.pipeline.row_keys import change_of as _change
from ctxview.pipeline.interned import Interned
from ctxview.engine.view import ClearSettings, Settings


def _units_by_definition(messages):
    # The definition: group indices by their unit_of head, units in order of their heads.
    groups: dict[int, list[int]] = {}
    for i, head in enumerate(unit_of(messages)):
        groups.setdefault(head, []).append(i)
    return [groups[h] for h in sorted(groups)]


MESSAGE = st.one_of(
    st.builds(lambda t: Message("user", t), st.text(max_size=3)),
    st.builds(lambda ids: Message("assistant", "a", tool_calls=tuple(ToolCall(i, "Read") for i in ids)),
              st.lists(st.sampled_from(["", "c1", "c2", "c3"]), max_size=3)),
    st.builds(lambda i, calls: Message("tool", "r", tool_call_id=i,
                                       tool_calls=tuple(ToolCall(c, "Grep") for c in calls)),
              st.sampled_from([None, "", "c1", "c2", "c3", "c9"]), st.lists(st.sampled_from(["c1", "c4"]), max_size=1)),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(MESSAGE, max_size=30))
def test_units_match_their_definition(messages):
    assert units(messages) == _units_by_definition(messages)


@settings(max_examples=300, deadline=None)
@given(st.lists(MESSAGE, max_size=30))
def test_unit_runs_are_the_units(messages):
    runs = unit_runs(messages)
    assert [list(u) for u in runs] == units(messages)
    # with the owners and the tool results given, as the bloat analysis passes them
    from ctxview.engine.grouping import call_owner
    assert unit_runs(messages, call_owner(messages), [i for i, m in enumerate(messages) if m.role == "tool"]) == runs
    if all(type(u) is range for u in runs):  # ranges only when every unit is a run
        assert all(list(u) == list(range(u[0], u[-1] + 1)) for u in units(messages))


def test_unit_runs_fall_back_when_a_unit_is_interrupted():
    msgs = [Message("assistant", "a", tool_calls=(ToolCall("c1", "Read"),)), Message("user", "u"),
            Message("tool", "r", tool_call_id="c1")]
    assert unit_runs(msgs) == [[0, 2], [1]]
    calls = [Message("assistant", "a", tool_calls=(ToolCall("c1", "Read"),)), Message("tool", "r", tool_call_id="c1"),
             Message("user", "u")]
    assert unit_runs(calls) == [range(0, 2), range(2, 3)]


@settings(max_examples=200, deadline=None)
@given(st.lists(MESSAGE, max_size=30), st.integers(0, 32), st.sampled_from(["remove", "llm"]))
def test_plan_summary_with_given_units_matches_computing_them(messages, before, strategy):
    given_units = plan_summary(messages, before, strategy, unit_list=units(messages))
    assert given_units == plan_summary(messages, before, strategy)


@given(st.sampled_from([("cleared", 12, True, False, 3), ("cleared", 0, False, True, 1), ("ephemeral", 2, 40),
                        ("excerpted", 30, 1200, 280), ("removed", 40, 39, 7), ("summarised", 40, 39, 0),
                        ("dropped", 1000, 55)]))
def test_shared_changes_equal_fresh_ones(spec):
    interned = Interned()
    fresh = _change(spec, get_policy("default"), 0, 0, Message("tool", "x"))
    assert interned.change(spec) == fresh
    assert interned.change(tuple(spec)) is interned.change(spec)  # one object per spec
    assert interned.only(spec) == (fresh,) and interned.only(tuple(spec)) is interned.only(spec)


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1, max_size=300), st.integers(1, 120), st.sampled_from([None, "Read", "Grep", "Bash"]),
       st.sampled_from(["default", "aggressive", "5:full,15:300,*:50"]))
def test_plan_cut_matches_compress_text(text, limit, tool, tiers):
    policy = get_policy(tiers).__class__(tiers=get_policy(tiers).tiers, tool_name_from="tool_call")
    if len(text) > limit:
        plan = _plan(policy)
        assert plan.cut(text, limit, tool) == compress_text(text, limit, tool, policy)
        assert plan.cut(text, limit, tool) == compress_text(text, limit, tool, policy)  # from the cache
        assert plan.cut(text, limit, tool, shared=False) == compress_text(text, limit, tool, policy)
        content_policy = get_policy(tiers)  # the tool detected from the text
        assert _plan(content_policy).cut(text, limit, None, shared=False) == compress_text(
            text, limit, detect_tool_name(text), content_policy)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["Found 3 files matching *.py\na\nb\nc" * 9, "1→x = 1\n" * 40, "ok", "y" * 300]),
                max_size=25), st.integers(0, 5), st.sampled_from(["default", "aggressive", "5:full,15:300,*:50"]))
def test_compression_told_which_texts_are_shared_gives_the_same_results(texts, keep_recent, tiers):
    from ctxview._fast.compression import clear_caches, compress_tool_results, shared_text_ids

    msgs = tuple(Message("tool", t) for t in texts)  # equal texts here are one string object
    policy = get_policy(tiers)
    clear_caches()
    told = compress_tool_results(msgs, keep_recent, policy, shared_texts=shared_text_ids(msgs))
    clear_caches()
    assert told == compress_tool_results(msgs, keep_recent, policy)
    pairs = [(m.content, out.content) for m, out in zip(msgs, told) if out is not m]
    for stored, cut in pairs:  # a shared text cut to one limit is still one string
        assert all(cut2 is cut for stored2, cut2 in pairs if stored2 is stored and cut2 == cut)


def test_blanked_messages_are_one_object_per_message_and_placeholder():
    cache = PipelineCache()
    msg = Message("tool", "long result " * 20, tool_call_id="c1")
    a = cache.blanked(msg, "[cleared]")
    assert a is cache.blanked(msg, "[cleared]")
    b = cache.blanked(msg, "[gone]")
    assert (a.text, b.text) == ("[cleared]", "[gone]")
    assert a.tool_call_id == b.tool_call_id == "c1"


def _conversation(steps: int = 60):
    msgs = [Message("user", "start")]
    for i in range(steps):
        msgs.append(Message("assistant", f"step {i}", tool_calls=(ToolCall(f"c{i}", "Read", {"n": i}),)))
        msgs.append(Message("tool", "\n".join(f"{n:6d}→line {n} {{x}}" for n in range(40 + i)), tool_call_id=f"c{i}"))
    msgs.append(Message("assistant", "done"))
    from ctxview.model import Conversation
    return Conversation("c", tuple(msgs), system_prompt="sys", ephemeral={5: ("<system-reminder>r</system-reminder>",)})


def test_budget_and_summary_paths_match_a_fresh_cache_after_other_settings():
    conv = _conversation()
    cache = PipelineCache()
    for s in [Settings(), Settings(tiers="aggressive"), Settings(budget=3000), Settings(old_messages="remove"),
              Settings(old_messages="llm", budget=2000), Settings(clear=ClearSettings(keep=2), budget=2500),
              Settings(old_messages="truncate"), Settings(clear=ClearSettings(keep=1, exclude=("Read",)))]:
        assert prepare(conv, s, cache=cache) == prepare(conv, s), s


def test_identity_table_keeps_results_apart_by_name_and_object():
    from ctxview.identity_table import IdentityTable

    table, msg = IdentityTable(limit=3), Message("tool", "x")
    assert table.get(msg) is None
    table.put(msg, "with a name", "Read")
    assert table.get(msg, "Read") == "with a name" and table.get(msg) is None
    table.put(msg, "without")
    assert table.get(msg) == "without" and table.get(msg, "Read") is None
    other = Message("tool", "x")
    assert table.get(other) is None  # an equal message is another object: no hit
    kept = [Message("tool", str(k)) for k in range(3)]
    for m in kept[:2]:
        table.put(m, m.text)
    assert len(table) == 3
    table.put(kept[2], "2")  # full: emptied before the new entry
    assert len(table) == 1 and table.get(msg) is None and table.get(kept[2]) == "2"
    assert table.kept == [kept[2]]  # (a source stored again is kept once: the list bounds it)


# one operation on a table: ("put", source index, result, name) or ("later", [source indices], result)
_TABLE_OPS = st.lists(st.one_of(
    st.tuples(st.just("put"), st.integers(0, 9), st.integers(0, 3), st.sampled_from([None, None, "Read"])),
    st.tuples(st.just("later"), st.lists(st.integers(0, 9), max_size=6), st.integers(0, 3)),  # (a source twice too)
), max_size=12)


@settings(max_examples=300, deadline=None)
@given(_TABLE_OPS)
def test_identity_table_entries_handed_over_in_bulk_are_as_if_put_one_at_a_time(ops):
    from ctxview.identity_table import IdentityTable

    sources = [Message("tool", str(k)) for k in range(10)]
    eager, lazy = IdentityTable(limit=100), IdentityTable(limit=100)
    for op in ops:
        if op[0] == "put":
            _, k, result, name = op
            eager.put(sources[k], result, name)
            lazy.put(sources[k], result, name)
        else:
            _, ks, result = op
            for k in ks:
                eager.put(sources[k], (result, k))
            lazy.put_later([sources[k] for k in ks], map(lambda k, r=result: (r, k), ks))  # (read when stored)
    for source in sources:
        for name in (None, "Read"):
            assert lazy.get(source, name) == eager.get(source, name)
    assert len(lazy) == len(eager) and not lazy.pending
    assert sorted(map(id, lazy.kept)) == sorted(map(id, eager.kept))  # each source kept once


def test_identity_table_bounded_when_handed_a_batch():
    from ctxview.identity_table import IdentityTable

    table, msgs = IdentityTable(limit=4), [Message("tool", str(k)) for k in range(7)]
    table.put_later(msgs[:3], range(3))
    table.put_later(msgs[3:5], range(3, 5))  # would hold 5: emptied first
    assert len(table) == 2 and table.get(msgs[0]) is None and table.get(msgs[4]) == 4
    table.put_later(msgs, range(7))  # bigger than the table: its last 4 entries
    assert len(table) == 4 and table.get(msgs[2]) is None and table.get(msgs[6]) == 6
    assert len(table.kept) == 4
    table.put_later(msgs[:1], [0])
    table.clear()  # forgets what is pending too
    assert len(table) == 0 and table.get(msgs[0]) is None


def test_rows_compression_alone_changed_are_reused_after_a_request_switch():
    conv = _conversation()
    cache = PipelineCache()
    first = prepare(conv, Settings(tiers="default", keep_recent=4), cache=cache)
    middle = conv.messages.index(next(m for m in conv.messages[60:] if m.role == "assistant"))
    prepare(conv, Settings(tiers="default", keep_recent=4, request=middle), cache=cache)
    cache.views.clear()  # a full recompute, not the memo
    again = prepare(conv, Settings(tiers="default", keep_recent=4), cache=cache)
    assert again == first == prepare(conv, Settings(tiers="default", keep_recent=4))
    compressed = [i for i, r in enumerate(first.rows) if [c.action for c in r.changes] == ["compressed"]]
    assert compressed and all(again.rows[i] is first.rows[i] for i in compressed)


def test_slot_builders_equal_the_constructors():
    from ctxview._fast.compression import as_tool_result as _as_tool_result  # built by slot_builder
    from ctxview.pipeline.builders import make_row as _row
    from ctxview.pipeline.builders import with_content as _with_content
    from ctxview.pipeline.changes import new_change as _new_change
    from ctxview.engine.view import Change, Row

    msg = Message("assistant", "text", tool_call_id="c", tool_calls=(ToolCall("c", "Read", {"p": 1}),),
                  model_id="m", tool_name="Read", thinking="t", injected=True, origin="line 3", id="i",
                  meta={"k": "v"})
    assert _with_content(msg, "new") == msg.with_content("new")
    assert _as_tool_result(msg, "cut") == msg.replace(role="tool", content="cut")
    assert type(_with_content(msg, "new")) is Message
    change = _new_change("compressed", "compression", "detail", 1, 30, 12)
    assert change == Change("compressed", "compression", "detail", 1, 30, 12)
    assert hash(change) == hash(Change("compressed", "compression", "detail", 1, 30, 12))
    row = _row(3, msg, None, (change,), 10, 0, "Read", ((0, 1),), (), ())
    assert row == Row(3, msg, None, (change,), 10, 0, "Read", ((0, 1),), (), ())
    assert type(row) is Row and type(change) is Change
    import dataclasses

    import pytest
    with pytest.raises(dataclasses.FrozenInstanceError):
        row.index = 4  # type: ignore[misc]


PIECE = st.lists(st.sampled_from(["<system-reminder>", "</system-reminder>", "a", "\n", "<system-", "reminder>", "x y"]),
                 max_size=8).map("".join)


@settings(max_examples=400, deadline=None)
@given(st.lists(PIECE, min_size=1, max_size=4))
def test_joined_reminder_spans_match_a_scan_of_the_joined_text(parts):
    from ctxview.engine import reminders
    from ctxview.pipeline.embedding import _joined_spans

    found = _joined_spans(parts, lambda t: tuple(reminders.spans(t)))
    if found is not None:  # None: the caller scans the joined text itself
        assert list(found) == reminders.spans("\n\n".join(parts))


def test_joined_reminder_spans_fall_back_when_a_block_runs_across_parts():
    from ctxview.pipeline.embedding import _joined_spans

    assert _joined_spans(["x <system-reminder> open", "close </system-reminder>"], lambda t: ()) is None


@settings(max_examples=300, deadline=None)
@given(PIECE, st.lists(PIECE, max_size=3), st.sampled_from(["tool", "user"]), st.sampled_from(["swarm", "chars4"]))

def test_embedded_matches_joining_and_counting_the_whole(base, texts, role, counter_name):
    # embedded() builds the joined text from a per-texts suffix and counts it from the parts'
    # statistics; the general definition joins, scans and counts the whole text.
    from ctxview.engine import reminders
    from ctxview.engine.tokens import get_counter

    counter = get_counter(counter_name)
    body = Message(role, base + " {[x]}")
    texts = tuple(texts)
    cache = PipelineCache()
    for _ in range(2):  # a fresh suffix, then the remembered one
        _, _, new, spans, tokens, found = embedded(cache, counter, body, texts)
        cache.embeds.clear()
        assert new.text == "\n\n".join([body.text, *texts]) and new.role == role
        pos, expected = len(body.text), []
        for piece in texts:
            expected.append((pos + 2, pos + 2 + len(piece)))
            pos += 2 + len(piece)
        assert spans == tuple(expected)
        assert list(found) == reminders.spans(new.text)
        assert tokens == counter.count_message(new)


def _reads(ephemeral=None, said=lambda k: "a"):
    """30 Read calls with 3 KB results (index 2 is the first result)."""
    from ctxview.model import Conversation

    msgs = [Message("user", "go")]
    for k in range(30):
        msgs += [Message("assistant", said(k), tool_calls=(ToolCall(f"c{k}", "Read"),)),
                 Message("tool", f"{k}→" + "x = f(y);\n" * 300, tool_call_id=f"c{k}")]
    return Conversation(name="t", messages=tuple(msgs), ephemeral=ephemeral or {})


TODO = {2: ("<system-reminder>todo</system-reminder>",)}


def test_compressed_and_embedded_rows_are_kept_by_index_and_reused():
    # A compressed result with an ephemeral reminder: its row is kept by index (no spec-tuple key),
    # reused by a recompute, and equal to a fresh cache's row.
    conv = _reads(TODO)
    cache = PipelineCache()
    s = Settings(tiers="aggressive", keep_recent=2)
    view = prepare(conv, s, cache=cache)
    row = view.rows[2]
    assert [c.action for c in row.changes] == ["compressed", "ephemeral"]
    assert not any(key[0] == 2 for table in cache.rows.values() for key in table)
    cache.views.clear()
    assert prepare(conv, s, cache=cache).rows[2] is row
    assert row == prepare(conv, s).rows[2]


def test_compressed_and_cleared_rows_are_kept_by_index_per_keep():
    conv = _reads(TODO)
    cache = PipelineCache()
    for keep in (3, 5, 3):
        s = Settings(tiers="aggressive", keep_recent=2, clear=ClearSettings(keep=keep))
        view = prepare(conv, s, cache=cache)
        assert [c.action for c in view.rows[2].changes] == ["compressed", "cleared", "ephemeral"]
        assert [c.action for c in view.rows[4].changes] == ["compressed", "cleared"]
        assert not any(key[0] in (2, 4) for table in cache.rows.values() for key in table)
        assert view == prepare(conv, s)  # the detail names `keep`: rows of another keep are not reused
        cache.views.clear()
        again = prepare(conv, s, cache=cache)
        assert again.rows[2] is view.rows[2] and again.rows[4] is view.rows[4]


def test_removed_and_dropped_rows_are_kept_by_index_and_checked_by_their_changes():
    conv = _reads(said=lambda k: f"a{k}")
    cache = PipelineCache()
    steps = [Settings(budget=2000), Settings(budget=2000, compression=False), Settings(budget=2000),
             Settings(budget=1500), Settings(old_messages="remove"), Settings(old_messages="remove", compression=False),
             Settings(old_messages="llm"), Settings(budget=2000)]
    for s in steps:  # (each step overwrites the previous one's rows at the same indices)
        cache.views.clear()
        view = prepare(conv, s, cache=cache)
        assert view == prepare(conv, s)  # a row of another shape or figure at the index is not reused
        gone = [r for r in view.rows if r.index is not None and r.prepared is None]
        assert gone and not any(key[0] == gone[0].index for table in cache.rows.values() for key in table)
        cache.views.clear()
        again = prepare(conv, s, cache=cache)  # the same settings again: the same row objects
        by_index = {r.index: r for r in again.rows}
        assert all(by_index[r.index] is r for r in gone)


def test_specs_read_compression_from_the_stage_messages_and_keep_what_later_stages_add():
    from ctxview.pipeline.row_keys import Specs as _Specs

    stored = tuple(Message("tool", "x" * 50) for _ in range(4))
    stage1 = (stored[0], Message("tool", "cut"), stored[2], Message("tool", "cut"))
    specs = _Specs(4, 7, stage1, stored, (1, 3))
    assert [specs.get(i) for i in range(4)] == [(0,), (1, "compressed", 3, 7), (2,), (3, "compressed", 1, 7)]
    other = specs.copy()
    other.add(1, "cleared", 5, False, True, 3)
    other.add(2, "ephemeral", 1, 9)
    assert other.get(1) == (1, "compressed", 3, 7, "cleared", 5, False, True, 3)
    assert other.get(2) == (2, "ephemeral", 1, 9)
    assert specs.get(1) == (1, "compressed", 3, 7) and specs.get(2) == (2,)  # the copy's additions are its own
    assert sorted(set(other.indices())) == [1, 2, 3] and sorted(set(specs.indices())) == [1, 3]


def test_row_key_fields_are_named_and_the_predicates_read_them():
    from ctxview.pipeline.row_keys import SPEC_FIELDS, SPEC_LENGTHS, by_index, cleared_by_index, gone_by_index, spec_fields

    assert all(SPEC_LENGTHS[k] == 1 + len(v) for k, v in SPEC_FIELDS.items())
    compressed = (7, "compressed", 27, 0)
    assert spec_fields(compressed[1:]) == {"age": 27, "policy_tag": 0}
    assert by_index(compressed) and by_index(compressed + ("ephemeral", 1, 12))
    assert not by_index(compressed + ("cleared", 40, False, True, 3))
    assert cleared_by_index(compressed + ("cleared", 40, False, True, 3))
    assert cleared_by_index(compressed + ("cleared", 40, False, True, 3, "ephemeral", 1, 12))
    assert not cleared_by_index(compressed + ("cleared", 40, True, True, 3))   # its call's inputs emptied
    assert not cleared_by_index(compressed + ("cleared", 40, False, False, 3))  # not a tool result
    assert gone_by_index((7, "removed", 40, 12, 300)) and gone_by_index(compressed + ("dropped", 5000, 300))
    assert not gone_by_index(compressed + ("cleared", 40, False, True, 3, "dropped", 5000, 300))


# --- keep_recent steps applied as a delta (pipeline/delta.py) ---------------------------------------

from test_pipeline_reference import assert_same_view, conversations  # noqa: E402

from ctxview.pipeline import prepare_reference  # noqa: E402
from ctxview.pipeline.delta import rows_changed  # noqa: E402
from ctxview.spliced import Spliced, spliced  # noqa: E402
from ctxview.engine.tokens import CharsCounter, SwarmEstimate  # noqa: E402

STEP_BASES = [Settings(), Settings(tiers="default"), Settings(tiers="aggressive"), Settings(tiers="5:full,15:300,*:50"),
              Settings(tiers="default", embed_ephemeral=False), Settings(tiers="light", tool_name_from="tool_call"),
              Settings(tiers="default", clear=ClearSettings(keep=1, min_saving=0)),
              Settings(tiers="default", clear=ClearSettings(keep=2, min_saving=300, exclude=("Read",)))]


@settings(max_examples=150, deadline=None)
@given(conversations(), st.sampled_from(STEP_BASES), st.lists(st.integers(0, 40), min_size=1, max_size=8),
       st.sampled_from([SwarmEstimate(), CharsCounter()]), st.booleans())
def test_keep_recent_steps_equal_a_fresh_reference(conv, base, keeps, counter, at_a_request):
    import dataclasses

    requests = [i for i, m in enumerate(conv.messages) if m.role == "assistant"]
    if at_a_request and requests:
        base = dataclasses.replace(base, request=requests[len(requests) // 2])
    cache = PipelineCache()
    previous = prepare(conv, base, counter=counter, cache=cache)
    for k in keeps:
        chosen = dataclasses.replace(base, keep_recent=k)
        view = prepare(conv, chosen, counter=counter, cache=cache)
        assert_same_view(view, prepare_reference(conv, chosen, counter=counter))
        changed = rows_changed(cache, previous, view)
        if changed is not None:  # the rows outside those named are the previous view's own
            rows, old = list(view.rows), list(previous.rows)
            assert len(rows) == len(old)
            assert all(rows[i] == old[i] for i in range(len(rows)) if i not in changed)
        previous = view


def test_a_keep_recent_step_takes_the_delta_and_names_its_rows():
    from test_pipeline_reference import BODIES

    from ctxview.model import Conversation

    msgs = [Message("user", "go")]
    for i in range(40):
        msgs += [Message("assistant", f"step {i}", tool_calls=(ToolCall(f"c{i}", "Read"),)),
                 Message("tool", BODIES[i % 3], tool_call_id=f"c{i}")]
    conv = Conversation("main", tuple(msgs))
    cache = PipelineCache()
    first = start = prepare(conv, Settings(tiers="default"), cache=cache)
    n = len(conv.messages)
    for k, rows in ((11, range(n - 11, n - 10)), (60, range(max(n - 60, 0), n - 11)), (10, range(max(n - 60, 0), n - 10))):
        view = prepare(conv, Settings(tiers="default", keep_recent=k), cache=cache)
        assert rows_changed(cache, first, view) == rows
        # a new value: the previous view's sequences with those rows replaced, not copied; 10: remembered
        assert type(view.prepared) is Spliced if k != 10 else view is start
        assert_same_view(view, prepare_reference(conv, Settings(tiers="default", keep_recent=k)))
        first = view


@given(st.lists(st.integers(), max_size=40), st.lists(st.tuples(st.integers(0, 50), st.lists(st.integers(), max_size=5)),
                                                     max_size=6))
def test_spliced_reads_as_the_copy_it_replaces(items, steps):
    plain: tuple = tuple(items)
    fast = plain
    for lo, part in steps:
        lo = min(lo, len(plain))
        part = part[:len(plain) - lo]
        plain = plain[:lo] + tuple(part) + plain[lo + len(part):]
        fast = spliced(fast, lo, part)
        assert fast == plain and plain == fast and tuple(fast) == plain and list(fast) == list(plain)
        assert len(fast) == len(plain) and [fast[i] for i in range(-len(plain), len(plain))] == list(plain * 2)
        assert fast[1:-1:2] == plain[1:-1:2] and hash(fast) == hash(plain) and fast + (0,) == plain + (0,)
        assert fast != list(plain) or not plain  # a tuple's equality: not equal to a list
    if plain:
        fast = fast if type(fast) is Spliced else Spliced(fast, {})
        fast[-1] = "x"
        assert fast[len(plain) - 1] == "x" and tuple(fast) == plain[:-1] + ("x",)


def test_a_big_patch_is_folded_into_a_copy():
    base = tuple(range(40_000))
    big = spliced(base, 0, ["a"] * 6_000)
    assert type(big) is tuple and big == ("a",) * 6_000 + base[6_000:]
    assert type(spliced(list(base), 0, ["a"] * 6_000, list)) is list
    small = spliced(spliced(base, 0, ["a"]), 5, ["b"])
    assert type(small) is Spliced and small.base is base and small.patch == {0: "a", 5: "b"}


def test_unchanged_rows_are_made_when_read_and_shared_by_views():
    """base_rows.BaseRows: a view's unchanged rows are made when first read, each the same object in every
    view of the cache that leaves it unchanged (their equality to the reference: test_pipeline_reference)."""
    from pathlib import Path

    from ctxview.formats import load_session
    from ctxview.pipeline.base_rows import base_row

    path = Path(__file__).resolve().parent.parent / "ctxview" / "samples" / "swarm-demo.ctxview.json"
    conv = load_session(path).conversations[0]
    cache = PipelineCache()
    a = prepare(conv, Settings(), cache=cache)
    b = prepare(conv, Settings(tiers="default", keep_recent=2), cache=cache)
    data = cache.data(conv)
    base = next(iter(data.base_rows.values()))
    assert base.rows.count(None) == len(conv.messages)  # none made by the runs themselves
    counts = cache.counts_of(data, cache.counter(conv, "auto"))
    unchanged = [i for i, m in enumerate(conv.messages) if a.rows[i].prepared is m and b.rows[i].prepared is m]
    assert 0 < len(unchanged) < len(conv.messages)
    for i in unchanged:
        assert a.rows[i] is b.rows[i] is base[i]
        assert base[i] == base_row(i, conv.messages[i], counts[i], data.names)


def test_iterating_the_unchanged_rows_gives_each_row_read_by_index():
    """BaseRows.__iter__ (the list's own iterator once every row is made) gives the rows indexing
    gives, the same objects, whether some were made before or none."""
    from pathlib import Path

    from ctxview.formats import load_session

    path = Path(__file__).resolve().parent.parent / "ctxview" / "samples" / "swarm-demo.ctxview.json"
    conv = load_session(path).conversations[0]
    for read_first in ((), (0, 3, -1)):
        cache = PipelineCache()
        prepare(conv, Settings(), cache=cache)
        data = cache.data(conv)
        base = cache.base_rows(data, cache.counter(conv, "auto"))
        early = [base[i] for i in read_first]
        assert base.made == len({i % len(conv.messages) for i in read_first})
        rows = list(base)
        assert base.made == len(conv.messages) and None not in base.rows
        assert len(rows) == len(conv.messages) and all(rows[i] is base[i] for i in range(len(rows)))
        assert all(early[k] is rows[i] for k, i in enumerate(read_first))


def test_reminder_suffixes_are_shared_by_equal_texts_only():
    """embedding.suffix_of remembers a tuple of strings by value (a loader may give each message its own
    equal tuple): the entry is the one a fresh cache makes; texts that are not all strings go by identity
    ((1,) and (True,) are equal tuples with different suffixes)."""
    from ctxview.pipeline.embedding import suffix_of

    cache = PipelineCache()
    first = ("<system-reminder>\nx\n</system-reminder>", "note")
    again = tuple(["<system-reminder>\nx\n</system-reminder>", "note"])
    assert again is not first
    assert suffix_of(cache, first)[1:] == suffix_of(cache, again)[1:] == suffix_of(PipelineCache(), again)[1:]
    assert suffix_of(cache, (1,))[1] == "\n\n1" and suffix_of(cache, (True,))[1] == "\n\nTrue"


def test_unchanged_rows_read_from_two_threads_are_made_once(monkeypatch):
    """BaseRows makes a row under a lock: the panes (main thread) and a worker reading the same rows
    get one object per row, and `made` counts each once (the bloat analysis trusts it)."""
    import threading
    import time
    from pathlib import Path

    from ctxview.formats import load_session
    from ctxview.pipeline import base_rows as rows_module

    made_by = rows_module.base_row

    def slow_base_row(*args):  # (the other thread gets to ask for the same row meanwhile)
        time.sleep(0.0005)
        return made_by(*args)

    monkeypatch.setattr(rows_module, "base_row", slow_base_row)

    path = Path(__file__).resolve().parent.parent / "ctxview" / "samples" / "swarm-demo.ctxview.json"
    conv = load_session(path).conversations[0]
    cache = PipelineCache()
    prepare(conv, Settings(), cache=cache)
    data = cache.data(conv)
    base = cache.base_rows(data, cache.counter(conv, "auto"))
    seen: list[list] = [[], []]
    start = threading.Barrier(2)

    def read(k: int) -> None:
        start.wait()
        order = range(len(base)) if k == 0 else range(len(base) - 1, -1, -1)
        seen[k] = [(i, base[i]) for i in order for _ in range(3)]

    threads = [threading.Thread(target=read, args=(k,)) for k in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert base.made == len(conv.messages) == len(list(base))
    for got in seen:
        assert all(row is base.rows[i] for i, row in got)
