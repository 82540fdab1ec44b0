"""ctxview's own format: load, validate, write, round trip, schema."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxview.formats import LoadError, load_session
from ctxview.formats.native import SCHEMA_PATH, dump_session, settings_keys, write_session
from ctxview.model import Content, ContextEvent, Conversation, Message, Session, ToolCall, Usage
from ctxview.engine.view import Settings

DOC = {
    "format": "ctxview", "version": 1, "title": "t",
    "conversations": [{
        "name": "lead", "model": "claude-x", "context_window": 200000, "system_prompt": "SYS",
        "settings": {"keep_recent": 4, "tiers": "default", "budget": 5000},
        "ephemeral": {"1": ["<system-reminder>r</system-reminder>"]},
        "messages": [
            {"role": "user", "content": {"text": "hi", "attachments": [{"path": "a.png"}]}},
            {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "Read", "arguments": {"f": 1}}],
             "usage": {"input_tokens": 10, "output_tokens": 2}, "thinking": "hmm"},
            {"role": "tool", "content": "x", "tool_call_id": "c1"},
        ],
        "events": [{"kind": "compaction", "index": 1, "trigger": "manual", "summary": "S",
                    "replaced": [{"role": "user", "content": "old"}]}],
    }],
}


def dump(tmp_path, obj, name="s.json"):
    p = tmp_path / name
    p.write_bytes(orjson.dumps(obj))
    return p


def test_load_every_field(tmp_path):
    s = load_session(dump(tmp_path, DOC))
    assert s.format == "ctxview" and s.metadata["title"] == "t"
    (c,) = s.conversations
    assert (c.name, c.model, c.context_window, c.system_prompt) == ("lead", "claude-x", 200000, "SYS")
    assert dict(c.settings) == {"keep_recent": 4, "tiers": "default", "budget": 5000}
    assert c.ephemeral == {1: ("<system-reminder>r</system-reminder>",)}
    assert isinstance(c.messages[0].content, Content) and c.messages[0].content.attachments == ({"path": "a.png"},)
    assert c.messages[1].usage == Usage(10, 2, 0, 0) and c.messages[1].thinking == "hmm"
    assert c.messages[2].tool_name == "Read"
    assert c.messages[2].origin == "/conversations/0/messages/2"
    assert c.events[0].replaced[0].text == "old" and c.events[0].index == 1


def test_repeated_short_strings_are_loaded_as_one_object(tmp_path):
    # built at run time so the parser cannot hand back one constant
    tid, path = "".join(["call", "_7"]), "/".join(["", "src", "a.rb"])
    call = {"id": tid, "name": "Read", "arguments": {"file_path": path, "opts": [{"p": path}]}}
    doc = {"format": "ctxview", "conversations": [{"name": "a", "messages": [
        {"role": "assistant", "content": "", "model_id": "m-1", "tool_calls": [call]},
        {"role": "tool", "content": "same output", "tool_call_id": tid, "tool_name": "Read"},
        {"role": "assistant", "content": "", "model_id": "m-1", "tool_calls": [dict(call, id="c8")]},
        {"role": "tool", "content": "same output", "tool_call_id": "c8"},
    ]}]}
    a1, t1, a2, t2 = load_session(dump(tmp_path, doc)).conversations[0].messages
    assert t1.tool_call_id is a1.tool_calls[0].id and t2.tool_call_id is a2.tool_calls[0].id
    assert a1.model_id is a2.model_id and a1.role is a2.role and t1.tool_name is t2.tool_name
    assert t1.content is t2.content == "same output"
    args1, args2 = a1.tool_calls[0].arguments, a2.tool_calls[0].arguments
    assert args1 == args2 == {"file_path": "/src/a.rb", "opts": [{"p": "/src/a.rb"}]}
    assert args1 is not args2 and args1["opts"] is not args2["opts"]  # each call keeps its own dicts
    assert args1["file_path"] is args2["file_path"] is args1["opts"][0]["p"]
    assert t1.meta is not t2.meta


def test_settings_keys_are_the_settings_fields_and_unknown_ones_warn(tmp_path):
    assert {"keep_recent", "tiers", "compression", "budget", "context_window"} <= settings_keys()
    assert settings_keys() == set(Settings.__dataclass_fields__)
    doc = json.loads(json.dumps(DOC))
    doc["conversations"][0]["settings"]["zoom"] = 3
    s = load_session(dump(tmp_path, doc))
    assert "zoom" not in s.conversations[0].settings
    assert any("zoom" in w for w in s.warnings)


@pytest.mark.parametrize("path, value, pointer", [
    (("conversations",), [], "/conversations"),
    (("conversations", 0, "name"), "", "/conversations/0/name"),
    (("conversations", 0, "messages", 1, "role"), 3, "/conversations/0/messages/1/role"),
    (("conversations", 0, "messages", 1, "tool_calls", 0, "arguments"), "x",
     "/conversations/0/messages/1/tool_calls/0/arguments"),
    (("conversations", 0, "ephemeral"), {"one": ["x"]}, "/conversations/0/ephemeral/one"),
    (("conversations", 0, "ephemeral"), {"²": ["x"]}, "/conversations/0/ephemeral/²"),  # isdigit(), not int()
    (("conversations", 0, "ephemeral"), {"9" * 4400: ["x"]}, "/conversations/0/ephemeral/" + "9" * 4400),
    (("conversations", 0, "events", 0, "index"), 99, "/conversations/0/events/0/index"),
    (("conversations", 0, "context_window"), -1, "/conversations/0/context_window"),
    (("format",), "other", "/format"),
])
def test_invalid_documents_name_the_pointer(tmp_path, path, value, pointer):
    doc = json.loads(json.dumps(DOC))
    target = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(LoadError) as exc:
        load_session(dump(tmp_path, doc), format="ctxview")
    assert f": {pointer}: " in str(exc.value)
    assert exc.value.expected == "ctxview session"


def test_duplicate_conversation_names_are_refused(tmp_path):
    doc = json.loads(json.dumps(DOC))
    doc["conversations"].append(doc["conversations"][0])
    with pytest.raises(LoadError, match="unique"):
        load_session(dump(tmp_path, doc))


def test_write_session_is_atomic_and_round_trips(tmp_path):
    s = load_session(dump(tmp_path, DOC))
    out = tmp_path / "out.ctxview.json"
    write_session(s, out)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out")]  # no temp file left
    again = load_session(out)
    assert again.conversations[0].messages == tuple(
        m.replace(origin=m.origin) for m in s.conversations[0].messages)
    assert again.conversations[0].ephemeral == s.conversations[0].ephemeral
    assert again.conversations[0].events[0].summary == "S"


def test_write_failure_leaves_the_old_file(tmp_path, monkeypatch):
    out = tmp_path / "keep.json"
    out.write_text("old")
    import os

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        write_session(load_session(dump(tmp_path, DOC)), out)
    assert out.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".keep")] == []


def test_converted_session_keeps_the_source_origin(tmp_path):
    src = Session("claude-code", "x.jsonl", (Conversation("main", (Message("user", "hi", origin="line 7"),)),))
    doc = dump_session(src)
    assert doc["metadata"]["converted_from"] == "claude-code"
    assert doc["conversations"][0]["messages"][0]["meta"] == {"source_origin": "line 7"}


def test_the_schema_accepts_what_the_writer_writes(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SCHEMA_PATH.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(DOC, schema)
    jsonschema.validate(dump_session(load_session(dump(tmp_path, DOC))), schema)
    bad = json.loads(json.dumps(DOC))
    bad["conversations"][0]["messages"][0]["role"] = 5
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)


_text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)
_msg = st.builds(
    Message,
    role=st.sampled_from(["user", "assistant", "tool", "system"]),
    content=st.one_of(st.none(), _text, st.builds(Content, _text, st.just(()))),
    tool_call_id=st.one_of(st.none(), _text),
    tool_calls=st.lists(st.builds(ToolCall, _text, _text, st.dictionaries(_text, st.integers(-2 ** 63, 2 ** 63 - 1), max_size=2)),
                        max_size=2).map(tuple),
    model_id=st.one_of(st.none(), _text),
    usage=st.one_of(st.none(), st.builds(Usage, *[st.integers(0, 10 ** 9)] * 4)),
    thinking=st.one_of(st.none(), _text),
    injected=st.booleans(),
    id=st.one_of(st.none(), _text),
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(messages=st.lists(_msg, max_size=8), eph=st.dictionaries(st.integers(0, 20), st.lists(_text, max_size=2).map(tuple),
                                                                  max_size=3))
def test_round_trip_property(tmp_path, messages, eph):
    conv = Conversation("c", tuple(messages), ephemeral=eph, settings={"keep_recent": 3},
                        events=(ContextEvent("compaction", 0, summary="s", replaced=tuple(messages[:2])),))
    out = tmp_path / "rt.json"
    write_session(Session("ctxview", "", (conv,)), out)
    back = load_session(out).conversations[0]
    strip = lambda ms: [m.replace(origin=None, tool_name=None, meta={}) for m in ms]  # noqa: E731
    assert strip(back.messages) == strip(messages)
    assert back.ephemeral == eph
    assert strip(back.events[0].replaced) == strip(messages[:2])


def test_integers_beyond_64_bits_are_written(tmp_path):
    # orjson refuses them; the stdlib fallback writes them (they read back as floats)
    conv = Conversation("c", (Message("assistant", "", tool_calls=(ToolCall("i", "n", {"big": 2 ** 70}),)),))
    write_session(Session("ctxview", "", (conv,)), tmp_path / "big.json")
    assert json.loads((tmp_path / "big.json").read_text())["conversations"][0]["messages"][0]["tool_calls"][0][
        "arguments"] == {"big": 2 ** 70}


def test_schema_ships_inside_the_package():
    assert SCHEMA_PATH.is_file()
    assert SCHEMA_PATH.parent.parent.name == "ctxview"
    assert Path(SCHEMA_PATH).suffix == ".json"


# --- big files, read a piece at a time (native.load_in_pieces, jsonio.parse_in_pieces) ---

from ctxview.formats import DEMO_PATH, native  # noqa: E402
from ctxview.formats.parsing import json_pieces, jsonio  # noqa: E402
from ctxview.formats.parsing.jsonio import Input, open_input, parse_in_pieces  # noqa: E402


@pytest.fixture
def tiny_pieces(monkeypatch):
    """Every file read in pieces, of a few bytes each: all of the piece path on small files."""
    monkeypatch.setattr(native, "PIECES_ABOVE", 0)
    monkeypatch.setattr(json_pieces, "PIECE_BYTES", 16)


def both_ways(inp: Input):
    """(read in pieces, parsed whole) for one input."""
    return native.load_in_pieces(inp), native.load(inp, "json")


def test_pieces_give_exactly_what_a_whole_parse_gives(tmp_path, tiny_pieces):
    demo = load_session(DEMO_PATH)
    assert len(demo.conversations) == 3
    for indent in (True, False):
        out = tmp_path / f"demo-{indent}.json"
        write_session(demo, out, indent=indent)
        pieces, whole = both_ways(open_input(out))
        assert pieces is not None and pieces == whole
    pieces, whole = both_ways(open_input(dump(tmp_path, DOC)))  # events, ephemeral, attachments
    assert pieces is not None and pieces == whole


def test_load_session_reads_big_ctxview_files_in_pieces(tmp_path, monkeypatch):
    out = tmp_path / "demo.json"
    write_session(load_session(DEMO_PATH), out, indent=False)
    monkeypatch.setattr(native, "PIECES_ABOVE", out.stat().st_size)
    monkeypatch.setattr(json_pieces, "PIECE_BYTES", 4096)
    taken = []
    real = native._Built.take
    monkeypatch.setattr(native._Built, "take", lambda self, *a: (taken.append(a[1:2]), real(self, *a))[1])
    for fmt in (None, "ctxview"):
        taken.clear()
        s = load_session(out, format=fmt)
        assert len(taken) > 10 and s == native.load(open_input(out), "json")
    monkeypatch.setattr(native, "PIECES_ABOVE", out.stat().st_size + 1)  # smaller files: parsed whole
    taken.clear()
    load_session(out)
    assert len(taken) == 3  # one whole list per conversation


def test_a_huge_message_is_one_piece(tmp_path, tiny_pieces):
    doc = {"format": "ctxview", "conversations": [{"name": "a", "messages": [
        {"role": "user", "content": "x"}, {"role": "tool", "content": "y" * 300_000, "tool_call_id": "c"},
        {"role": "user", "content": "z"}]}]}
    pieces, whole = both_ways(open_input(dump(tmp_path, doc)))
    assert pieces is not None and pieces == whole


def test_json_text_in_contents_is_no_place_to_cut(tmp_path, tiny_pieces):
    text = orjson.dumps([{"a": i} for i in range(100)]).decode()  # a tool's output: 99 "},{" in a string
    doc = {"format": "ctxview", "conversations": [{"name": "a", "messages": [
        {"role": "tool", "content": text, "tool_call_id": "c"}] * 3}]}
    pieces, whole = both_ways(open_input(dump(tmp_path, doc)))
    assert pieces is not None and pieces == whole


def test_pieces_share_repeated_strings_across_pieces(tmp_path, tiny_pieces):
    tid = "".join(["call", "_7"])
    doc = {"format": "ctxview", "conversations": [{"name": "a", "messages": [
        {"role": "assistant", "content": "", "model_id": "m-1", "tool_calls": [{"id": tid, "name": "Read"}]},
        {"role": "tool", "content": "same output", "tool_call_id": tid},
    ] * 3}]}
    s = native.load_in_pieces(open_input(dump(tmp_path, doc)))
    ms = s.conversations[0].messages
    assert ms[0].role is ms[4].role and ms[1].content is ms[5].content and ms[5].tool_call_id is ms[0].tool_calls[0].id
    assert ms[5].tool_name == "Read" and ms[5].origin == "/conversations/0/messages/5"


# Text a cut between objects can fall inside: separators, brackets, keys, escapes.
_tricky = st.lists(st.sampled_from(list('},{]["\\:ab\n →') + ['"messages":[', '},{"role":', "\U0001F600"]),
                   max_size=12).map("".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(_tricky, min_size=0, max_size=12), piece=st.integers(1, 64), indent=st.booleans(),
       empty_second=st.booleans())
def test_pieces_property(tmp_path, monkeypatch, texts, piece, indent, empty_second):
    monkeypatch.setattr(native, "PIECES_ABOVE", 0)
    monkeypatch.setattr(json_pieces, "PIECE_BYTES", piece)
    msgs = [{"role": "user", "content": t, "meta": {"t": [{"x": t}, {"y": [t]}]},
             "tool_calls": [{"id": t, "name": "n", "arguments": {"a": [{"b": t}, {"c": t}]}}]} for t in texts]
    doc = {"format": "ctxview", "metadata": {"note": "".join(texts)},
           "conversations": [{"name": "a", "system_prompt": "".join(texts), "messages": msgs,
                              "events": [{"kind": "k", "index": 0, "replaced": msgs[:2]}]},
                             {"name": "b", "messages": [] if empty_second else msgs[::-1]}]}
    p = tmp_path / "p.json"
    p.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2 if indent else 0))
    pieces, whole = both_ways(open_input(p))
    # Such documents always split (a few nested separators per message, far fewer than the
    # tries allowed): a fallback here would leave the piece path untested.
    assert pieces is not None
    assert pieces == whole
    assert load_session(p) == whole


def test_files_that_do_not_split_are_parsed_whole(tmp_path, tiny_pieces):
    cases = {
        # a cut can fall inside this list more times in a row than are tried (messages written with
        # "content" first: with "role" first, the next message's start is looked for instead)
        "tries": {"format": "ctxview", "conversations": [{"name": "a", "messages": [
            {"content": "x", "role": "user", "meta": {"l": [{"a": 1}] * (json_pieces._PIECE_TRIES + 10)}},
            {"content": "x", "role": "user"}]}]},
        # the first "messages" list is not a conversation's
        "elsewhere": {"format": "ctxview", "metadata": {"messages": [{"a": 1}]},
                      "conversations": [{"name": "a", "messages": [{"role": "user", "content": "x"}]}]},
        # a conversation without messages before one with
        "skipped": {"format": "ctxview", "conversations": [
            {"name": "a"}, {"name": "b", "messages": [{"role": "user", "content": "x"}]}]},
    }
    for name, doc in cases.items():
        inp = open_input(dump(tmp_path, doc, f"{name}.json"))
        assert native.load_in_pieces(inp) is None, name
        assert load_session(inp.path) == native.load(inp, "json")
    # escaped lone surrogates: orjson refuses them, the whole parse falls back to the stdlib
    p = tmp_path / "surrogate.json"
    p.write_bytes(orjson.dumps(DOC).replace(b'"content":"x"', b'"content":"\\ud800"'))
    assert native.load_in_pieces(open_input(p)) is None
    assert load_session(p).conversations[0].messages[2].content == "\ud800"


def test_a_message_with_more_cuts_inside_than_are_tried_is_read_in_pieces(tmp_path, tiny_pieces):
    doc = {"format": "ctxview", "conversations": [{"name": "a", "messages": [
        {"role": "user", "content": "x", "meta": {"l": [{"a": 1}] * (json_pieces._PIECE_TRIES + 10)}},
        {"role": "user", "content": "x"}] * 3}]}
    pieces, whole = both_ways(open_input(dump(tmp_path, doc)))
    assert pieces is not None and pieces == whole


def test_a_later_format_key_is_decided_as_for_any_file(tmp_path, tiny_pieces):
    p = tmp_path / "dup.json"
    p.write_bytes(orjson.dumps(DOC)[:-1] + b',"format":"other"}')
    assert native.load_in_pieces(open_input(p)) is None
    with pytest.raises(LoadError):
        load_session(p)


@pytest.mark.parametrize("damage", ["bad role", "truncated", "broken piece", "too deep", "bad event"])
def test_bad_files_give_the_whole_parse_error(tmp_path, monkeypatch, damage):
    msgs = [{"role": "user", "content": f"message {i}"} for i in range(20)]
    data = orjson.dumps({"format": "ctxview", "conversations": [{"name": "a", "messages": msgs,
                                                                   "events": [{"kind": "k", "index": 0}]}]})
    if damage == "bad role":
        data = data.replace(b'"role":"user","content":"message 7"', b'"role":7,"content":"message 7"')
    elif damage == "truncated":
        data = data[:len(data) // 2]
    elif damage == "broken piece":
        data = data.replace(b'"message 7"}', b'"message 7"]')
    elif damage == "too deep":  # 6 containers down to "meta"'s value, then lists: 1025 in all
        data = data.replace(b'"content":"message 7"', b'"content":"x","meta":{"d":' + b"[" * 1019 + b"]" * 1019 + b"}")
    elif damage == "bad event":
        data = data.replace(b'"index":0', b'"index":99')
    p = tmp_path / "bad.json"
    p.write_bytes(data)
    monkeypatch.setattr(native, "PIECES_ABOVE", 1 << 40)
    with pytest.raises(LoadError) as whole:
        load_session(p)
    monkeypatch.setattr(native, "PIECES_ABOVE", 0)
    monkeypatch.setattr(json_pieces, "PIECE_BYTES", 16)
    if damage != "bad event":
        assert native.load_in_pieces(open_input(p)) is None
    with pytest.raises(LoadError) as pieces:
        load_session(p)
    assert str(pieces.value) == str(whole.value)


def test_as_deep_as_a_whole_parse_allows(tmp_path, tiny_pieces):
    msg = b'{"role":"user","content":"x","meta":{"d":' + b"[" * 1018 + b"]" * 1018 + b"}}"  # 1024 deep
    p = tmp_path / "deep.json"
    p.write_bytes(b'{"format":"ctxview","conversations":[{"name":"a","messages":[' + msg + b"," + msg + b"]}]}")
    pieces, whole = both_ways(open_input(p))
    assert pieces is not None
    got, want = pieces.conversations[0].messages, whole.conversations[0].messages

    def depth(value):  # (== on these recurses too deep)
        n = 0
        while type(value) is list:
            value, n = value[0] if value else None, n + 1
        return n

    assert [depth(m.meta["d"]) for m in got] == [depth(m.meta["d"]) for m in want] == [1018, 1018]
    assert [m.replace(meta={}) for m in got] == [m.replace(meta={}) for m in want]


def test_stdin_and_bom_read_in_pieces(tmp_path, tiny_pieces):
    data = orjson.dumps(DOC)
    whole = native.load(Input("<stdin>", None, data, len(data)), "json")
    for raw in (data, jsonio.BOM + data):
        assert native.load_in_pieces(Input("<stdin>", None, raw, len(raw))) == whole


def test_parse_in_pieces_hands_over_each_array_in_order(tmp_path, monkeypatch):
    monkeypatch.setattr(json_pieces, "PIECE_BYTES", 8)
    doc = {"a": [{"items": [{"n": i, "s": "},{" * (i % 3)} for i in range(7)]}, {"items": []},
                 {"items": [{"n": 9}]}], "z": 1}
    p = tmp_path / "d.json"
    p.write_bytes(orjson.dumps(doc))
    got = []
    rest, markers = parse_in_pieces(open_input(p), "items", 2, lambda k, first, items: got.append((k, first, items)))
    assert rest == {"a": [{"items": [markers[0]]}, {"items": [markers[1]]}, {"items": [markers[2]]}], "z": 1}
    for k, array in enumerate(doc["a"]):
        mine = [g for g in got if g[0] == k]
        assert [x for _, _, items in mine for x in items] == array["items"]
        assert [first for _, first, _ in mine] == [sum(len(g[2]) for g in mine[:j]) for j in range(len(mine))]
    assert len([g for g in got if g[0] == 0]) > 1


def test_thinking_blocks_round_trip_from_a_claude_code_session(tmp_path):
    # the exporter's contract: meta["thinking_blocks"] is a tuple of API-shape blocks, in order
    src = Path(__file__).parent / "fixtures" / "samples" / "claude-code" / "spotter-short.jsonl"
    s = load_session(src)
    before = [m.meta["thinking_blocks"] for c in s.conversations for m in c.messages if "thinking_blocks" in m.meta]
    assert before and all(type(b) is tuple for b in before)
    out = tmp_path / "out.ctxview.json"
    write_session(s, out)
    again = load_session(out)
    after = [m.meta["thinking_blocks"] for c in again.conversations for m in c.messages if "thinking_blocks" in m.meta]
    assert after == before and all(type(b) is tuple for b in after)
    assert [m.thinking for m in again.conversations[0].messages] == [m.thinking for m in s.conversations[0].messages]


@pytest.mark.parametrize("blocks, where", [
    ({"type": "thinking"}, ""),
    ([{"type": "thinking", "thinking": 3, "signature": "s"}], "/0"),
    ([{"type": "redacted_thinking", "data": "d"}, {"type": "text", "text": "x"}], "/1"),
    ([{"type": "thinking", "thinking": "t", "signature": None}], "/0"),
])
def test_bad_thinking_blocks_name_the_pointer(tmp_path, blocks, where):
    doc = json.loads(json.dumps(DOC))
    doc["conversations"][0]["messages"][1]["meta"] = {"thinking_blocks": blocks}
    with pytest.raises(LoadError) as exc:
        load_session(dump(tmp_path, doc))
    assert f": /conversations/0/messages/1/meta/thinking_blocks{where}: " in str(exc.value)


# A message's string fields and usage are checked in one test each (native._message); a wrong one is
# named by a second pass, in field order: the first wrong field, as a check of each in turn names it.
@pytest.mark.parametrize("fields, pointer", [
    ({"model_id": 3}, "model_id"),
    ({"thinking": 3, "tool_call_id": []}, "tool_call_id"),   # (tool_call_id comes first)
    ({"id": 1.5}, "id"),
    ({"tool_name": 1, "injected": 2}, "tool_name"),
    ({"usage": {"input_tokens": -1}}, "usage/input_tokens"),
    ({"usage": {"output_tokens": True, "input_tokens": 1.0}}, "usage/input_tokens"),
    ({"usage": {"input_tokens": 5, "cache_write_tokens": "3"}}, "usage/cache_write_tokens"),
])
def test_a_wrong_message_field_is_named(tmp_path, fields, pointer):
    doc = json.loads(json.dumps(DOC))
    doc["conversations"][0]["messages"][1].update(fields)
    with pytest.raises(LoadError) as exc:
        load_session(dump(tmp_path, doc))
    assert f": /conversations/0/messages/1/{pointer}: " in str(exc.value)


def test_pieces_are_cut_before_messages_and_elsewhere_when_they_do_not_start_with_role(tmp_path, monkeypatch):
    """native._NEXT_MESSAGE: pieces are cut where a message starts with "role", as ctxview writes
    them, not inside the lists of objects of a call's arguments (such a cut costs a failed parse);
    messages written with another key first are still read in pieces (at any "},{"), and either
    way the session is the one a whole parse gives."""
    todos = {"todos": [{"content": f"step {k}", "status": "pending"} for k in range(40)]}
    messages = [m for k in range(60) for m in (
        {"role": "assistant", "content": f"plan {k}", "tool_calls": [{"id": f"c{k}", "name": "TodoWrite",
                                                                       "arguments": todos}]},
        {"role": "tool", "content": "ok", "tool_call_id": f"c{k}"})]
    monkeypatch.setattr(native, "PIECES_ABOVE", 0)
    monkeypatch.setattr(json_pieces, "PIECE_BYTES", 2048)
    parsed = []
    real = json_pieces._items
    monkeypatch.setattr(json_pieces, "_items", lambda *a: (parsed.append(real(*a)), parsed[-1])[1])
    for first in ("role", "content"):
        ordered = [{first: m[first], **m} for m in messages]
        doc = {"format": "ctxview", "conversations": [{"name": "a", "messages": ordered}]}
        parsed.clear()
        pieces, whole = both_ways(open_input(dump(tmp_path, doc)))
        assert pieces is not None and pieces == whole
        assert len(parsed) > 5
        if first == "role":
            assert None not in parsed  # every cut tried was between messages


# --- results linked as they are read (native._Built) equal the loader-agnostic pass after ------------

_ROOT = Path(__file__).resolve().parent.parent
_SAMPLES = sorted(p for d in (_ROOT / "sample_sessions", _ROOT / "tests" / "fixtures" / "samples")
                  for p in d.rglob("*") if p.is_file() and p.suffix in (".json", ".jsonl"))
_LINKING = {"format": "ctxview", "conversations": [{"name": "a", "messages": [
    {"role": "tool", "content": "before any call", "tool_call_id": "c1"},           # unlinked
    {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "Read", "arguments": {}},
                                                        {"id": "", "name": "Nameless", "arguments": {}}]},
    {"role": "tool", "content": "x", "tool_call_id": "c1", "tool_name": "Grep"},   # the call's name wins
    {"role": "tool", "content": "y", "tool_call_id": "c1", "tool_name": "Read"},
    {"role": "tool", "content": "z"},                                               # no id: unlinked
    {"role": "tool", "content": "w", "tool_call_id": "c2",                          # its own call
     "tool_calls": [{"id": "c2", "name": "Bash", "arguments": {}}]},
    {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "Glob", "arguments": {}}]},
    {"role": "tool", "content": "v", "tool_call_id": "c1"},                         # the later call
]}, {"name": "b", "messages": [{"role": "tool", "content": "c1 is a's", "tool_call_id": "c1"}]}]}


@pytest.mark.parametrize("source", ["linking", "demo", "hostile", *_SAMPLES], ids=str)
def test_results_are_linked_as_read_as_link_tool_results_links_them(tmp_path, source):
    from ctxview.formats import DEMO_PATH, native
    from ctxview.formats.parsing.linking import link_tool_results, unlinked_warning

    if source == "linking":
        path = dump(tmp_path, _LINKING)
    elif source in ("demo", "hostile"):
        path = DEMO_PATH if source == "demo" else _ROOT / "tests" / "fixtures" / "hostile.ctxview.json"
    else:  # another format's sample, written as a ctxview file
        path = tmp_path / "s.json"
        write_session(load_session(source), path)
    doc = orjson.loads(path.read_bytes())
    session = load_session(path)
    for k, (conv, raw) in enumerate(zip(session.conversations, doc["conversations"])):
        unlinked = [native._message(m, f"/conversations/{k}/messages/{i}", {}) for i, m in enumerate(raw["messages"])]
        linked, count = link_tool_results(unlinked)
        assert list(conv.messages) == linked
        assert unlinked_warning(conv.name, count) in (*session.warnings, None)
        assert (unlinked_warning(conv.name, count) is None) == (not any(w.startswith(f"{conv.name}: ") and "a call"
                                                                        in w for w in session.warnings))


# Tool-call arguments nested past MAX_ARGUMENT_DEPTH: the loader's own walk (the one that shares
# their strings) answers argument_depth.deeper_than, so the load needs no second walk, and it
# stops at the limit: a file nested to the parser's limit (1024) used to be a RecursionError.
from ctxview.formats.parsing.argument_depth import MAX_ARGUMENT_DEPTH, deeper_than  # noqa: E402


def _nested(depth: int, shape: list[int]) -> object:
    """A value `depth` containers deep (dicts and lists chosen by `shape`), with flat siblings."""
    value: object = {} if shape[0] % 2 else []
    for level in range(depth - 1):
        k = shape[(level + 1) % len(shape)]
        value = {"s": "x", "n": k, "v": value} if k % 2 else ["x", k, value]
    return value


@given(st.integers(1, MAX_ARGUMENT_DEPTH + 3), st.lists(st.integers(0, 3), min_size=1, max_size=6),
       st.booleans())
@settings(max_examples=150)
def test_share_strings_answers_deeper_than(depth, shape, wrap):
    value = _nested(depth, shape)
    args = {"a": value, "b": "flat"} if wrap else value
    if type(args) is not dict:
        args = {"only": args}
    assert native._share_strings(orjson.loads(orjson.dumps(args)), {}) == deeper_than(args, MAX_ARGUMENT_DEPTH)


def _deep_doc(depth: int, replaced: bool = False) -> bytes:
    args = b'{"k":' * depth + b"1" + b"}" * depth
    call = b'{"role":"assistant","content":null,"tool_calls":[{"id":"c1","name":"X","arguments":' + args + b"}]}"
    msgs = b'{"role":"user","content":"hi"},' + (b'{"role":"assistant","content":"ok"}' if replaced else call)
    events = b',"events":[{"kind":"compaction","index":1,"replaced":[' + call + b"]}]" if replaced else b""
    return b'{"format":"ctxview","conversations":[{"name":"main","messages":[' + msgs + b"]" + events + b"}]}"


@pytest.mark.parametrize("pieces", [False, True])
def test_arguments_too_deep_are_one_clear_error_up_to_the_parsers_limit(tmp_path, monkeypatch, pieces):
    if pieces:
        monkeypatch.setattr(native, "PIECES_ABOVE", 0)
        monkeypatch.setattr(json_pieces, "PIECE_BYTES", 16)
    p = tmp_path / "deep.json"
    p.write_bytes(_deep_doc(MAX_ARGUMENT_DEPTH))
    assert load_session(p).conversations[0].messages[1].tool_calls[0].name == "X"
    for depth in (MAX_ARGUMENT_DEPTH + 1, 1010):
        p.write_bytes(_deep_doc(depth))
        with pytest.raises(LoadError) as exc:
            load_session(p)
        assert str(exc.value) == (f"{p}: conversation 'main', message 1 (/conversations/0/messages/1): the arguments "
                                  f"of tool call 'X' are nested deeper than {MAX_ARGUMENT_DEPTH} levels")
        p.write_bytes(_deep_doc(depth, replaced=True))  # a compaction's replaced message: named by its pointer
        with pytest.raises(LoadError, match=r"/conversations/0/events/0/replaced/0/tool_calls/0/arguments: "
                                            f"nested deeper than {MAX_ARGUMENT_DEPTH} levels"):
            load_session(p)


# A big ctxview file is read in pieces before its layout is asked: a one-line document is read to its
# end to tell it from JSON lines (0.17 s at 500 MB), and a file read whole as one document is one.
from ctxview.formats import registry  # noqa: E402
from ctxview.formats.growing import GrowingSession  # noqa: E402


def test_a_big_ctxview_file_is_read_in_pieces_without_asking_its_layout(tmp_path, monkeypatch, tiny_pieces):
    out = tmp_path / "demo.json"
    write_session(load_session(DEMO_PATH), out, indent=False)
    want = native.load(open_input(out), "json")
    tries = []
    real = native.load_in_pieces
    monkeypatch.setattr(native.SESSION_FORMAT, "_in_pieces", lambda inp: (tries.append(1), real(inp))[1])
    asked = []
    for where in (registry, sys.modules["ctxview.formats.growing"]):
        monkeypatch.setattr(where, "detect_layout", lambda inp: asked.append(inp) or "json")
    assert load_session(out) == want and GrowingSession(out).load() == want
    assert load_session(out, format="ctxview") == want
    assert asked == [] and len(tries) == 3


def test_no_other_big_file_is_read_for_pieces_before_its_layout(tmp_path, monkeypatch):
    # Only ctxview's files say what they are in their first bytes: a big JSON-lines transcript that
    # mentions the keys other piecewise formats look for is read once, as JSON lines.
    lines = [orjson.dumps({"type": "user", "uuid": "u0", "message": {"role": "user", "content":
                           'the "eval", "samples": [ and "conversation": [ keys'}})]
    lines += [orjson.dumps({"type": "assistant" if k % 2 else "user", "uuid": f"u{k}", "parentUuid": f"u{k - 1}",
                            "message": {"role": "assistant" if k % 2 else "user", "content": "x" * 50}})
              for k in range(1, 200)]
    p = tmp_path / "t.jsonl"
    p.write_bytes(b"\n".join(lines) + b"\n")
    for name in ("inspect_ai", "swarm_snapshot", "native"):
        monkeypatch.setattr(f"ctxview.formats.{name}.PIECES_ABOVE", 0)
    parsed = []
    real = json_pieces.parse_in_pieces
    for name in ("inspect_ai", "swarm_snapshot", "native"):
        monkeypatch.setattr(f"ctxview.formats.{name}.parse_in_pieces", lambda *a: (parsed.append(a[1]), real(*a))[1])
    assert len(load_session(p).conversations[0].messages) == 200
    assert len(GrowingSession(p).load().conversations[0].messages) == 200
    assert parsed == []


@pytest.mark.parametrize("damage", ["bad role", "lines"])
def test_what_pieces_cannot_read_is_tried_in_pieces_once(tmp_path, monkeypatch, tiny_pieces, damage):
    msgs = [{"role": "user", "content": f"message {i}"} for i in range(20)]
    data = orjson.dumps({"format": "ctxview", "conversations": [{"name": "a", "messages": msgs}]})
    if damage == "bad role":
        data = data.replace(b'"role":"user","content":"message 7"', b'"role":7,"content":"message 7"')
    else:  # JSON lines whose first line is a ctxview document: not one document
        data = data + b"\n" + data + b"\n"
    p = tmp_path / "bad.json"
    p.write_bytes(data)
    tries = []
    real = native.load_in_pieces
    monkeypatch.setattr(native.SESSION_FORMAT, "_in_pieces", lambda inp: (tries.append(1), real(inp))[1])
    for load in (load_session, lambda path: GrowingSession(path).load()):
        tries.clear()
        with pytest.raises(LoadError) as got:
            load(p)
        assert len(tries) == 1
        assert str(got.value) == (f"{p}: /conversations/0/messages/7/role: expected a non-empty string "
                                  "(ctxview session expected)" if damage == "bad role" else
                                  f"{p}:2: unexpected content after the ctxview session JSON document on line 1: "
                                  "a session document must be the only JSON value in its file (ctxview session "
                                  "JSON expected)")
