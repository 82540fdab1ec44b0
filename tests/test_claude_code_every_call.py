"""Every tool call and every tool result a Claude Code transcript records reaches the model.

Claude Code's sub-agents (2.1.39) stream one response with parallel calls over many lines and write each
result as soon as it is ready, so the response's later lines hang off a result, or off a progress line
after one, rather than off the call before. The fixture is a real sub-agent file's first 26 lines
(marot/spotter, MIT; tests/LICENSES.md): six calls of one message.id on lines 3-14, their results on
lines 8-26 in another order.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

import ctxview.formats.claude_code as claude_code
from ctxview.formats import LoadError, detect_format, load_session
from ctxview.formats.claude_code.linear import read_linear
from ctxview.formats.parsing.jsonio import open_input

ROOT = Path(__file__).resolve().parent.parent
INTERLEAVED = ROOT / "tests" / "fixtures" / "samples" / "claude-code" / "spotter-fa812bfe" / "agent-aa84377-head.jsonl"
CALLS = ["toolu_01U33N92EcbX5Zgfj2CRPqfF", "toolu_01RCdLM3sX52rGvR68WePy31", "toolu_01RcFMAHHmYMwTr8vcnmDaZu",
         "toolu_012CN3ZCQePMHR7VSNndb1ib", "toolu_01RwYa78J2AAALFqpNy2uKUq", "toolu_01ArQqkcE8u5HbC5EM2XLR2M"]


def _records(path: Path) -> list:
    if path.suffix == ".jsonl":
        out = []
        for line in path.read_bytes().splitlines():
            try:
                out.append(orjson.loads(line))
            except orjson.JSONDecodeError:
                continue
        return out
    doc = orjson.loads(path.read_bytes())
    if isinstance(doc, dict):
        return doc["loglines"] if isinstance(doc.get("loglines"), list) else [doc]
    return doc


def raw_counts(path: Path) -> tuple[int, int]:
    """The tool_use and tool_result blocks of the file's user and assistant records, counted by hand
    (a record repeated by a resumed session, same uuid, once)."""
    uses = results = 0
    seen: set = set()
    for rec in _records(path):
        if not isinstance(rec, dict) or rec.get("type") not in ("user", "assistant"):
            continue
        if rec.get("uuid") is not None:
            if rec["uuid"] in seen:
                continue
            seen.add(rec["uuid"])
        msg = rec.get("message")
        content = msg.get("content") if isinstance(msg, dict) else None
        for b in content if isinstance(content, list) else ():
            if isinstance(b, dict):
                uses += b.get("type") == "tool_use"
                results += b.get("type") == "tool_result"
    return uses, results


def model_counts(path: Path) -> tuple[int, int]:
    """The calls and results of the conversations the file itself holds (not its sub-agents' files next
    to it, nor sub-agents rebuilt from its progress lines)."""
    session = load_session(path, lenient=True)
    sub_dir = path.with_suffix("") / "subagents"
    own_files = {p.stem for p in sub_dir.glob("agent-*.jsonl")} if sub_dir.is_dir() else set()
    convs = [c for c in session.conversations if c.name not in own_files and "rebuilt_from" not in c.metadata]
    return (sum(len(m.tool_calls) for c in convs for m in c.messages),
            sum(m.role == "tool" for c in convs for m in c.messages))


def _claude_code(path: Path) -> bool:
    try:
        return detect_format(path) == "claude-code"
    except LoadError:  # (hostile files, expected answers: not sessions)
        return False


BUNDLED = [p for p in (*sorted((ROOT / "sample_sessions").rglob("*")), *sorted((ROOT / "tests" / "fixtures").rglob("*")))
           if p.is_file() and p.suffix in (".jsonl", ".json") and _claude_code(p)]


def test_the_bundled_claude_code_files_are_all_checked():
    names = {p.name for p in BUNDLED}
    assert {"agent-aa84377-head.jsonl", "agent-a881341.jsonl", "258c7280-ae70-4798-800f-63464d01a85d.jsonl",
            "7b1f3c52-9a4e-4d1b-8f57-3e2c9d0a6b18.jsonl", "agent-a3f9c1e.jsonl",
            "claude-code-transcripts-web.json"} <= names


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_call_and_result_in_a_bundled_file_is_in_the_model(path):
    assert model_counts(path) == raw_counts(path)


def test_the_sub_agent_file_keeps_all_six_calls_of_the_interleaved_response():
    assert raw_counts(INTERLEAVED) == (6, 6)
    conv = load_session(INTERLEAVED).conversations[0]
    assert conv.name == "agent-aa84377"
    answer = [m for m in conv.messages if m.role == "assistant"]
    assert len(answer) == 1 and [c.id for c in answer[0].tool_calls] == CALLS  # one response, in stream order
    results = [m for m in conv.messages if m.role == "tool"]
    # in the order Claude Code wrote them (the order the next request sends them), each named after its call
    assert [m.tool_call_id[-6:] for m in results] == ["CRPqfF", "WePy31", "nmDaZu", "ndb1ib", "y2uKUq", "2XLR2M"]
    assert all(m.tool_name for m in results)
    assert conv.messages.index(answer[0]) < conv.messages.index(results[0])


def _as_main(tmp_path: Path, extra: list[dict] = ()) -> Path:
    """The fixture's records as a main transcript's (not a side chain), with `extra` records after them."""
    recs = [orjson.loads(line) for line in INTERLEAVED.read_bytes().splitlines()]
    for rec in recs:
        rec["isSidechain"] = False
        rec.pop("agentId", None)
    path = tmp_path / "interleaved.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in [*recs, *extra]))
    return path


def _text_line(uuid: str, parent: str, role: str, text: str) -> dict:
    msg = ({"role": "user", "content": text} if role == "user" else
           {"id": "msg_" + uuid, "role": "assistant", "model": "claude-sonnet-4-5-20250929",
            "content": [{"type": "text", "text": text}], "usage": {"input_tokens": 1, "output_tokens": 1}})
    return {"parentUuid": parent, "isSidechain": False, "sessionId": "s", "type": role, "message": msg,
            "uuid": uuid, "timestamp": "2026-02-12T17:00:00.000Z"}


def _summary(conv) -> list[tuple]:
    return [(m.role, m.text, tuple(c.id for c in m.tool_calls), m.tool_call_id) for m in conv.messages]


def test_the_one_pass_and_the_general_path_keep_the_same_six_calls(tmp_path, monkeypatch):
    path = _as_main(tmp_path)
    assert read_linear(open_input(path), claude_code.EXPECTED, False) is not None  # the one pass reads it
    fast = load_session(path)
    monkeypatch.setattr(claude_code, "read_linear", lambda *a: None)
    general = load_session(path)
    assert repr(fast) == repr(general)
    calls = [c.id for m in fast.conversations[0].messages for c in m.tool_calls]
    assert calls == CALLS and model_counts(path) == (6, 6)


def test_a_rewind_after_the_interleaved_response_keeps_its_calls(tmp_path):
    # A branch anywhere makes the general path walk the parent links from the last message; the
    # response's lines that hang off a result must still be found.
    last = "6da19022-b52a-445a-a65a-44d6b92205b7"  # line 26, the last result
    plain = _as_main(tmp_path, [_text_line("a1", last, "assistant", "done"), _text_line("u2", "a1", "user", "more")])
    want = _summary(load_session(plain).conversations[0])
    rewound = _as_main(tmp_path, [_text_line("a1", last, "assistant", "done"),
                                  _text_line("u1", "a1", "user", "abandoned"),
                                  _text_line("u2", "a1", "user", "more")])
    assert read_linear(open_input(rewound), claude_code.EXPECTED, False) is None  # the general path reads it
    conv = load_session(rewound).conversations[0]
    assert _summary(conv) == want
    assert [c.id for m in conv.messages for c in m.tool_calls] == CALLS
