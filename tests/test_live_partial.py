"""A live session: a last line with no newline that does not parse is still being written, and is left
out with a warning; every other malformed line stays an error, which names --lenient."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from ctxview.formats import LoadError, load_session

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_sessions"
CLAUDE = SAMPLES / "claude-code" / "7b1f3c52-9a4e-4d1b-8f57-3e2c9d0a6b18.jsonl"
CODEX = next((SAMPLES / "codex").glob("rollout-*.jsonl"))
SWARM = SAMPLES / "swarm-demo.events.jsonl"


def openai_lines() -> bytes:
    doc = orjson.loads((SAMPLES / "openai-chat.json").read_bytes())
    messages = doc["messages"] if isinstance(doc, dict) else doc
    return b"".join(orjson.dumps(m) + b"\n" for m in messages)


# (format, the file's lines); each cut at line CUT (what a writer has flushed so far)
SOURCES = {
    "claude-code": lambda: CLAUDE.read_bytes(),
    "codex": lambda: CODEX.read_bytes(),
    "swarm-events": lambda: SWARM.read_bytes(),
    "openai": openai_lines,
}
CUT = 12


def cut(data: bytes, lines: int) -> tuple[bytes, bytes]:
    """The first `lines` complete lines, and the next line (newline included)."""
    parts = data.splitlines(keepends=True)
    return b"".join(parts[:lines]), parts[lines]


@pytest.mark.parametrize("fmt", list(SOURCES))
def test_half_written_last_line_is_left_out_with_a_warning(tmp_path, fmt):
    head, nxt = cut(SOURCES[fmt](), CUT)
    whole = tmp_path / "whole.jsonl"
    whole.write_bytes(head)
    live = tmp_path / "live.jsonl"
    half = nxt[: len(nxt) // 2]
    live.write_bytes(head + half)

    s = load_session(live)
    assert s.format == fmt
    assert s.conversations == load_session(whole).conversations
    assert s.skipped == 0
    assert f"last line still being written (line {CUT + 1}, {len(half):,} bytes): left out" in s.warnings


@pytest.mark.parametrize("fmt", list(SOURCES))
def test_half_written_line_with_a_newline_is_an_error_naming_lenient(tmp_path, fmt):
    head, nxt = cut(SOURCES[fmt](), CUT)
    p = tmp_path / "bad.jsonl"
    p.write_bytes(head + nxt[: len(nxt) // 2] + b"\n")
    with pytest.raises(LoadError) as exc:
        load_session(p, format=fmt)
    assert exc.value.line == CUT + 1
    assert "(use --lenient to skip bad lines; " in str(exc.value)
    assert exc.value.hint == "use --lenient to skip bad lines"


def test_a_bad_line_before_the_end_is_an_error_even_without_a_final_newline(tmp_path):
    head, nxt = cut(CLAUDE.read_bytes(), CUT)
    p = tmp_path / "bad.jsonl"
    p.write_bytes(head + b"{broken\n" + nxt.rstrip(b"\n"))
    with pytest.raises(LoadError) as exc:
        load_session(p)
    assert exc.value.line == CUT + 1


def test_a_complete_last_line_without_newline_is_read(tmp_path):
    head, nxt = cut(CLAUDE.read_bytes(), CUT)
    full, short = tmp_path / "full.jsonl", tmp_path / "short.jsonl"
    full.write_bytes(head + nxt)
    short.write_bytes(head + nxt.rstrip(b"\n"))
    s = load_session(short)
    assert s.conversations == load_session(full).conversations
    assert not any("still being written" in w for w in s.warnings)


def test_a_multibyte_character_cut_in_two_is_still_being_written(tmp_path):
    head, _ = cut(CLAUDE.read_bytes(), CUT)
    line = (b'{"type":"user","uuid":"zz","parentUuid":null,"sessionId":"s","message":{"role":"user",'
            b'"content":"caf\xc3\xa9"}}')
    p = tmp_path / "live.jsonl"
    p.write_bytes(head + line[: line.index(b"\xa9")])
    s = load_session(p)
    assert any("last line still being written" in w for w in s.warnings)


def test_lenient_counts_bad_lines_but_not_the_line_being_written(tmp_path):
    head, nxt = cut(CLAUDE.read_bytes(), CUT)
    p = tmp_path / "live.jsonl"
    p.write_bytes(b"{broken\n" + head + nxt[:50])
    s = load_session(p, format="claude-code", lenient=True)
    assert s.skipped == 1
    assert s.warnings[0].startswith("last line still being written")
    assert any(w.startswith("skipped 1 malformed line (line 1:") for w in s.warnings)


def test_a_sub_agent_file_being_written_is_named(tmp_path):
    import shutil

    src = CLAUDE.parent
    shutil.copytree(src, tmp_path / "cc")
    sub = next((tmp_path / "cc").rglob("agent-*.jsonl"))
    data = sub.read_bytes()
    sub.write_bytes(data + data.splitlines(keepends=True)[-1][:30])
    s = load_session(tmp_path / "cc" / CLAUDE.name)
    assert any(w.startswith(f"{sub.name}: last line still being written") for w in s.warnings)


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ctxview", *args], capture_output=True, text=True, cwd=ROOT)


def test_report_prints_the_warning_and_the_error_names_lenient(tmp_path):
    head, nxt = cut(CLAUDE.read_bytes(), CUT)
    live = tmp_path / "live.jsonl"
    live.write_bytes(head + nxt[:100])
    out = run("report", str(live))
    assert out.returncode == 0, out.stderr
    assert f"last line still being written (line {CUT + 1}, 100 bytes): left out" in out.stdout + out.stderr

    live.write_bytes(head + nxt[:100] + b"\n")
    out = run("report", str(live))
    assert out.returncode == 1
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
    assert out.stderr.startswith(f"ctxview: error: {live}:{CUT + 1}:")
    assert "use --lenient to skip bad lines" in out.stderr


def test_the_hint_survives_pickling():
    import pickle

    err = LoadError("s.jsonl", "invalid JSON: x", line=3, column=4, expected="Codex CLI rollout",
                    hint="use --lenient to skip bad lines")
    back = pickle.loads(pickle.dumps(err))
    assert (back.hint, str(back)) == (err.hint, str(err))
    assert str(err) == "s.jsonl:3:4: invalid JSON: x (use --lenient to skip bad lines; Codex CLI rollout expected)"
