"""The prepared pane marks what `prepare` and `w` leave out of the body or change in it (export.LeftOut)."""

from __future__ import annotations

from pathlib import Path

from test_app import settle

from ctxview.tui.app import CtxviewApp
from ctxview.engine.view import Settings

IMAGE = Path(__file__).parents[1] / "fixtures" / "export" / "claude-code-image.jsonl"


def header(pane, row: int) -> str:
    return pane.block(row)[0].text


async def test_the_prepared_pane_marks_an_image_sent_as_text_in_openai_only():
    app = CtxviewApp(str(IMAGE), Settings())
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        prepared = [header(app.prepared_pane, r) for r in range(1, 5)]
        stored = [header(app.stored_pane, r) for r in range(1, 5)]
    # the user's image is read back from the file (sent as an image); the tool result's is too, but
    # a Chat Completions tool message is text only
    assert "image" not in prepared[0].split("tok", 1)[1] and "image as text in openai" in prepared[2]
    assert "image" not in prepared[1] and "image" not in prepared[3]
    assert not any("image as text" in s for s in stored)   # the export's, on the prepared side only


def test_w_says_what_it_changed_and_writes_no_empty_body(tmp_path):
    from ctxview import load_session
    from ctxview.model import Conversation, Message
    from ctxview.pipeline import prepare
    from ctxview.tui.messages import WorkFailed, Written
    from ctxview.tui.workers import write_job

    posted = []
    view = prepare(load_session(IMAGE).conversations[0], Settings())
    write_job(posted.append, str(tmp_path / "body.json"), "anthropic", view, "m", None, str(IMAGE))
    assert isinstance(posted[-1], Written) and posted[-1].note == ""          # both read back: images
    write_job(posted.append, str(tmp_path / "body.json"), "openai", view, "m", None, str(IMAGE))
    assert posted[-1].note == "1 images sent as their placeholder text"       # the tool result's
    write_job(posted.append, str(tmp_path / "body.json"), "anthropic", view, "m")   # no source to read
    assert posted[-1].note == "2 images sent as their placeholder text"
    empty = prepare(Conversation(name="c", model="m", messages=(Message("user", "  "),)), Settings())
    target = tmp_path / "empty.json"
    write_job(posted.append, str(target), "anthropic", empty, "m")
    assert isinstance(posted[-1], WorkFailed) and "no messages" in posted[-1].error and not target.exists()
