"""A sub-agent file that cannot be read does not stop the session from opening: it is left out, named
in a warning with the reason and in metadata["unreadable_subagents"]; a FIFO is never opened to wait."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

import ctxview.formats.claude_code.subagents as subagents
from ctxview.formats import LoadError, load_session

SPOTTER = Path(__file__).parent / "fixtures" / "samples" / "claude-code" / "spotter-258c7280"
SESSION = "258c7280-ae70-4798-800f-63464d01a85d"


def _copy(tmp_path: Path) -> tuple[Path, Path]:
    """The real session with its subagents/ folder (two agents' files), copied: (main file, subagents dir)."""
    shutil.copytree(SPOTTER, tmp_path / "s")
    return tmp_path / "s" / f"{SESSION}.jsonl", tmp_path / "s" / SESSION / "subagents"


def _opens_without(path: Path, bad: str, reason: str):
    s = load_session(path)
    names = [c.name for c in s.conversations]
    assert names == ["main", "agent-a881341", "agent-acompact-fffbd0"]  # the readable ones, as without it
    warned = [w for w in s.warnings if w.startswith(bad + ":")]
    assert len(warned) == 1 and "sub-agent file is unreadable" in warned[0] and reason in warned[0]
    assert list(s.metadata["unreadable_subagents"]) == [bad] and reason in s.metadata["unreadable_subagents"][bad]
    return s


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_among_the_subagent_files_is_listed_unreadable_and_never_waited_on(tmp_path):
    path, sub_dir = _copy(tmp_path)
    os.mkfifo(sub_dir / "agent-fifo.jsonl")  # no writer: opening it to read would wait for ever
    _opens_without(path, "agent-fifo.jsonl", "named pipe (FIFO)")


def test_a_device_a_folder_and_a_dangling_link_are_listed_unreadable(tmp_path):
    path, sub_dir = _copy(tmp_path)
    (sub_dir / "agent-dev.jsonl").symlink_to("/dev/null")
    (sub_dir / "agent-dir.jsonl").mkdir()
    (sub_dir / "agent-gone.jsonl").symlink_to(sub_dir / "nowhere.jsonl")
    s = load_session(path)
    assert [c.name for c in s.conversations] == ["main", "agent-a881341", "agent-acompact-fffbd0"]
    assert s.metadata["unreadable_subagents"] == {
        "agent-dev.jsonl": "is a character device, not a regular file",
        "agent-dir.jsonl": "is a directory, not a session file",
        "agent-gone.jsonl": "cannot read: no such file"}
    assert sum("sub-agent file is unreadable" in w for w in s.warnings) == 3


def test_a_subagent_file_without_permission_is_listed_unreadable(tmp_path, monkeypatch):
    path, sub_dir = _copy(tmp_path)
    locked = sub_dir / "agent-locked.jsonl"
    shutil.copy(sub_dir / "agent-a881341.jsonl", locked)
    real_open = os.open

    def no_permission(p, flags, *a, **k):  # (chmod 000 does not stop root, who may run the tests)
        if os.fspath(p) == os.fspath(locked):
            raise PermissionError(13, "Permission denied", os.fspath(p))
        return real_open(p, flags, *a, **k)

    monkeypatch.setattr(os, "open", no_permission)
    _opens_without(path, "agent-locked.jsonl", "permission denied")


def test_a_subagent_file_gone_between_listing_and_reading_is_listed_unreadable(tmp_path, monkeypatch):
    path, sub_dir = _copy(tmp_path)
    doomed = sub_dir / "agent-doomed.jsonl"
    shutil.copy(sub_dir / "agent-a881341.jsonl", doomed)
    checked = subagents.open_input

    def check_then_lose(p):  # the file passes the check, then is deleted before it is read
        inp = checked(p)
        if Path(p) == doomed:
            doomed.unlink()
        return inp

    monkeypatch.setattr(subagents, "open_input", check_then_lose)
    _opens_without(path, "agent-doomed.jsonl", "no such file")


def test_a_malformed_line_in_a_readable_subagent_file_is_still_an_error_unless_lenient(tmp_path):
    path, sub_dir = _copy(tmp_path)
    (sub_dir / "agent-bad.jsonl").write_bytes(b'{"type":"user",\n')
    with pytest.raises(LoadError) as exc:
        load_session(path)
    assert exc.value.path.endswith("agent-bad.jsonl") and exc.value.line == 1
    assert "unreadable_subagents" not in load_session(path, lenient=True).metadata


def test_a_subagents_last_call_takes_its_final_usage_from_the_task_result(tmp_path):
    # The sub-agent's file records every reply as its stream began (output_tokens 1); the parent's
    # Task result holds the last call's final usage (997 output tokens, the same cache read and write).
    shutil.copytree(SPOTTER, tmp_path / "s")
    main = next((tmp_path / "s").glob("*.jsonl"))
    session = load_session(main)
    agent = next(c for c in session.conversations if c.name == "agent-a881341")
    calls = [m for m in agent.messages if m.usage is not None]
    assert [m.usage.output_tokens for m in calls] == [1, 1, 997]
    assert (calls[-1].usage.cache_read_tokens, calls[-1].usage.cache_write_tokens) == (22_041, 20_135)
    assert calls[-1].meta["usage_from"] == "task_result"
    # a Task result for another call (here: other cache figures) leaves the file's record as it is
    text = main.read_text().replace('"cache_read_input_tokens": 22041', '"cache_read_input_tokens": 22040')
    text = text.replace('"cache_read_input_tokens":22041', '"cache_read_input_tokens":22040')
    main.write_text(text)
    agent = next(c for c in load_session(main).conversations if c.name == "agent-a881341")
    assert [m.usage.output_tokens for m in agent.messages if m.usage is not None] == [1, 1, 1]
