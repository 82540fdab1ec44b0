"""The hostile corpus in the inspector, through Textual's pilot.

The session is loaded by the test and handed to the app (`session=`), so these tests do not depend
on how the app loads a file. For raw terminal bytes the headless driver is made to render (Textual
skips rendering when headless) and what it would write to the terminal is kept: the payload's escape
sequences and invisible characters must not be in it, while their visible stand-ins are.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")

import pytest  # noqa: E402
from textual.drivers.headless_driver import HeadlessDriver  # noqa: E402
from textual.widgets import Input  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent / "hostile"))

from make_corpus import EVIL_NAME, MARKERS, write_corpus  # noqa: E402

from ctxview.formats import load_session  # noqa: E402
from ctxview.sanitize import UNSAFE  # noqa: E402
from ctxview.tui.app import CtxviewApp  # noqa: E402
from ctxview.tui.screens.modals import TierEditor, WriteScreen  # noqa: E402
from ctxview.engine.view import Settings  # noqa: E402

SIZE = (140, 40)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile-inspector")
    write_corpus(folder)
    return folder


@pytest.fixture
def terminal(monkeypatch):
    """What the app writes to the terminal, as one string per write."""
    written: list[str] = []
    monkeypatch.setattr(HeadlessDriver, "is_headless", property(lambda self: False))
    monkeypatch.setattr(HeadlessDriver, "write", lambda self, data: written.append(data))
    return written


async def settle(pilot, steps: int = 60) -> None:
    app = pilot.app
    for _ in range(steps):
        try:
            await app.workers.wait_for_complete()
        except Exception:  # noqa: BLE001 - a worker cancelled as the app exits on an error
            pass
        await pilot.pause()
        if app.error or (app.view is not None and not any(w.is_running for w in app.workers)):
            return


# The escape sequences a Textual app writes itself: CSI, OSC, charset and keypad selections.
_SEQUENCE = re.compile(r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78]")


def _between_sequences(raw: str | list[str]) -> str:
    """The text the app drew: its output without its own escape sequences (and bells: App.bell
    writes a lone BEL). No control, format or surrogate character may be left (a raw one from the
    session would be)."""
    if isinstance(raw, list):
        raw = "".join(piece for piece in raw if piece != "\x07")
    return _SEQUENCE.sub("", raw)


def _app(folder: Path, name: str, shown_as: str | None = None, **settings) -> CtxviewApp:
    session = load_session(folder / name)
    return CtxviewApp(str(folder / (shown_as or name)), Settings(**settings), session=session)


async def test_hostile_text_reaches_the_terminal_only_as_visible_stand_ins(corpus, terminal):
    app = _app(corpus, "hostile.json", shown_as=EVIL_NAME + ".json", tiers="default", keep_recent=1)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for keys in (["j"], ["enter"], ["o"], ["escape"],  # (j: past the #sys row, to the first message) ["question_mark"], ["escape"], ["w"], ["escape"], ["b"],
                     ["escape"], ["slash", "e", "v", "i", "l", "enter"], ["j", "enter"]):
            for key in keys:
                await pilot.press(key)
            await pilot.pause()
        assert app.is_running
    raw = "".join(terminal)
    assert len(raw) > 10_000  # the screens were drawn
    for marker in MARKERS:
        assert marker not in raw, repr(marker)
    assert UNSAFE.search(_between_sequences(terminal)) is None
    # ... and what the payload says is on screen, made visible
    assert "␛]0;PWNED␇" in raw and "<U+202E>" in raw and "<U+E0041>" in raw


async def test_the_default_export_name_holds_no_terminal_control(corpus, terminal):
    app = _app(corpus, "good.json", shown_as=EVIL_NAME + ".json")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("w")
        await pilot.pause()
        assert isinstance(app.screen, WriteScreen)
        value = app.screen.query_one(Input).value
        await pilot.pause()
    assert UNSAFE.search(value) is None and os.path.basename(value).startswith("evil_]0;PWNED__")
    raw = "".join(terminal)
    assert "\x1b]0;PWNED" not in raw and "\u202e" not in raw


@pytest.mark.parametrize("name, expected", [
    ("tiers-100k.ctxview.json", "too long"),
    ("huge-keep-recent.ctxview.json", "keep_recent"),
    ("long-tier-number.ctxview.json", "tier"),
    ("clear-not-object.ctxview.json", "clear"),
])
async def test_bad_settings_in_the_file_end_with_one_line(corpus, name, expected):
    app = _app(corpus, name)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
    assert app.error and expected in app.error and "\n" not in app.error and len(app.error) < 300
    assert app.return_code == 1


async def test_clear_exclude_of_every_wrong_type_ends_with_one_line(corpus):
    names = sorted(p.name for p in corpus.glob("clear-exclude-*.ctxview.json"))
    assert len(names) == 3
    for name in names:
        app = _app(corpus, name)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
        assert app.error and "clear.exclude" in app.error and "\n" not in app.error


@pytest.mark.parametrize("name, settings", [
    ("openers.ctxview.json", {}),
    ("openers-cc.jsonl", {}),
    ("newlines-arrow.json", {"tiers": "default", "keep_recent": 2}),
    ("blank-lines.json", {"tiers": "aggressive", "keep_recent": 2}),
    ("surrogate.json", {}),
    ("nan.ctxview.json", {}),
])
async def test_worst_case_texts_open_and_render(corpus, terminal, name, settings):
    app = _app(corpus, name, **settings)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.view is not None and app.error is None
        for key in ("enter", "end", "home", "r", "x"):
            await pilot.press(key)
            await pilot.pause()
        assert app.is_running
    assert UNSAFE.search(_between_sequences(terminal)) is None


async def test_the_tier_editor_refuses_a_huge_spec_in_one_short_line(corpus):
    app = _app(corpus, "good.json", tiers="default")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, TierEditor)
        app.screen.query_one("#tier-input", Input).value = ",".join(f"{i}:{i + 1}" for i in range(100_000))
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, TierEditor)  # refused
        shown = str(app.screen.query_one("#tier-preview").render())
    assert "too long" in shown and len(shown) < 300


async def test_w_never_removes_an_input_named_like_a_dead_writers_leftover(tmp_path):
    import json

    from make_corpus import dead_pid

    source = tmp_path / f".out.json.abc.{dead_pid()}.ctxview-tmp"  # the temporary-file pattern of out.json
    source.write_text(json.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"}]))
    before = source.read_bytes()
    app = CtxviewApp(str(source), Settings())
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("w")
        await pilot.pause()
        assert isinstance(app.screen, WriteScreen)
        app.screen.query_one(Input).value = str(tmp_path / "out.json")
        await pilot.press("enter")
        await settle(pilot)
        assert app.last_written == str(tmp_path / "out.json")
    assert json.loads((tmp_path / "out.json").read_text())["messages"]
    assert source.read_bytes() == before


async def test_y_copies_no_control_character_and_says_it_held_some(corpus, monkeypatch):
    import json

    from ctxview.model import Conversation, Message, Session, ToolCall
    from make_corpus import PAYLOAD

    msgs = (Message("user", PAYLOAD + "\ttab\r\nline"),
            Message("assistant", "", tool_calls=(ToolCall(id="c", name="Bash", arguments={"command": PAYLOAD}),)),
            Message("tool", "plain", tool_call_id="c"))
    app = CtxviewApp("t.json", Settings(), session=Session("test", "t.json", (Conversation("main", msgs),)))
    copied: list[str] = []
    monkeypatch.setattr(app, "copy_to_clipboard", copied.append)
    said: list[str] = []
    show = app.notify
    monkeypatch.setattr(app, "notify", lambda message, *a, **k: (said.append(message), show(message, *a, **k)))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for _ in range(3):
            await pilot.press("down", "y")
            await pilot.pause()
    text, call, plain = copied
    for copy in (text, call):
        assert UNSAFE.search(copy) is None, repr(copy)
        for marker in MARKERS:
            assert marker not in copy, repr(marker)
    # what the screen shows: visible stand-ins; tabs and lines kept
    assert "␛]0;PWNED␇" in text and "<U+202E>evil" in text and "<U+E0041>" in text and text.endswith("\ttab\nline")
    assert json.loads(call) == {"command": PAYLOAD}  # JSON escapes: the same value to a JSON reader
    assert plain == "plain"
    held = len(UNSAFE.findall(PAYLOAD))
    assert f"it held {held} control or invisible characters: copied as visible stand-ins" in said[0]
    assert f"it held {held} control or invisible characters: copied as JSON escapes" in said[1]
    assert "held" not in said[2]


async def test_w_to_a_path_naming_a_directory_is_refused(tmp_path):
    import json

    source = tmp_path / "in.json"
    source.write_text(json.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"}]))
    app = CtxviewApp(str(source), Settings())
    said: list[str] = []
    show = app.notify
    app.notify = lambda message, *a, **k: (said.append(message), show(message, *a, **k))  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("w")
        await pilot.pause()
        app.screen.query_one(Input).value = str(tmp_path / "newdir") + "/"
        await pilot.press("enter")
        await settle(pilot)
    assert not os.path.lexists(tmp_path / "newdir") and app.last_written is None
    assert any("names a directory" in s for s in said), said
