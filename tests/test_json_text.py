"""The indented JSON every --json output and export writes (export/json_text.py): written in C where
orjson can, equal to the plain rule, json.dumps then the escapes."""

from __future__ import annotations

import dataclasses
import json
import math
from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from ctxview.export.json_text import _indented_in_c, _json, dumps, escape_unsafe


@dataclasses.dataclass
class Spot:
    x: int


def plain(data):
    """The rule: json.dumps (strict, indented), then the terminal-active characters escaped."""
    return escape_unsafe(_json(data, indent=2)) + "\n"


# floats written alike by both (no exponent: Python's repr uses one below 1e-4 and from 1e16)
PLAIN_FLOATS = st.floats(min_value=1e-4, max_value=1e15) | st.floats(min_value=-1e15, max_value=-1e-4) \
    | st.sampled_from([0.0, -0.0, math.nan, math.inf, -math.inf])
TEXTS = st.text(st.characters(codec=None), max_size=12) | st.sampled_from(
    ["\x1b[31mred", "\u202eevil", "\ud800 lone", "tab\tnew\nline", "\x7f", "\u2028", "caf\u00e9", "\U000e0041"])
SCALARS = st.none() | st.booleans() | st.integers(-2**70, 2**70) | PLAIN_FLOATS | TEXTS \
    | st.decimals(allow_nan=False, places=4) | st.builds(Spot, st.integers()) | st.datetimes() | st.dates()
KEYS = TEXTS | st.integers(-5, 5) | st.booleans() | st.none()
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4) | st.lists(inner, max_size=3).map(tuple)
                      | st.dictionaries(KEYS, inner, max_size=4), max_leaves=20)


@given(VALUES)
def test_the_json_written_in_c_is_the_rules(data):
    assert dumps(data) == plain(data)


@given(st.recursive(st.floats() | st.integers(), lambda inner: st.lists(inner, max_size=4), max_leaves=10))
def test_any_float_is_the_same_number(data):
    # (a float needing an exponent is written 1e-7 where json writes 1e-07)
    assert json.loads(dumps(data)) == json.loads(plain(data))


def test_a_decimal_is_a_string_and_nan_is_null():
    assert _indented_in_c([1]) is not None and _indented_in_c(["\ud800"]) is None   # (json writes that one)
    assert dumps({"usd": Decimal("0.1234"), "x": math.nan, 1: (2, 3)}) == (
        '{\n  "usd": "0.1234",\n  "x": null,\n  "1": [\n    2,\n    3\n  ]\n}\n')
