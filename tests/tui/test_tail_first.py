"""A big Claude Code transcript with a compaction in its second half opens on the request after
it, read from the file's end, then the whole file (tui/workers.tail_first, history_job). The size
threshold is set to 0 here so that the real spotter session (MIT, marot/spotter) takes that way."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson

from pilot_sizes import settle

from ctxview.formats import load_session
from ctxview.model import request_indices
from ctxview.pipeline import prepare
from ctxview.settings import Settings
from ctxview.tui import workers
from ctxview.tui.app import CtxviewApp

SPOTTER = Path(__file__).resolve().parents[1] / "fixtures" / "samples" / "claude-code" / "spotter-258c7280"
NAME = "258c7280-ae70-4798-800f-63464d01a85d"


def _copy(tmp_path: Path) -> Path:
    shutil.copytree(SPOTTER, tmp_path / "s")
    return tmp_path / "s" / f"{NAME}.jsonl"


def _history_held(monkeypatch):
    """Tail first for any size, with the whole file's read held until the event returned is set."""
    import threading

    monkeypatch.setattr(workers, "TAIL_FIRST_BYTES", 0)
    release = threading.Event()
    history = workers.history_job
    monkeypatch.setattr(workers, "history_job", lambda post, opening: release.wait(30) and history(post, opening))
    return release


async def _whole_file_shown(app, pilot, release) -> None:
    """Let the held whole-file read go on, and wait until its view is on screen."""
    release.set()
    for _ in range(500):
        await pilot.pause(0.02)
        if not app.tail_only and not app.busy:
            break
    await settle(pilot)


def _sent(view) -> list:
    return [(m.role, m.text) for m in view.prepared]


async def test_the_tail_first_then_the_whole_file(tmp_path, monkeypatch):
    monkeypatch.setattr(workers, "TAIL_FIRST_BYTES", 0)
    path = _copy(tmp_path)
    whole = load_session(str(path))
    from ctxview.tui.messages import ViewReady

    seen: list[tuple[int, list]] = []   # each view posted: the stored messages, the request as sent
    app = CtxviewApp(str(path), Settings(), follow_interval=None)
    post = app.post_message

    def recorded(message):
        if isinstance(message, ViewReady):
            seen.append((len(message.view.rows), _sent(message.view)))
        return post(message)

    app.post_message = recorded  # type: ignore[method-assign]
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        for _ in range(50):
            if not app.tail_only and len(seen) >= 2:
                break
            await pilot.pause(0.05)
            await settle(pilot)
        notes = [n.message for n in app._notifications]
    expected = _sent(prepare(whole.conversations[0], Settings()))
    first, last = seen[0], seen[-1]
    assert first[0] < len(whole.conversations[0].messages)       # the tail alone was shown first ...
    assert first[1] == expected                                  # ... as the whole file's next request
    assert last[0] == len(whole.conversations[0].messages) and last[1] == expected
    assert [c.name for c in app.session.conversations] == [c.name for c in whole.conversations]
    assert any("read from the file's end" in n for n in notes) and "the whole history is read" in notes


async def test_a_small_file_or_one_without_a_late_compaction_opens_whole(tmp_path, monkeypatch):
    path = _copy(tmp_path)
    from ctxview.tui.workers import Opening, tail_first

    opening = Opening(str(path), str(path), None, False, None, None, Settings(), None)
    assert tail_first(opening) is None                                   # below the size threshold
    monkeypatch.setattr(workers, "TAIL_FIRST_BYTES", 0)
    assert tail_first(opening) is not None
    data = path.read_bytes()
    path.write_bytes(data[:data.index(b'"subtype":"compact_boundary"')].rsplit(b"\n", 1)[0] + b"\n")
    assert tail_first(opening) is None                                   # no compaction in it


async def test_while_the_history_loads_the_keys_that_need_it_say_so(tmp_path, monkeypatch):
    release = _history_held(monkeypatch)
    app = CtxviewApp(str(_copy(tmp_path)), Settings(), follow_interval=None)
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(200):
            await pilot.pause(0.02)
            if app.view is not None:
                break
        assert app.tail_only
        app.update_settings(request=app.view.requests[0])   # the tail's first request; then one more back
        for _ in range(200):
            await pilot.pause(0.02)
            if not app.busy:
                break
        await pilot.press("left_square_bracket")
        await pilot.pause()
        notes = [n.message for n in app._notifications]
        assert "no earlier request read yet: the history before the last compaction is still loading" in notes
        await _whole_file_shown(app, pilot, release)
        assert not app.tail_only and len(app.conversation.messages) > 300


async def test_the_cursor_and_the_request_picked_keep_their_messages_when_the_history_shows(tmp_path, monkeypatch):
    release = _history_held(monkeypatch)
    app = CtxviewApp(str(_copy(tmp_path)), Settings(), follow_interval=None)
    async with app.run_test(size=(120, 40)) as pilot:
        async def idle():   # (settle would wait for the held history too)
            for _ in range(500):
                await pilot.pause(0.02)
                if app.view is not None and not app.busy:
                    return
        await idle()
        tail = app.conversation
        await pilot.press("left_square_bracket")     # the request before the next one, in the tail
        await idle()
        picked = app.settings.request
        assert picked is not None
        app.pair.set_cursor(5)
        row = app.row_layout.row(app.cursor)
        assert row.stored is not None and row.index is not None
        await _whole_file_shown(app, pilot, release)
        assert not app.tail_only, [n.message for n in app._notifications]
        whole = app.conversation
        shift = len(whole.messages) - len(tail.messages)
        assert shift > 0
        assert app.settings.request == picked + shift
        assert whole.messages[app.settings.request].text == tail.messages[picked].text
        moved = app.row_layout.row(app.cursor)
        assert moved.index == row.index + shift and moved.stored.text == row.stored.text


async def test_a_codex_rollout_with_a_late_compaction_opens_at_it(tmp_path, monkeypatch):
    sample = next((Path(__file__).resolve().parents[2] / "sample_sessions" / "codex").glob("rollout-*.jsonl"))
    path = tmp_path / sample.name
    path.write_bytes(sample.read_bytes())
    from ctxview.tui.workers import Opening, tail_first

    monkeypatch.setattr(workers, "TAIL_FIRST_BYTES", 0)
    part = tail_first(Opening(str(path), str(path), None, False, None, None, Settings(), None))
    whole = load_session(str(path))
    assert part is not None and part.format == "codex"
    assert len(part.conversations[0].messages) < len(whole.conversations[0].messages)
    assert _sent(prepare(part.conversations[0], Settings())) == _sent(prepare(whole.conversations[0], Settings()))
    assert tail_first(Opening(str(path), str(path), "claude-code", False, None, None, Settings(), None)) is None


async def test_the_file_is_followed_only_once_its_history_is_read(tmp_path, monkeypatch):
    """The tail starts the follow timer; the whole file is read after. A poll while that read is
    under way waits for it (it used to ask a file not yet read for its changes and stop the app
    with a traceback)."""
    import threading

    from ctxview.formats import growing

    monkeypatch.setattr(workers, "TAIL_FIRST_BYTES", 0)
    reading, release = threading.Event(), threading.Event()
    load = growing.GrowingSession.load

    def held(self):
        reading.set()
        release.wait(30)
        return load(self)

    monkeypatch.setattr(growing.GrowingSession, "load", held)
    path = _copy(tmp_path)
    app = CtxviewApp(str(path), Settings(), follow_interval=0.01)
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(200):
            await pilot.pause(0.02)
            if reading.is_set() and app.view is not None:
                break
        assert app.tail_only and reading.is_set()
        await pilot.pause(0.1)          # ten polls while the history's read is held
        assert app.return_code is None and app.follower.growing is None
        await _whole_file_shown(app, pilot, release)
        assert not app.tail_only and app.follower.growing is not None
        last = [r for r in map(orjson.loads, path.read_bytes().splitlines()) if r.get("uuid")][-1]
        with open(path, "ab") as f:      # and the file is followed from then on
            f.write(orjson.dumps({"type": "user", "uuid": "appended-1", "parentUuid": last["uuid"],
                                  "sessionId": last.get("sessionId"), "timestamp": last.get("timestamp"),
                                  "message": {"role": "user", "content": "one more thing"}}) + b"\n")
        count = len(app.conversation.messages)
        for _ in range(200):
            await pilot.pause(0.02)
            if len(app.conversation.messages) > count:
                break
        assert len(app.conversation.messages) > count
    assert app.return_code is None


async def test_the_status_bar_says_how_much_of_the_history_is_read(tmp_path, monkeypatch):
    """While the whole file is read after its tail, the status bar says how much of it is read; once
    read, nothing. The read is held after its first buffer fill (1 MB of the 2.8 MB file)."""
    import threading

    from pilot_sizes import status

    from ctxview.formats.inputs import READ_BUFFER, open_input

    monkeypatch.setattr(workers, "TAIL_FIRST_BYTES", 0)
    path = _copy(tmp_path)
    started, release = threading.Event(), threading.Event()
    history = workers.history_job

    def held(post, opening):
        with open_input(path).open() as f:   # as the loader opens it: the meter watches
            f.read(1)
            started.set()
            release.wait(30)
        history(post, opening)

    monkeypatch.setattr(workers, "history_job", held)
    app = CtxviewApp(str(path), Settings(), follow_interval=None)
    async with app.run_test(size=(160, 40)) as pilot:
        for _ in range(200):
            await pilot.pause(0.02)
            if started.is_set() and app.view is not None and "history 3" in status(app):
                break
        assert app.tail_only and f"history {READ_BUFFER * 100 // path.stat().st_size}%" in status(app)
        await _whole_file_shown(app, pilot, release)
        assert not app.tail_only and "history" not in status(app)


async def test_a_history_that_cannot_be_read_is_said_so(tmp_path, monkeypatch):
    from pilot_sizes import status

    monkeypatch.setattr(workers, "TAIL_FIRST_BYTES", 0)
    path = _copy(tmp_path)

    def failing(post, opening):
        from ctxview.tui.messages import HistoryFailed

        post(HistoryFailed(f"{path}: line 3: not JSON"))

    monkeypatch.setattr(workers, "history_job", failing)
    app = CtxviewApp(str(path), Settings(), follow_interval=None)
    async with app.run_test(size=(160, 40)) as pilot:
        for _ in range(200):
            await pilot.pause(0.02)
            if app.history_failed is not None:
                break
        await settle(pilot)
        assert app.tail_only and "history not read" in status(app)
        app.update_settings(request=app.view.requests[0])
        await settle(pilot)
        await pilot.press("left_square_bracket")
        await pilot.pause()
        notes = [n.message for n in app._notifications]
        assert "no earlier request read yet: the history before the last compaction could not be read" in notes
        assert not any("still loading" in n for n in notes if n.startswith("no earlier"))


async def test_a_request_asked_for_by_number_opens_the_whole_file_at_it(tmp_path, monkeypatch):
    monkeypatch.setattr(workers, "TAIL_FIRST_BYTES", 0)
    path = _copy(tmp_path)
    whole = load_session(str(path)).conversations[0]
    requests = request_indices(whole.messages)
    app = CtxviewApp(str(path), Settings(), overrides={"request_number": 2})
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        assert app.error is None and not app.tail_only
        assert app.view.settings.request == requests[1] and len(app.conversation.messages) == len(whole.messages)
    app = CtxviewApp(str(path), Settings(), overrides={"request_number": len(requests) + 2})
    async with app.run_test(size=(140, 40)) as pilot:
        for _ in range(200):
            await pilot.pause(0.02)
            if app.error:
                break
    n = len(requests)
    assert app.return_code == 1 and app.error == (f"{path}: {whole.name}: no request {n + 2} (the file holds "
                                                  f"requests 1 to {n}, and {n + 1} is the next one)")


async def test_back_from_a_subagent_after_the_history_is_read_returns_to_the_same_message(tmp_path, monkeypatch):
    release = _history_held(monkeypatch)
    path = _copy(tmp_path)
    app = CtxviewApp(str(path), Settings(), follow_interval=None)

    async def shown() -> None:   # (not settle(): it would wait for the held read)
        for _ in range(500):
            await pilot.pause(0.02)
            if app.view is not None and not app.busy:
                return

    async with app.run_test(size=(140, 40)) as pilot:
        await shown()
        assert app.tail_only
        task = next(i for i, m in enumerate(app.conversation.messages) if any(c.name == "Task" for c in m.tool_calls))
        row = next(r for r in range(len(app.row_layout)) if app.row_layout.row(r).index == task)
        app.set_cursor(row)
        message = app.row_layout.row(row).stored
        app.open_subagent(next(i for i, c in enumerate(app.session.conversations) if c.name == "agent-a881341"))
        await shown()
        assert app.conversation.name == "agent-a881341"
        await _whole_file_shown(app, pilot, release)   # (the parent gained its history meanwhile)
        await pilot.press("escape")
        await settle(pilot)
        assert app.conversation.name == "main" and not app.tail_only
        assert len(app.conversation.messages) == len(load_session(str(path)).conversations[0].messages)
        back = app.row_layout.row(app.cursor).stored
        assert back is not None and (back.role, back.text, back.tool_calls) == (message.role, message.text,
                                                                               message.tool_calls)
