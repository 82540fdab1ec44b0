"""Following a session file as it grows (formats/growing.py): a Claude Code transcript read again only
from where reading stopped gives the session a whole read gives, at every step; a rewritten, truncated
or replaced file reads whole with a notice; a vanished one keeps what was read."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from ctxview.formats import LoadError, load_session
from ctxview.formats.growing import APPENDED, CHANGED, GONE, RELOAD, REWRITTEN, SAME, GrowingSession

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_CC = ROOT / "sample_sessions" / "claude-code" / "7b1f3c52-9a4e-4d1b-8f57-3e2c9d0a6b18.jsonl"
FIXTURES_CC = sorted(p for p in (ROOT / "tests" / "fixtures" / "samples" / "claude-code").rglob("*.jsonl"))
CODEX = next((ROOT / "sample_sessions" / "codex").glob("rollout-*.jsonl"))


def growing(tmp_path: Path, data: bytes, name: str = "live.jsonl") -> tuple[Path, GrowingSession]:
    """A file holding `data`, read by a GrowingSession."""
    path = tmp_path / name
    path.write_bytes(data)
    grow = GrowingSession(path)
    grow.load()
    return path, grow


def same_as_whole(grown, path: Path) -> None:
    whole = load_session(path)
    assert grown.conversations == whole.conversations
    assert grown.warnings == whole.warnings
    assert (grown.skipped, grown.metadata) == (whole.skipped, whole.metadata)


def steps(data: bytes, n: int) -> list[int]:
    """n cut points through `data`, some inside lines, some at line ends."""
    cuts = sorted({len(data) * i // n for i in range(1, n)} | {data.index(b"\n", len(data) // 3) + 1})
    return [c for c in cuts if data[:c].strip()] + [len(data)]


@pytest.mark.parametrize("src", [SAMPLE_CC, *FIXTURES_CC], ids=lambda p: p.name)
def test_appended_lines_read_alone_give_the_whole_read(tmp_path, src):
    data = src.read_bytes()
    path = tmp_path / src.name
    cuts = steps(data, 7)
    first = next(c for c in cuts if data[:c].count(b"\n") >= 2 and b'"assistant"' in data[:c])
    path.write_bytes(data[:first])
    if src == SAMPLE_CC:  # with its sub-agent's file beside it
        shutil.copytree(src.with_suffix(""), tmp_path / src.stem)
    grow = GrowingSession(path)
    same_as_whole(grow.load(), path)
    assert grow.appends
    for cut in [c for c in cuts if c > first]:
        before, whole = grow._resumable.end, grow._resumable.one_pass
        with path.open("ab") as f:
            f.write(data[path.stat().st_size:cut])
        assert grow.poll() == APPENDED
        r = grow.refresh(APPENDED)
        assert (r.change, r.whole, r.notice) == (APPENDED, False, "")
        # read from where the last read stopped (the first append after the one pass: whole)
        assert grow._resumable.reader.start == (0 if whole else before) and not grow._resumable.one_pass
        same_as_whole(r.session, path)
        assert grow.poll() == SAME


def test_the_line_being_written_is_read_once_complete(tmp_path):
    data = SAMPLE_CC.read_bytes()
    lines = data.splitlines(keepends=True)
    path = tmp_path / "live.jsonl"
    path.write_bytes(b"".join(lines[:20]) + lines[20][:40])
    grow = GrowingSession(path)
    s = grow.load()
    assert any("last line still being written (line 21, 40 bytes)" in w for w in s.warnings)
    with path.open("ab") as f:
        f.write(lines[20][40:])
    s = grow.refresh(grow.poll()).session
    assert not any("still being written" in w for w in s.warnings)
    same_as_whole(s, path)


def test_a_complete_line_whose_newline_comes_later(tmp_path):
    lines = SAMPLE_CC.read_bytes().splitlines(keepends=True)
    path, grow = growing(tmp_path, b"".join(lines[:20]) + lines[20].rstrip(b"\n"))
    with path.open("ab") as f:
        f.write(b"\n" + b"".join(lines[21:30]))
    s = grow.refresh(grow.poll()).session
    same_as_whole(s, path)
    assert [m.origin for m in s.conversations[0].messages] == [m.origin for m in
                                                               load_session(path).conversations[0].messages]


def test_truncated_rewritten_and_replaced_files_reload_whole(tmp_path):
    lines = SAMPLE_CC.read_bytes().splitlines(keepends=True)
    path, grow = growing(tmp_path, b"".join(lines[:60]))

    path.write_bytes(b"".join(lines[:30]))  # truncated
    assert grow.poll() == REWRITTEN
    r = grow.refresh(REWRITTEN)
    assert r.whole and r.notice == f"{path} was rewritten or truncated: reloaded whole"
    same_as_whole(r.session, path)

    # the file longer, but its first line changed (and no longer JSON: reading it whole is an error)
    with path.open("r+b") as f:
        f.write(b"[")
    with path.open("ab") as f:
        f.write(b"".join(lines[30:40]))
    assert grow.poll() == REWRITTEN
    with pytest.raises(LoadError, match=r"live.jsonl:1:"):
        grow.refresh(REWRITTEN)
    assert grow.poll() == SAME  # not read again until it changes again

    tmp = tmp_path / "new.jsonl"
    tmp.write_bytes(b"".join(lines[:45]))
    os.replace(tmp, path)  # replaced by a rename, as an editor or an atomic writer does
    assert grow.poll() == REWRITTEN
    same_as_whole(grow.refresh(REWRITTEN).session, path)
    assert grow.appends


def test_a_vanished_file_keeps_what_was_read(tmp_path):
    path = tmp_path / "live.jsonl"
    path.write_bytes(SAMPLE_CC.read_bytes())
    grow = GrowingSession(path)
    s = grow.load()
    path.unlink()
    assert grow.poll() == GONE
    r = grow.refresh(GONE)
    assert r.session is s and r.notice == f"{path} is gone: showing what was read"
    path.write_bytes(SAMPLE_CC.read_bytes())
    assert grow.poll() == REWRITTEN


def test_a_bad_appended_line_is_an_error_and_the_session_stays(tmp_path):
    lines = SAMPLE_CC.read_bytes().splitlines(keepends=True)
    path = tmp_path / "live.jsonl"
    path.write_bytes(b"".join(lines[:40]))
    grow = GrowingSession(path)
    s = grow.load()
    with path.open("ab") as f:
        f.write(b"{broken\n")
    with pytest.raises(LoadError, match=r"live.jsonl:41:.*use --lenient"):
        grow.refresh(grow.poll())
    assert grow.session is s and grow.poll() == SAME
    lenient = GrowingSession(path, lenient=True)
    assert lenient.load().skipped == 1


def test_other_formats_read_whole(tmp_path):
    lines = CODEX.read_bytes().splitlines(keepends=True)
    path, grow = growing(tmp_path, b"".join(lines[:50]), "rollout.jsonl")
    assert not grow.appends
    with path.open("ab") as f:
        f.write(b"".join(lines[50:90]))
    assert grow.poll() == APPENDED
    r = grow.refresh(APPENDED)
    assert r.whole and r.notice == ""
    same_as_whole(r.session, path)

    doc = tmp_path / "chat.json"
    shutil.copy(ROOT / "sample_sessions" / "openai-chat.json", doc)
    grow = GrowingSession(doc)
    grow.load()
    st = doc.stat()
    os.utime(doc, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert grow.poll() == CHANGED
    assert grow.refresh(CHANGED).notice == f"{doc} changed: reloaded whole"
    r = grow.refresh(RELOAD)
    assert r.whole and r.notice == f"{doc}: reloaded"


@pytest.mark.parametrize("src", [pytest.param(SAMPLE_CC, marks=pytest.mark.slow), FIXTURES_CC[0]], ids=lambda p: p.name)
def test_line_by_line_and_the_messages_already_read_are_kept(tmp_path, src):
    """Each line appended alone (a streamed response's lines one at a time among them): the session a
    whole read gives, with the very Message objects of the lines before, but for a response that grew."""
    lines = src.read_bytes().splitlines(keepends=True)
    path, grow = growing(tmp_path, b"".join(lines[:3]))
    for i in range(3, len(lines)):
        before = {id(m): m for c in grow.session.conversations for m in c.messages}
        with path.open("ab") as f:
            f.write(lines[i])
        s = grow.refresh(grow.poll()).session
        same_as_whole(s, path)
        kept = sum(id(m) in before for c in s.conversations for m in c.messages)
        # every message but the last one of the conversation the line went to is the one read before
        assert kept >= len(before) - 1 - len(s.conversations)


def test_a_document_is_read_for_its_layout_once(monkeypatch) -> None:
    """GrowingSession.load detects a document's layout once and the loader takes its answer (a one-line
    document is read to its end to tell): the session is the one load_session reads."""
    from ctxview.formats import growing, registry
    from ctxview.formats.parsing import json_lines

    calls = []

    def counted(inp):
        calls.append(inp.name)
        return json_lines.detect_layout(inp)

    monkeypatch.setattr(growing, "detect_layout", counted)
    monkeypatch.setattr(registry, "detect_layout", counted)
    sample = ROOT / "ctxview" / "samples" / "swarm-demo.ctxview.json"
    session = GrowingSession(sample).load()
    assert len(calls) == 1
    assert session.conversations == load_session(sample).conversations


def test_a_read_that_fails_as_the_file_outgrows_it_is_picked_up_by_the_next(tmp_path, monkeypatch):
    # More than the growth allowance appended while a refresh reads: that read fails, and must not
    # count the new bytes as read (else poll says SAME and the view stays stale until the next write).
    from ctxview.formats import growing as growing_module
    from ctxview.formats import inputs

    lines = SAMPLE_CC.read_bytes().splitlines(keepends=True)
    path, grow = growing(tmp_path, b"".join(lines[:20]))
    monkeypatch.setattr(inputs, "GROWTH_ALLOWANCE", 4096)
    rest = b"".join(lines[21:])
    assert len(rest) > 4096
    real_open = growing_module.open_input
    grown = []

    def open_then_grow(p):  # the writer appends between the stat and the read, once
        inp = real_open(p)
        if not grown:
            grown.append(True)
            with path.open("ab") as f:
                f.write(rest)
        return inp

    with path.open("ab") as f:
        f.write(lines[20])  # a first append, for the poll to see
    monkeypatch.setattr(growing_module, "open_input", open_then_grow)
    with pytest.raises(LoadError, match="grew by more than"):
        grow.refresh(grow.poll())
    monkeypatch.setattr(growing_module, "open_input", real_open)
    assert grow.poll() != SAME  # the bytes appended meanwhile are still to be read
    r = grow.refresh(grow.poll())
    same_as_whole(r.session, path)
    assert grow.poll() == SAME


@pytest.mark.parametrize("src", [SAMPLE_CC, *FIXTURES_CC], ids=lambda p: p.name)
def test_the_first_read_is_the_one_pass_and_the_first_append_is_read_whole(tmp_path, src):
    """The first screen comes from the one pass (linear.py) where the file allows it, as
    load_session's; the first append then reads the file whole by the general path, the same."""
    from ctxview.formats.claude_code.linear import read_linear
    from ctxview.formats.inputs import open_input

    data = src.read_bytes()
    path = tmp_path / src.name
    half = data.index(b"\n", len(data) // 2) + 1
    if not data[half:].strip():   # (a file whose second half is one line: cut after its first)
        half = data.index(b"\n") + 1
    path.write_bytes(data[:half])
    if src == SAMPLE_CC:
        shutil.copytree(src.with_suffix(""), tmp_path / src.stem)
    linear = read_linear(open_input(str(path)), "transcript", False) is not None
    grow = GrowingSession(path)
    same_as_whole(grow.load(), path)
    assert (grow._resumable is not None and grow._resumable.one_pass) == linear
    with path.open("ab") as f:
        f.write(data[half:])
    assert grow.poll() == APPENDED
    r = grow.refresh(APPENDED)
    same_as_whole(r.session, path)
    assert not (grow._resumable is not None and grow._resumable.one_pass) and grow.poll() == SAME
