"""The bloat analysis' fast paths give what their simple definitions give."""

from __future__ import annotations

import datetime
import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxview.engine.call_arguments import args_groups, args_keys
from ctxview.engine.call_arguments import args_key as _args_key

# what the loaders give: JSON values (orjson parses no NaN, no big ints past 64 bits as floats, ...)
_scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**63 - 1),
                     st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=6),
                     st.sampled_from(["null", "a", "b", 1, 1.0, True, 0.0, -0.0]))
_json = st.recursive(_scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                        st.dictionaries(st.text(max_size=3), inner, max_size=3)),
                     max_leaves=8)
_args = st.dictionaries(st.sampled_from(["file_path", "pattern", "n", "x"]), _json, max_size=3)
# and what an API caller may pass besides: NaN, infinities, big ints, tuples, non-str keys, objects
_odd = st.one_of(st.just(math.nan), st.just(math.inf), st.just(2**70), st.just((1, 2)),
                 st.just(datetime.date(2026, 1, 2)), st.just("2026-01-02"), st.just(None))
_odd_args = st.one_of(_args, st.dictionaries(st.sampled_from(["a", "b"]), _odd, max_size=2),
                      st.just({1: "x"}), st.just({"1": "x"}))


def _groups(keys: list) -> set[frozenset[int]]:
    """The partition of the indices that the keys make."""
    by: dict = {}
    for i, k in enumerate(keys):
        by.setdefault(k, set()).add(i)
    return {frozenset(v) for v in by.values()}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_args, max_size=8))
def test_args_keys_group_json_arguments_as_args_key(arguments):
    # pairs of equal arguments too, so that groups of two or more happen
    arguments = arguments + arguments[: len(arguments) // 2]
    assert _groups(args_keys(arguments)) == _groups([_args_key(a) for a in arguments])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_odd_args, max_size=6))
def test_args_keys_group_any_arguments_as_args_key(arguments):
    arguments = arguments + arguments[: len(arguments) // 2]
    assert _groups(args_keys(arguments)) == _groups([_args_key(a) for a in arguments])


_names = st.lists(st.sampled_from(["Read", "Grep", "", "null"]), min_size=20, max_size=20)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(_args, _odd_args), max_size=8), _names)
def test_args_keys_with_names_group_as_the_name_and_args_key(arguments, names):
    arguments = arguments + arguments[: len(arguments) // 2]
    names = names[:len(arguments)]
    assert (_groups(args_keys(arguments, names))
            == _groups([(name, _args_key(a)) for name, a in zip(names, arguments)]))


def _group_lists(keys: list, indices: list) -> list[list[int]]:
    by: dict = {}
    for i, k in zip(indices, keys):
        by.setdefault(k, []).append(i)
    return list(by.values())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(_args, _odd_args), max_size=8), _names)
def test_args_groups_are_the_groups_of_args_keys(arguments, names):
    arguments = arguments + arguments[: len(arguments) // 2]
    names = names[:len(arguments)]
    indices = [3 * i + 1 for i in range(len(arguments))]
    for named in (None, names):
        groups = args_groups(indices, arguments, named)
        assert list(groups.values()) == _group_lists(args_keys(arguments, named), indices)


def test_args_keys_take_the_fast_path_for_json_and_the_simple_one_otherwise():
    plain = [{"file_path": "/a", "limit": 10}, {"limit": 10, "file_path": "/a"}]
    fast = args_keys(plain)
    assert all(type(k) is bytes for k in fast) and fast[0] == fast[1]
    # one NaN among them: every key is _args_key's (NaN and None must not meet)
    mixed = args_keys([{"a": None}, {"a": math.nan}])
    assert mixed == [_args_key({"a": None}), _args_key({"a": math.nan})] and mixed[0] != mixed[1]
    # an object whose text equals a string groups with it, as under _args_key
    day = args_keys([{"d": datetime.date(2026, 1, 2)}, {"d": "2026-01-02"}])
    assert day[0] == day[1] == _args_key({"d": "2026-01-02"})
    # with names: the same arguments of two tools are two keys
    named = args_keys(plain + plain, ["Read", "Read", "Write", "Read"])
    assert all(type(k) is bytes for k in named) and named[0] == named[1] == named[3] != named[2]
    assert args_keys([{"a": math.nan}] * 2, ["R", "R"]) == [("R", _args_key({"a": math.nan}))] * 2
    # the grouping looks for NaN only when a distinct key has a null: None and NaN still apart
    assert list(args_groups([0, 1, 2], [{"a": None}, {"a": math.nan}, {"a": None}]).values()) == [[0, 2], [1]]
    assert list(args_groups([0, 1], [{"a": "null"}, {"a": "null"}], ["R", "R"]).values()) == [[0, 1]]


# --- what the tiers and clearing save, measured without building the messages -------

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from ctxview import load_session  # noqa: E402
from ctxview._fast.bloat import clearing_saving, tiers_saving  # noqa: E402
from ctxview.engine.clearing import plan_clearing  # noqa: E402
from ctxview.engine.tiers_saving import tiers_saving as tiers_saving_rule  # noqa: E402
from ctxview.engine.compression import PRESETS, CompressionPolicy, get_policy  # noqa: E402
from ctxview.model import Content, Message, ToolCall  # noqa: E402
from ctxview.settings import ClearSettings  # noqa: E402
from ctxview.engine.tokens import CharsCounter, SwarmEstimate  # noqa: E402

_ROOT = Path(__file__).parents[1]
_SESSIONS = sorted(p for d in ("sample_sessions", "tests/fixtures/samples", "ctxview/samples")
                   for p in (_ROOT / d).rglob("*") if p.is_file() and p.suffix in (".json", ".jsonl"))
_POLICIES = [PRESETS["default"], PRESETS["light"], PRESETS["aggressive"], get_policy("1:full,3:40,*:7"),
             get_policy("2:full,5000:30,*:7"),  # a tier past the table's 4095 ages
             CompressionPolicy(tool_name_from="tool_call"),
             # code characters and several slots in the marker, code characters in the hint
             CompressionPolicy(tiers="0:full,*:3", marker="{n}({n}];", hint=" {tool}{}", tool_name_from="tool_call",
                               rerunnable_tools=frozenset({"Read", "Bash", "a"}))]
_CLEARINGS = [ClearSettings(), ClearSettings(keep=0), ClearSettings(keep=10, exclude=("Read", "Bash")),
              ClearSettings(trigger=5000), ClearSettings(min_saving=2000), ClearSettings(placeholder="x;{}")]


def _conversations():
    for path in _SESSIONS:
        for conv in load_session(path).conversations:
            yield path.name, conv.messages


def _tool_indices(messages):
    return [i for i, m in enumerate(messages) if m.role == "tool"]


def _by_text(messages, per):
    """The tally's tool results by text, as the bloat analysis passes them to tiers_saving."""
    from ctxview.engine.bloat import _Tally
    from ctxview._fast.bloat import scan_messages

    return _Tally(messages, per, SwarmEstimate(), 20, 1000, None, scan_messages(messages, per)).same_text


def test_the_samples_are_found():
    assert len(_SESSIONS) >= 15


@pytest.mark.parametrize("counter", [SwarmEstimate(), CharsCounter()], ids=lambda c: c.name)
def test_tiers_saving_equals_cutting_and_counting_on_the_samples(counter):
    for name, msgs in _conversations():
        per = [counter.count_message(m) for m in msgs]
        for policy in _POLICIES:
            for keep in (0, 3, 10):
                built = tiers_saving_rule(msgs, keep, policy, per, counter, counter.count_message)
                assert tiers_saving(msgs, keep, policy, per, counter, counter.count_message) == built, (name, policy, keep)
                assert tiers_saving(msgs, keep, policy, per, counter, counter.count_message,
                                    _tool_indices(msgs)) == built, (name, policy, keep)
                assert tiers_saving(msgs, keep, policy, per, counter, counter.count_message,
                                    by_text=_by_text(msgs, per)) == built, (name, policy, keep)


@pytest.mark.parametrize("counter", [SwarmEstimate(), CharsCounter()], ids=lambda c: c.name)
def test_clearing_saving_equals_clearing_and_counting_on_the_samples(counter):
    for name, msgs in _conversations():
        per = [counter.count_message(m) for m in msgs]
        for clear in _CLEARINGS:
            result = plan_clearing(msgs, clear, counter, counts=per)
            assert (clearing_saving(msgs, clear, counter, per, counter.count_message)
                    == (len(result.cleared), result.saved_tokens)), (name, clear)
            assert (clearing_saving(msgs, clear, counter, per, counter.count_message, None, _tool_indices(msgs),
                                    _by_text(msgs, per)) == (len(result.cleared), result.saved_tokens)), (name, clear)


# texts with code characters, non-ASCII, a lone surrogate, what detection finds (Read, Grep, Glob)
_texts = st.one_of(st.text(alphabet="ab{}();→💡\ud800 \n", max_size=40),
                   st.sampled_from(["", "[tool result cleared to save context]", "x;{}", "     1→line\n" * 9,
                                    "Found 3 files matching *.py\na\nb\nc", "4 matches in 2 files\n" + "x" * 30,
                                    "memory://a\n     1→x" * 3]))
_contents = st.one_of(_texts, st.builds(Content, _texts), st.none())
_tool_message = st.builds(lambda content, call, name: Message("tool", content, tool_call_id=call, tool_name=name),
                          _contents, st.sampled_from([None, "c1", "c2", "c3"]), st.sampled_from([None, "Read", "Bash"]))
_calls = st.lists(st.builds(ToolCall, st.sampled_from(["c1", "c2", "c3", ""]), st.sampled_from(["Read", "Bash", "a"]),
                            st.just({"x": 1})), max_size=2)
_message = st.one_of(_tool_message, st.builds(lambda t, c: Message("assistant", t, tool_calls=tuple(c)), _texts, _calls),
                     st.builds(lambda t: Message("user", t), _texts))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_message, max_size=25), st.sampled_from(_POLICIES), st.integers(-2, 6))
def test_tiers_saving_equals_cutting_and_counting(messages, policy, keep):
    counter = SwarmEstimate()
    per = [counter.count_message(m) for m in messages]
    built = tiers_saving_rule(messages, keep, policy, per, counter, counter.count_message)
    assert tiers_saving(messages, keep, policy, per, counter, counter.count_message) == built
    assert tiers_saving(messages, keep, policy, per, counter, counter.count_message, _tool_indices(messages)) == built
    assert tiers_saving(messages, keep, policy, per, counter, counter.count_message,
                        by_text=_by_text(messages, per)) == built


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_message, max_size=25), st.sampled_from(_CLEARINGS), st.integers(-1, 4))
def test_clearing_saving_equals_clearing_and_counting(messages, clear, keep):
    counter = SwarmEstimate()
    clear = ClearSettings(keep, clear.exclude, clear.clear_inputs, clear.trigger, min(clear.min_saving, 40),
                          clear.placeholder)
    per = [counter.count_message(m) for m in messages]
    result = plan_clearing(messages, clear, counter, counts=per)
    assert clearing_saving(messages, clear, counter, per, counter.count_message) == (len(result.cleared),
                                                                                   result.saved_tokens)
    # given the results and the results by text (as the bloat analysis does)
    assert (clearing_saving(messages, clear, counter, per, counter.count_message, None, _tool_indices(messages),
                            _by_text(messages, per)) == (len(result.cleared), result.saved_tokens))


def test_the_bloat_analysis_with_the_pipelines_rows_equals_it_without():
    from ctxview.engine.bloat import analyze_context_bloat
    from ctxview.pipeline import PipelineCache, prepare
    from ctxview.settings import settings_for

    for path in _SESSIONS:
        for conv in load_session(path).conversations:
            settings = settings_for(conv, {})
            cache = PipelineCache()
            prepare(conv, settings, cache=cache)
            counter = cache.counter(conv, settings.counter)
            rows = cache.base_rows(cache.data(conv), counter)
            for keep in (0, 10):
                plain = analyze_context_bloat(conv.messages, counter=counter, keep_recent=keep,
                                              system_prompt=conv.system_prompt, ephemeral=conv.ephemeral)
                fast = analyze_context_bloat(conv.messages, counter=counter, keep_recent=keep, rows=rows,
                                             system_prompt=conv.system_prompt, ephemeral=conv.ephemeral)
                assert fast.to_dict() == plain.to_dict(), (path.name, conv.name, keep)


@pytest.mark.parametrize("largest", [0, 1, 3, 5, -2])
def test_the_largest_messages_are_the_sorts_first_ones(largest):
    from ctxview.engine.bloat import analyze_context_bloat

    msgs = [Message("user", "x" * k) for k in (40, 8, 40, 12, 8, 40, 0, 12)]
    per = [SwarmEstimate().count_message(m) for m in msgs]
    order = sorted(range(len(msgs)), key=lambda j: -per[j])[:largest]
    assert [x["index"] for x in analyze_context_bloat(msgs, largest=largest).largest] == order


def _summary_as_bloat_sees_it(messages, before):
    """The bloat analysis's view of plan_summary(messages, before, "llm"): span and checkpoint only."""
    from ctxview.engine.budget import checkpoint_message, extractive_summary, summary_span
    from ctxview.engine.grouping import unit_runs

    boundary, removed = summary_span(messages, before, unit_runs(messages))
    inserted = checkpoint_message(len(removed), extractive_summary([messages[i] for i in removed])) if removed else None
    return boundary, tuple(removed), inserted


def _summary_planned(messages, before):
    from ctxview.engine.budget import plan_summary

    result = plan_summary(messages, before, "llm")
    return result.boundary, result.removed, result.inserted


def test_the_summary_span_and_checkpoint_are_plan_summarys_on_the_samples():
    for name, msgs in _conversations():
        for before in (0, 1, len(msgs) // 2, len(msgs) - 10, len(msgs)):
            span = _summary_as_bloat_sees_it(msgs, before)
            assert span[1:] == _summary_planned(msgs, before)[1:], (name, before)
            if span[1]:
                assert span[0] == _summary_planned(msgs, before)[0], (name, before)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_message, max_size=25), st.integers(-2, 27))
def test_the_summary_span_and_checkpoint_are_plan_summarys(messages, before):
    span, planned = _summary_as_bloat_sees_it(messages, before), _summary_planned(messages, before)
    assert span[1:] == planned[1:]
    if span[1]:
        assert span[0] == planned[0]


# --- the stored reminders, counted once per distinct tool result text ------------------

def _stored_reminders_simple(messages, counter):
    """Every message's reminder blocks counted, one message at a time."""
    from ctxview.engine import reminders

    return sum(counter.count(block) for m in messages for block in reminders.extract(m.text))


def _stored_reminders_of(messages, counter, rows=None):
    from ctxview.engine.bloat import _Tally
    from ctxview._fast.bloat import scan_messages

    per = [counter.count_message(m) for m in messages]
    return _Tally(messages, per, counter, 20, 1000, rows, scan_messages(messages, per)).stored_reminders


@pytest.mark.parametrize("counter", [SwarmEstimate(), CharsCounter()], ids=lambda c: c.name)
def test_the_stored_reminders_are_every_messages_on_the_samples(counter):
    for name, msgs in _conversations():
        assert _stored_reminders_of(msgs, counter) == _stored_reminders_simple(msgs, counter), name


_reminded = st.sampled_from(["<system-reminder>\nbe brief\n</system-reminder>", "a<system-reminder>x</system-reminder>b"
                             "<system-reminder>yy</system-reminder>", "<system-reminder>unclosed", "     1→x\n"])
_reminder_message = st.builds(lambda role, text, call: Message(role, text, tool_call_id=call if role == "tool" else None),
                              st.sampled_from(["tool", "user", "assistant", "system"]),
                              st.one_of(_reminded, _texts, st.builds(Content, _reminded)), st.sampled_from([None, "c1"]))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(_message, _reminder_message), max_size=25))
def test_the_stored_reminders_are_every_messages(messages):
    counter = SwarmEstimate()
    assert _stored_reminders_of(messages, counter) == _stored_reminders_simple(messages, counter)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(_message, _reminder_message), max_size=25))
def test_a_results_tool_is_tool_name_of_with_the_calls_names(messages):
    from ctxview.engine.bloat import _result_tool, _Tally
    from ctxview._fast.bloat import scan_messages
    from ctxview.engine.clearing import tool_name_of

    calls = {c.id: c for m in messages for c in m.tool_calls if c.id}
    names = {key: call.name for key, call in calls.items()}
    tally = _Tally(messages, [1] * len(messages), SwarmEstimate(), 0, 0, None, scan_messages(messages, [1] * len(messages)))
    by_tool: dict = {}
    for i, m in enumerate(messages):
        assert _result_tool(m, calls.get(m.tool_call_id) if m.tool_call_id else None) == tool_name_of(m, names)
        if m.role == "tool":
            assert tally.tool_of(i) == tool_name_of(m, names)
            name = tool_name_of(m, names) or "unknown"
            by_tool[name] = by_tool.get(name, 0) + 1
    # the tally's own (inlined) naming: tokens by tool as naming each result by tool_name_of gives
    assert dict(tally.by_tool) == by_tool


# --- the scan in one pass (the usual shape) equals the scan by call id ---------------

def _assert_same_scan(fast, general, where=""):
    assert fast.by_role == general.by_role and list(fast.by_role) == list(general.by_role), where
    assert fast.results == general.results and fast.reminded == general.reminded, where
    assert len(fast.calls) == len(general.calls) and all(a is b for a, b in zip(fast.calls, general.calls)), where
    assert [list(u) for u in fast.units] == [list(u) for u in general.units], where


def test_the_linear_scan_is_the_scan_by_id_on_the_samples():
    from ctxview._fast.bloat import scan_linear
    from ctxview.engine.bloat_scan import scan_by_id

    taken = 0
    for name, msgs in _conversations():
        per = [SwarmEstimate().count_message(m) for m in msgs]
        fast = scan_linear(msgs, per)
        if fast is not None:
            taken += 1
            _assert_same_scan(fast, scan_by_id(msgs, per), name)
    assert taken >= 10  # the usual shape is the samples' shape


@st.composite
def _turns(draw):
    """Conversations of the usual shape (a message with calls, then their results), broken now and
    then: results out of place or of no call, ids used twice, a tool result with calls, messages
    between a call and its results."""
    out, n = [], 0
    for _ in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(["turn", "turn", "turn", "user", "odd"]))
        if kind == "user":
            out.append(Message(draw(st.sampled_from(["user", "system", "assistant"])), draw(_texts)))
            continue
        if kind == "odd":
            out.append(draw(_message))
            continue
        k = draw(st.integers(0, 3))
        ids = [draw(st.sampled_from([f"t{n + j}", "t0", "", "x"])) for j in range(k)]
        n += k
        role = draw(st.sampled_from(["assistant", "assistant", "assistant", "tool"]))
        out.append(Message(role, draw(_texts), tool_calls=tuple(
            ToolCall(i, draw(st.sampled_from(["Read", "Bash", ""])), {"x": j}) for j, i in enumerate(ids))))
        if draw(st.booleans()):
            out.append(Message("user", "between"))
        answers = draw(st.permutations(ids + draw(st.lists(st.sampled_from(["t1", "zz", None, ""]), max_size=1))))
        out.extend(Message("tool", draw(_contents), tool_call_id=i,
                           tool_name=draw(st.sampled_from([None, None, "Grep"]))) for i in answers)
    return out


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_turns())
def test_the_linear_scan_is_the_scan_by_id(messages):
    from ctxview._fast.bloat import scan_linear
    from ctxview.engine.bloat_scan import scan_by_id

    per = list(range(len(messages)))
    fast = scan_linear(messages, per)
    if fast is not None:
        _assert_same_scan(fast, scan_by_id(messages, per))
