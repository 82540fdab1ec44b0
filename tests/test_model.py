"""The model's value semantics: immutability, coercion, copies that keep every field."""

import dataclasses

import pytest

from ctxview import Content, Message, ToolCall, Usage
from ctxview.model import Conversation, Session, messages_from


def test_tool_calls_accept_plain_dicts_and_become_toolcalls():
    msg = Message(role="assistant", content="", tool_calls=[{"id": "c1", "name": "Read", "arguments": {"p": 1}}])
    assert msg.tool_calls == (ToolCall(id="c1", name="Read", arguments={"p": 1}),)


def test_messages_are_frozen():
    msg = Message(role="user", content="hi")
    with pytest.raises(dataclasses.FrozenInstanceError):
        msg.content = "changed"  # type: ignore[misc]


def test_with_content_keeps_every_other_field():
    msg = Message(
        role="tool", content="x" * 10, tool_call_id="c1", model_id="m", tool_name="Read",
        usage=Usage(1, 2, 3, 4), origin="line 3", id="u1", meta={"k": "v"},
    )
    new = msg.with_content("short")
    assert new.content == "short"
    for name in Message.__slots__:
        if name != "content":
            assert getattr(new, name) == getattr(msg, name), name
    assert msg.content == "x" * 10


def test_replace_rejects_unknown_fields():
    with pytest.raises(TypeError, match="nope"):
        Message(role="user").replace(nope=1)


def test_text_of_each_content_kind():
    assert Message(role="user").text == ""
    assert Message(role="user", content="a").text == "a"
    assert Message(role="user", content=Content("b", [1, 2])).text == "b"
    assert Content("b", [1, 2]).attachments == (1, 2)


def test_role_enums_become_strings():
    import enum

    class Role(enum.Enum):
        TOOL = "tool"

    assert Message(role=Role.TOOL).role == "tool"


def test_usage_context_tokens_adds_input_and_cache():
    assert Usage(input_tokens=10, output_tokens=99, cache_read_tokens=5, cache_write_tokens=2).context_tokens == 17


def test_session_conversation_lookup_names_the_choices():
    s = Session(format="x", source="f", conversations=[Conversation(name="a"), Conversation(name="b")])
    assert s.conversation("b").name == "b"
    with pytest.raises(KeyError, match="a, b"):
        s.conversation("c")


def test_messages_from_dicts():
    out = messages_from([{"role": "user", "content": {"text": "t", "attachments": ["img"]}}])
    assert out == [Message(role="user", content=Content("t", ("img",)))]


def test_the_session_schema_describes_the_settings_module():
    """The JSON schema's settings are Settings' fields, with its choices (one place decides them)."""
    import dataclasses
    import json
    from pathlib import Path

    import ctxview
    from ctxview.settings import OLD_MESSAGE_STRATEGIES, TOOL_NAME_SOURCES, ClearSettings, Settings

    schema = json.loads((Path(ctxview.__file__).parent / "schema/ctxview-session.schema.json").read_text())
    props = schema["$defs"]["conversation"]["properties"]["settings"]["properties"]
    assert set(props) == {f.name for f in dataclasses.fields(Settings)}
    assert props["old_messages"]["enum"] == list(OLD_MESSAGE_STRATEGIES)
    assert props["tool_name_from"]["enum"] == list(TOOL_NAME_SOURCES)
    assert set(props["clear"]["properties"]) == {f.name for f in dataclasses.fields(ClearSettings)}
    for name in ("keep_recent",):
        assert props[name]["minimum"] == 0 and Settings(**{name: -1}).problems()
