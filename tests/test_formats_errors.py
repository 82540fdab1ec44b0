"""Bad input for the session loaders: one clear LoadError, never a crash or a hang."""

from __future__ import annotations

import io
import os
import pickle
import subprocess
import sys

import orjson
import pytest

from ctxview.formats import FORMATS, LoadError, load_session

GOOD_USER = b'{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","message":{"role":"user","content":"hi"}}\n'
GOOD_ASSISTANT = (b'{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"s","message":{"id":"m1",'
                  b'"role":"assistant","model":"claude-x","content":[{"type":"text","text":"hello"}]}}\n')


def write(tmp_path, name: str, data: bytes):
    p = tmp_path / name
    p.write_bytes(data)
    return p


def one_line(err: LoadError) -> str:
    text = str(err)
    assert "\n" not in text
    return text


def test_missing_file_names_the_file(tmp_path):
    with pytest.raises(LoadError) as exc:
        load_session(tmp_path / "nope.jsonl")
    assert one_line(exc.value).endswith("nope.jsonl: cannot read: no such file")
    assert exc.value.line is None


def test_directory_is_refused(tmp_path):
    with pytest.raises(LoadError, match="is a directory"):
        load_session(tmp_path)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_permission_denied(tmp_path):
    p = write(tmp_path, "secret.jsonl", GOOD_USER)
    p.chmod(0)
    with pytest.raises(LoadError, match="permission denied"):
        load_session(p)


def test_permission_error_message_from_errno(tmp_path, monkeypatch):
    # Works as root too: make open() fail the way a chmod 000 file does.
    import errno

    p = write(tmp_path, "secret.jsonl", GOOD_USER)
    real_open = os.open  # the loaders open files with os.open (O_NONBLOCK, so a FIFO cannot block)

    def deny(file, *a, **k):
        if str(file) == str(p):
            raise PermissionError(errno.EACCES, "Permission denied", str(file))
        return real_open(file, *a, **k)

    monkeypatch.setattr(os, "open", deny)
    with pytest.raises(LoadError) as exc:
        load_session(p)
    assert "cannot read: permission denied" in str(exc.value)


@pytest.mark.parametrize("data", [b"", b"   \n\n  \t\n"])
def test_empty_file(tmp_path, data):
    with pytest.raises(LoadError, match="empty|only whitespace"):
        load_session(write(tmp_path, "e.jsonl", data))


def test_malformed_jsonl_line_reports_line_and_column(tmp_path):
    p = write(tmp_path, "session.jsonl", GOOD_USER + b'{"type":"assistant" "uuid":"a1"}\n' + GOOD_ASSISTANT)
    with pytest.raises(LoadError) as exc:
        load_session(p, format="claude-code")
    err = exc.value
    assert (err.line, err.column) == (2, 21)
    assert err.expected == "Claude Code transcript"
    assert one_line(err) == (f"{p}:2:21: invalid JSON: expected ',' or '}}' (use --lenient to skip bad lines; "
                             "Claude Code transcript expected)")


def test_malformed_line_detected_without_format(tmp_path):
    p = write(tmp_path, "s.jsonl", GOOD_USER + b"{broken\n" + GOOD_ASSISTANT)
    with pytest.raises(LoadError) as exc:
        load_session(p)
    assert exc.value.line == 2


def test_lenient_skips_and_counts_malformed_lines(tmp_path):
    p = write(tmp_path, "s.jsonl", GOOD_USER + b"{broken\n" + b"[1, 2,\n" + GOOD_ASSISTANT)
    s = load_session(p, lenient=True)
    assert s.skipped == 2
    assert any("skipped 2 malformed lines" in w and "line 2" in w for w in s.warnings)
    assert [m.text for m in s.conversations[0].messages] == ["hi", "hello"]


def test_bom_is_accepted_and_skipped(tmp_path):
    s = load_session(write(tmp_path, "bom.jsonl", b"\xef\xbb\xbf" + GOOD_USER + GOOD_ASSISTANT))
    assert s.format == "claude-code"
    assert s.conversations[0].messages[0].text == "hi"


def test_bom_on_a_json_document(tmp_path):
    doc = orjson.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}])
    s = load_session(write(tmp_path, "bom.json", b"\xef\xbb\xbf" + doc))
    assert s.format == "openai"
    assert len(s.conversations[0].messages) == 2


def test_utf16_is_refused_clearly(tmp_path):
    data = "\ufeff".encode("utf-16-le") + '[{"role": "user", "content": "hi"}]'.encode("utf-16-le")
    with pytest.raises(LoadError, match="UTF-16"):
        load_session(write(tmp_path, "u16.json", data))


def test_invalid_utf8_reports_the_byte(tmp_path):
    bad = b'{"type":"user","uuid":"u2","message":{"role":"user","content":"caf\xe9"}}\n'
    p = write(tmp_path, "s.jsonl", GOOD_USER + bad + GOOD_ASSISTANT)
    with pytest.raises(LoadError) as exc:
        load_session(p, format="claude-code")
    assert "invalid UTF-8" in str(exc.value)
    assert exc.value.line == 2
    assert exc.value.column == bad.index(b"\xe9") + 1


def test_invalid_utf8_in_a_document_reports_line_and_column(tmp_path):
    p = write(tmp_path, "d.json", b'[\n {"role": "user",\n  "content": "\xff"}]')
    with pytest.raises(LoadError) as exc:
        load_session(p)
    assert (exc.value.line, exc.value.column) == (3, 15)


def test_nul_bytes_are_refused(tmp_path):
    p = write(tmp_path, "s.jsonl", GOOD_USER + b'{"type":"user",\x00"uuid":"x"}\n' + GOOD_ASSISTANT)
    with pytest.raises(LoadError) as exc:
        load_session(p)
    assert "NUL byte" in str(exc.value)
    assert (exc.value.line, exc.value.column) == (2, 16)


def test_binary_file_is_refused(tmp_path):
    p = write(tmp_path, "img.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4)
    with pytest.raises(LoadError):
        load_session(p)


def test_deeply_nested_json_is_a_clear_error_not_a_recursion_error(tmp_path):
    deep = b"[" * 5000 + b"]" * 5000
    with pytest.raises(LoadError, match="nested deeper than 1024 levels"):
        load_session(write(tmp_path, "deep.json", deep))
    line = b'{"type":"user","uuid":"d","message":{"role":"user","content":' + b"[" * 3000 + b"]" * 3000 + b"}}\n"
    with pytest.raises(LoadError) as exc:
        load_session(write(tmp_path, "deep.jsonl", GOOD_USER + line + GOOD_ASSISTANT), format="claude-code")
    assert exc.value.line == 2 and "nested" in str(exc.value)


def test_tool_input_nesting_up_to_the_limit_loads_and_deeper_is_one_clear_error(tmp_path):
    # 1000 levels of tool input is legal JSON and nothing in the loaders recurses over it, but what
    # uses the arguments (JSON output, token counts) would: past MAX_ARGUMENT_DEPTH it is refused.
    from ctxview.formats.parsing.argument_depth import MAX_ARGUMENT_DEPTH

    def session(depth):
        deep_input = b'{"k":' * depth + b"1" + b"}" * depth
        line = (b'{"type":"assistant","uuid":"a1","parentUuid":"u1","message":{"id":"m1","role":"assistant",'
                b'"content":[{"type":"tool_use","id":"t1","name":"X","input":' + deep_input + b"}]}}\n")
        return write(tmp_path, f"d{depth}.jsonl", GOOD_USER + line)

    s = load_session(session(MAX_ARGUMENT_DEPTH))
    assert s.conversations[0].messages[1].tool_calls[0].name == "X"
    for depth in (MAX_ARGUMENT_DEPTH + 1, 1000):
        with pytest.raises(LoadError, match=f"nested deeper than {MAX_ARGUMENT_DEPTH} levels") as exc:
            load_session(session(depth))
        assert "'X'" in str(exc.value) and "\n" not in str(exc.value)


def test_a_single_100mb_line_loads(tmp_path):
    big = "x" * (100 * 1024 * 1024)
    line = orjson.dumps({"type": "user", "uuid": "u2", "parentUuid": "a1",
                         "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                                                   "content": big}]}}) + b"\n"
    call = (b'{"type":"assistant","uuid":"a1","parentUuid":"u1","message":{"id":"m1","role":"assistant",'
            b'"content":[{"type":"tool_use","id":"t1","name":"Read","input":{}}]}}\n')
    p = write(tmp_path, "big.jsonl", GOOD_USER + call + line)
    del big, line
    s = load_session(p)
    tool = s.conversations[0].messages[2]
    assert tool.tool_name == "Read" and len(tool.text) == 100 * 1024 * 1024


def test_overlong_broken_line_is_refused_even_when_lenient(tmp_path, monkeypatch):
    from ctxview.formats.parsing import json_lines

    monkeypatch.setattr(json_lines, "MAX_LINE_BYTES", 1000)
    p = write(tmp_path, "s.jsonl", GOOD_USER + b'{"type":"user","message":"' + b"y" * 5000 + b'\n' + GOOD_ASSISTANT)
    with pytest.raises(LoadError, match="line longer than"):
        load_session(p, format="claude-code", lenient=True)


def test_a_huge_document_is_refused_before_reading(tmp_path, monkeypatch):
    from ctxview.formats.parsing import json_decode

    monkeypatch.setattr(json_decode, "MAX_DOCUMENT_BYTES", 100)
    p = write(tmp_path, "big.json", orjson.dumps([{"role": "user", "content": "z" * 500}]))
    with pytest.raises(LoadError, match="too large for one JSON document"):
        load_session(p)


def test_a_sparse_multi_gb_jsonl_file_is_streamed(tmp_path):
    # 3 GB of apparent size (a hole of spaces? no: a hole reads as NUL bytes), so the
    # loader must stream to the bad line and stop there, not read the file whole.
    p = tmp_path / "huge.jsonl"
    with open(p, "wb") as f:
        f.write(GOOD_USER + GOOD_ASSISTANT)
        f.truncate(3 * 1024 ** 3)
    proc = subprocess.run(
        [sys.executable, "-c",
         "import resource,sys\n"
         "resource.setrlimit(resource.RLIMIT_AS, (2 * 1024**3, 2 * 1024**3))\n"
         "from ctxview.formats import load_session, LoadError\n"
         "try:\n    load_session(sys.argv[1])\nexcept LoadError as e:\n    print(e)\n",
         str(p)],
        capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "line 3" in proc.stdout or ":3:" in proc.stdout
    assert "NUL byte" in proc.stdout or "longer than" in proc.stdout


def test_not_a_session_format_lists_the_choices(tmp_path):
    p = write(tmp_path, "x.json", b'{"hello": "world"}')
    with pytest.raises(LoadError) as exc:
        load_session(p)
    assert "not a recognised session format" in str(exc.value)
    assert "claude-code" in exc.value.expected


def test_wrong_forced_format(tmp_path):
    p = write(tmp_path, "x.jsonl", GOOD_USER + GOOD_ASSISTANT)
    with pytest.raises(LoadError) as exc:
        load_session(p, format="ctxview")
    assert exc.value.expected == "ctxview session" and exc.value.line == 1


def test_unknown_format_name_is_a_value_error(tmp_path):
    with pytest.raises(ValueError, match="choices"):
        load_session(write(tmp_path, "x.jsonl", GOOD_USER), format="nope")


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_refuses_garbage_with_load_error(tmp_path, fmt):
    for data in (b"{}", b"[]", b"42", b'"text"', b"{broken", b'{"a":1}\n{"b":2}\n', b"[{}, {}]"):
        with pytest.raises(LoadError) as exc:
            load_session(write(tmp_path, "g.json", data), format=fmt)
        one_line(exc.value)


def test_stdin_is_read_with_dash(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(GOOD_USER + GOOD_ASSISTANT)))
    s = load_session("-")
    assert s.source == "<stdin>" and s.format == "claude-code"


def test_stdin_errors_name_stdin(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"{nope")))
    with pytest.raises(LoadError) as exc:
        load_session("-")
    assert str(exc.value).startswith("<stdin>:")


def test_input_files_are_never_written(tmp_path):
    p = write(tmp_path, "s.jsonl", GOOD_USER + GOOD_ASSISTANT)
    p.chmod(0o444)
    before = (p.read_bytes(), p.stat().st_mtime_ns)
    load_session(p)
    assert (p.read_bytes(), p.stat().st_mtime_ns) == before


def test_load_error_survives_pickling():
    err = LoadError("f.jsonl", "bad", line=3, column=4, expected="X")
    again = pickle.loads(pickle.dumps(err))
    assert (again.path, again.line, again.column, again.expected, str(again)) == \
        ("f.jsonl", 3, 4, "X", "f.jsonl:3:4: bad (X expected)")


def test_messages_built_from_content_stay_on_one_line():
    err = LoadError("f", "bad\nthing\r\nhere", line=1)
    assert str(err) == "f:1: bad thing here"


def test_big_files_read_long_lines_in_pieces(tmp_path, monkeypatch):
    from ctxview.formats.parsing import json_lines

    monkeypatch.setattr(json_lines, "STREAM_ABOVE", 0)
    monkeypatch.setattr(json_lines, "CHUNK_BYTES", 64)
    text = "long " * 200
    line = orjson.dumps({"type": "user", "uuid": "u2", "parentUuid": "a1",
                         "message": {"role": "user", "content": text}}) + b"\n"
    s = load_session(write(tmp_path, "s.jsonl", GOOD_USER + GOOD_ASSISTANT + line))
    assert s.conversations[0].messages[-1].text == text
    monkeypatch.setattr(json_lines, "MAX_LINE_BYTES", 500)
    with pytest.raises(LoadError, match="line longer than") as exc:
        load_session(write(tmp_path, "s2.jsonl", GOOD_USER + GOOD_ASSISTANT + line))
    assert exc.value.line == 3
    with pytest.raises(LoadError, match="NUL byte") as exc:
        load_session(write(tmp_path, "s3.jsonl", GOOD_USER + b"x" * 100 + b"\0" * 1000))
    assert (exc.value.line, exc.value.column) == (2, 101)


def test_a_broken_first_line_is_reported_rather_than_a_format_guess(tmp_path):
    p = write(tmp_path, "s.jsonl", b'{"type":"user"\n{"a":1}\n')
    with pytest.raises(LoadError) as exc:
        load_session(p)
    assert exc.value.line == 1 and "invalid JSON" in str(exc.value)


def test_layout_of_long_first_lines(tmp_path, monkeypatch):
    from ctxview.formats.parsing import json_lines, jsonio

    monkeypatch.setattr(json_lines, "LAYOUT_PROBE", 16)
    doc = orjson.dumps([{"role": "user", "content": "a" * 100}, {"role": "assistant", "content": "b"}])
    single = write(tmp_path, "one.json", doc + b"\n\n  \n")
    assert jsonio.detect_layout(jsonio.open_input(single)) == "json"
    assert len(load_session(single).conversations[0].messages) == 2
    lines = write(tmp_path, "two.jsonl", b"\n" + GOOD_USER.replace(b"hi", b"h" * 100) + GOOD_ASSISTANT)
    assert jsonio.detect_layout(jsonio.open_input(lines)) == "jsonl"
    assert load_session(lines).conversations[0].messages[0].text == "h" * 100
    pretty = write(tmp_path, "p.json", orjson.dumps({"messages": [{"role": "user", "content": "x" * 50}]},
                                                    option=orjson.OPT_INDENT_2))
    assert jsonio.detect_layout(jsonio.open_input(pretty)) == "json"


def test_a_fifo_is_refused_at_once_without_waiting_for_a_writer(tmp_path):
    # Opening a FIFO for reading blocks until a writer comes: it must not be opened.
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(LoadError, match="named pipe") as exc:
        load_session(fifo)
    assert exc.value.path == str(fifo)


# tool_calls that are not a list (the fuzz test found `true` crashing the openai loader)
SAMPLES = __import__("pathlib").Path(__file__).parent.parent / "sample_sessions"


def _with_tool_calls(fmt: str, value) -> tuple[str, bytes]:
    if fmt == "openai":
        doc = orjson.loads((SAMPLES / "openai-chat.json").read_bytes())
        doc[2]["tool_calls"] = value
        return "chat.json", orjson.dumps(doc)
    if fmt == "swarm-snapshot":
        doc = orjson.loads((SAMPLES / "swarm-demo.snapshot.json").read_bytes())
        doc["agents"]["lead"]["conversation"][1]["tool_calls"] = value
        return "snapshot.json", orjson.dumps(doc)
    events = [orjson.loads(line) for line in (SAMPLES / "swarm-demo.events.jsonl").read_bytes().splitlines()]
    events[5]["tool_calls"] = value
    return "events.jsonl", b"".join(orjson.dumps(e) + b"\n" for e in events)


@pytest.mark.parametrize("fmt", ["openai", "swarm-snapshot", "swarm-events"])
@pytest.mark.parametrize("value", [True, False, 7, "Read"])
def test_tool_calls_that_are_not_a_list_are_a_load_error(tmp_path, fmt, value):
    name, data = _with_tool_calls(fmt, value)
    with pytest.raises(LoadError) as exc:
        load_session(write(tmp_path, name, data), format=fmt)
    assert f"tool_calls: expected a list of tool calls, found {type(value).__name__}" in one_line(exc.value)
    assert load_session(write(tmp_path, "ok-" + name, _with_tool_calls(fmt, [])[1]), format=fmt).conversations
