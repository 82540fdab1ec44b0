"""Tool definitions the file recorded: counted with the system prompt, shown in #sys, kept in exports."""

from __future__ import annotations

import pytest

from ctxview.export.bodies import to_shape
from ctxview.model import Conversation, Message, ToolCall
from ctxview.pipeline import prepare, prepare_reference
from ctxview.settings import Settings
from ctxview.engine.system_block import system_block_tokens, tool_definitions, tools_text
from ctxview.engine.tokens import CharsCounter
from ctxview.tui.layout import system_row

from test_export_sdk import anthropic_problems, openai_problems, validator

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
SHAPES = {
    "anthropic": {"name": "Read", "description": "Read a file", "input_schema": SCHEMA},
    "chat": {"type": "function", "function": {"name": "Read", "description": "Read a file", "parameters": SCHEMA}},
    "responses": {"type": "function", "name": "Read", "description": "Read a file", "parameters": SCHEMA},
}
C4 = CharsCounter()


def conversation(tool: dict, prompt: str | None = "Be brief.") -> Conversation:
    msgs = (Message("user", "read a.py"),
            Message("assistant", "", tool_calls=(ToolCall("c1", "Read", {"path": "a.py"}),)),
            Message("tool", "print(1)", tool_call_id="c1"), Message("assistant", "done"), Message("user", "thanks"))
    return Conversation("main", msgs, system_prompt=prompt, metadata={"tools": [tool, {"type": "web_search"}]})


@pytest.mark.parametrize("recorded", SHAPES)
def test_tool_definitions_are_counted_exported_and_shown(recorded):
    conv = conversation(SHAPES[recorded])
    tools = tool_definitions(conv)
    assert len(tools) == 2
    view = prepare(conv, counter=C4)
    prompt_only = C4.count_message(Message("system", "Be brief."))
    assert view.system_tokens == system_block_tokens(conv, C4) == prompt_only + C4.count(tools_text(tools))
    assert view.tools == tools and view == prepare_reference(conv, counter=C4)
    assert view.tokens_prepared == view.system_tokens + sum(C4.count_message(m) for m in view.prepared)
    for shape in ("openai", "anthropic"):
        body = to_shape(view, shape, "claude-sonnet-4-5")
        validator(shape).validate_python(body)
        assert not (anthropic_problems if shape == "anthropic" else openai_problems)(body)
        (tool,) = body["tools"]  # (the server tool of another kind is left out)
        assert (tool["name"] if shape == "anthropic" else tool["function"]["name"]) == "Read"
        assert (tool["input_schema"] if shape == "anthropic" else tool["function"]["parameters"]) == SCHEMA
    row = system_row(view.system_prompt, view.system_tokens, "", view.tools)
    assert row.stored is not None and "tool definitions (2: Read, ?)" in row.stored.text and '"Read"' in row.stored.text
    assert row.tokens_stored == view.system_tokens


def test_tools_without_a_prompt_still_make_a_system_block():
    conv = conversation(SHAPES["anthropic"], prompt=None)
    view = prepare(conv, counter=C4)
    assert view.system_tokens == C4.count(tools_text(tool_definitions(conv))) > 0
    assert system_row(None, view.system_tokens, "not in file", view.tools).stored is not None
    assert "system" not in to_shape(view, "anthropic", "m") and to_shape(view, "anthropic", "m")["tools"]


def test_a_file_without_tools_exports_no_tools_key():
    conv = Conversation("main", (Message("user", "hi"),))
    assert tool_definitions(conv) == ()
    for shape in ("openai", "anthropic"):
        assert "tools" not in to_shape(prepare(conv), shape, "m")


@pytest.mark.parametrize("body", [
    {"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": [{"role": "user", "content": "hi"}],
     "tools": [SHAPES["anthropic"]]},
    {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}], "tools": [SHAPES["chat"]]},
    {"model": "gpt-4o", "input": [{"role": "user", "content": "hi"}], "tools": [SHAPES["responses"]]},
], ids=["anthropic", "chat", "responses"])
def test_loaders_keep_the_tool_definitions_a_request_body_recorded(body, tmp_path):
    import json

    from ctxview.formats import load_session

    path = tmp_path / "request.json"
    path.write_text(json.dumps(body))
    (conv,) = load_session(path).conversations
    assert tool_definitions(conv) == tuple(body["tools"])
    assert prepare(conv).tools == tuple(body["tools"])
