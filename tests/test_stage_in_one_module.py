"""A what-if stage is one module and one line of the registry.

The test copies the package, writes a new stage's module beside the others and
adds its name to STAGE_MODULES, and touches nothing else. The copy, run in a
fresh interpreter, must then offer the stage everywhere a setting is offered
(the command line's --help, the config file, the settings dialog and the palette), name it in
the view's label and on the status bar, and run its rule in both pipelines.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import ctxview

TOY = '''\
"""Squeezed white space, a what-if: each run of white space in a tool result becomes one space."""

from __future__ import annotations

import dataclasses
import re

from ctxview.stages.declare import Option, Stage

_RUNS = re.compile(r"\\s{2,}")


def _squeeze(message, settings):
    if message.role != "tool" or not isinstance(message.content, str):
        return None
    squeezed = _RUNS.sub(" ", message.content)
    return None if squeezed == message.content else dataclasses.replace(message, content=squeezed)


STAGE = Stage(
    name="squeeze",
    options=(Option("squeeze", False, "squeeze each run of white space in tool results to one space",
                    kind="switch", label="squeeze white space", flag="--squeeze", metavar="on|off"),),
    describe=lambda s: "white space squeezed" if s.squeeze else None,
    rewrite=_squeeze,
)
'''


@pytest.fixture(scope="module")
def grown(tmp_path_factory) -> Path:
    """A copy of the package with the toy stage: its module, and its line in the registry."""
    root = tmp_path_factory.mktemp("grown")
    package = root / "ctxview"
    shutil.copytree(Path(ctxview.__file__).parent, package, ignore=shutil.ignore_patterns("__pycache__"))
    (package / "stages" / "squeeze.py").write_text(TOY)
    registry = package / "stages" / "__init__.py"
    text = registry.read_text()
    assert text.count('    "budget",\n') == 1
    registry.write_text(text.replace('    "budget",\n', '    "budget",\n    "squeeze",\n'))
    return root


def run(root: Path, *args: str, code: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(root), "CTXVIEW_CONFIG": str(root / "config.toml")}
    command = [sys.executable, "-c", code] if code is not None else [sys.executable, "-m", "ctxview", *args]
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=root, timeout=300)
    assert done.returncode == 0, done.stderr
    return done


DEMO = "ctxview/samples/swarm-demo.ctxview.json"


def test_the_copy_is_the_one_that_runs(grown):
    where = run(grown, code="import ctxview; print(ctxview.__file__)").stdout.strip()
    assert Path(where).is_relative_to(grown)


def test_the_new_stage_is_a_flag_with_its_help(grown):
    shown = run(grown, "report", "--help").stdout
    assert "--squeeze on|off" in shown and "squeeze each run of white space" in " ".join(shown.split())
    assert "--squeeze" not in subprocess.run([sys.executable, "-m", "ctxview", "report", "--help"],
                                             capture_output=True, text=True).stdout  # (the package as it is)


def test_the_flag_runs_the_rule_and_names_the_what_if(grown):
    plain = json.loads(run(grown, "report", DEMO, "--json").stdout)
    squeezed = json.loads(run(grown, "report", DEMO, "--json", "--squeeze", "on").stdout)
    conversation = squeezed["conversations"][0]
    assert "squeezed" not in plain["conversations"][0]["view_label"]
    assert conversation["view"] == "what-if" and "white space squeezed" in conversation["view_label"]
    assert conversation["tokens"]["prepared"] < plain["conversations"][0]["tokens"]["prepared"]


PIPELINES = textwrap.dedent('''
    from ctxview import load_session
    from ctxview.pipeline import prepare, prepare_reference
    from ctxview.settings import Settings, settings_from
    from ctxview.cli.user_config import SETTING_NAMES
    from ctxview.engine.tokens import get_counter

    conversation = load_session("ctxview/samples/swarm-demo.ctxview.json").conversations[0]
    counter = get_counter("chars4")
    settings = Settings(squeeze=True, tiers="default", keep_recent=2)
    cached, plain = prepare(conversation, settings, counter=counter), prepare_reference(conversation, settings,
                                                                                        counter=counter)
    assert cached.rows == plain.rows and cached.tokens_prepared == plain.tokens_prepared
    changed = [row for row in cached.rows if any(c.action == "squeeze" for c in row.changes)]
    assert changed and all("  " not in row.prepared.text for row in changed if row.prepared.role == "tool")
    assert changed[0].changes[-1].detail.startswith("white space squeezed: ")
    assert settings.label() == "what-if: tiers=default, keep_recent=2, white space squeezed"
    assert "squeeze" in SETTING_NAMES                            # the config file's key
    assert settings_from({"squeeze": True}) == Settings(squeeze=True)   # a session file's open-with settings
    assert Settings(squeeze="yes").problems() == ["squeeze must be true or false, not 'yes'"]
    print(len(changed))
''')


def test_both_pipelines_run_its_rule_and_the_files_take_it(grown):
    assert int(run(grown, code=PIPELINES).stdout) > 0


INSPECTOR = textwrap.dedent('''
    import asyncio
    from ctxview.settings import Settings
    from ctxview.tui.app import CtxviewApp
    from ctxview.tui.keys import SETTINGS_ENTRIES
    from ctxview.tui.screens.settings import FIELDS, SettingsDialog
    from ctxview.tui.widgets.chrome import StatusBar

    assert ("squeeze white space", "squeeze") in SETTINGS_ENTRIES    # the palette opens the dialog there

    async def main():
        app = CtxviewApp("ctxview/samples/swarm-demo.ctxview.json", Settings())
        async with app.run_test(size=(160, 50)) as pilot:
            for _ in range(200):
                await pilot.pause(0.05)
                if app.view is not None and not app.workers._workers:
                    break
            assert "squeeze" not in app.query_one(StatusBar).render().plain
            await pilot.press("S")
            await pilot.pause()
            dialog = app.screen
            assert isinstance(dialog, SettingsDialog) and FIELDS["squeeze"] == "squeeze white space"
            box = dialog.widget("squeeze")
            assert box.value is False
            box.value = True
            await pilot.pause()
            assert "white space squeezed" in dialog.query_one("#settings-label").render().plain
            await pilot.click("#settings-apply")
            for _ in range(200):
                await pilot.pause(0.05)
                if app.settings.squeeze and not app.workers._workers:
                    break
            status = app.query_one(StatusBar).render().plain
            assert "white space squeezed" in status, status
            assert app.view.settings.squeeze and app.view.view_label.endswith("white space squeezed")
            print("ok")

    asyncio.run(main())
''')


def test_the_inspector_offers_it_in_the_dialog_and_names_it_on_the_status_bar(grown):
    assert run(grown, code=INSPECTOR).stdout.strip().endswith("ok")
