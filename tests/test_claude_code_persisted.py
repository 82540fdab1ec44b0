"""Claude Code's `<persisted-output>`: a tool result over its size limit, saved to a file and sent as a
2 KB preview and the path. The as-sent view shows the preview, marked, and counts its tokens.

The records follow what Claude Code writes (anthropics/claude-code issues 17944, 23948, 24118: the
tool_result text, the tool-results/<id>.txt path, the 30,000-character threshold and 2,000-character
preview; the Bash toolUseResult's persistedOutputPath and persistedOutputSize; the content-replacement
record of the per-message budget): see docs/notes/s21-claude.md.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

import ctxview.formats.claude_code as claude_code
from ctxview.formats import load_session
from ctxview.engine.harness import history_as_sent
from ctxview.pipeline import prepare, prepare_reference
from ctxview.settings import Settings
from ctxview.engine.tokens import CharsCounter

SESSION = "3c1d9a7e-5b20-4f6e-9d41-2a8c7e0f5b13"
RESULTS = f"/home/dev/.claude/projects/-home-dev-proj/{SESSION}/tool-results"
C4 = CharsCounter()


def preview(size: str, path: str, head: str) -> str:
    return (f"<persisted-output>\nOutput too large ({size}). Full output saved to: {path}\n\n"
            f"Preview (first 2KB):\n{head}\n...\n</persisted-output>")


class _Lines:
    def __init__(self) -> None:
        self.recs: list[dict] = []
        self.prev: str | None = None

    def add(self, rec: dict, uuid: str | None = None) -> dict:
        base = {"parentUuid": self.prev, "isSidechain": False, "userType": "external", "cwd": "/home/dev/proj",
                "sessionId": SESSION, "version": "2.1.37", "gitBranch": "main",
                "timestamp": f"2026-02-08T10:00:{len(self.recs):02d}.000Z"}
        if uuid is not None:
            base["uuid"] = uuid
            self.prev = uuid
        self.recs.append({**base, **rec})
        return rec

    def write(self, path: Path) -> Path:
        path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in self.recs))
        return path


LOG = "\n".join(f"2026-02-08 10:00:{i % 60:02d} INFO build step {i} ok" for i in range(900))  # ~39 KB
BASH_PREVIEW = preview("39.6KB", f"{RESULTS}/b7q2xk1pd.txt", LOG[:2000])
BIG_READ = "\n".join(f"{i:6}→const value_{i} = compute({i});" for i in range(1, 1500))  # ~50 KB, stored whole
READ_SENT = preview("49.4KB", f"{RESULTS}/toolu_01ReadBigFile0000000000.txt", BIG_READ[:2000])


def write_session(tmp_path: Path, replacement: bool = True) -> Path:
    t = _Lines()
    t.add({"type": "user", "message": {"role": "user", "content": "build it and read gen.ts"}}, "u1")
    t.add({"type": "assistant", "requestId": "req_1", "message": {
        "model": "claude-opus-4-6", "id": "msg_01A", "type": "message", "role": "assistant",
        "content": [{"type": "tool_use", "id": "toolu_01BashBuild000000000000", "name": "Bash",
                     "input": {"command": "make build", "description": "Build"}}],
        "usage": {"input_tokens": 3, "output_tokens": 40, "cache_read_input_tokens": 9000}}}, "a1")
    # persisted when the tool ran: the result's own text is the preview
    t.add({"type": "user", "message": {"role": "user", "content": [
        {"tool_use_id": "toolu_01BashBuild000000000000", "type": "tool_result", "content": BASH_PREVIEW,
         "is_error": False}]},
        "toolUseResult": {"stdout": LOG, "stderr": "", "interrupted": False, "isImage": False,
                          "persistedOutputPath": f"{RESULTS}/b7q2xk1pd.txt", "persistedOutputSize": len(LOG)},
        "sourceToolAssistantUUID": "a1"}, "u2")
    t.add({"type": "assistant", "requestId": "req_2", "message": {
        "model": "claude-opus-4-6", "id": "msg_01B", "type": "message", "role": "assistant",
        "content": [{"type": "tool_use", "id": "toolu_01ReadBigFile0000000000", "name": "Read",
                     "input": {"file_path": "/home/dev/proj/gen.ts"}}],
        "usage": {"input_tokens": 3, "output_tokens": 30, "cache_read_input_tokens": 9800}}}, "a2")
    # stored whole; the per-message budget sent the preview instead, as the record after it says
    t.add({"type": "user", "message": {"role": "user", "content": [
        {"tool_use_id": "toolu_01ReadBigFile0000000000", "type": "tool_result", "content": BIG_READ}]},
        "toolUseResult": {"type": "text", "file": {"filePath": "/home/dev/proj/gen.ts", "content": BIG_READ,
                                                  "numLines": 1499, "startLine": 1, "totalLines": 1499}},
        "sourceToolAssistantUUID": "a2"}, "u3")
    if replacement:
        t.recs.append({"type": "content-replacement", "sessionId": SESSION, "replacements": [
            {"kind": "tool-result", "toolUseId": "toolu_01ReadBigFile0000000000", "replacement": READ_SENT}]})
    t.add({"type": "assistant", "requestId": "req_3", "message": {
        "model": "claude-opus-4-6", "id": "msg_01C", "type": "message", "role": "assistant",
        "content": [{"type": "text", "text": "The build passed; gen.ts defines 1,499 values."}],
        "usage": {"input_tokens": 3, "output_tokens": 20, "cache_read_input_tokens": 10700}}}, "a3")
    return t.write(tmp_path / f"{SESSION}.jsonl")


def _tools(conv):
    return [(i, m) for i, m in enumerate(conv.messages) if m.role == "tool"]


def test_both_records_mark_the_result_and_the_replacement_record_is_known(tmp_path):
    s = load_session(write_session(tmp_path))
    assert not any("unknown type" in w for w in s.warnings)
    (bi, bash), (ri, read) = _tools(s.conversations[0])
    assert bash.text == BASH_PREVIEW
    assert bash.meta["persisted_output"] == {"path": f"{RESULTS}/b7q2xk1pd.txt", "size": "39.6KB"}
    assert read.text == BIG_READ  # what the file stores, whole
    assert read.meta["persisted_output"] == {"path": f"{RESULTS}/toolu_01ReadBigFile0000000000.txt",
                                             "size": "49.4KB", "sent": READ_SENT}


def test_the_one_pass_and_the_general_path_agree(tmp_path, monkeypatch):
    path = write_session(tmp_path)
    fast = load_session(path)
    monkeypatch.setattr(claude_code, "read_linear", lambda *a: None)
    assert repr(load_session(path)) == repr(fast)


@pytest.mark.parametrize("pipeline", [prepare, prepare_reference])
def test_as_sent_shows_the_preview_with_a_badge_and_its_tokens(tmp_path, pipeline):
    conv = load_session(write_session(tmp_path)).conversations[0]
    view = pipeline(conv, Settings(), counter=C4)
    assert view.settings.view == "as-sent"
    rows = {r.index: r for r in view.rows}
    (bi, bash), (ri, read) = _tools(conv)
    # the big Read: stored whole, sent as the preview; counted as the preview
    row = rows[ri]
    assert row.stored.text == BIG_READ and row.prepared.text == READ_SENT
    assert row.tokens_prepared == C4.count_message(row.prepared) < row.tokens_stored // 10
    (change,) = [c for c in row.changes if c.action == "persisted"]
    assert change.rule == "harness" and "<persisted-output>" in change.detail and "49.4KB" in change.detail
    assert change.saved_tokens == row.tokens_stored - row.tokens_prepared > 0
    # the Bash result: stored as it was sent, marked all the same
    row = rows[bi]
    assert row.prepared.text == row.stored.text == BASH_PREVIEW
    assert [c.action for c in row.changes] == ["persisted"] and row.changes[0].saved_tokens == 0
    assert view.stats["persisted"] == 2
    assert view.tokens_prepared < view.tokens_stored - 10_000


def test_a_request_before_the_result_is_not_touched_and_one_after_sends_the_preview(tmp_path):
    conv = load_session(write_session(tmp_path)).conversations[0]
    (bi, _), (ri, read) = _tools(conv)
    before = history_as_sent(conv, ri)  # the request that sent the Read call, not yet its result
    assert len(before.messages) == ri and ri not in before.rewrites and set(before.rewrites) == {bi}
    assert history_as_sent(conv, ri + 1).messages[ri].text == READ_SENT
    assert history_as_sent(conv).rewrites[ri].kind == "persisted"


def test_without_the_replacement_record_the_whole_result_is_sent(tmp_path):
    conv = load_session(write_session(tmp_path, replacement=False)).conversations[0]
    (_, bash), (ri, read) = _tools(conv)
    assert "persisted_output" not in read.meta and "persisted_output" in bash.meta
    assert history_as_sent(conv).messages[ri].text == BIG_READ
