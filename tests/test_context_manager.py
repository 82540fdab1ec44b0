"""The ContextManager facade: the seed's API and state, and the kept fields."""

import pytest

from ctxview import CompressionPolicy, Content, ContextManager, Message, ToolCall, Usage
from ctxview.engine.compression import PRESETS, Tier
from ctxview.engine.context_manager import embed_ephemeral

MARK = "\n...[{} chars truncated for context management]"


def _msgs():
    return [
        Message("user", "hello"),
        Message("assistant", "on it", tool_calls=[{"id": "c1", "name": "Read", "arguments": {"p": "a"}}],
                model_id="m1", usage=Usage(10, 2), id="a1"),
        Message("tool", "     1→x", tool_call_id="c1"),
    ]


def test_public_names():
    import ctxview
    assert ctxview.ContextManager is ContextManager
    assert ctxview.CompressionPolicy is CompressionPolicy
    assert ctxview.Tier is Tier


def test_seed_example():
    cm = ContextManager()
    msgs = _msgs()
    cm.add_ephemeral_reminder("<system-reminder>Use caution</system-reminder>", messages_array=msgs)
    out = cm.prepare_for_llm(msgs)
    assert out[2].content == "     1→x\n\n<system-reminder>Use caution</system-reminder>"
    assert cm.has_ephemeral() and cm.ephemeral_count() == 1
    cm.clear_ephemeral()
    assert not cm.has_ephemeral() and cm.ephemeral_count() == 0
    assert cm.prepare_for_llm(msgs) == msgs


def test_prepare_without_ephemeral_returns_a_new_equal_list():
    cm = ContextManager()
    msgs = _msgs()
    out = cm.prepare_for_llm(msgs)
    assert out == msgs and out is not msgs
    assert cm.prepare_for_llm(tuple(msgs)) == msgs


def test_ephemeral_joins_in_order_and_keeps_every_field():
    cm = ContextManager()
    msgs = _msgs()
    cm.add_ephemeral_content_for_message(1, "first")
    cm.add_ephemeral_content_for_message(1, "second")
    out = cm.prepare_for_llm(msgs)
    assert out[1].content == "on it\n\nfirst\n\nsecond"
    assert out[1].tool_calls == (ToolCall("c1", "Read", {"p": "a"}),)
    assert (out[1].model_id, out[1].usage, out[1].id) == ("m1", Usage(10, 2), "a1")
    assert out[0] is msgs[0] and out[2] is msgs[2]
    assert msgs[1].content == "on it"  # input untouched


def test_ephemeral_on_content_keeps_attachments_and_on_none_uses_empty_text():
    cm = ContextManager()
    msgs = [Message("user", Content("look", ("img.png",))), Message("user", None)]
    cm.add_ephemeral_content_for_message(0, "r")
    cm.add_ephemeral_content_for_message(1, "r")
    out = cm.prepare_for_llm(msgs)
    assert out[0].content == Content("look\n\nr", ("img.png",))
    assert out[1].content == "\n\nr"


def test_out_of_range_indices_count_but_attach_nowhere():
    cm = ContextManager()
    msgs = _msgs()
    cm.add_ephemeral_content_for_message(-1, "neg")
    cm.add_ephemeral_content_for_message(3, "past end")
    assert cm.ephemeral_count() == 2 and cm.has_ephemeral()
    assert cm.prepare_for_llm(msgs) == msgs


def test_only_nil_entries_attach_nothing_like_rubys_any():
    # Ruby: `[nil].any?` is false, so the message stays as it is.
    cm = ContextManager()
    msgs = _msgs()
    cm.add_ephemeral_content_for_message(0, None)
    assert cm.prepare_for_llm(msgs)[0] is msgs[0]
    cm.add_ephemeral_content_for_message(0, "x")
    assert cm.prepare_for_llm(msgs)[0].content == "hello\n\n\n\nx"  # nil joins as ""


def test_reminder_on_empty_list_is_ignored():
    cm = ContextManager()
    cm.add_ephemeral_reminder("r", messages_array=[])
    assert not cm.has_ephemeral()


def test_ephemeral_content_is_a_copy():
    cm = ContextManager()
    cm.add_ephemeral_content_for_message(0, "a")
    snapshot = cm.ephemeral_content
    assert snapshot == {0: ("a",)}
    snapshot[0] = ("changed",)
    assert cm.ephemeral_content == {0: ("a",)}


def test_embed_ephemeral_function():
    msgs = _msgs()
    assert embed_ephemeral(msgs, {0: ["z"], 7: ["nowhere"], 1.0: ["float key"]})[0].content == "hello\n\nz"
    assert embed_ephemeral(msgs, {0: ["z"], 1.0: ["float key"]})[1] is msgs[1]


def test_reminder_methods():
    cm = ContextManager()
    text = "a <system-reminder>r</system-reminder> b"
    assert cm.extract_system_reminders(text) == ["<system-reminder>r</system-reminder>"]
    assert cm.strip_system_reminders(text) == "a  b"
    assert cm.has_system_reminders(text) is True
    assert cm.strip_system_reminders(None) is None
    assert ContextManager.SYSTEM_REMINDER_REGEX.search(text)


def test_compression_applied_none_true_false():
    cm = ContextManager()
    msgs = [Message("tool", "x" * 300, tool_call_id="c")] + [Message("user", "u")] * 70
    assert cm.compression_applied is None
    first = cm.auto_compress_on_threshold(msgs, keep_recent=10)
    assert cm.compression_applied is True
    assert first[0].content == "x" * 100 + MARK.format(200)
    second = cm.auto_compress_on_threshold(msgs, keep_recent=10)
    assert second == msgs and second is not msgs  # already applied: nothing compressed
    cm.reset_compression()
    assert cm.compression_applied is False
    assert cm.auto_compress_on_threshold(msgs, keep_recent=10) == first


def test_compress_methods_and_tool_names():
    cm = ContextManager()
    msg = Message("tool", "Found 3 files matching *.py\n" + "a.py\n" * 100, tool_call_id="c")
    out = cm.compress_tool_message(msg, age=61)
    assert out.content.endswith("re-run the Glob tool with the same parameters.")
    assert cm.detect_tool_name(msg.content) == "Glob"
    assert cm.is_rerunnable_tool("Glob") and not cm.is_rerunnable_tool(None)
    assert cm.rerunnable_tool("Grep")
    assert cm.compress_tool_results([msg], keep_recent=10) == [msg]


def test_policy_argument():
    assert ContextManager().policy is PRESETS["default"]
    assert ContextManager(policy="light").policy is PRESETS["light"]
    cm = ContextManager(policy="*:10")
    out = cm.compress_tool_message(Message("tool", "y" * 50), age=1)
    assert out.content == "y" * 10 + MARK.format(40)
    custom = CompressionPolicy(rerunnable_tools={"Bash"})
    assert ContextManager(policy=custom).is_rerunnable_tool("Bash")
    assert not ContextManager(policy=custom).is_rerunnable_tool("Read")
    with pytest.raises(ValueError, match="unknown compression preset"):
        ContextManager(policy="heavy")


def test_off_policy_never_compresses():
    cm = ContextManager(policy="off")
    msgs = [Message("tool", "x" * 3000)] + [Message("user", "u")] * 100
    assert cm.compress_tool_results(msgs, keep_recent=0) == msgs
