"""The Codex loader's fast paths give what its simple rules give.

_add_lines hands the common lines straight to their handlers (an event with its
line number, not its origin); _Rollout.add, line by line, is the simple path. The
loader checks the arguments' depth of the messages its builder noted as not flat;
the registry's walk over every message is the simple rule.
_exit_code reads Codex's exec header in one regex match before the line-by-line
reading of _exit_code_simple. Each must give the simple rule's answer.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from unittest import mock

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxview.formats import codex, load_session
from ctxview.formats.codex import _exit_code, _exit_code_simple
from ctxview.formats.errors import LoadError

ROOT = Path(__file__).resolve().parent.parent
ROLLOUTS = [ROOT / "tests" / "fixtures" / "samples" / "codex" / "agentlogs-crud.jsonl",
            *sorted((ROOT / "sample_sessions" / "codex").glob("*.jsonl"))]


def _simple_add_lines(r, reader):
    for lineno, rec in reader:
        r.add(f"line {lineno}", rec)


def _loaded(path: Path, lenient: bool = False) -> str:
    """repr of the loaded session (or of the error), for comparing every field at once"""
    try:
        return repr(load_session(path, format="codex", lenient=lenient))
    except LoadError as err:
        return f"LoadError: {err}"


def _loaded_both_ways(path: Path, lenient: bool = False) -> tuple[str, str]:
    """(the load, the load by the simple path: r.add a line, and the registry's walk over every
    message for arguments nested too deep instead of the loader's check of the messages it noted)"""
    fast = _loaded(path, lenient)
    with mock.patch.object(codex, "_add_lines", _simple_add_lines), \
            mock.patch.object(codex, "check_arguments", lambda *a: None), \
            mock.patch.object(codex.SESSION_FORMAT, "checks_arguments", False):
        return fast, _loaded(path, lenient)


def test_the_bundled_rollouts_load_by_the_fast_lines_as_by_the_simple_path():
    for path in ROLLOUTS:
        fast, simple = _loaded_both_ways(path)
        assert fast == simple, path
        assert "Session(" in fast


_text = st.sampled_from(["hi", "", "<environment_context>x", "Chunk ID: a\nWall time: 1 seconds\nProcess exited with "
                         "code 2\nOriginal token count: 1\nOutput:\nno", "Exit code: 1\nOutput:\nx"])
_ids = st.sampled_from(["c1", "c2", "", None, 3])
_usage = st.fixed_dictionaries({"input_tokens": st.sampled_from([10, 20, "x"]), "cached_input_tokens": st.just(4),
                                "output_tokens": st.just(3)})
_items = st.one_of(
    st.builds(lambda r, t: {"type": "message", "role": r, "content": [{"type": "input_text", "text": t}]},
              st.sampled_from(["user", "assistant", "developer"]), _text),
    st.builds(lambda t: {"role": "user", "content": t}, _text),  # untyped
    st.builds(lambda i: {"type": "function_call", "call_id": i, "name": "shell", "arguments": '{"a": 1}'}, _ids),
    st.builds(lambda i, d, o: {"type": "function_call", "call_id": i, "name": "deep",
                               "arguments": '{"a": ' + o * d + "1" + {"[": "]", '{"b": ': "}"}[o] * d + "}"},
              _ids, st.sampled_from([0, 1, 99, 100, 101]), st.sampled_from(["[", '{"b": '])),
    st.builds(lambda d: {"type": "local_shell_call", "call_id": "s", "action": {"command": [[]] if d else ["ls"]}},
              st.booleans()),
    st.builds(lambda i: {"type": "custom_tool_call", "call_id": i, "name": "apply_patch", "input": "x"}, _ids),
    st.builds(lambda i, o, t: {"type": t, "call_id": i, "output": o}, _ids,
              _text | st.builds(lambda t, ok: {"content": t, "success": ok}, _text, st.sampled_from([True, False, None])),
              st.sampled_from(["function_call_output", "custom_tool_call_output", "local_shell_call_output"])),
    st.just({"type": "reasoning", "summary": [{"type": "summary_text", "text": "hmm"}]}),
    st.sampled_from([{"type": "ghost_snapshot"}, {"type": "mystery"}, {"type": 7}, {"type": None}, {}]),
)
_events = st.one_of(
    st.builds(lambda u, t: {"type": "token_count", "info": {"total_token_usage": t, "last_token_usage": u,
                                                            "model_context_window": 1000}},
              _usage, st.sampled_from([None, {"n": 1}, {"n": 2}])),
    st.just({"type": "token_count", "info": None}),
    st.builds(lambda k, t: {"type": k, "message": t}, st.sampled_from(["user_message", "agent_message", "other"]),
              _text | st.just(5)),
)
_records = st.one_of(
    st.tuples(st.just("response_item"), _items),
    st.tuples(st.just("event_msg"), _events),
    st.tuples(st.just("turn_context"), st.fixed_dictionaries({"model": st.sampled_from(["m1", "m2", 3]),
                                                              "truncation_policy": st.sampled_from([None, {"mode": "bytes"}])})),
    st.tuples(st.just("session_meta"), st.just({"id": "s", "base_instructions": {"text": "SYS"}})),
    st.tuples(st.just("compacted"), st.builds(lambda h: {"message": "summary", "replacement_history": h},
                                              st.none() | st.lists(_items, max_size=3))),
    st.tuples(st.sampled_from(["response_item", "event_msg", "mystery", 5, None]),
              st.sampled_from([None, "text", [1], 3])),  # a payload that is no object, an unknown type
)
_lines = st.one_of(
    _records.map(lambda tp: orjson.dumps({"timestamp": "2026-01-01T00:00:00Z", "type": tp[0], "payload": tp[1]})),
    _items.map(orjson.dumps),  # bare items (the first rollouts)
    st.sampled_from([b"[1, 2]", b"7", b'"text"', b"{not json", b"", b'{"type": ["a"], "payload": {}}',
                     b'{"record_type": "state"}', b'{"id": "s", "instructions": "old"}']),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_lines, max_size=12), st.booleans())
def test_any_rollout_loads_by_the_fast_lines_as_by_the_simple_path(lines, lenient):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "rollout.jsonl"
        path.write_bytes(b"\n".join(lines) + b"\n")
        fast, simple = _loaded_both_ways(path, lenient)
    assert fast == simple

# header lines as Codex writes them, and the near misses around them
_codes = st.one_of(st.integers(-300, 300).map(str), st.sampled_from(["", "-", "--5", "7" * 18, "7" * 19, "1 ", "x",
                                                                      "٣", "0x1"]))
_lines = st.one_of(
    st.builds(lambda c: f"Process exited with code {c}", _codes),
    st.builds(lambda c: f"Exit code: {c}", _codes),
    st.sampled_from(["Chunk ID: 5f5f9d", "Chunk ID: ", "Wall time: 0.5155 seconds", "Wall time: ",
                     "Original token count: 402", "Original token count: ", "Original token count: x",
                     "Output:", "Output: Process exited with code 4", "xProcess exited with code 9", ""]),
    st.text(alphabet="PEOxc:\n 0-", max_size=12),
)
_headers = st.lists(_lines, max_size=7).map("\n".join)


def _header(chunk, wall, code, count, body, pad):
    return (f"Chunk ID: {chunk}\nWall time: {wall}\nProcess exited with code {code}\nOriginal token count: {count}"
            f"\nOutput:{body}").replace("Chunk ID: ", "Chunk ID: " + "." * pad, 1)


_codex_headers = st.builds(_header, st.text(max_size=8), st.text(max_size=8), _codes,
                           st.sampled_from(["402", "", "x", "4\nOutput:", "Process exited with code 1"]),
                           st.text(max_size=40), st.sampled_from([0, 0]) | st.integers(400, 460))


@settings(max_examples=600, deadline=None)
@given(st.one_of(_headers, _codex_headers, _codex_headers.map(lambda h: "\n" + h), st.text(max_size=60)))
def test_exit_code_reads_the_header_as_the_simple_rule_does(output):
    assert _exit_code(output) == _exit_code_simple(output)


def test_exit_code_reads_codex_headers_by_the_fast_match_up_to_the_500th_character():
    from ctxview.formats.codex import _EXEC_HEADER

    out = "Chunk ID: 5f5f9d\nWall time: 0.5155 seconds\nProcess exited with code 3\nOriginal token count: 4\nOutput:\nx"
    assert _EXEC_HEADER.match(out) and _exit_code(out) == _exit_code_simple(out) == 3
    for pad in range(380, 420):  # "\nOutput:" ending at the 500th character and either side of it
        padded = out.replace("5f5f9d", "5" * pad)
        assert _exit_code(padded) == _exit_code_simple(padded), pad
    assert {_exit_code(out.replace("5f5f9d", "5" * pad)) for pad in range(380, 420)} == {3, None}


def test_a_rollout_with_arguments_nested_too_deep_is_refused_as_the_registry_walk_refuses_it(tmp_path):
    deep = '{"a": ' + "[" * 101 + "]" * 101 + "}"
    lines = [{"type": "response_item", "payload": {"type": "message", "role": "user", "content": "go"}},
             {"type": "response_item", "payload": {"type": "function_call", "call_id": "c1", "name": "ok",
                                                   "arguments": '{"plan": [{"a": 1}]}'}},
             {"type": "response_item", "payload": {"type": "function_call", "call_id": "c2", "name": "deep",
                                                   "arguments": deep}}]
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    fast, simple = _loaded_both_ways(path)
    assert fast == simple == ("LoadError: " + str(path) + ": conversation 'main', message 1 (line 2): the arguments "
                              "of tool call 'deep' are nested deeper than 100 levels")
