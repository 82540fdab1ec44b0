"""Inspect AI eval logs: the .json log, the .eval zip, a lone sample."""

from __future__ import annotations

import builtins
import struct
import zipfile
import zlib
from pathlib import Path

import orjson
import pytest

from ctxview.formats import LoadError, detect_format, inspect_ai, inspect_eval_zip, load_session
from ctxview.formats.parsing.jsonio import open_input
from ctxview.analysis.usage import conversation_usage

FIX = Path(__file__).parent / "fixtures" / "inspect_ai"
OURS = FIX / "ctxview-agent-log.json"  # written for these tests from inspect_ai's types


def doc() -> dict:
    return orjson.loads(OURS.read_bytes())


def eval_zip(path: Path, members: dict[str, object], compression=zipfile.ZIP_DEFLATED) -> Path:
    with zipfile.ZipFile(path, "w", compression) as zf:
        for name, value in members.items():
            zf.writestr(name, value if isinstance(value, bytes) else orjson.dumps(value))
    return path


def as_eval(tmp_path, log: dict, name="log.eval", header=True) -> Path:
    head = {k: v for k, v in log.items() if k not in ("samples", "reductions")}
    members: dict[str, object] = {"_journal/start.json": {k: head[k] for k in ("version", "eval", "plan")}}
    for s in log["samples"]:
        members[f"samples/{s['id']}_epoch_{s['epoch']}.json"] = s
    if header:
        members["header.json"] = head
    return eval_zip(tmp_path / name, members)


def zstd_zip(path: Path, members: dict[str, bytes]) -> Path:
    """A zip whose members use method 93 (Zstandard), as Inspect writes them; Python's zipfile cannot."""
    zstandard = pytest.importorskip("zstandard")
    out, central = bytearray(), bytearray()
    for name, data in members.items():
        comp, crc, nb, offset = zstandard.ZstdCompressor().compress(data), zlib.crc32(data), name.encode(), len(out)
        out += struct.pack("<4s5HL2L2H", b"PK\x03\x04", 63, 0, 93, 0, 0, crc, len(comp), len(data), len(nb), 0)
        out += nb + comp
        central += struct.pack("<4s6HL2L5H2L", b"PK\x01\x02", 63, 63, 0, 93, 0, 0, crc, len(comp), len(data), len(nb),
                               0, 0, 0, 0, 0, offset) + nb
    start = len(out)
    out += central + struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(members), len(members), len(central), start, 0)
    path.write_bytes(bytes(out))
    return path


def texts(session):
    return [[(m.role, m.text, m.tool_call_id, m.thinking) for m in c.messages] for c in session.conversations]


# --- the .json log ----------------------------------------------------------------------------

def test_each_sample_is_a_conversation():
    s = load_session(OURS)
    assert s.format == "inspect-ai" and s.metadata["task"] == "file_count" and s.metadata["status"] == "success"
    first, second = s.conversations
    assert [first.name, second.name] == ["sample-1-epoch-1", "sample-1-epoch-2"]
    assert first.metadata["label"] == "How many Python files are in /repo? → target 3"
    assert second.metadata["label"] == "How many Python files are in /repo? → target 3, three"
    assert first.system_prompt == "You are a careful assistant with a bash tool."
    assert [m.role for m in first.messages] == ["user", "assistant", "tool", "assistant"]
    call = first.messages[1]
    assert call.text == "Let me count them." and call.thinking == "I should list the files first."
    assert call.tool_calls[0].name == "bash" and call.tool_calls[0].arguments == {"cmd": "ls /repo/*.py | wc -l"}
    assert first.messages[2].tool_name == "bash" and first.messages[2].text == "3\n"
    # an image kept as an attachment: a placeholder with its type and size, not the base64
    assert first.messages[3].text == "There are 3 Python files.\n[image: image/png, 70 bytes]"


def test_usage_per_request_from_the_model_events_and_the_total_in_metadata():
    first, second = load_session(OURS).conversations
    reply1, reply2 = first.messages[1], first.messages[3]
    assert (reply1.usage.input_tokens, reply1.usage.output_tokens, reply1.usage.cache_write_tokens) == (12, 30, 1200)
    assert (reply2.usage.input_tokens, reply2.usage.cache_read_tokens) == (13, 1200)
    totals = conversation_usage(first)
    assert (totals.requests, totals.input, totals.output) == (2, 25, 50)
    assert first.metadata["model_usage"]["anthropic/claude-sonnet-4-5"]["input_tokens"] == 25
    # no events: no per-request usage is made up, the total stays in metadata
    assert conversation_usage(second).requests == 0
    assert second.metadata["model_usage"]["anthropic/claude-sonnet-4-5"]["input_tokens_cache_read"] == 2800


def test_a_tool_error_and_a_failed_sample():
    s = load_session(OURS)
    failed = s.conversations[1].messages[2]
    assert failed.meta["is_error"] is True and failed.meta["error_type"] == "timeout"
    assert failed.text == "Error: Command timed out before completing."
    assert any("sample-1-epoch-2: the sample ended in an error: TimeoutError" in w for w in s.warnings)


def test_usage_in_order_when_messages_have_no_ids(tmp_path):
    log = doc()
    for m in log["samples"][0]["messages"]:
        m.pop("id")
    for ev in log["samples"][0]["events"]:
        if ev["event"] == "model":
            ev["output"]["choices"][0]["message"].pop("id")
    p = tmp_path / "log.json"
    p.write_bytes(orjson.dumps(log))
    first = load_session(p).conversations[0]
    assert [m.usage.input_tokens for m in first.messages if m.role == "assistant"] == [12, 13]


@pytest.mark.parametrize("name", ["log_formats.json"])
def test_inspect_ais_own_fixtures_load(name):
    s = load_session(FIX / name)
    assert s.format == "inspect-ai" and s.conversations
    assert all(c.name.startswith("sample-") for c in s.conversations)


def test_a_lone_sample_file(tmp_path):
    p = tmp_path / "1_epoch_1.json"
    p.write_bytes(orjson.dumps(doc()["samples"][0]))
    s = load_session(p)
    assert s.metadata["variant"] == "sample" and s.conversations[0].name == "sample-1-epoch-1"


def test_detected_from_content_not_the_name(tmp_path):
    p = tmp_path / "whatever.txt"
    p.write_bytes(OURS.read_bytes())
    assert detect_format(p) == "inspect-ai"
    z = tmp_path / "archive.bin"
    z.write_bytes(as_eval(tmp_path, doc()).read_bytes())
    assert detect_format(z) == "inspect-ai" and load_session(z).format == "inspect-ai"


def test_a_log_without_samples_is_one_line(tmp_path):
    log = doc()
    log["samples"] = []
    p = tmp_path / "empty.json"
    p.write_bytes(orjson.dumps(log))
    with pytest.raises(LoadError) as exc:
        load_session(p)
    text = str(exc.value)
    assert "\n" not in text and text.startswith(f"{p}: the log holds no samples")
    assert text.endswith("(Inspect AI eval log (.json or .eval) expected)")


@pytest.mark.parametrize("breakage, where", [
    (lambda log: log["samples"].__setitem__(1, 7), "/samples/1: expected a sample object"),
    (lambda log: log["samples"][0].__setitem__("messages", {"a": 1}), "/samples/0/messages: expected a list"),
    (lambda log: log["samples"][0]["messages"].__setitem__(2, {"content": "x"}),
     "/samples/0/messages/2: expected a message object with a role"),
    (lambda log: log.__setitem__("samples", {"x": 1}), "/samples: expected a list of samples"),
])
def test_bad_samples_are_located(tmp_path, breakage, where):
    log = doc()
    breakage(log)
    p = tmp_path / "bad.json"
    p.write_bytes(orjson.dumps(log))
    with pytest.raises(LoadError) as exc:
        load_session(p, format="inspect-ai")
    assert where in str(exc.value) and "\n" not in str(exc.value)


def test_odd_content_parts_never_crash(tmp_path):
    log = doc()
    log["samples"][0]["messages"][2]["content"] = [
        {"type": "reasoning", "reasoning": "", "redacted": True, "summary": "sum"}, {"type": "audio", "audio": 3},
        {"type": "document", "document": "x", "filename": "a.pdf", "mime_type": "application/pdf"},
        {"type": "data", "data": {"k": [1]}}, {"type": "tool_use", "tool_type": "web_search", "name": "s", "result": "r"},
        {"type": "future"}, 5, "loose"]
    log["samples"][0]["messages"][2]["tool_calls"] = "nope"
    p = tmp_path / "odd.json"
    p.write_bytes(orjson.dumps(log))
    msgs = load_session(p).conversations[0].messages
    assert msgs[1].thinking == "sum" and msgs[1].tool_calls == ()
    assert msgs[1].text.split("\n") == ["[audio]", "[document: application/pdf, a.pdf]", '{"k":[1]}',
                                        "[web_search s: r]", "[future]"]


# --- reading a big .json a piece at a time ----------------------------------------------------

def test_a_big_log_read_in_pieces_is_the_whole_parse(tmp_path, monkeypatch):
    log = doc()
    log["samples"] = [dict(s, id=k, messages=[dict(m, content=f"{m['content']} {'x' * 300}")
                                              if isinstance(m["content"], str) else m for m in s["messages"]])
                      for k, s in enumerate(log["samples"] * 400)]
    p = tmp_path / "big.json"
    p.write_bytes(orjson.dumps(log))
    monkeypatch.setattr(inspect_ai, "PIECES_ABOVE", 1)
    monkeypatch.setattr("ctxview.formats.parsing.json_pieces.PIECE_BYTES", 1 << 14)  # many pieces
    pieces = inspect_ai.load_in_pieces(open_input(p))
    assert pieces is not None
    whole = inspect_ai.load(open_input(p), "json")
    assert pieces == whole and len(pieces.conversations) == 800


def test_pieces_fall_back_when_the_samples_are_not_where_a_log_keeps_them(tmp_path, monkeypatch):
    log = doc()
    log["eval"]["task_args"] = {"samples": [{"not": "a sample"}]}  # a "samples" list before the real one
    p = tmp_path / "log.json"
    p.write_bytes(orjson.dumps(log))
    monkeypatch.setattr(inspect_ai, "PIECES_ABOVE", 1)
    assert inspect_ai.load_in_pieces(open_input(p)) is None
    assert len(load_session(p).conversations) == 2  # the whole parse reads it


# --- the .eval zip ----------------------------------------------------------------------------

def test_eval_zip_is_the_json_log(tmp_path):
    z = load_session(as_eval(tmp_path, doc()))
    j = load_session(OURS)
    assert texts(z) == texts(j) and z.metadata["variant"] == "eval"
    assert [c.name for c in z.conversations] == ["sample-1-epoch-1", "sample-1-epoch-2"]


def test_eval_zip_sample_names_that_are_not_plain_numbers_sort_as_names(tmp_path):
    log = doc()
    log["samples"][0]["id"], log["samples"][1]["id"] = "²", "9" * 4400  # isdigit(), but not int()'s
    log["samples"][1]["epoch"] = 1
    z = load_session(as_eval(tmp_path, log))
    assert sorted(c.name for c in z.conversations) == ["sample-" + "9" * 4400 + "-epoch-1", "sample-²-epoch-1"]


def test_eval_zip_still_running_reads_the_journal(tmp_path):
    s = load_session(as_eval(tmp_path, doc(), header=False))
    assert s.warnings[0].startswith("no header.json: the eval is still running")
    assert len(s.conversations) == 2


def test_a_relogged_sample_counts_once_the_last_one(tmp_path):
    log = doc()
    p = as_eval(tmp_path, log)
    again = dict(log["samples"][0], messages=[{"role": "user", "content": "the re-run"},
                                              {"role": "assistant", "content": "done"}])
    with pytest.warns(UserWarning, match="Duplicate name"), zipfile.ZipFile(p, "a") as zf:
        zf.writestr("samples/1_epoch_1.json", orjson.dumps(again))
    convs = load_session(p).conversations
    assert len(convs) == 2 and convs[0].messages[0].text == "the re-run"


@pytest.mark.parametrize("name", ["log_formats.eval", "log_read_sample.eval", "log_message_deduplication.eval"])
def test_inspect_ais_own_eval_files(name):
    s = load_session(FIX / name)
    assert s.format == "inspect-ai" and s.conversations and s.conversations[0].messages


def test_inspect_ais_eval_and_json_of_one_log_agree():
    assert texts(load_session(FIX / "log_formats.eval")) == texts(load_session(FIX / "log_formats.json"))


def test_zstandard_members(tmp_path):
    log = doc()
    head = {k: v for k, v in log.items() if k != "samples"}
    members = {"header.json": orjson.dumps(head)}
    members.update({f"samples/{s['id']}_epoch_{s['epoch']}.json": orjson.dumps(s) for s in log["samples"]})
    p = zstd_zip(tmp_path / "zstd.eval", members)
    assert texts(load_session(p)) == texts(load_session(OURS))


def test_zstandard_without_the_package_says_what_to_install(tmp_path, monkeypatch):
    p = zstd_zip(tmp_path / "zstd.eval", {"header.json": orjson.dumps({k: v for k, v in doc().items()
                                                                       if k != "samples"})})
    real_import = builtins.__import__

    def no_zstd(name, *args, **kwargs):
        if name == "zstandard":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_zstd)
    with pytest.raises(LoadError, match=r"member header.json is compressed with Zstandard .*ctxview\[inspect\]"):
        load_session(p)


def one_line_error(path) -> str:
    with pytest.raises(LoadError) as exc:
        load_session(path)
    text = str(exc.value)
    assert "\n" not in text and text.startswith(str(path))
    return text


def test_a_truncated_zip(tmp_path):
    data = as_eval(tmp_path, doc()).read_bytes()
    p = tmp_path / "cut.eval"
    p.write_bytes(data[: len(data) // 2])
    assert "not a readable zip archive" in one_line_error(p)


def test_a_zip_that_is_not_an_eval_log(tmp_path):
    p = eval_zip(tmp_path / "other.zip", {"readme.txt": b"hello"})
    assert "without header.json or _journal/start.json" in one_line_error(p)


def test_a_member_that_is_not_json_names_the_member(tmp_path):
    log = doc()
    p = eval_zip(tmp_path / "bad.eval", {"header.json": {k: v for k, v in log.items() if k != "samples"},
                                         "samples/1_epoch_1.json": b'{"id": 1, "epoch": '})
    assert "bad.eval[samples/1_epoch_1.json]" in one_line_error(p)


def test_a_member_bigger_than_it_says_or_the_limit(tmp_path, monkeypatch):
    log = doc()
    head = {k: v for k, v in log.items() if k != "samples"}
    p = eval_zip(tmp_path / "big.eval", {"header.json": head, "samples/1_epoch_1.json": log["samples"][0]},
                 zipfile.ZIP_STORED)
    monkeypatch.setattr(inspect_eval_zip, "MAX_MEMBER_BYTES", 1000)
    assert "uncompressed; ctxview reads at most 1,000" in one_line_error(p)
    monkeypatch.undo()
    data = bytearray(p.read_bytes())
    with zipfile.ZipFile(p) as zf:
        size = zf.getinfo("samples/1_epoch_1.json").file_size
    entry = data.rfind(b"samples/1_epoch_1.json") - 46  # its central directory entry (after the data)
    assert data[entry:entry + 4] == b"PK\x01\x02" and struct.unpack_from("<L", data, entry + 24)[0] == size
    struct.pack_into("<2L", data, entry + 20, size - 10, size - 10)  # says 10 bytes fewer than it holds
    p.write_bytes(bytes(data))
    text = one_line_error(p)
    assert "samples/1_epoch_1.json" in text


def test_too_many_members(tmp_path, monkeypatch):
    monkeypatch.setattr(inspect_eval_zip, "MAX_MEMBERS", 2)
    text = one_line_error(as_eval(tmp_path, doc()))
    assert "members; ctxview reads at most 2" in text


def test_more_samples_than_conversations_allowed_are_refused_before_reading(tmp_path, monkeypatch):
    monkeypatch.setattr("ctxview.formats.limits.MAX_CONVERSATIONS", 1)
    assert "2 samples (a conversation each); ctxview reads at most 1" in one_line_error(as_eval(tmp_path, doc()))


def test_a_zip_given_another_format_is_refused(tmp_path):
    with pytest.raises(LoadError, match="a zip archive, not JSON .Codex CLI rollout expected"):
        load_session(as_eval(tmp_path, doc()), format="codex")


@pytest.mark.parametrize("content", [b"PK\x03\x04 not really a zip", b'{"eval": {"task": "t", "model": "m"}, "samples": 3}'])
def test_the_command_line_says_one_line_and_exits_1(tmp_path, content):
    import subprocess
    import sys

    p = tmp_path / "bad.eval"
    p.write_bytes(content)
    before = p.read_bytes()
    proc = subprocess.run([sys.executable, "-m", "ctxview", "report", str(p)], capture_output=True, text=True)
    assert proc.returncode == 1 and proc.stdout == ""
    (line,) = proc.stderr.splitlines()
    assert line.startswith(f"ctxview: error: {p}: ") and "Traceback" not in proc.stderr
    assert p.read_bytes() == before


from ctxview.formats.parsing import json_pieces  # noqa: E402


def test_samples_bigger_than_a_piece_are_read_in_pieces(tmp_path, monkeypatch):
    # Each sample holds lists of objects (more "},{" followed by a key than a piece tries cuts at)
    # and is longer than a piece: a cut tried inside one fails to parse, and the sample's own start
    # is further on than a piece's length; the last one is followed by the rest of the log.
    log = doc()
    log["samples"] = [dict(s, id=k, messages=[dict(m, content=f"{m['content']} {'y' * 100}")
                                              if isinstance(m["content"], str) else m
                                              for m in s["messages"] * 40])
                      for k, s in enumerate(log["samples"] * 5)]
    p = tmp_path / "big.json"
    p.write_bytes(orjson.dumps(log))
    monkeypatch.setattr(inspect_ai, "PIECES_ABOVE", 1)
    monkeypatch.setattr(json_pieces, "PIECE_BYTES", 1 << 10)
    assert min(len(orjson.dumps(s)) for s in log["samples"]) > 4 << 10
    assert min(orjson.dumps(s).count(b"},{") for s in log["samples"]) > json_pieces._PIECE_TRIES
    pieces = inspect_ai.load_in_pieces(open_input(p))
    assert pieces is not None
    assert pieces == inspect_ai.load(open_input(p), "json") and len(pieces.conversations) == 10
