"""A layout updated from the one on screen (only the rows a keep_recent delta changed re-measured)
equals one built from scratch for the same view."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from sessions import tool_session

from ctxview.pipeline import PipelineCache, prepare
from ctxview.pipeline.delta import rows_changed
from ctxview.tui.layout import Layout
from ctxview.tui.workers import Layouts
from ctxview.engine.view import ClearSettings, Settings

CONV = tool_session(pairs=14)
SETTINGS = (Settings(tiers="default"), Settings(tiers="aggressive"), Settings(),
            Settings(tiers="default", clear=ClearSettings(keep=2, min_saving=0)))


def shown(layout: Layout) -> tuple:
    return layout.base_heights, layout.heights, list(layout.offsets), layout.runs, layout.total_lines


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(SETTINGS), st.lists(st.integers(0, 60), min_size=1, max_size=8),
       st.sets(st.integers(0, 60), max_size=3))
def test_updated_layout_equals_a_fresh_one(base, keeps, expand):
    cache, layouts = PipelineCache(), Layouts()
    view = prepare(CONV, base, cache=cache)
    layout = layouts.build(CONV, view)
    known = updated = 0
    for k in keeps:
        new_view = prepare(CONV, Settings(**{**vars_of(base), "keep_recent": k}), cache=cache)
        known += rows_changed(cache, layout.view, new_view) is not None
        new = layouts.build(CONV, new_view, layout, cache)
        took_over = new.takes_over is not None
        updated += took_over
        new.settle()
        # as PanePair.show: the same rows expanded (their heights as the pair would measure them)
        new.expanded = {r: 7 + r % 5 for r in expand if r < len(new)}
        new.reflow()
        fresh = Layouts().build(CONV, new_view)
        fresh.expanded = dict(new.expanded)
        fresh.reflow()
        assert shown(new) == shown(fresh)
        assert [new.row_at(y) for y in range(new.total_lines + 2)] == [fresh.row_at(y) for y in range(fresh.total_lines + 2)]
        assert layout.handed_on == took_over
        layout = new
    assert updated == known  # every step the pipeline named the changed rows of went the fast way


def vars_of(s: Settings) -> dict:
    return {f: getattr(s, f) for f in s.__dataclass_fields__}


def test_the_update_path_is_taken_for_a_keep_recent_step():
    cache, layouts = PipelineCache(), Layouts()
    first = layouts.build(CONV, prepare(CONV, Settings(tiers="default"), cache=cache))
    view = prepare(CONV, Settings(tiers="default", keep_recent=3), cache=cache)
    assert rows_changed(cache, first.view, view) == range(len(view.rows) - 10, len(view.rows) - 3)
    new = layouts.build(CONV, view, first, cache)
    assert new.takes_over is not None  # built from `first`, which still holds its own heights
    before = list(first.heights)
    assert first.heights == before and not first.handed_on
    new.settle()
    assert first.handed_on and new.lines is first.lines  # the same tree, updated
    fresh = Layouts().build(CONV, view)
    assert shown(new) == shown(fresh)


def test_an_unknown_pair_is_measured_in_full():
    cache, layouts = PipelineCache(), Layouts()
    first = layouts.build(CONV, prepare(CONV, Settings(tiers="default"), cache=cache))
    other = prepare(CONV, Settings(tiers="aggressive"), cache=cache)  # the full path: no step noted
    assert rows_changed(cache, first.view, other) is None
    new = layouts.build(CONV, other, first, cache)
    assert new.takes_over is None and not first.handed_on
    assert shown(new) == shown(Layouts().build(CONV, other))


from ctxview.model import Message, ToolCall  # noqa: E402
from ctxview.tui.block_heights import block_height, collapsed_height, tallest_collapsed  # noqa: E402

MESSAGES = st.builds(
    lambda role, text, thinking, calls: Message(role, text, thinking=thinking,
                                                tool_calls=tuple(ToolCall(f"c{i}", "Read") for i in range(calls))),
    st.sampled_from(["user", "assistant", "tool"]), st.text(alphabet="ab\n", max_size=12),
    st.sampled_from([None, "", "hmm"]), st.integers(0, 4))


@given(MESSAGES, st.none() | MESSAGES)
def test_block_height_is_the_taller_side(stored, prepared):
    assert collapsed_height(stored) <= tallest_collapsed(stored)
    simple = max(collapsed_height(stored), collapsed_height(prepared))
    assert block_height(collapsed_height(stored), stored, prepared) == simple
    assert block_height(collapsed_height(stored), stored, stored) == collapsed_height(stored)


def test_as_sent_after_a_compaction_the_steps_are_named_in_stored_positions():
    from pathlib import Path

    from ctxview.formats import load_session

    path = Path(__file__).parents[2] / "sample_sessions" / "claude-code" / "7b1f3c52-9a4e-4d1b-8f57-3e2c9d0a6b18.jsonl"
    conv = load_session(str(path)).conversations[0]
    cache, layouts = PipelineCache(), Layouts()
    view = prepare(conv, Settings(tiers="default", keep_recent=10), cache=cache)
    assert view.stats["compacted"] > 0  # stage 0 mapped the history as sent back to stored positions
    layout = layouts.build(conv, view)
    for k in (3, 12, 10, 0, 12):
        new_view = prepare(conv, Settings(tiers="default", keep_recent=k), cache=cache)
        changed = rows_changed(cache, layout.view, new_view)
        assert changed is not None and changed.start >= view.stats["compacted"]
        rows, old = list(new_view.rows), list(layout.view.rows)
        assert all(rows[i] == old[i] for i in range(len(rows)) if i not in changed)
        new = layouts.build(conv, new_view, layout, cache)
        assert new.takes_over is not None
        new.settle()
        assert shown(new) == shown(Layouts().build(conv, new_view))
        layout = new


def _collapsed_by_definition(message) -> int:
    """collapsed_height as the preview shows it: header, the lines from preview_start (at most
    PREVIEW_LINES, then a "more" line), the thinking line, the tool calls or "(empty)"."""
    from ctxview.tui.block_heights import PREVIEW_LINES, TOOL_CALL_PREVIEW, preview_start

    text = message.text.rstrip("\n")
    lines = text.count("\n", preview_start(text)) + 1 if text else 0
    height = 1 + min(lines, PREVIEW_LINES + 1) + (1 if message.thinking else 0)
    calls = len(message.tool_calls)
    return height + (min(calls, TOOL_CALL_PREVIEW + 1) if calls else (0 if lines else 1))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.text(alphabet=" \tab→", max_size=5) | st.integers(0, 400).map("→".__mul__), max_size=7).map("\n".join),
       st.text(alphabet=" \n", max_size=3), st.text(alphabet=" \n", max_size=3), st.booleans(), st.integers(0, 4))
def test_collapsed_height_is_its_definition(body, before, after, thinking, calls):
    # lines short and long (past the 256 characters collapsed_height first looks at), blank ones around
    text = before + body + after
    from ctxview.model import ToolCall

    message = Message("assistant", text, thinking="t" if thinking else None,
                      tool_calls=tuple(ToolCall(f"c{k}", "Read") for k in range(calls)))
    assert collapsed_height(message) == _collapsed_by_definition(message)


def test_a_fresh_layout_measures_each_row_as_block_height_does():
    # (Layout.build's _all_heights takes block_height's unchanged-row case inline)
    from ctxview.formats import DEMO_PATH, load_session
    from ctxview.tui.block_heights import block_height, collapsed_height
    from ctxview.tui.layout import head_height, removed_runs
    from ctxview.engine.view import row_columns

    budget = Settings(tiers="default", budget=3000, old_messages="remove", keep_recent=4)
    for conv in (CONV, *load_session(DEMO_PATH).conversations):
        for s in (*SETTINGS, budget):
            view = prepare(conv, s)
            layout = Layout.build(view)
            _, stored, prepared = row_columns(view.rows)
            simple = [head_height(layout.head), *(block_height(collapsed_height(a), a, b) for a, b in zip(stored, prepared))]
            assert layout.base_heights == simple
            assert layout.runs == removed_runs(list(stored), list(prepared), 1)
