"""OpenAI chat / Responses lists and Anthropic requests."""

from __future__ import annotations

import orjson
import pytest

from ctxview.formats import LoadError, load_session


def dump(tmp_path, obj, name="s.json"):
    p = tmp_path / name
    p.write_bytes(orjson.dumps(obj, option=orjson.OPT_INDENT_2))
    return p


CHAT = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": [{"type": "text", "text": "weather?"},
                                 {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64," + "A" * 4000}}]},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\"}"}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "{\"temp\": 3}"},
    {"role": "assistant", "content": "3 degrees."},
]


def test_openai_chat_list(tmp_path):
    s = load_session(dump(tmp_path, CHAT))
    assert s.format == "openai" and s.metadata["variant"] == "chat"
    conv = s.conversations[0]
    assert conv.system_prompt == "You are terse."
    assert [m.role for m in conv.messages] == ["user", "assistant", "tool", "assistant"]
    assert conv.messages[0].text == "weather?\n[image: image/jpeg, 2.9 KB]"
    assert dict(conv.messages[1].tool_calls[0].arguments) == {"city": "Oslo"}
    assert conv.messages[2].tool_name == "get_weather"
    assert [m.origin for m in conv.messages] == ["/1", "/2", "/3", "/4"]


def test_openai_chat_object_with_messages_and_jsonl(tmp_path):
    s = load_session(dump(tmp_path, {"model": "gpt-4o", "messages": CHAT}))
    assert s.conversations[0].model == "gpt-4o"
    assert s.conversations[0].messages[0].origin == "/messages/1"
    p = tmp_path / "chat.jsonl"
    p.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in CHAT))
    s2 = load_session(p)
    assert s2.format == "openai"
    assert [m.text for m in s2.conversations[0].messages] == [m.text for m in s.conversations[0].messages]
    assert s2.conversations[0].messages[0].origin == "line 2"


def test_openai_responses_items(tmp_path):
    items = {"model": "gpt-5", "instructions": "Be brief.", "input": [
        {"role": "user", "content": "list files"},
        {"type": "reasoning", "summary": [{"type": "summary_text", "text": "use ls"}]},
        {"type": "function_call", "call_id": "fc1", "name": "shell", "arguments": "{\"cmd\":\"ls\"}"},
        {"type": "function_call_output", "call_id": "fc1", "output": "a.txt"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "a.txt"}]},
    ]}
    s = load_session(dump(tmp_path, items))
    assert s.format == "openai" and s.metadata["variant"] == "responses"
    conv = s.conversations[0]
    assert conv.system_prompt == "Be brief." and conv.model == "gpt-5"
    assert [m.role for m in conv.messages] == ["user", "assistant", "tool", "assistant"]
    assert conv.messages[1].thinking == "use ls" and conv.messages[2].tool_name == "shell"


ANTHROPIC = {
    "model": "claude-sonnet-4-5", "max_tokens": 1024,
    "system": [{"type": "text", "text": "You are a coder."}],
    "messages": [
        {"role": "user", "content": "fix it"},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "look first", "signature": "x"},
            {"type": "text", "text": "Reading."},
            {"type": "tool_use", "id": "tu1", "name": "Read", "input": {"path": "a.py"}},
            {"type": "tool_use", "id": "tu2", "name": "Grep", "input": {"pattern": "b"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "tu1", "content": [{"type": "text", "text": "1\u2192x"}]},
            {"type": "tool_result", "tool_use_id": "tu2", "content": "No matches found", "is_error": False},
            {"type": "text", "text": "<system-reminder>be careful</system-reminder>"}]},
        {"role": "assistant", "content": "Fixed."},
    ],
}


def test_anthropic_request(tmp_path):
    s = load_session(dump(tmp_path, ANTHROPIC))
    assert s.format == "anthropic"
    conv = s.conversations[0]
    assert conv.system_prompt == "You are a coder." and conv.model == "claude-sonnet-4-5"
    assert [m.role for m in conv.messages] == ["user", "assistant", "tool", "tool", "user", "assistant"]
    a = conv.messages[1]
    assert (a.text, a.thinking, [c.name for c in a.tool_calls]) == ("Reading.", "look first", ["Read", "Grep"])
    assert [m.tool_name for m in conv.messages[2:4]] == ["Read", "Grep"]
    assert conv.messages[2].text == "1\u2192x"
    assert conv.messages[4].injected
    assert conv.messages[2].origin == "/messages/2"


@pytest.mark.parametrize("fmt, what", [("anthropic", "an Anthropic request"),
                                       ("swarm-snapshot", "a SwarmSDK snapshot"),
                                       ("ctxview", "a ctxview session")])
def test_document_formats_forced_on_jsonl_are_refused_at_line_1(tmp_path, fmt, what):
    p = tmp_path / "x.jsonl"
    p.write_bytes(b'{"role":"user","content":"a"}\n{"role":"assistant","content":"b"}\n')
    with pytest.raises(LoadError, match=f"found JSON lines; {what} is one JSON document") as err:
        load_session(p, format=fmt)
    assert err.value.line == 1


def test_plain_message_list_loads_as_either(tmp_path):
    plain = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
    p = dump(tmp_path, plain)
    assert load_session(p).format == "openai"
    assert [m.text for m in load_session(p, format="anthropic").conversations[0].messages] == ["a", "b"]


def test_message_without_role_is_an_error(tmp_path):
    with pytest.raises(LoadError) as exc:
        load_session(dump(tmp_path, {"messages": [{"role": "user", "content": "a"}, {"content": "b"}]}), format="openai")
    assert "/messages/1" in str(exc.value)


def test_anthropic_thinking_blocks_and_is_error_are_kept(tmp_path):
    doc = {"model": "claude-opus-4", "max_tokens": 1024, "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "step one", "signature": "EqMB"},
            {"type": "redacted_thinking", "data": "EmwKAhgB"},
            {"type": "text", "text": "Running."},
            {"type": "tool_use", "id": "tu1", "name": "Bash", "input": {"command": "false"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "tu1", "content": "exit 1", "is_error": True},
            {"type": "text", "text": "and?"}]},
        {"role": "assistant", "content": "Failed."},
    ]}
    conv = load_session(dump(tmp_path, doc)).conversations[0]
    a = conv.messages[1]
    assert a.meta["thinking_blocks"] == ({"type": "thinking", "thinking": "step one", "signature": "EqMB"},
                                         {"type": "redacted_thinking", "data": "EmwKAhgB"})
    assert a.thinking == "step one\n\n[redacted thinking]"
    tool = conv.messages[2]
    assert tool.role == "tool" and tool.meta == {"is_error": True}
    assert "thinking_blocks" not in conv.messages[-1].meta and conv.messages[-1].thinking is None
