"""The one-pass loader of Claude Code transcripts (claude_code/linear.py) gives exactly the session the
general path (scan, chain, conversation) gives, and leaves to it every file it does not handle."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ctxview.formats.claude_code as claude_code
from ctxview.formats import LoadError, detect_format, load_session
from ctxview.formats.claude_code.linear import read_linear
from ctxview.formats.parsing.jsonio import open_input

ROOT = Path(__file__).resolve().parent.parent
FILES = [p for p in (*sorted((ROOT / "sample_sessions").rglob("*.jsonl")), *sorted((ROOT / "tests").rglob("*.jsonl")))
         if detect_format(p) == "claude-code"]


def both_ways(path: Path, lenient: bool = False, monkeypatch=None) -> tuple:
    """(load_session's answer, the general path's answer): a Session, or the LoadError's text."""
    def load():
        try:
            return load_session(path, lenient=lenient)
        except LoadError as err:
            return str(err)

    fast = load()
    monkeypatch.setattr(claude_code, "read_linear", lambda *a: None)
    general = load()
    monkeypatch.undo()
    return fast, general


def linear(path: Path, lenient: bool = False) -> bool:
    """Whether the one pass reads `path` (else the general path does)."""
    try:
        return read_linear(open_input(path), claude_code.EXPECTED, lenient) is not None
    except LoadError:
        return False


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
@pytest.mark.parametrize("lenient", [False, True])
def test_every_bundled_transcript_loads_the_same_either_way(path, lenient, monkeypatch):
    fast, general = both_ways(path, lenient, monkeypatch)
    assert fast == general
    assert repr(fast) == repr(general)  # origins, ids, metadata and the order of everything


def test_the_common_transcripts_take_the_one_pass():
    taken = {p.name for p in FILES if linear(p)}
    # compaction boundaries, progress lines and Task calls included; sub-agent files are side chains
    assert {"7b1f3c52-9a4e-4d1b-8f57-3e2c9d0a6b18.jsonl", "258c7280-ae70-4798-800f-63464d01a85d.jsonl",
            "spotter-tool-heavy.jsonl"} <= taken
    assert not any(p.parent.name == "subagents" for p in FILES if linear(p))


def _nested(depth: int) -> list:
    """Lists `depth` levels deep."""
    value: list = []
    for _ in range(depth - 1):
        value = [value]
    return value


def _line(i: int, rec: dict) -> dict:
    base = {"parentUuid": None, "isSidechain": False, "sessionId": "s", "version": "2.1.0", "cwd": "/w",
            "uuid": f"u{i}", "timestamp": f"2026-01-01T00:00:{i % 60:02d}Z"}
    return {**base, **rec}


_PREVIEW = ("<persisted-output>\nOutput too large (29.6KB). Full output saved to: /p/tool-results/c1.txt\n\n"
            "Preview (first 2KB):\nx\n</persisted-output>")
_texts = st.sampled_from(["", "hi", "<system-reminder>r</system-reminder>", "a\nb"])
_results = _texts | st.sampled_from([_PREVIEW, "[tool reference: mcp__a__b]", "see [tool reference: T] {[{["])
# a call's arguments: flat, nested just within MAX_ARGUMENT_DEPTH, or past it (the load refuses the file)
_arguments = st.sampled_from([1, 2, 100, 101, 150]).map(
    lambda depth: {"p": 1} if depth == 1 else {"p": _nested(depth - 1)}) | st.just({"n": 2 ** 70, "m": -(2 ** 64)})
# what toolUseResult may be: a tool's own output of any JSON type, or a Task call's result (an agent named)
_tool_use_result = st.sampled_from([{"x": 1}, "text", None, [1, {"agentId": "a2"}], 5, 1.5, True,
                                    {"agentId": None}, {"agentId": "a1", "content": "done"},
                                    {"file": {"agentId": "a3"}}])
_block = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, _texts),
    st.builds(lambda t: {"type": "thinking", "thinking": t, "signature": "s"}, _texts),
    st.builds(lambda c, name, args: {"type": "tool_use", "id": f"c{c}", "name": name, "input": args},
              st.integers(0, 3), st.sampled_from(["Read", "ToolSearch"]), _arguments))
_usage = st.one_of(st.none(), st.builds(lambda i: {"input_tokens": i, "output_tokens": 1}, st.integers(0, 9)))
# (kind, fields): what one line is; its parent and uuid are chosen apart
_kind = st.one_of(
    st.tuples(st.just("user"), st.fixed_dictionaries({"message": st.builds(
        lambda t: {"role": "user", "content": t}, _texts | st.builds(lambda t: [{"type": "text", "text": t}], _texts))},
        optional={"isMeta": st.just(True), "isCompactSummary": st.just(True)})),
    st.tuples(st.just("result"), st.builds(
        lambda c, t, e, tur: {"message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"c{c}", "content": t, "is_error": e}]}, "toolUseResult": tur},
        st.integers(0, 4), _results | st.just([{"type": "text", "text": "x"}]), st.booleans(), _tool_use_result)),
    # two results on one line: made by the less common path (conversation.add_user)
    st.tuples(st.just("result"), st.builds(
        lambda c, t: {"message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"c{c}", "content": t},
            {"type": "tool_result", "tool_use_id": f"c{c + 1}", "content": [{"type": "text", "text": t}]}]}},
        st.integers(0, 3), _results)),
    st.tuples(st.just("assistant"), st.builds(
        lambda m, blocks, u, err: {"message": {"id": m, "role": "assistant", "model": "claude-x", "content": blocks,
                                               **({"usage": u} if u else {})}, **({"isApiErrorMessage": True} if err else {})},
        st.sampled_from(["m1", "m2", "m3", None]), st.lists(_block, min_size=1, max_size=2), _usage,
        st.booleans())),
    st.tuples(st.just("progress"), st.sampled_from([{"data": {"type": "hook_progress"}}, {}, {"data": "x"},
                                                     {"data": {"type": "bash_progress", "agentId": "a1"}}])),
    st.tuples(st.just("progress"), st.just({"data": {"type": "agent_progress", "agentId": "a1",
                                                     "message": {"type": "user", "message": {"role": "user",
                                                                                             "content": "go"}}},
                                            "parentToolUseID": "c1"})),
    st.tuples(st.just("system"), st.sampled_from([
        {"subtype": "compact_boundary", "compactMetadata": {"trigger": "auto", "preTokens": 9}},
        {"subtype": "microcompact_boundary", "microcompactMetadata": {"trigger": "auto", "compactedToolIds": ["c1"]}},
        {"subtype": "local_command", "content": "x"}])),
    st.tuples(st.sampled_from(["summary", "x-unknown", "file-history-snapshot"]), st.just({"summary": "t"})),
    st.tuples(st.just("content-replacement"), st.builds(
        lambda c: {"replacements": [{"kind": "tool-result", "toolUseId": f"c{c}", "replacement": _PREVIEW}]},
        st.integers(0, 4))),
    st.tuples(st.just("attachment"), st.just({"attachment": {"type": "deferred_tools_delta",
                                                             "addedNames": ["mcp__a__b"], "removedNames": []}})),
)
# where a line hangs: the line before (a file without branches), nowhere, or an earlier line (maybe a branch)
_parent = st.sampled_from(["before"] * 6 + ["none", "earlier"])
_odd = st.sampled_from([None] * 12 + ["repeat", "side", "no-uuid", "blank", "bad-json", "not-an-object",
                                      "message-not-an-object", "lone-surrogate"])


def _dumps(rec: dict) -> bytes:
    """A line as Claude Code writes it (integers past 64 bits too, which orjson will not write)."""
    return json.dumps(rec, ensure_ascii=False, separators=(",", ":")).encode()


def _written(tmp_path: Path, lines: list) -> Path:
    """A transcript of generated lines: (kind, where it hangs, a pick, what is odd about it)."""
    out: list[bytes] = []
    recs: list[dict] = []
    for i, ((kind, fields), parent, pick, odd) in enumerate(lines):
        rec = _line(i, {"type": "user" if kind == "result" else kind, **fields})
        if parent == "before" and recs:
            rec["parentUuid"] = recs[-1].get("uuid")
        elif parent == "earlier" and recs:
            rec["parentUuid"] = recs[pick % len(recs)].get("uuid")
        if odd == "repeat" and recs:
            rec = recs[pick % len(recs)]
        elif odd == "side":
            rec["isSidechain"] = True
        elif odd == "no-uuid":
            del rec["uuid"]
        elif odd == "message-not-an-object" and "message" in rec:
            rec["message"] = "x"
        if odd == "blank":
            out.append(b"\n")
        elif odd == "bad-json":
            out.append(b"{not json\n")
        elif odd == "not-an-object":
            out.append(b"[1]\n")
        recs.append(rec)
        line = _dumps(rec)
        if odd == "lone-surrogate":   # (what only the standard library's decoder reads)
            line = line.replace(b'"sessionId":"s"', b'"sessionId":"\\ud800"')
        out.append(line + b"\n")
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"".join(out))
    return path


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(_kind, _parent, st.integers(0, 50), _odd), min_size=1, max_size=14), st.booleans())
def test_generated_transcripts_load_the_same_either_way(tmp_path, monkeypatch, lines, lenient):
    fast, general = both_ways(_written(tmp_path, lines), lenient, monkeypatch)
    assert fast == general
    assert repr(fast) == repr(general)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(_kind, st.just("before"), st.just(0), st.just(None)), min_size=1, max_size=14))
def test_generated_transcripts_without_branches_load_the_same_either_way(tmp_path, monkeypatch, lines):
    # (most of these the one pass reads: what it notes for the checks after it is compared here)
    path = _written(tmp_path, lines)
    fast, general = both_ways(path, False, monkeypatch)
    assert fast == general
    assert repr(fast) == repr(general)


def test_a_rewind_late_in_the_file_is_read_by_the_general_path(tmp_path):
    recs = [_line(0, {"type": "user", "message": {"role": "user", "content": "first"}})]
    for i in range(1, 6):
        rec = _line(i, {"type": "user" if i % 2 == 0 else "assistant", "parentUuid": f"u{i - 1}",
                        "message": {"role": "user", "content": f"m{i}"} if i % 2 == 0 else
                        {"id": f"m{i}", "role": "assistant", "content": [{"type": "text", "text": f"m{i}"}]}})
        recs.append(rec)
    # the user went back to the first answer and asked again: the chain leaves m2..m5 behind
    recs.append(_line(6, {"type": "user", "parentUuid": "u1", "message": {"role": "user", "content": "again"}}))
    path = tmp_path / "rewind.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in recs))
    assert not linear(path)
    texts = [m.text for m in load_session(path).conversations[0].messages]
    assert texts == ["first", "m1", "again"]


def _turns(*turns: tuple[str, dict, list]) -> list[dict]:
    """Lines each hanging off the one before: (a call's name, its arguments, its results' texts)."""
    recs = [_line(0, {"type": "user", "message": {"role": "user", "content": "go"}})]
    for name, args, texts in turns:
        i = len(recs)
        recs.append(_line(i, {"type": "assistant", "parentUuid": f"u{i - 1}", "message": {
            "id": f"m{i}", "role": "assistant", "model": "claude-x",
            "content": [{"type": "tool_use", "id": f"c{i}", "name": name, "input": args}]}}))
        blocks = [{"type": "tool_result", "tool_use_id": f"c{i}", "content": t} for t in texts]
        recs.append(_line(i + 1, {"type": "user", "parentUuid": f"u{i}", "toolUseResult": {"x": 1},
                                  "message": {"role": "user", "content": blocks}}))
    return recs


def test_the_one_pass_marks_the_results_the_general_path_marks(tmp_path, monkeypatch):
    recs = _turns(("ToolSearch", {"query": "select:mcp__a__b"}, ["[tool reference: mcp__a__b]"]),  # deferred
                  ("Bash", {"command": "ls"}, [_PREVIEW]),                                          # persisted
                  ("Bash", {"command": "ls"}, ["whole output"]),          # sent as a preview (a record below)
                  ("Read", {"p": 1}, ["x", _PREVIEW]))                    # two results on one line
    recs.append({"type": "content-replacement", "replacements": [
        {"kind": "tool-result", "toolUseId": "c5", "replacement": _PREVIEW}]})
    path = tmp_path / "marks.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in recs))
    assert linear(path)
    fast, general = both_ways(path, False, monkeypatch)
    assert repr(fast) == repr(general)
    metas = [m.meta for m in fast.conversations[0].messages if m.role == "tool"]
    assert [sorted(set(meta) - {"is_error"}) for meta in metas] == [
        ["tool_references"], ["persisted_output"], ["persisted_output"], [], ["persisted_output"]]
    assert metas[2]["persisted_output"]["sent"] == _PREVIEW


@pytest.mark.parametrize("depth, refused", [(100, False), (101, True)])
def test_a_call_nested_too_deep_is_refused_whichever_path_reads_it(tmp_path, monkeypatch, depth, refused):
    # `depth` levels: the arguments object and the lists in it
    path = tmp_path / "deep.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n"
                              for r in _turns(("Read", {"p": _nested(depth - 1)}, ["x"]))))
    fast, general = both_ways(path, False, monkeypatch)
    assert fast == general
    assert isinstance(fast, str) == refused
    if refused:
        assert "message 1 (line 2): the arguments of tool call 'Read' are nested deeper than 100 levels" in fast
    assert linear(path) != refused   # (the one pass leaves such a file to the general path)


def test_an_integer_past_64_bits_is_read_as_written_whichever_path_reads_it(tmp_path, monkeypatch):
    # (orjson reads such an integer as the nearest float: 2**70 + 1 became 2**70)
    recs = _turns(("Read", {"offset": 2 ** 70 + 1, "limit": -(2 ** 64) - 1}, ["x"]))
    path = tmp_path / "big.jsonl"
    path.write_bytes(b"".join(_dumps(r) + b"\n" for r in recs))
    assert linear(path)
    fast, general = both_ways(path, False, monkeypatch)
    assert repr(fast) == repr(general)
    (call,) = fast.conversations[0].messages[1].tool_calls
    assert call.arguments == {"offset": 2 ** 70 + 1, "limit": -(2 ** 64) - 1}
    assert type(call.arguments["offset"]) is int


def test_a_task_result_whose_key_is_escaped_is_read_as_one_whichever_path_reads_it(tmp_path, monkeypatch):
    # "agent\u0049d" is "agentId": the one pass reads the line's fields decoded, not its bytes
    recs = _turns(("Task", {"prompt": "look"}, ["found it"]))
    recs[-1]["toolUseResult"] = {"agentId": "a1", "content": "the agent's answer"}
    path = tmp_path / "task.jsonl"
    path.write_bytes(b"".join(_dumps(r).replace(b'"agentId"', b'"agent\\u0049d"') + b"\n" for r in recs))
    assert b"agent\\u0049d" in path.read_bytes()
    assert linear(path)
    fast, general = both_ways(path, False, monkeypatch)
    assert repr(fast) == repr(general)
    one_pass = read_linear(open_input(path), claude_code.EXPECTED, False)
    assert one_pass.scan.task_answer["a1"][0] == "the agent's answer"
    assert one_pass.scan.task_call == {"a1": "c1"}


@pytest.mark.parametrize("odd", ["surrogate", "bom"])
def test_a_line_only_the_fallback_decoders_read_stays_in_the_one_pass(tmp_path, monkeypatch, odd):
    # msgspec and orjson refuse an escaped lone surrogate (which Claude Code writes) and a byte order
    # mark; the standard library reads the one, bad_line() strips the other
    recs = _turns(("Read", {"path": "a"}, ["x"]), ("Task", {"prompt": "look"}, ["found"]))
    recs[-1]["toolUseResult"] = {"agentId": "a1", "content": "answer"}
    lines = [_dumps(r) for r in recs]
    if odd == "surrogate":
        lines[1] = lines[1].replace(b'"claude-x"', b'"claude-\\ud800x"')
        lines[-1] = lines[-1].replace(b'"answer"', b'"an\\udc00swer"')
    else:
        lines[0] = b"\xef\xbb\xbf" + lines[0]
    path = tmp_path / "odd.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    assert linear(path)
    fast, general = both_ways(path, False, monkeypatch)
    assert repr(fast) == repr(general)
    one_pass = read_linear(open_input(path), claude_code.EXPECTED, False)
    assert one_pass.scan.task_answer["a1"][0] == ("an\udc00swer" if odd == "surrogate" else "answer")
    if odd == "surrogate":
        assert fast.conversations[0].messages[1].model_id == "claude-\ud800x"


_WIDE = {   # where a line may hold an integer past 64 bits, and the integer
    "tool result": (2, ["message", "content", 0, "content"], 2 ** 70),
    "tool result object": (2, ["message", "content", 0, "content"], {"n": 2 ** 70}),
    "tool result block": (2, ["message", "content", 0, "content"], [{"type": "odd", "n": 2 ** 70}]),
    "call argument": (1, ["message", "content", 0, "input"], {"offset": 2 ** 70}),
    "input tokens": (1, ["message", "usage", "input_tokens"], 10 ** 30),
    "input tokens, 400 digits": (1, ["message", "usage", "input_tokens"], 10 ** 400),
    "recorded cost": (1, ["costUSD"], 10 ** 400),
}


@pytest.mark.parametrize("where", _WIDE)
def test_an_integer_past_64_bits_anywhere_is_read_without_a_traceback(tmp_path, monkeypatch, where):
    from ctxview.analysis.report import build_report
    from ctxview.export.bodies import dumps
    from ctxview.sessions.contents import text_of

    recs = _turns(("Read", {"path": "a"}, ["x"]))
    recs[1]["message"]["usage"] = {"input_tokens": 5, "output_tokens": 2}
    line, keys, value = _WIDE[where]
    target = recs[line]
    for key in keys[:-1]:
        target = target[key]
    target[keys[-1]] = value
    path = tmp_path / "wide.jsonl"
    path.write_bytes(b"".join(_dumps(r) + b"\n" for r in recs))
    fast, general = both_ways(path, False, monkeypatch)
    assert repr(fast) == repr(general)
    assert not isinstance(fast, str)
    dumps(build_report(fast, {}))
    text_of(fast)
    usage = fast.conversations[0].messages[1].usage
    # a count past 64 bits is no count (orjson read it as a float: 0), nor a cost no float holds
    assert usage.input_tokens == (5 if "tokens" not in where else 0)
    assert usage.recorded_usd is None
