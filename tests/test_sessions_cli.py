"""`ctxview sessions [DIR] [--json]`, and how `ctxview` with no file, with DIR and with --demo opens.
HOME and the agents' variables point at tmp_path."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ctxview.cli import commands as cli
from test_sessions_index import write_claude, write_codex, write_gemini

KEYS = {"path", "format", "project", "title", "started", "updated", "messages", "size_bytes", "model"}


@pytest.fixture
def home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    write_claude(home, "/home/me/a", "s1")
    write_codex(home, "r1")
    write_gemini(home, "g1", jsonl=False)
    monkeypatch.setenv("HOME", str(home))
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CTXVIEW_CACHE_DIR", str(tmp_path / "cache"))
    return home


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ctxview", *args], capture_output=True, text=True, timeout=120)


def test_sessions_json_schema(home, capsys):
    assert cli.main(["sessions", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 3
    for row in rows:
        assert KEYS <= set(row)
        assert isinstance(row["path"], str) and row["path"].startswith(str(home))
        assert isinstance(row["size_bytes"], int) and row["size_bytes"] > 0
        assert isinstance(row["messages"], int)
        for key in ("started", "updated"):  # ISO 8601
            assert row[key].endswith("Z") and row[key][10] == "T"
    assert {r["format"] for r in rows} == {"claude-code", "codex", "gemini"}
    assert {r["project"] for r in rows} == {"/home/me/a", "/home/me/codex-proj", "/home/me/gemini-proj"}
    assert [r["updated"] for r in rows] == sorted((r["updated"] for r in rows), reverse=True)


def test_sessions_of_a_directory_in_a_subprocess(home, tmp_path):
    out = run("sessions", str(home / ".codex"), "--json")
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert [(r["format"], r["title"]) for r in rows] == [("codex", "prompt of r1")]


def test_sessions_plain_table(home, capsys):
    assert cli.main(["sessions"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:4] == ["last", "activity", "project", "title"]  # what tells sessions apart first
    assert len(out) == 5 and out[-1] == "3 sessions"
    assert any("prompt of s1" in line and "claude-code" in line for line in out)


def test_sessions_of_a_missing_directory_is_one_line(tmp_path, capsys):
    assert cli.main(["sessions", str(tmp_path / "nope")]) == 1
    err = capsys.readouterr().err
    assert err == f"ctxview: error: {tmp_path / 'nope'}: no such directory\n"
    (tmp_path / "f").write_text("x")
    assert cli.main(["sessions", str(tmp_path / "f")]) == 1
    assert "not a directory" in capsys.readouterr().err


def test_sessions_hostile_title_is_escaped_in_json_and_visible_in_the_table(tmp_path, capsys):
    folder = tmp_path / "-p"
    folder.mkdir()
    line = {"type": "user", "uuid": "u", "message": {"role": "user", "content": "\x1b]0;owned\x07 hi"}}
    (folder / "x.jsonl").write_text(json.dumps(line) + "\n")
    assert cli.main(["sessions", str(tmp_path), "--json"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and json.loads(out)[0]["title"] == "\x1b]0;owned\x07 hi"
    assert cli.main(["sessions", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "␛]0;owned␇ hi" in out


# --- how `ctxview` opens -------------------------------------------------------------------

@pytest.fixture
def launches(monkeypatch):
    import ctxview.tui.launch as launch

    calls = []
    monkeypatch.setattr(launch, "run_app", lambda path, *a, **k: calls.append(("inspector", path)) or 0)
    monkeypatch.setattr(launch, "run_browser", lambda root, *a, **k: calls.append(("browser", root)) or 0)
    return calls


def test_no_file_with_sessions_found_opens_the_browser(home, launches):
    assert cli.main([]) == 0
    assert launches == [("browser", None)]


def test_no_file_and_nothing_found_opens_the_demo(tmp_path, monkeypatch, launches):
    monkeypatch.setenv("HOME", str(tmp_path))  # a fresh machine
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME"):
        monkeypatch.delenv(name, raising=False)
    assert cli.main([]) == 0
    assert launches == [("inspector", None)]  # None: the bundled demo


def test_demo_always_opens_the_demo(home, launches, capsys):
    assert cli.main(["--demo"]) == 0
    assert launches == [("inspector", None)]
    assert cli.main(["--demo", "x.jsonl"]) == 2
    assert "--demo opens the bundled demo session: give it no FILE" in capsys.readouterr().err


def test_a_directory_opens_the_browser_on_it(tmp_path, launches, capsys):
    assert cli.main([str(tmp_path)]) == 1  # nothing there: one line, no screen
    assert capsys.readouterr().err == f"ctxview: error: {tmp_path}: no session files (.json, .jsonl) in this directory\n"
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "a.jsonl").write_text("{}\n")
    assert cli.main([str(tmp_path)]) == 0
    assert launches == [("browser", str(tmp_path))]


def test_the_inspector_path_does_not_import_the_index():
    code = ("import sys, ctxview.cli.commands, ctxview.tui.app, ctxview.tui.launch\n"
            "print(sorted(m for m in sys.modules if m.startswith('ctxview.sessions')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
