"""The key bar (widgets/footer.py): rebuilt when the keys it shows change, and only then."""

from __future__ import annotations

from pathlib import Path

from test_app import SIZE, settle
from textual.widgets import Input
from textual.widgets._footer import FooterKey

from ctxview.engine.view import Settings
from ctxview.tui.app import CtxviewApp
from ctxview.tui.widgets.footer import Footer

IMAGE = Path(__file__).parent.parent / "fixtures" / "export" / "claude-code-image.jsonl"


def _keys(app) -> list[str]:
    return [k.key for k in app.query_one(Footer).query(FooterKey)]


async def test_the_footer_is_rebuilt_when_its_keys_change_and_only_then():
    app = CtxviewApp(str(IMAGE), Settings(), follow_interval=None)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        footer = app.query_one(Footer)
        on_panes = _keys(app)
        assert "q" in on_panes and "t" in on_panes
        builds: list[int] = []
        rebuild = footer.recompose

        async def counted() -> None:
            builds.append(1)
            await rebuild()

        footer.recompose = counted  # type: ignore[method-assign]
        app.screen.refresh_bindings()   # the bindings looked at again: the same keys
        await pilot.pause()
        await pilot.pause()
        assert builds == [] and _keys(app) == on_panes
        app.query_one("#controls").query_one(Input).focus()   # a text box: the letter keys give way to Escape
        await settle(pilot)
        assert len(builds) == 1 and "escape" in _keys(app) and "t" not in _keys(app)
        await pilot.press("escape")     # back to the panes: their keys again
        await settle(pilot)
        assert len(builds) == 2 and _keys(app) == on_panes
