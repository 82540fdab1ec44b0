"""RowHeights (the layout's Fenwick tree of row heights) against the plain prefix sums it replaces."""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate

from hypothesis import given, settings, strategies as st

from ctxview.tui.widgets.row_heights import RowHeights

heights_lists = st.lists(st.integers(min_value=0, max_value=40), max_size=80)


def check_same(fast: RowHeights, heights: list[int]) -> None:
    """Everything the layout reads from `fast` equals what the plain list of prefix sums says."""
    prefix = list(accumulate(heights, initial=0))
    assert fast.heights == heights and len(fast) == len(heights)
    assert fast.total == prefix[-1] and list(fast.tops) == prefix and fast.tops == prefix
    assert [fast.top(i) for i in range(len(heights) + 1)] == prefix
    assert [fast.tops[i] for i in range(-len(prefix), len(prefix))] == prefix + prefix
    for y in range(-2, prefix[-1] + 3):
        expected = min(max(bisect_right(prefix, y) - 1, 0), len(heights) - 1)
        assert fast.row_at(y) == expected, y


@given(heights_lists)
def test_built_equals_the_prefix_sums(heights):
    check_same(RowHeights(list(heights)), heights)


@settings(max_examples=200)
@given(heights_lists.filter(bool), st.lists(st.tuples(st.integers(min_value=0), st.integers(0, 40)), max_size=30))
def test_updated_equals_a_rebuilt_one(heights, updates):
    fast = RowHeights(list(heights))
    plain = list(heights)
    for where, height in updates:
        row = where % len(plain)
        fast.set(row, height)
        plain[row] = height
        check_same(fast, plain)
    rebuilt = RowHeights(list(plain))
    assert fast._tree == rebuilt._tree and fast.total == rebuilt.total  # the tree itself, node by node


def test_no_rows():
    empty = RowHeights([])
    assert empty.total == 0 and list(empty.tops) == [0] and empty.row_at(0) == -1 and empty.row_at(5) == -1


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 50), max_size=300))
def test_the_tree_built_a_level_at_a_time_is_the_one_by_definition(heights):
    from array import array
    from itertools import accumulate

    from ctxview.tui.widgets.row_heights import fenwick_nodes

    prefix = array("q", accumulate(heights, initial=0))
    assert fenwick_nodes(prefix) == array("q", [prefix[i] - prefix[i & (i - 1)] for i in range(len(heights) + 1)])
