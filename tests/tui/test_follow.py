"""Following the open file through Textual's pilot: appended lines become messages in both panes,
the cursor stays where it is unless it is on the last message, a truncated file reloads whole with a
notice, a vanished one keeps what is shown, `R` reloads. The poll interval is made short; the tests
wait for the poll by pausing, and assert nothing about time."""

from __future__ import annotations

from contextlib import asynccontextmanager
from pathlib import Path

from ctxview.formats import load_session
from ctxview.model import request_indices
from ctxview.tui.app import CtxviewApp
from ctxview.tui.widgets.basic import Meters

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_sessions" / "claude-code" / "7b1f3c52-9a4e-4d1b-8f57-3e2c9d0a6b18.jsonl"
LINES = SAMPLE.read_bytes().splitlines(keepends=True)
SIZE = (140, 40)
POLL = 0.02


def follow_app(path: Path, **kw) -> CtxviewApp:
    return CtxviewApp(str(path), follow_interval=POLL, **kw)


async def wait_until(pilot, condition, what: str) -> None:
    """Pause (polls and workers run meanwhile) until `condition()`; a bounded number of pauses."""
    app = pilot.app
    for _ in range(400):
        await pilot.pause(POLL)
        if condition() and not app.busy and not (app.follower and app.follower.reading):
            await app.workers.wait_for_complete()
            await pilot.pause()
            return
    raise AssertionError(f"never saw: {what}")


@asynccontextmanager
async def following(tmp_path: Path, data: bytes):
    """The app on a file holding `data`, its first view on screen: (app, pilot, path)."""
    path = tmp_path / "live.jsonl"
    path.write_bytes(data)
    app = follow_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.view is not None, "the first view")
        yield app, pilot, path


def main_count(path: Path) -> int:
    return len(load_session(path).conversations[0].messages)


def notices(app) -> list[str]:
    return [n.message for n in app._notifications]


def append(path: Path, lines: list[bytes]) -> None:
    with path.open("ab") as f:
        f.write(b"".join(lines))


async def test_appended_lines_show_in_both_panes_and_the_cursor_stays(tmp_path):
    async with following(tmp_path, b"".join(LINES[:40])) as (app, pilot, path):
        before = main_count(path)
        assert len(app.conversation.messages) == before
        tokens_before = app.view.tokens_stored
        meters_before = str(app.query_one(Meters).render())
        app.set_cursor(3)

        append(path, LINES[40:80])
        after = main_count(path)
        assert after > before
        await wait_until(pilot, lambda: len(app.view.rows) == after, "the appended messages")
        assert len(app.conversation.messages) == after
        last = len(app.row_layout) - 1
        assert app.stored_pane.block(last)[0].text.startswith(f"#{after - 1} ")
        assert app.prepared_pane.block(last)[0].text.startswith(f"#{after - 1} ")
        assert app.cursor == 3  # not at the end: stays
        assert app.view.tokens_stored > tokens_before
        assert str(app.query_one(Meters).render()) != meters_before
        assert app.view.settings.request is None and app.view.settings.view == "as-sent"


async def test_the_cursor_on_the_last_message_follows(tmp_path):
    async with following(tmp_path, b"".join(LINES[:40])) as (app, pilot, path):
        await pilot.press("end")
        assert app.cursor == len(app.row_layout) - 1
        append(path, LINES[40:100])
        after = main_count(path)
        await wait_until(pilot, lambda: len(app.view.rows) == after, "the appended messages")
        assert app.cursor == len(app.row_layout) - 1 == after  # (row 0 is #sys)


async def test_a_truncated_file_reloads_whole_with_a_notice(tmp_path):
    async with following(tmp_path, b"".join(LINES[:100])) as (app, pilot, path):
        path.write_bytes(b"".join(LINES[:30]))
        after = main_count(path)
        await wait_until(pilot, lambda: len(app.view.rows) == after, "the whole reload")
        assert f"{path} was rewritten or truncated: reloaded whole" in notices(app)
        assert app.stored_pane.block(len(app.row_layout) - 1)[0].text.startswith(f"#{after - 1} ")


async def test_a_vanished_file_keeps_what_is_shown(tmp_path):
    async with following(tmp_path, b"".join(LINES[:60])) as (app, pilot, path):
        rows = len(app.view.rows)
        path.unlink()
        await wait_until(pilot, lambda: f"{path} is gone: showing what was read" in notices(app), "the notice")
        assert len(app.view.rows) == rows and app.session is not None
        path.write_bytes(b"".join(LINES[:70]))  # back again: read whole
        after = main_count(path)
        await wait_until(pilot, lambda: len(app.view.rows) == after, "the file again")


async def test_R_reloads_and_a_bad_line_keeps_the_session(tmp_path):
    async with following(tmp_path, b"".join(LINES[:60])) as (app, pilot, path):
        session = app.session
        await pilot.press("R")
        await wait_until(pilot, lambda: app.session is not session, "the reload")
        assert f"{path}: reloaded" in notices(app)

        rows = len(app.view.rows)
        append(path, [b"{broken\n"])
        await wait_until(pilot, lambda: any("use --lenient" in n for n in notices(app)), "the error")
        assert len(app.view.rows) == rows
        assert any(n.startswith(f"{path}:61:") for n in notices(app))


async def test_a_line_being_written_is_said_on_opening_and_read_once_complete(tmp_path):
    async with following(tmp_path, b"".join(LINES[:40]) + LINES[40][:50]) as (app, pilot, path):
        assert any("last line still being written (line 41, 50 bytes): left out" in n for n in notices(app))
        append(path, [LINES[40][50:], *LINES[41:50]])
        after = main_count(path)
        await wait_until(pilot, lambda: len(app.view.rows) == after, "the completed line")


async def test_given_sessions_and_the_demo_are_not_followed(tmp_path):
    app = CtxviewApp(None, follow_interval=POLL)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.view is not None, "the first view")
        assert app.follower is None
        await pilot.press("R")
        await pilot.pause()
        assert any(n.startswith("nothing to reload") for n in notices(app))


def test_a_run_for_the_session_before_a_reload_is_not_wanted():
    from ctxview.tui.state import InspectorState
    from ctxview.engine.view import Settings

    state = InspectorState(Settings())
    first = state.opened(0, 2, Settings())
    state.reloaded(0, 2)  # the file was read again while the first run was in flight
    assert state.next_run() is None  # one run at a time
    assert not state.finished(first)  # its view is of the old session
    again = state.next_run()
    assert again is not None and again.generation == first.generation + 1 and again.settings == first.settings
    assert state.finished(again) and not state.busy
    state.change(request=3)
    state.reloaded(1, 3)  # found again, at another index: the same request
    assert state.wanted.conversation == 1 and state.settings.request == 3
    state.reloaded(0, 1, found=False)  # gone: the first conversation, as for its next request
    assert state.wanted.conversation == 0 and state.settings.request is None


async def test_a_refresh_that_fails_as_the_file_outgrows_it_is_caught_up_by_the_next(tmp_path, monkeypatch):
    # More than the growth allowance appended while a refresh reads: that read fails (a notice), and
    # the next poll reads the rest, without another write to the file.
    from ctxview.formats import growing, inputs

    real_open = growing.open_input
    grown: list[bool] = []
    async with following(tmp_path, b"".join(LINES[:40])) as (app, pilot, path):
        monkeypatch.setattr(inputs, "GROWTH_ALLOWANCE", 4096)

        def open_then_grow(p):  # the writer appends more than the allowance between the stat and the read
            inp = real_open(p)
            if not grown:
                grown.append(True)
                append(path, LINES[41:])
            return inp

        monkeypatch.setattr(growing, "open_input", open_then_grow)
        append(path, LINES[40:41])
        await wait_until(pilot, lambda: any("grew by more than" in n for n in notices(app)), "the failed read")
        full = main_count(path)
        await wait_until(pilot, lambda: len(app.conversation.messages) == full, "the rest of the file")
        assert len(app.view.rows) == full



async def test_the_first_screen_comes_from_the_one_pass_and_appends_are_then_read_alone(tmp_path):
    """The inspector reads a transcript by the one pass (as load_session); the first append reads
    it again by the general path, and each append after that is read alone."""
    third = len(LINES) // 3
    async with following(tmp_path, b"".join(LINES[:third])) as (app, pilot, path):
        growing = app.follower.growing
        assert growing._resumable.one_pass
        for start, end in ((third, 2 * third), (2 * third, len(LINES))):
            before = growing._resumable.end
            append(path, LINES[start:end])
            await wait_until(pilot, lambda: len(app.session.conversations[0].messages) == main_count(path),
                             "the appended messages")
            assert not growing._resumable.one_pass
        assert growing._resumable.reader.start == before   # the second append: from where the first stopped


async def test_a_request_picked_that_the_file_no_longer_holds_gives_the_next(tmp_path):
    async with following(tmp_path, b"".join(LINES[:100])) as (app, pilot, path):
        await pilot.press("left_square_bracket")   # the last recorded request
        await wait_until(pilot, lambda: app.view.settings.request is not None, "the request picked")
        picked = app.view.settings.request
        requests = request_indices(app.conversation.messages)
        assert picked == requests[-1]
        path.write_bytes(b"".join(LINES[:30]))
        after = main_count(path)
        assert picked >= after   # (cut off by the truncation)
        await wait_until(pilot, lambda: len(app.view.rows) == after, "the whole reload")
        assert app.view.settings.request is None and app.settings.request is None
        n = len(requests)   # (numbered as the status bar numbered it)
        assert f"request {n}/{n} (#{picked}) is no longer in the file: showing the next request" in notices(app)
        assert not any("Error" in n for n in notices(app))


async def test_escape_after_the_subagent_shown_is_gone_from_the_file_keeps_the_view(tmp_path):
    import shutil

    shutil.copytree(SAMPLE.parent, tmp_path / "s")
    path = tmp_path / "s" / SAMPLE.name
    app = follow_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.view is not None, "the first view")
        app.open_subagent(1)
        await wait_until(pilot, lambda: app.view is not None and app.conversation.name != "main", "the sub-agent")
        for sub in (tmp_path / "s" / SAMPLE.stem / "subagents").iterdir():
            sub.unlink()
        path.write_bytes(b"".join(LINES[:60]))   # rewritten: read again whole, without the sub-agent
        after = main_count(path)
        await wait_until(pilot, lambda: app.conversation.name == "main" and len(app.view.rows) == after,
                         "the main conversation, read again")
        assert app.state.trail == []
        await pilot.press("escape")
        await pilot.pause()
        assert app.view is not None and not app.busy and app.conversation.name == "main"
