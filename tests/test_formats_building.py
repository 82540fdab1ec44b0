"""How values are built fast (_slots.slot_builder, formats.builders), and the collector around a load.

Each fast builder must give exactly what the simple construction gives: the class's own
constructor, and for the raw-value builders the plain rule they stand for.
"""

from __future__ import annotations

import dataclasses
import gc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxview._slots import slot_builder
from ctxview.formats import load_session
from ctxview.formats.parsing.builders import (
    anthropic_usage,
    arguments_from,
    message,
    openai_usage,
    swarm_message_usage,
    swarm_usage,
    tool_call,
    tool_call_from,
    usage,
)
from ctxview.formats.parsing.linking import last_model, new_message
from ctxview.model import Content, Message, ToolCall, Usage

FIX = Path(__file__).parent / "fixtures" / "samples" / "claude-code"

json_scalars = st.none() | st.booleans() | st.integers(-5, 10**6) | st.floats(allow_nan=False) | st.text(max_size=8)
json_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=6)
counts = st.integers(0, 10**9)
maybe_str = st.none() | st.text(max_size=6)
calls = st.builds(ToolCall, st.text(max_size=4), st.text(max_size=4), st.dictionaries(st.text(max_size=3), json_scalars,
                                                                                      max_size=2))
usages = st.none() | st.builds(Usage, counts, counts, counts, counts)
message_fields = st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant", "tool", "system"])}, optional={
    "content": st.none() | st.text(max_size=8) | st.builds(Content, st.text(max_size=4), st.tuples(json_scalars)),
    "tool_call_id": maybe_str, "tool_calls": st.lists(calls, max_size=2).map(tuple), "model_id": maybe_str,
    "tool_name": maybe_str, "usage": usages, "thinking": maybe_str, "injected": st.booleans(), "origin": maybe_str,
    "id": maybe_str, "meta": st.dictionaries(st.text(max_size=3), json_scalars, max_size=2)})


@settings(max_examples=200, deadline=None)
@given(fields=message_fields)
def test_message_equals_the_constructor_by_name_and_by_position(fields):
    built = message(**fields)
    assert type(built) is Message and built == Message(**fields)
    ordered = [fields.get(f.name, f.default if f.default is not dataclasses.MISSING else {})
               for f in dataclasses.fields(Message)]
    assert new_message(*ordered) == built


@settings(max_examples=200, deadline=None)
@given(id=json_values, name=json_values, arguments=json_values)
def test_tool_call_from_is_the_plain_rule(id, name, arguments):
    built = tool_call_from(id, name, arguments)
    assert type(built) is ToolCall
    assert built == ToolCall(str(id or ""), str(name or ""), arguments_from(arguments))


@settings(max_examples=200, deadline=None)
@given(u=st.dictionaries(st.sampled_from(["input_tokens", "output_tokens", "cache_read_input_tokens",
                                          "cache_creation_input_tokens", "prompt_tokens", "completion_tokens",
                                          "cached_input_tokens", "cached_tokens", "cache_read_tokens",
                                          "cache_creation_tokens", "cache_write_tokens"]),
                         st.integers(0, 10**6) | json_scalars, max_size=6))
def test_the_usage_readers_are_their_plain_rules(u):
    def n(key):
        return u.get(key) if type(u.get(key)) is int else 0

    assert type(anthropic_usage(u)) is Usage
    assert anthropic_usage(u) == Usage(n("input_tokens"), n("output_tokens"), n("cache_read_input_tokens"),
                                       n("cache_creation_input_tokens"))
    assert swarm_usage(u) == Usage(n("input_tokens"), n("output_tokens"), n("cached_tokens") or n("cache_read_tokens"),
                                   n("cache_creation_tokens") or n("cache_write_tokens"))
    has_counts = type(u.get("input_tokens")) is int or type(u.get("output_tokens")) is int
    assert swarm_message_usage(u) == (Usage(n("input_tokens"), n("output_tokens"), n("cached_tokens"),
                                            n("cache_creation_tokens")) if has_counts else None)
    inp = u.get("input_tokens", u.get("prompt_tokens"))
    out = u.get("output_tokens", u.get("completion_tokens"))
    cached = u.get("cached_input_tokens")
    inp, out, cached = (v if type(v) is int else 0 for v in (inp, out, cached))
    assert openai_usage(u) == Usage(max(0, inp - cached), out, cached, 0)


def test_the_usage_readers_refuse_what_is_not_an_object():
    assert openai_usage([1]) is None and swarm_usage("x") is None and openai_usage(None) is None


def test_openai_cached_tokens_may_sit_in_the_details():
    assert openai_usage({"prompt_tokens": 10, "completion_tokens": 2, "prompt_tokens_details": {"cached_tokens": 4}}) \
        == Usage(6, 2, 4, 0)


def test_twins_build_the_frozen_classes_field_for_field():
    call = tool_call("t1", "Read", {"file_path": "a.py"})
    u = usage(1, 2, 3, 4)
    m = message(role="assistant", content="hi", tool_calls=(call,), model_id="claude", usage=u, thinking="hmm",
                injected=True, origin="line 3", id="m1", meta={"k": 1})
    assert type(m) is Message and type(call) is ToolCall and type(u) is Usage
    assert m == Message("assistant", "hi", None, (ToolCall("t1", "Read", {"file_path": "a.py"}),), "claude", None,
                        Usage(1, 2, 3, 4), "hmm", True, "line 3", "m1", {"k": 1})
    assert message(role="user", content="x") == Message("user", "x")
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.content = "changed"  # type: ignore[misc]


def test_messages_built_without_meta_each_get_their_own_dict():
    a, b = message(role="user", content="a"), new_message("user", "b")
    assert a.meta == {} and b.meta == {} and a.meta is not b.meta


def test_a_builder_follows_new_fields_and_their_defaults():
    # A field added later (with a default, at the end) must not break the positional builders.
    @dataclasses.dataclass(frozen=True, slots=True)
    class Grown:
        a: int
        b: str = "b"
        c: dict = dataclasses.field(default_factory=dict)
        d: tuple = ()

    build = slot_builder(Grown, "build")
    assert build(1) == Grown(1)
    assert build(1, "x", {"k": 2}) == Grown(1, "x", {"k": 2})
    assert build(1).c is not build(1).c
    assert type(build(1)) is Grown
    with pytest.raises(dataclasses.FrozenInstanceError):
        build(1).a = 2  # type: ignore[misc]


def test_a_builder_with_fixed_fields_copies_them_from_its_extra_parameters():
    @dataclasses.dataclass(frozen=True, slots=True)
    class Pair:
        a: int
        b: str = "b"

    swap_b = slot_builder(Pair, "swap_b", {"a": "src.a"}, ("src",))
    assert swap_b(Pair(7, "x"), "y") == Pair(7, "y")
    assert swap_b(Pair(7, "x")) == Pair(7, "b")


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_is_left_as_it_was(enabled):
    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        load_session(FIX / "spotter-short.jsonl")
        assert gc.isenabled() is enabled
    finally:
        gc.enable() if was else gc.disable()


def test_a_load_leaves_no_young_collection_pending():
    # registry._load pauses the collector with keep=True: what the load built is moved to the oldest
    # generation as it stands, not walked by a young collection at the next allocation
    gc.unfreeze()  # (keep is skipped while anything is frozen: an inspector test run before froze its views)
    session = load_session(FIX / "spotter-tool-heavy.jsonl")
    assert gc.get_count()[0] < 100 and gc.get_freeze_count() == 0
    assert session.conversations


def test_keep_still_collects_garbage_made_in_the_block_and_leaves_frozen_objects_frozen():
    import weakref

    from ctxview.gcpause import paused_gc

    class Node:
        def __init__(self) -> None:
            self.me = self

    with paused_gc(keep=True):
        cycle = Node()
    ref = weakref.ref(cycle)
    del cycle
    gc.collect()
    assert ref() is None
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with paused_gc(keep=True):
            [[i] for i in range(100)]
        assert gc.get_freeze_count() == frozen  # (unfreeze would have thawed someone else's)
    finally:
        gc.unfreeze()


one_block = st.one_of(
    st.fixed_dictionaries({"type": st.just("tool_use"), "id": json_values, "name": json_values, "input": json_values}),
    st.fixed_dictionaries({"type": st.just("text"), "text": json_values}),
    st.fixed_dictionaries({"type": st.just("thinking"), "thinking": json_values},
                          optional={"signature": json_values}),
)


@settings(max_examples=300, deadline=None)
@given(block=one_block)
def test_claude_code_one_block_lines_read_as_the_general_path_reads_them(block):
    # records.assistant_data reads the usual line (one block) itself; anthropic_assistant reads any content
    from ctxview.formats.parsing.blocks import anthropic_assistant
    from ctxview.formats.claude_code.records import assistant_data

    data = assistant_data({}, {"content": [block]}, None)
    texts, thinking, calls = anthropic_assistant([block])
    assert (list(data[2]), list(data[3]), list(data[4])) == (texts, thinking, calls)
    assert all(type(c) is ToolCall for c in data[4])


def test_keep_does_nothing_off_the_main_thread(monkeypatch):
    # the inspector loads in a worker thread while its main thread may freeze: no freeze/unfreeze there
    import threading

    from ctxview.gcpause import paused_gc

    calls = []
    monkeypatch.setattr(gc, "freeze", lambda: calls.append("freeze"))
    monkeypatch.setattr(gc, "unfreeze", lambda: calls.append("unfreeze"))

    def work():
        with paused_gc(keep=True):
            pass

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert calls == []
    work()
    assert calls == ["freeze", "unfreeze"]


@given(st.lists(st.tuples(st.sampled_from(["user", "assistant", "tool"]),
                          st.sampled_from([None, "", "<synthetic>", "claude-sonnet-4-5", "claude-opus-4-1"]))))
def test_last_model_is_the_last_assistant_model_named(specs):
    msgs = [Message(role, "x", model_id=model) for role, model in specs]
    named = [m.model_id for m in msgs if m.role == "assistant" and m.model_id and not m.model_id.startswith("<")]
    assert last_model(msgs) == (named[-1] if named else None)
