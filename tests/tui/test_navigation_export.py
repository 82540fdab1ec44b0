"""`w`: the source's own shape by default, and a question before a file is replaced (the write
itself stays atomic); at three sizes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pilot_sizes import SIZES
from test_app import new_app, settle
from textual.widgets import Input, Select

from ctxview.export.bodies import default_shape
from ctxview.tui.app import CtxviewApp
from ctxview.tui.screens.dialogs import ConfirmScreen
from ctxview.tui.screens.modals import WriteScreen
from ctxview.engine.view import Settings

ROOT = Path(__file__).parents[2]
SAMPLES = ROOT / "sample_sessions"


@pytest.mark.parametrize("fmt, model, shape", [
    ("claude-code", None, "anthropic"), ("anthropic", "gpt-4o", "anthropic"),
    ("swarm-snapshot", "claude-sonnet-4-5", "anthropic"), ("swarm-events", "Claude-Opus-4", "anthropic"),
    ("swarm-events", "gpt-5", "openai"), ("swarm-snapshot", None, "openai"), ("ctxview", "claude-haiku-4-5", "anthropic"),
    ("codex", "gpt-5-codex", "openai"), ("openai", "claude-sonnet-4", "openai"), ("openai", None, "openai"),
    ("claude-trace", None, "anthropic"), ("claude-tap", None, "anthropic"), ("context-lens", None, "anthropic"),
    ("har", None, "anthropic"),
])
def test_default_shape(fmt, model, shape):
    assert default_shape(fmt, model) == shape


@pytest.mark.parametrize("sample, shape", [
    ("claude-code/7b1f3c52-9a4e-4d1b-8f57-3e2c9d0a6b18.jsonl", "anthropic"),
    ("anthropic-request.json", "anthropic"),
    ("swarm-demo.snapshot.json", "anthropic"),     # a SwarmSDK team on claude-sonnet-4-5
    ("codex", "openai"),
    ("openai-responses.json", "openai"),
])
async def test_w_offers_the_shape_of_the_source(sample, shape, tmp_path):
    path = SAMPLES / sample
    if path.is_dir():
        path = next(path.glob("*.jsonl"))
    app = CtxviewApp(str(path), Settings())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("w")
        await pilot.pause()
        assert isinstance(app.screen, WriteScreen)
        assert app.screen.query_one("#write-shape", Select).value == shape
        app.screen.query_one(Input).value = str(tmp_path / "out.json")
        await pilot.press("enter")
        await settle(pilot)
        body = json.loads((tmp_path / "out.json").read_text())
        assert ("max_tokens" in body) == (shape == "anthropic")      # Anthropic bodies carry it, OpenAI's not


async def write(pilot, target: Path) -> None:
    await pilot.press("w")
    await pilot.pause()
    pilot.app.screen.query_one(Input).value = str(target)
    await pilot.press("enter")
    await settle(pilot)


@pytest.mark.parametrize("size", SIZES)
async def test_w_asks_before_overwriting(size, tmp_path):
    target = tmp_path / "out.json"
    target.write_text("keep me")
    app = new_app()
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await write(pilot, target)
        assert isinstance(app.screen, ConfirmScreen)
        assert str(target) in str(app.screen.query_one("#confirm-question").render())
        await pilot.press("escape")                                    # cancel: untouched
        await settle(pilot)
        assert not isinstance(app.screen, ConfirmScreen) and target.read_text() == "keep me"
        assert app.last_written is None
        await write(pilot, target)
        await pilot.click("#confirm-no")                               # Cancel, by the button
        await settle(pilot)
        assert target.read_text() == "keep me"
        await write(pilot, target)
        await pilot.press("y")                                         # overwrite
        await settle(pilot)
        assert app.last_written == str(target)
        assert len(json.loads(target.read_text())["messages"]) >= len(app.view.prepared)
        assert not list(tmp_path.glob(".*ctxview-tmp"))                # atomic: no temporary file left


async def test_w_to_a_new_file_does_not_ask(tmp_path):
    app = new_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await write(pilot, tmp_path / "new.json")
        assert not isinstance(app.screen, ConfirmScreen) and app.last_written == str(tmp_path / "new.json")


async def test_w_offers_a_full_path_and_counts_the_messages_of_the_body_it_wrote(tmp_path, monkeypatch):
    # A Claude Code transcript: its Anthropic body merges each turn's tool results into one user
    # message, so the body holds fewer messages than the prepared side; the notice counts the body's.
    monkeypatch.chdir(tmp_path)
    from test_navigation_moves import record_notes

    path = next((SAMPLES / "claude-code").glob("*.jsonl"))
    app = CtxviewApp(str(path), Settings())
    said = record_notes(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("w")
        await pilot.pause()
        offered = app.screen.query_one(Input).value
        assert Path(offered).is_absolute() and Path(offered).parent == tmp_path  # where it will go, in full
        await pilot.press("enter")
        await settle(pilot)
        body = json.loads(Path(offered).read_text())
        count = len(body["messages"])
        assert count != len(app.view.prepared)                         # (what made the old notice wrong)
        assert said[-1] == f"wrote a request body of {count:,} messages (anthropic) to {offered}"


async def test_w_offers_the_folder_the_user_config_names(tmp_path, monkeypatch):
    from ctxview.cli.user_config import load_user_config

    here, there = tmp_path / "repo", tmp_path / "exports"
    here.mkdir()
    there.mkdir()
    monkeypatch.chdir(here)
    config = tmp_path / "config.toml"
    config.write_text(f'export_dir = "{there}"\n')
    path = next((SAMPLES / "claude-code").glob("*.jsonl"))
    app = CtxviewApp(str(path), Settings())
    app.configure({}, None, "", load_user_config(config).export_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("w")
        await pilot.pause()
        offered = Path(app.screen.query_one(Input).value)
        assert offered.parent == there                      # the config's folder, not the current one
        await pilot.press("enter")
        await settle(pilot)
    assert offered.exists() and not list(here.iterdir())   # nothing written where the user stood
