"""The session index on a generated tree: Claude Code, Codex and Gemini CLI layouts, and the files
that must not stop it (unreadable, half written, empty, not a session). HOME and the agents'
variables point at tmp_path; the real home is never read."""

from __future__ import annotations

import json
import os
import random
import sys
from pathlib import Path

import pytest

from ctxview.formats.registry import load_session
from ctxview.sessions import build_index, find_files, index_file, known_places
from ctxview.sessions.index import HEAD_BYTES, TAIL_BYTES, decode_claude_project
from ctxview.sessions.places import any_sessions

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import bench_sessions as tree  # noqa: E402

T0 = 1_780_000_000.0  # 2026-05-28T20:26:40Z


def env_for(home: Path) -> dict[str, str]:
    return {"HOME": str(home)}


def write_claude(home: Path, project: str, name: str, n: int = 5, **kw) -> Path:
    path = home / ".claude" / "projects" / project.replace("/", "-") / f"{name}.jsonl"
    tree._write_lines(path, tree.claude_code_records(random.Random(1), project, f"prompt of {name}", n, T0, **kw))
    return path


def write_codex(home: Path, name: str, n: int = 5, **kw) -> Path:
    path = home / ".codex" / "sessions" / "2026" / "05" / "28" / f"rollout-{name}.jsonl"
    tree._write_lines(path, tree.codex_records(random.Random(2), "/home/me/codex-proj", f"prompt of {name}", n, T0,
                                               **kw))
    return path


def write_gemini(home: Path, name: str, jsonl: bool, n: int = 5, **kw) -> Path:
    folder = home / ".gemini" / "tmp" / "proj-slug"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / ".project_root").write_text("/home/me/gemini-proj\n")
    return tree.write_gemini(folder / "chats", name, random.Random(3), f"prompt of {name}", n, T0, jsonl=jsonl, **kw)


def by_name(rows) -> dict[str, object]:
    return {os.path.basename(r.path): r for r in rows}


# --- the known places ---------------------------------------------------------------

def test_known_places_follow_home_and_the_agents_variables(tmp_path):
    places = {p.agent: p.root for p in known_places({"HOME": str(tmp_path)})}
    assert places == {"claude-code": tmp_path / ".claude" / "projects", "codex": tmp_path / ".codex" / "sessions",
                      "gemini": tmp_path / ".gemini" / "tmp"}
    env = {"HOME": str(tmp_path), "CLAUDE_CONFIG_DIR": str(tmp_path / "cc"), "CODEX_HOME": str(tmp_path / "cx"),
           "GEMINI_CLI_HOME": str(tmp_path / "gh")}
    places = {p.agent: p.root for p in known_places(env)}
    assert places == {"claude-code": tmp_path / "cc" / "projects", "codex": tmp_path / "cx" / "sessions",
                      "gemini": tmp_path / "gh" / ".gemini" / "tmp"}


def test_a_fresh_home_has_no_sessions(tmp_path):
    assert not any_sessions(env_for(tmp_path))
    assert find_files(env=env_for(tmp_path)) == []
    (tmp_path / ".claude" / "projects" / "-x").mkdir(parents=True)  # a project folder, no session yet
    assert not any_sessions(env_for(tmp_path))


def test_the_places_hold_the_three_layouts_and_not_sub_agents(tmp_path):
    cc = write_claude(tmp_path, "/home/me/app", "s1")
    sub = cc.parent / "s1" / "subagents" / "agent-1.jsonl"
    sub.parent.mkdir(parents=True)
    sub.write_text(cc.read_text())
    cx = write_codex(tmp_path, "r1")
    (cx.parent / "notes.jsonl").write_text("{}\n")  # not a rollout
    gj = write_gemini(tmp_path, "g1", jsonl=False)
    gl = write_gemini(tmp_path, "g2", jsonl=True)
    (gj.parent.parent / "checkpoint-x.json").write_text("{}")  # beside chats/, not a chat
    assert any_sessions(env_for(tmp_path))
    assert sorted(find_files(env=env_for(tmp_path))) == sorted(map(str, (cc, cx, gj, gl)))


# --- rows ------------------------------------------------------------------------------

def test_claude_code_row(tmp_path):
    path = write_claude(tmp_path, "/home/me/src/app", "s1", n=4)
    row = index_file(str(path))
    assert row.format == "claude-code"
    assert row.project == "/home/me/src/app"  # the recorded cwd
    assert row.title == "prompt of s1"        # the caveat (isMeta) and the /clear command line skipped
    assert row.started == "2026-05-28T20:26:40Z"  # the first line's timestamp
    assert row.updated == "2026-05-28T20:26:52Z"  # the last line's timestamp (t0 + 2 + 3*3 + 1)
    assert row.model == "claude-sonnet-4-5-20250929"
    assert row.tokens == 10 + 103 + 3000     # input + cache creation + cache read of the last response
    assert (row.messages, row.messages_estimated) == (3 + 8, False)
    assert row.problem is None and row.size_bytes == path.stat().st_size


def test_claude_code_project_from_the_folder_name_when_no_cwd_is_recorded(tmp_path):
    folder = tmp_path / "-home-me-src-app"
    folder.mkdir()
    line = {"type": "user", "uuid": "u", "timestamp": "2026-01-02T03:04:05Z",
            "message": {"role": "user", "content": [{"type": "text", "text": "hello\nthere"}]}}
    (folder / "x.jsonl").write_text(json.dumps(line) + "\n")
    row = index_file(str(folder / "x.jsonl"))
    assert (row.format, row.project, row.title) == ("claude-code", "/home/me/src/app", "hello there")
    assert decode_claude_project("-Users-me-work") == "/Users/me/work"
    assert decode_claude_project("plain") == "plain"


def test_claude_code_summary_and_custom_title_win_over_the_prompt(tmp_path):
    path = write_claude(tmp_path, "/p", "s1")
    lines = path.read_text()
    path.write_text(json.dumps({"type": "summary", "summary": "Rate limits", "leafUuid": "a1"}) + "\n" + lines)
    assert index_file(str(path)).title == "Rate limits"
    with open(path, "a") as f:
        f.write(json.dumps({"type": "custom-title", "customTitle": "my title", "sessionId": "s"}) + "\n")
    assert index_file(str(path)).title == "my title"
    alone = path.parent / "renamed-only.jsonl"  # a session of nothing but its name (as /rename leaves it)
    alone.write_text(json.dumps({"type": "custom-title", "customTitle": "only a name", "sessionId": "s"}) + "\n")
    assert (index_file(str(alone)).format, index_file(str(alone)).title) == ("claude-code", "only a name")


def test_codex_row(tmp_path):
    row = index_file(str(write_codex(tmp_path, "r1", n=3)))
    assert row.format == "codex"
    assert row.project == "/home/me/codex-proj"  # session_meta's cwd
    assert row.title == "prompt of r1"            # the typed message, not <environment_context>
    assert row.model == "gpt-5.2-codex"
    assert row.tokens == 2200                    # the last token_count's last_token_usage.input_tokens
    assert row.started == "2026-05-28T20:26:40Z" and row.updated == "2026-05-28T20:26:49Z"
    assert (row.messages, row.messages_estimated) == (2 + 6, False)


@pytest.mark.parametrize("jsonl", [False, True], ids=["json", "jsonl"])
def test_gemini_rows(tmp_path, jsonl):
    row = index_file(str(write_gemini(tmp_path, "g1", jsonl=jsonl, n=3)))
    assert row.format == "gemini"
    assert row.project == "/home/me/gemini-proj"  # tmp/<project>/.project_root
    assert row.title == "prompt of g1"
    assert row.model == "gemini-2.5-pro" and row.tokens == 3002
    assert row.started == "2026-05-28T20:26:40Z" and row.updated == "2026-05-28T20:26:52Z"
    assert (row.messages, row.messages_estimated) == (1 + 6, False)


def test_gemini_records_written_again_count_once(tmp_path):
    path = write_gemini(tmp_path, "g1", jsonl=True, n=3)
    lines = path.read_text().splitlines()
    again = json.loads(lines[2])  # the first gemini message, updated (as gemini-cli appends it again)
    again["content"] = "updated"
    with open(path, "a") as f:
        f.write(json.dumps(again, separators=(",", ":")) + "\n")
    assert index_file(str(path)).messages == 1 + 6


@pytest.mark.parametrize("jsonl", [False, True], ids=["json", "jsonl"])
def test_gemini_summary_is_the_title(tmp_path, jsonl):
    row = index_file(str(write_gemini(tmp_path, "g1", jsonl=jsonl, summary="Fix the parser")))
    assert row.title == "Fix the parser"


@pytest.mark.parametrize("writer", ["claude", "codex", "gemini-jsonl", "gemini-json"])
def test_a_big_file_is_read_at_its_head_and_tail_only(tmp_path, writer):
    if writer == "claude":
        path = write_claude(tmp_path, "/p", "big", n=400, result_chars=2000)
    elif writer == "codex":
        path = write_codex(tmp_path, "big", n=400, result_chars=2000)
    else:
        path = write_gemini(tmp_path, "big", jsonl=writer == "gemini-jsonl", n=400, result_chars=2000)
    size = path.stat().st_size
    assert size > 4 * (HEAD_BYTES + TAIL_BYTES)
    row = index_file(str(path))
    assert row.title == "prompt of big" and row.model is not None and row.tokens is not None
    assert row.updated is not None and row.started is not None
    if writer == "claude":  # counted line by line, as the loader counts (its head and tail are no sample)
        assert not row.messages_estimated
        assert row.messages == len(load_session(str(path)).conversations[0].messages)
        return
    assert row.messages_estimated
    real = {"codex": 2 + 800, "gemini-jsonl": 801, "gemini-json": 801}[writer]
    assert 0.5 * real <= row.messages <= 1.5 * real


def test_a_half_written_last_line_is_a_problem_not_a_failure(tmp_path):
    path = write_codex(tmp_path, "live", n=3)
    with open(path, "a") as f:
        f.write('{"timestamp":"2026-05-28T21:00:00.000Z","type":"response_item","payload":{"type":"mess')
    row = index_file(str(path))
    assert row.format == "codex" and row.title == "prompt of live"
    assert row.problem == "last line incomplete (still being written?)"
    assert row.updated == "2026-05-28T20:26:49Z"  # from the last complete line


def test_unreadable_empty_and_foreign_files(tmp_path):
    good = tmp_path / "logs" / "good.jsonl"
    good.parent.mkdir()
    good.write_bytes(write_claude(tmp_path, "/p", "good").read_bytes())
    empty = good.parent / "empty.jsonl"
    empty.write_bytes(b"")
    garbage = good.parent / "garbage.jsonl"
    garbage.write_bytes(b"\x00\xffnot json at all\n")
    foreign = tmp_path / "package.json"
    foreign.write_text('{"name": "x", "version": "1.0.0"}')
    rows = by_name(build_index(tmp_path, cache=False))
    assert rows["empty.jsonl"].problem == "empty file"
    assert rows["garbage.jsonl"].problem.startswith("no complete JSON line")
    assert "package.json" not in rows                # not a session: not listed
    assert rows["good.jsonl"].problem is None
    assert len(rows) == 3                            # .claude, a hidden folder, is not walked from tmp_path


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a chmod 000 file")
def test_an_unreadable_file_is_a_row_with_a_problem(tmp_path):
    path = write_claude(tmp_path, "/p", "locked")
    path.chmod(0)
    try:
        row = index_file(str(path))
        assert row.problem == "unreadable: Permission denied"
        assert row.listed and row.size_bytes == path.stat().st_size
    finally:
        path.chmod(0o600)


def test_a_read_error_is_a_row_with_a_problem_even_as_root(tmp_path, monkeypatch):
    # (root reads a chmod 000 file; the read failing is what the test above makes happen)
    from ctxview.sessions import index

    path = write_claude(tmp_path, "/p", "locked")

    def refuse(path, size):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(index, "_read", refuse)
    row = index_file(str(path))
    assert (row.problem, row.format, row.listed) == ("unreadable: Permission denied", None, True)


def test_other_loaders_files_in_a_directory(tmp_path):
    samples = Path(__file__).parent / "fixtures" / "samples"
    rows = build_index(samples, cache=False)
    formats = {r.format for r in rows}
    assert {"claude-code", "codex"} <= formats
    assert all(r.problem is None for r in rows)


def test_the_generated_tree_is_listed_newest_first(tmp_path):
    paths = tree.make_tree(tmp_path, 30)
    rows = build_index(env=env_for(tmp_path), cache=False)
    assert len(rows) == 30
    assert {r.format for r in rows} == {"claude-code", "codex", "gemini"}
    assert [r.updated for r in rows] == sorted((r.updated for r in rows), reverse=True)
    assert {r.path for r in rows} == set(map(str, paths))
    assert all(r.title and r.title.startswith("Task ") for r in rows)


def test_control_characters_stay_in_the_row_and_are_made_visible_in_the_cells(tmp_path):
    from ctxview.sessions.columns import cells

    folder = tmp_path / "-p"
    folder.mkdir()
    line = {"type": "user", "uuid": "u", "cwd": "/p\x1b]0;owned\x07", "message": {"role": "user",
            "content": "\x1b[31mred\x1b[0m [bold]not markup[/bold] \u202eevil"}}
    (folder / "x.jsonl").write_text(json.dumps(line) + "\n")
    row = index_file(str(folder / "x.jsonl"))
    assert "\x1b" in row.title  # kept as recorded (the JSON output escapes it)
    shown = " ".join(cells(row))
    assert "\x1b" not in shown and "\x07" not in shown and "\u202e" not in shown
    assert "␛[31mred" in shown and "[bold]not markup[/bold]" in shown and "<U+202E>" in shown


def test_a_fifo_or_a_device_is_never_opened(tmp_path):
    os.mkfifo(tmp_path / "pipe.jsonl")  # opening it would wait for a writer
    (tmp_path / "zero.jsonl").symlink_to("/dev/zero")  # reading it would never end
    rows = by_name(build_index(tmp_path, cache=False))
    assert rows["pipe.jsonl"].problem == "not a regular file"
    assert rows["zero.jsonl"].problem == "not a regular file"
    folder = tmp_path / "g" / "proj"
    os.makedirs(folder / "chats")
    os.mkfifo(folder / ".project_root")
    path = write_gemini(tmp_path, "g1", jsonl=True)
    moved = folder / "chats" / path.name
    path.rename(moved)
    assert index_file(str(moved)).project == "proj"  # the folder's name, the FIFO left alone


def test_lines_holding_an_escaped_lone_surrogate_are_read(tmp_path):
    # "\ud800" is valid JSON that Claude Code writes and orjson refuses: the row reads it all the same
    path = write_claude(tmp_path, "/home/me/src/app", "s1", n=4)
    want = index_file(str(path))
    lines = path.read_bytes().replace(b"prompt of s1", b"prompt of s1 \\ud800").splitlines()
    lines[-1] = lines[-1].rstrip()[:-1] + b',"note":"\\udc00"}'
    path.write_bytes(b"\n".join(lines) + b"\n")
    row = index_file(str(path))
    assert row.title == "prompt of s1 \ud800" and row.problem is None
    assert (row.started, row.updated, row.tokens) == (want.started, want.updated, want.tokens)
