"""The header degrades by importance: the path first (middle ellipsis, then the file name), then the
labels; the model, the window and the conversation hint stay as long as anything does."""

from __future__ import annotations

import pytest
from pilot_sizes import SIZES, header, settle
from rich.cells import cell_len
from sessions import make_session

from ctxview.tui.app import CtxviewApp
from ctxview.tui.widgets.chrome import HeaderParts, end_ellipsis, header_line, middle_ellipsis
from ctxview.engine.view import Settings

LONG = ("~/.claude/projects/-home-user-src-some-very-long-project-name/"
        "0b0f4c1e-3f2a-4b1c-9d8e-7a6b5c4d3e2f.jsonl")
BASE = "0b0f4c1e-3f2a-4b1c-9d8e-7a6b5c4d3e2f.jsonl"
HINT = "(1/2, a switches)"


def parts(model: str = "claude-sonnet-4") -> HeaderParts:
    return HeaderParts(LONG, "claude-code", "main", model, 200_000, HINT)


def test_middle_ellipsis_keeps_both_ends_and_fits():
    cut = middle_ellipsis(LONG, 40)
    assert cell_len(cut) == 40 and "…" in cut
    assert cut.startswith("~/.claude") and cut.endswith(".jsonl")
    assert middle_ellipsis("short", 40) == "short"
    wide = middle_ellipsis("漢字" * 20, 11)             # two cells a character: still at most 11
    assert cell_len(wide) <= 11 and "…" in wide


@pytest.mark.parametrize("width", [200, 160, 120, 100, 80, 60])
def test_header_fits_every_width_and_keeps_model_window_and_hint(width):
    text = header_line(parts(), width).plain
    assert HINT in text and "claude-sonnet-4" in text and ("200,000" in text or "200k" in text)
    assert cell_len(text) <= width


def test_path_shortens_before_the_labels_go():
    full = header_line(parts(), 260).plain
    assert full.startswith(f"ctxview {LONG}  format claude-code  agent main {HINT}  model")
    at_160 = header_line(parts(), 160).plain                           # the path cut in the middle
    assert "…" in at_160 and at_160.split()[1].endswith(BASE) and "  format " in at_160
    at_120 = header_line(parts(), 120).plain                           # the file name, whole: labels gone
    assert at_120.split()[1] == BASE and " model " not in at_120 and "200k window" in at_120
    at_140 = header_line(parts(), 140).plain                           # the file name alone, labels kept
    assert at_140.split()[1] == BASE and "  model " in at_140
    at_80 = header_line(parts(), 80).plain                             # labels gone, then the app's name
    assert " model " not in at_80 and " window" in at_80 and "200k" in at_80
    assert ".jsonl" in at_80


def test_a_long_model_name_pushes_out_the_path_not_the_model():
    model = "claude-sonnet-4-5-20250929"
    text = header_line(parts(model), 80).plain
    assert text.startswith("main " + HINT) and model in text and "200k window" in text


@pytest.mark.parametrize("label", ["agent-a93ccab (Explore existing codebase)",
                                   "Which of the following best describes the capital of France? " * 3])
@pytest.mark.parametrize("width", [80, 70, 60])
def test_a_long_conversation_label_shortens_before_the_model_and_window_go(label, width):
    text = header_line(HeaderParts(LONG, "claude-code", label, "claude-opus-4-6", 200_000, HINT), width).plain
    assert cell_len(text) <= width
    assert "claude-opus-4-6" in text and "200k window" in text and HINT in text
    assert text.startswith(label[:10]) and "…" in text


def test_end_ellipsis_keeps_the_beginning_and_fits():
    assert end_ellipsis("agent-a93ccab (Explore existing codebase)", 20) == "agent-a93ccab (Expl…"
    assert end_ellipsis("short", 20) == "short"
    assert cell_len(end_ellipsis("漢字" * 20, 11)) <= 11


def test_session_text_in_the_header_is_made_visible():
    hostile = HeaderParts("a\x1b[31m.jsonl", "x", "[bold]agent\u202e", "m\x07", None)
    text = header_line(hostile, 120).plain
    assert "\x1b" not in text and "\u202e" not in text and "\x07" not in text
    assert "[bold]agent" in text and "window unknown" in text


@pytest.mark.parametrize("size", SIZES)
async def test_header_in_the_app_at_every_size(size):
    app = CtxviewApp(LONG, Settings(), session=make_session(2))
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        text = header(app)
        width = app.query_one("#header").content_size.width
        assert cell_len(text) <= width
        assert HINT in text and "claude-sonnet-4" in text and ("200,000" in text or "200k" in text)
        if size[0] >= 200:
            assert LONG in text                                         # room for all of it
        else:
            assert ".jsonl" in text and LONG not in text
        await pilot.resize_terminal(80, 24) if size[0] != 80 else None  # a resize re-fits it
        await pilot.pause()
        assert cell_len(header(app)) <= app.query_one("#header").content_size.width
