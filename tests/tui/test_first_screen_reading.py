"""While a big file is still being read, the stored side shows the messages read so far and the
keys move over them; the whole session and the prepared side follow."""

from __future__ import annotations

import threading

from pilot_sizes import settle, status
from sessions import tool_session
from test_app import SIZE

from ctxview.formats.parsing import json_pieces
from ctxview.formats import load_session, native
from ctxview.formats.native_write import write_session
from ctxview.model import Session
from ctxview.tui import workers
from ctxview.tui.app import CtxviewApp
from ctxview.tui.block_heights import stored_heights_of
from ctxview.tui.layout import Layout
from ctxview.tui.workers import Layouts, StoredPieces
from ctxview.engine.view import Settings


def big_file(tmp_path, monkeypatch, pairs: int = 60):
    """A ctxview file read in many small pieces (as a big one is)."""
    path = tmp_path / "big.json"
    write_session(Session(format="ctxview", source="big.json", conversations=(tool_session(pairs=pairs),)), path)
    monkeypatch.setattr(native, "PIECES_ABOVE", 0)
    monkeypatch.setattr(json_pieces, "PIECE_BYTES", 16384)
    return path


async def test_keys_work_while_the_file_is_read(tmp_path, monkeypatch):
    path = big_file(tmp_path, monkeypatch)
    release = threading.Event()
    shown = threading.Event()

    class HeldReading(StoredPieces):
        """The reading holds after the first piece is on its way to the screen, until released."""

        def __call__(self, conversation, messages):
            super().__call__(conversation, messages)
            if self.shown:
                shown.set()
                assert release.wait(20)

    monkeypatch.setattr(workers, "StoredPieces", HeldReading)
    app = CtxviewApp(str(path), Settings(tiers="default"), follow_interval=None)
    try:
        async with app.run_test(size=SIZE) as pilot:
            for _ in range(1000):  # (until the first piece is on screen: seconds at most on a busy box)
                await pilot.pause(0.01)
                if app.row_layout is not None and shown.is_set():
                    break
            read = len(app.row_layout) - 1  # (the #sys row first)
            assert app.session is None and app.row_layout.is_pending and 3 < read < len(tool_session(pairs=60).messages)
            assert "reading" in status(app)
            await pilot.press("down", "down", "down")
            await pilot.pause()
            assert app.cursor == 3 and app.session is None  # moved while the file is still read
            await pilot.press("end")
            await pilot.pause()
            assert app.cursor == read and app.session is None
            release.set()
            await settle(pilot)
            assert app.view is not None and not app.row_layout.is_pending
            assert len(app.row_layout) == len(app.conversation.messages) + 1 > read + 1
            assert app.cursor == read  # the cursor kept where the keys put it
    finally:
        release.set()


def test_heights_measured_while_reading_are_those_of_the_session(tmp_path, monkeypatch):
    path = big_file(tmp_path, monkeypatch)
    layouts = Layouts()
    posted = []
    pieces = StoredPieces(posted.append, layouts, Settings())
    pieces.EVERY = 0  # every time the messages read have doubled
    with native.pieces_told_to(pieces):
        session = load_session(path)
    assert len(posted) >= 3 and all(type(p.layout) is Layout and p.layout.is_pending for p in posted)
    conversation = session.conversations[0]
    counts = [p.count for p in posted]
    assert counts == sorted(counts) and counts[-1] < len(conversation.messages)
    for piece in posted:  # each the stored side of the first messages, as measured from the session
        assert piece.layout.base_heights[1:] == stored_heights_of(conversation.messages[:piece.count])
    pending = layouts.pending(conversation, Settings())
    assert pending.base_heights[1:] == stored_heights_of(conversation.messages)
    # read some other way (not these messages): measured anew
    other = Layouts()
    other.read_so_far(load_session(path).conversations[0].messages[:5], Settings())
    assert other.pending(conversation, Settings()).base_heights[1:] == stored_heights_of(conversation.messages)


async def test_while_the_file_is_read_the_body_says_how_much(tmp_path, monkeypatch):
    """The body's cover names the file and the share of it read (widgets/reading.py), redrawn
    when that share changes; it goes when the session shows."""
    import shutil
    from pathlib import Path

    from ctxview.formats.inputs import open_input
    from ctxview.tui.widgets.reading import ReadingIndicator

    sample = Path(__file__).resolve().parents[1] / "fixtures" / "samples" / "claude-code" / "agentlogs-crud.jsonl"
    path = tmp_path / "agent[bold]\x1b[31m.jsonl"   # a name that is neither markup nor escapes on screen
    shutil.copy(sample, path)
    steps = [threading.Event() for _ in range(3)]   # read a bit; read to the end; go on
    open_session = workers.open_session

    def held(*args, **kwargs):
        inp = open_input(path)
        with inp.open() as f:
            meter = app._meter
            assert meter.size == inp.size and meter.done == 0
            steps[0].set()
            assert steps[1].wait(20)
            f.read()
            steps[2].set()
        assert release.wait(20)
        return open_session(*args, **kwargs)

    release = threading.Event()
    monkeypatch.setattr(workers, "open_session", held)
    app = CtxviewApp(str(path), Settings(), follow_interval=None)

    def cover():  # (Textual keeps a loading cover out of the DOM's children)
        return app.query_one("#body")._cover_widget

    async def cover_says(text: str) -> bool:
        for _ in range(400):
            if isinstance(cover(), ReadingIndicator) and cover().render().plain == text:
                return True
            await pilot.pause(0.02)
        return False

    try:
        async with app.run_test(size=SIZE) as pilot:
            assert steps[0].wait(20)
            label = "reading " + str(path).replace("\x1b", "␛") + "…"
            assert await cover_says(label + " 0%")
            redrawn = []
            shown = cover()
            refresh = shown.refresh
            shown.refresh = lambda *a, **k: redrawn.append(1) or refresh(*a, **k)
            await pilot.pause(0.6)          # looked at twice or more: the same figure, not redrawn
            assert redrawn == []
            steps[1].set()
            assert steps[2].wait(20)
            assert await cover_says(label + " 100%") and redrawn
            release.set()
            await settle(pilot)
            assert app.view is not None and cover() is None
    finally:
        for event in (*steps, release):
            event.set()


def test_the_cover_shows_the_whole_percent_read():
    from ctxview.formats.inputs import ReadMeter
    from ctxview.tui.widgets.reading import ReadingIndicator

    meter = ReadMeter()
    assert ReadingIndicator("f.jsonl", meter).render().plain == "reading f.jsonl…"   # nothing opened yet
    for done, shown in ((29, "29%"), (57, "57%"), (999, "99%"), (1000, "100%")):
        meter.size, meter.done = 1000 if done > 100 else 100, done
        assert ReadingIndicator("f.jsonl", meter).render().plain == "reading f.jsonl… " + shown
