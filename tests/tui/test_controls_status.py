"""The status bar names every active what-if setting at every width, and keeps `row N/M`."""

from __future__ import annotations

import pytest
from pilot_sizes import SIZES, settle, status
from rich.cells import cell_len
from sessions import make_session

from ctxview.settings import ClearSettings
from ctxview.tui.app import CtxviewApp
from ctxview.tui.widgets.chrome import StatusParts, status_line
from ctxview.engine.view import Settings

EVERYTHING = Settings(keep_recent=4, tiers="aggressive", budget=50_000, old_messages="truncate",
                      clear=ClearSettings(keep=3, trigger=10_000, exclude=("Read", "Grep"), clear_inputs=True))

# What each setting reads as: full words, abbreviated, shortest.
FORMS = {
    "keep_recent": ("keep_recent=4", "keep=4", "k=4"),
    "tiers": ("tiers=aggressive", "tiers=aggressive", "t=aggr"),
    "budget": ("budget 50,000", "budget 50k", "b=50k"),
    "clearing": ("clearing: keep 3, over 10,000 tok, not Read, Grep, inputs too", "clear 3 >10k -2 tools +inputs",
                 "clr=3+in"),
    "old messages": ("old messages: truncate", "old: truncate", "old=trunc"),
}


def line(width: int, settings: Settings = EVERYTHING, **kw) -> str:
    kw.setdefault("rows", 40)
    kw.setdefault("cursor", 11)
    return status_line(StatusParts(settings, (123_456, 54_321), request="2/5 (#17)", **kw), width).plain


@pytest.mark.parametrize("width, level", [(230, 0), (160, 1), (80, 2)])
def test_every_what_if_setting_shows_in_the_form_the_width_allows(width, level):
    text = line(width)
    assert cell_len(text) == width
    for name, forms in FORMS.items():
        assert forms[level] in text, (name, text)
    assert text.startswith(" what-if ") and text.endswith("row 12/40")


def test_full_words_at_200_for_the_usual_settings():
    text = line(200, Settings(keep_recent=4, tiers="default", budget=50_000, clear=ClearSettings()))
    assert "keep_recent=4 · tiers=default · clearing: keep 3 · budget 50,000 · request 2/5 (#17)" in text
    assert "123,456 → 54,321 tok" in text and "scroll linked" in text


@pytest.mark.parametrize("width", [60, 50, 40, 30])
def test_the_row_position_is_never_cut(width):
    text = line(width, busy=True, search="a long search term here", linked=False)
    assert text.endswith("row 12/40") and cell_len(text) == width


def test_optional_pieces_go_before_the_settings_shorten_further():
    text = line(80, search="needle", linked=False)
    assert "scroll" not in text and "k=4" in text and "row 12/40" in text


def test_as_sent_and_the_other_switches():
    assert line(200, Settings()).startswith("as sent · keep_recent=10 · tiers=off")
    no_eph = line(200, Settings(embed_ephemeral=False))
    assert no_eph.startswith(" what-if ") and "ephemeral reminders left out" in no_eph
    off = line(200, Settings(tiers="light", compression=False))
    assert "tiers=light (off)" in off and off.startswith("as sent")
    custom = line(80, Settings(tiers="2:full,*:100"))
    assert "custom" in custom and "2:full" not in custom  # (the spec in full at 200)
    assert "tiers=custom 2:full,*:100" in line(200, Settings(tiers="2:full,*:100"))


@pytest.mark.parametrize("size", SIZES)
async def test_status_bar_in_the_app_names_every_what_if_setting(size):
    app = CtxviewApp("test.json", EVERYTHING, session=make_session(1))
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        text = status(app)
        level = 0 if size[0] >= 200 else 1 if size[0] >= 120 else 2
        width = app.query_one("#status").content_size.width
        assert cell_len(text) <= width
        assert text.rstrip().endswith(f"row 1/{len(app.row_layout)}")
        present = [name for name, forms in FORMS.items() if any(f in text for f in forms[level:])]
        assert present == list(FORMS), text
        await pilot.press("down")
        await pilot.pause()
        assert status(app).rstrip().endswith(f"row 2/{len(app.row_layout)}")
