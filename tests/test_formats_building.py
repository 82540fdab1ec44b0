"""How values are built fast (_slots.slot_builder, the loaders' builders), and the collector around a load."""

from __future__ import annotations

import dataclasses
import gc
from pathlib import Path

import pytest

from ctxview.formats import load_session
from ctxview.formats.linking import make_message, make_tool_call, make_usage, new_message
from ctxview._slots import slot_builder
from ctxview.model import Message, ToolCall, Usage

FIX = Path(__file__).parent / "fixtures" / "samples" / "claude-code"


def test_twins_build_the_frozen_classes_field_for_field():
    call = make_tool_call("t1", "Read", {"file_path": "a.py"})
    usage = make_usage(1, 2, 3, 4)
    m = make_message("assistant", "hi", None, (call,), "claude", None, usage, "hmm", True, "line 3", "m1",
                     {"k": 1})
    assert type(m) is Message and type(call) is ToolCall and type(usage) is Usage
    assert m == Message("assistant", "hi", None, (ToolCall("t1", "Read", {"file_path": "a.py"}),), "claude", None,
                        Usage(1, 2, 3, 4), "hmm", True, "line 3", "m1", {"k": 1})
    assert make_message("user", "x") == Message("user", "x")
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.content = "changed"  # type: ignore[misc]


def test_messages_built_without_meta_each_get_their_own_dict():
    a, b = make_message("user", "a"), new_message("user", "b")
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
