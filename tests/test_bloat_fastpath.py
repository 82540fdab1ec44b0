"""The bloat analysis' fast paths give what their simple definitions give."""

from __future__ import annotations

import datetime
import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxview.bloat import _args_key, args_keys

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
