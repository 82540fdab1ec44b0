"""Rendering rows to Text without an app: heights, spans, hostile text."""

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.style import Style

from ctxview.model import Message, ToolCall
from ctxview.tui.block_heights import PREVIEW_LINES, collapsed_height
from ctxview.tui.layout import Layout, removed_runs
from ctxview.tui.render import PaneStyles, block_lines, styled_line
from ctxview.engine.view import Change, PreparedView, Row, Settings

STYLES = PaneStyles()
CONSOLE = Console(width=200, color_system="truecolor", markup=False, emoji=False, highlight=False)


def row(stored, prepared, **kw):
    return Row(index=kw.pop("index", 0), stored=stored, prepared=prepared, **kw)


def view_of(rows):
    return PreparedView(settings=Settings(), rows=tuple(rows), prepared=tuple(r.prepared for r in rows if r.prepared))


def test_collapsed_height_counts_header_preview_and_more_line():
    assert collapsed_height(None) == 1
    assert collapsed_height(Message("user", "one line")) == 2
    assert collapsed_height(Message("user", "")) == 2  # header + "(empty)"
    many = Message("tool", "\n".join(str(i) for i in range(10)))
    assert collapsed_height(many) == 1 + PREVIEW_LINES + 1
    calls = tuple(ToolCall(f"c{i}", "Read") for i in range(5))
    assert collapsed_height(Message("assistant", "", tool_calls=calls)) == 1 + 2 + 1


message_text = st.text(alphabet=st.sampled_from("ab \n\t\x1b[]\u202e\x00é中"), max_size=80)


@settings(max_examples=150, deadline=None)
@given(stored=message_text, prepared=message_text, removed=st.booleans(), ncalls=st.integers(0, 4),
       width=st.integers(5, 60))
def test_layout_height_matches_rendered_lines(stored, prepared, removed, ncalls, width):
    calls = tuple(ToolCall(f"c{i}", "Grep", {"pattern": "x"}) for i in range(ncalls))
    s = Message("assistant", stored, tool_calls=calls)
    p = None if removed else Message("assistant", prepared)
    r = row(s, p)
    layout = Layout.build(view_of([r]))  # (position 0: the #sys row)
    lines_s = block_lines(r, "stored", STYLES, width, False, console=CONSOLE)
    lines_p = block_lines(r, "prepared", STYLES, width, False, layout.runs.get(1), 1, console=CONSOLE)
    assert layout.heights[1] == max(len(lines_s), len(lines_p))
    for line in lines_s + lines_p:
        assert line.cell_len <= width or line is lines_s[0] or line is lines_p[0]


def test_prefix_sums_and_row_at():
    rows = [row(Message("user", "x\n" * i), Message("user", "x"), index=i) for i in range(6)]
    layout = Layout.build(view_of(rows))
    assert layout.offsets[0] == 0 and layout.heights[0] == 2  # the #sys row: a ghost (no system prompt)
    assert layout.total_lines == sum(layout.heights)
    for i in range(7):
        top = layout.row_top(i)
        assert layout.row_at(top) == i
        assert layout.row_at(top + layout.heights[i] - 1) == i
        assert layout.row(i) is (layout.head if i == 0 else rows[i - 1])
    assert layout.row_at(10_000) == 6
    layout.expanded = {2: 40}
    layout.reflow()
    assert layout.heights[2] == 40 and layout.total_lines == sum(layout.heights)


def test_removed_runs_group_consecutive_rows():
    kept = row(Message("user", "a"), Message("user", "a"))
    gone = row(Message("tool", "b"), None)
    rows = (kept, gone, gone, gone, kept, gone)
    runs = removed_runs([r.stored for r in rows], [r.prepared for r in rows])
    assert runs == {1: (1, 3), 2: (1, 3), 3: (1, 3), 5: (5, 1)}


@given(st.lists(st.sampled_from(["kept", "gone", "ghost", "inserted"]), max_size=30), st.integers(0, 3))
def test_removed_runs_are_the_runs_of_rows_missing_on_the_prepared_side(kinds, offset):
    # (removed_runs returns at once when no row is missing: the usual view; this is its definition)
    m = Message("user", "a")
    stored = [None if k in ("ghost", "inserted") else m for k in kinds]
    prepared = [None if k in ("gone", "ghost") else m for k in kinds]
    missing = [s is not None and p is None for s, p in zip(stored, prepared)]
    expected = {}
    for i, gone in enumerate(missing):
        if gone:
            start = i if i == 0 or not missing[i - 1] else expected[i - 1 + offset][0] - offset
            length = next((j for j in range(start, len(missing)) if not missing[j]), len(missing)) - start
            expected[i + offset] = (start + offset, length)
    assert removed_runs(stored, prepared, offset) == expected
    assert removed_runs(tuple(stored), tuple(prepared), offset) == expected


def test_ghost_line_names_the_run_once():
    gone = row(Message("tool", "b"), None, changes=(Change("removed", "budget", "over budget"),))
    rows = [gone, gone, gone]
    layout = Layout.build(view_of(rows))
    assert 0 not in layout.runs  # the #sys row
    first = block_lines(rows[0], "prepared", STYLES, 40, False, layout.runs[1], 1)
    later = block_lines(rows[1], "prepared", STYLES, 40, False, layout.runs[2], 2)
    assert "3 messages removed" in first[0].plain and "budget" in first[0].plain
    assert "removed" not in later[0].plain and len(later) == 1


def test_badges_show_tier_and_age():
    change = Change("compressed", "compression", "tier 3", tier=2, age=27)  # (tier: 0-based)
    r = row(Message("tool", "x" * 50), Message("tool", "x"), changes=(change,), tokens_stored=20, tokens_prepared=2)
    header = block_lines(r, "prepared", STYLES, 80, False)[0].plain
    assert "compressed t3 age 27" in header and "2 tok" in header and "-18" in header


def test_reminder_and_ephemeral_spans_styled_on_exact_text():
    text = "before <system-reminder>R</system-reminder> after EPH"
    start = text.index("<system")
    end = text.index(" after")
    eph = text.index("EPH")
    r = row(Message("user", text), Message("user", text), stored_reminders=((start, end),),
            prepared_reminders=((start, end),), ephemeral_spans=((eph, len(text)),))
    line = block_lines(r, "prepared", STYLES, 200, False)[1]
    assert line.plain == text
    styled = {(s.start, s.end): s.style for s in line.spans}
    assert styled[(start, end)] == STYLES.reminder
    assert styled[(eph, len(text))] == STYLES.ephemeral


def test_spans_stay_exact_when_sanitizing_lengthens_text():
    text = "\u202eX<system-reminder>R</system-reminder>"
    start = text.index("<")
    line = styled_line(text, 0, len(text), [(start, len(text), STYLES.reminder)], STYLES)
    assert line.plain == "<U+202E>X<system-reminder>R</system-reminder>"
    (span,) = line.spans
    assert line.plain[span.start:span.end] == "<system-reminder>R</system-reminder>"


def test_truncation_marker_and_hint_styled():
    text = "data\n...[120 chars truncated for context management]\n\n\U0001F4A1 If you need the full output, re-run the Read tool with the same parameters."
    r = row(Message("tool", text), Message("tool", text))
    lines = block_lines(r, "prepared", STYLES, 200, True, console=CONSOLE)
    marker = next(l for l in lines if "truncated" in l.plain)
    hint = next(l for l in lines if "re-run" in l.plain)
    assert any(s.style == STYLES.marker for s in marker.spans)
    assert any(s.style == STYLES.hint for s in hint.spans)


HOSTILE = "[bold]B[/bold] [$accent] [@click=app.quit]Q[/] \x1b[31mRED\x1b]0;TITLE\x07 \x00 \x9b \u202eABC\u2066"


def test_hostile_text_is_rendered_as_visible_characters_only():
    r = row(Message("user", HOSTILE), Message("user", HOSTILE))
    for side in ("stored", "prepared"):
        for line in block_lines(r, side, STYLES, 300, True, console=CONSOLE):
            assert "[bold]" in line.plain or line is not None
            segments = list(line.render(CONSOLE))
            for seg in segments:
                for ch in seg.text:
                    assert unicodedata.category(ch) not in ("Cc", "Cf"), repr(ch)
                # Markup in the text never became a style or a click action.
                assert seg.style is None or not seg.style.bold or "B" not in seg.text or "[bold]" in seg.text
                assert seg.style is None or not seg.style.meta
    body = block_lines(r, "stored", STYLES, 300, True, console=CONSOLE)[1].plain
    assert "[bold]B[/bold]" in body and "[@click=app.quit]" in body and "␛[31m" in body
    assert "␛]0;TITLE␇" in body and "␀" in body and "<U+009B>" in body and "<U+202E>" in body


def test_no_style_comes_from_text_content():
    r = row(Message("user", "[red on blue]x[/]"), Message("user", "[red on blue]x[/]"))
    line = block_lines(r, "stored", STYLES, 100, False)[1]
    assert line.plain == "[red on blue]x[/]"
    assert all(s.style in (None, "") or isinstance(s.style, Style) for s in line.spans)
    assert not line.spans


def test_cached_heights_match_a_fresh_build():
    from sessions import tool_session

    from ctxview.pipeline import PipelineCache, prepare
    from ctxview.tui.block_heights import stored_heights_of

    conv = tool_session(pairs=8)
    cache = PipelineCache()
    first = Layout.build(prepare(conv, Settings(keep_recent=4), cache=cache))
    stored = stored_heights_of(conv.messages)
    for chosen in (Settings(keep_recent=5), Settings(keep_recent=2, tiers="aggressive"), Settings(request=5)):
        view = prepare(conv, chosen, cache=cache)
        cached = Layout.build(view, first, stored)
        fresh = Layout.build(view)
        assert cached.heights == fresh.heights and cached.offsets == fresh.offsets
        # built from the rows' columns, without making a row: as if built from the rows themselves
        unmade = any(type(item) is not Row for item in view.rows.entries())
        made = Layout.build(view_of(list(view.rows)))
        assert unmade or not any(r.changes for r in view.rows)
        assert (made.heights, made.runs) == (fresh.heights, fresh.runs)
        first = cached


def test_narrow_panes_use_short_badges():
    change = Change("compressed", "compression", "tier 3", tier=2, age=27)  # (tier: 0-based)
    r = row(Message("tool", "x" * 50), Message("tool", "x"), changes=(change, Change("ephemeral", "ephemeral", "")),
            tokens_stored=20, tokens_prepared=2)
    header = block_lines(r, "prepared", STYLES, 40, False)[0].plain
    assert "t3·27" in header and "+eph" in header and "compressed" not in header
    assert len(header) <= 40


def test_pending_layout_holds_stored_only_rows():
    from sessions import tool_session

    from ctxview.tui.block_heights import stored_heights_of

    conv = tool_session(pairs=3)
    heights = stored_heights_of(conv.messages)
    pending = Layout.pending(conv.messages, Settings(), heights)
    assert pending.is_pending and pending.base_heights == [2, *heights]  # the #sys row first (a ghost: 2 lines)
    expected = tuple(Row(index=i, stored=m, prepared=None) for i, m in enumerate(conv.messages))
    rows = pending.view.rows
    assert not any(type(item) is Row for item in rows.entries())  # made when the panes ask
    assert tuple(rows) == expected and len(rows) == len(expected)
    assert rows[-1] is rows[len(rows) - 1] is rows[len(rows) - 1]  # one Row object per row: the panes cache by it
    assert rows[1:3] == expected[1:3] and rows[::-2] == expected[::-2]
    for bad in (len(rows), -len(rows) - 1):
        with pytest.raises(IndexError):
            rows[bad]
    assert pending.offsets[-1] == 2 + sum(heights)


def test_a_layout_built_after_a_pending_one_is_as_if_built_alone():
    from sessions import tool_session

    from ctxview.pipeline import prepare
    from ctxview.tui.block_heights import stored_heights_of

    conv = tool_session(pairs=6)
    heights = stored_heights_of(conv.messages)
    pending = Layout.pending(conv.messages, Settings(), heights)
    view = prepare(conv, Settings(keep_recent=2))
    after = Layout.build(view, pending, heights)
    alone = Layout.build(view, None, heights)
    assert (after.base_heights, after.offsets, after.runs) == (alone.base_heights, alone.offsets, alone.runs)
    assert not any(type(item) is Row for item in pending.view.rows.entries())  # not one pending row made
