"""Request bodies (ctxview.export.bodies) and `ctxview prepare`: the shapes, what they carry and leave out."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ctxview.export.bodies import (
    DEFAULT_MAX_TOKENS,
    dumps,
    export_stats,
    recorded_max_tokens,
    stats_text,
    to_anthropic,
    to_openai,
    to_shape,
)
from ctxview.model import Content, Conversation, Message, ToolCall
from ctxview.pipeline import prepare
from ctxview.engine.view import Settings

SAMPLES = Path(__file__).parents[1] / "sample_sessions"
THINKING = {"type": "thinking", "thinking": "Check the throttle first.", "signature": "EqQBCgIYAhIM"}
REDACTED = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3"}


def view_of(*msgs: Message, system: str | None = "sys", settings: Settings | None = None):
    return prepare(Conversation("c", msgs, system_prompt=system, model="m"), settings or Settings())


def mixed_view():
    return view_of(
        Message("user", Content("look", ("image-bytes",))),
        Message("user", "and this"),
        Message("assistant", "", tool_calls=(ToolCall("t1", "Read", {"file_path": "/a"}),
                                             ToolCall("t2", "Grep", {"pattern": "x"}))),
        Message("tool", "A", tool_call_id="t1"),
        Message("tool", "B", tool_call_id="t2", meta={"is_error": True}),
        Message("system", "late system note"),
        Message("assistant", "done", thinking="unsigned reasoning"),
    )


# --- OpenAI chat ------------------------------------------------------------------------

def test_openai_body_holds_model_and_messages_only():
    body = to_openai(mixed_view(), "gpt-4o")
    assert list(body) == ["model", "messages"]
    assert [m["role"] for m in body["messages"]] == ["system", "user", "user", "assistant", "tool", "tool", "system",
                                                      "assistant"]
    calls = body["messages"][3]
    assert calls["content"] is None and [c["id"] for c in calls["tool_calls"]] == ["t1", "t2"]
    assert json.loads(calls["tool_calls"][0]["function"]["arguments"]) == {"file_path": "/a"}
    assert body["messages"][-1] == {"role": "assistant", "content": "done"}   # thinking: no field for it


def test_openai_assistant_without_calls_has_string_content():
    body = to_openai(view_of(Message("user", "hi"), Message("assistant", "")), "gpt-4o")
    assert body["messages"][-1] == {"role": "assistant", "content": ""}


def test_unknown_roles_become_user_messages_and_developer_stays():
    body = to_openai(view_of(Message("developer", "be terse"), Message("function", "x"), system=None), "gpt-4o")
    assert body["messages"] == [{"role": "developer", "content": "be terse"}, {"role": "user", "content": "x"}]


def test_a_body_without_a_known_model_leaves_the_key_out():
    assert "model" not in to_openai(mixed_view()) and "model" not in to_anthropic(mixed_view())


# --- Anthropic messages -----------------------------------------------------------------

def test_anthropic_body_keys_max_tokens_and_system():
    body = to_anthropic(mixed_view(), "claude-sonnet-4-5")
    assert list(body) == ["model", "max_tokens", "system", "messages"]
    assert body["max_tokens"] == DEFAULT_MAX_TOKENS == 8192
    assert body["system"] == "sys\n\nlate system note"
    assert to_anthropic(mixed_view(), "m", max_tokens=1000)["max_tokens"] == 1000
    assert to_shape(mixed_view(), "anthropic", "m", max_tokens=77)["max_tokens"] == 77


@pytest.mark.parametrize("system", [None, "", "  \n"])
def test_anthropic_body_never_has_an_empty_system(system):
    body = to_anthropic(view_of(Message("user", "hi"), system=system), "m")
    assert "system" not in body and body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]


def test_anthropic_turns_alternate_and_results_keep_is_error():
    body = to_anthropic(mixed_view(), "m")
    turns = body["messages"]
    assert [t["role"] for t in turns] == ["user", "assistant", "user", "assistant"]
    assert [b["text"] for b in turns[0]["content"]] == ["look", "and this"]
    assert turns[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "t1", "content": "A"},
        {"type": "tool_result", "tool_use_id": "t2", "content": "B", "is_error": True},
    ]
    # Message.thinking without recorded blocks: no thinking block (an unsigned one is rejected)
    assert turns[3]["content"] == [{"type": "text", "text": "done"}]


def test_tool_results_open_their_user_turn_before_any_text():
    call = ToolCall("t1", "Bash", {"command": "ls"})
    body = to_anthropic(view_of(
        Message("user", "go"),
        Message("assistant", "running", tool_calls=(call, ToolCall("t2", "Read", {"file_path": "/b"}))),
        Message("user", "<system-reminder>a file changed</system-reminder>"),   # between the call and its results
        Message("tool", "a.txt", tool_call_id="t1"),
        Message("tool", "", tool_call_id="t2"),
        Message("user", "and now?"),
    ), "m")
    assert [b["type"] for b in body["messages"][2]["content"]] == ["tool_result", "tool_result", "text", "text"]
    assert body["messages"][2]["content"][1] == {"type": "tool_result", "tool_use_id": "t2"}   # empty: no content
    assert [b.get("text") for b in body["messages"][2]["content"][2:]] == [
        "<system-reminder>a file changed</system-reminder>", "and now?"]


def test_results_move_up_to_their_call_and_unpaired_ones_are_left_out():
    msgs = (
        Message("tool", "stray", tool_call_id="t0"),                  # its call is not in the request
        Message("user", "go"),
        Message("assistant", "", tool_calls=(ToolCall("t1", "Bash", {"command": "git status"}),)),
        Message("user", "[compaction summary]"),                       # stored between a call and its result
        Message("tool", "M app.rb", tool_call_id="t1"),
        Message("assistant", "next", tool_calls=(ToolCall("t2", "Read", {"file_path": "/a"}),
                                                 ToolCall("t3", "Read", {"file_path": "/b"}))),
        Message("tool", "b", tool_call_id="t3"),                       # t2 was interrupted: no result
        Message("assistant", "ok"),
    )
    view = view_of(*msgs, system=None)
    oa = to_openai(view, "m")["messages"]
    assert [(m["role"], m.get("tool_call_id")) for m in oa] == [
        ("user", None), ("assistant", None), ("tool", "t1"), ("user", None), ("assistant", None), ("tool", "t3"),
        ("assistant", None)]
    assert [c["id"] for c in oa[4]["tool_calls"]] == ["t3"]
    an = to_anthropic(view, "m")["messages"]
    assert [b["type"] for b in an[2]["content"]] == ["tool_result", "text"]
    assert [b.get("id") for b in an[3]["content"]] == [None, "t3"]
    stats = export_stats(view, "anthropic")["not_exported"]
    assert stats["unanswered_calls"] == 1 and stats["orphan_results"] == 1
    assert "1 tool calls without a result, 1 tool results without their call" in stats_text(
        export_stats(view, "openai"), "c", "openai", "f")


def test_whitespace_only_text_is_left_out_and_empty_turns_vanish():
    body = to_anthropic(view_of(Message("user", "q"), Message("assistant", " \n"), Message("user", "   "),
                                Message("assistant", "a")), "m")
    assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "q"}]},
                                {"role": "assistant", "content": [{"type": "text", "text": "a"}]}]


def test_recorded_thinking_blocks_come_first_as_recorded():
    msg = Message("assistant", "Reading.", tool_calls=(ToolCall("t1", "Read", {"file_path": "/a"}),),
                  thinking="Check the throttle first.",
                  meta={"thinking_blocks": [THINKING, dict(REDACTED, extra="dropped key"), {"type": "thinking"}]})
    view = view_of(Message("user", "go"), msg, Message("tool", "x", tool_call_id="t1"))
    blocks = to_anthropic(view, "m")["messages"][1]["content"]
    assert blocks == [THINKING, REDACTED, {"type": "text", "text": "Reading."},
                      {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/a"}}]
    assert "thinking" not in json.dumps(to_openai(view, "m"))   # the chat shape drops it
    assert export_stats(view, "openai")["not_exported"]["thinking"] == 1
    assert export_stats(view, "anthropic")["not_exported"]["thinking"] == 0


def test_unknown_shape():
    with pytest.raises(ValueError, match="unknown shape 'xml'"):
        to_shape(mixed_view(), "xml")


# --- figures, JSON ------------------------------------------------------------------------

def test_export_stats_and_their_text():
    view = mixed_view()
    stats = export_stats(view, "anthropic")
    assert stats["messages"] == {"stored": 7, "prepared": 7}
    assert stats["tokens"] == {"stored": view.tokens_stored, "prepared": view.tokens_prepared}
    assert stats["not_exported"] == {"attachments": 1, "images_as_text": 0, "thinking": 1, "unanswered_calls": 0,
                                     "orphan_results": 0}
    text = stats_text(stats, "c", "anthropic", "x.json")
    assert text.splitlines()[0].startswith("'c' from x.json as anthropic: messages 7 stored → 7 prepared")
    assert "changed: nothing" in text and "not exported: 1 attachments, 1 messages' thinking" in text


def test_stats_name_what_the_pipeline_changed():
    msgs = [Message("user", "u" * 400)]
    for i in range(6):
        msgs += [Message("assistant", "a", tool_calls=(ToolCall(f"t{i}", "Read", {"file_path": "/f"}),)),
                 Message("tool", "r" * 800, tool_call_id=f"t{i}")]
    view = view_of(*msgs, settings=Settings(keep_recent=2, budget=300, counter="chars4"))
    stats = export_stats(view, "openai")
    assert stats["changes"]["dropped"] == view.stats["dropped"] > 0
    assert f"{view.stats['dropped']} dropped" in stats_text(stats, "c", "openai", "f")


def test_recorded_max_tokens_takes_the_first_positive_int():
    assert recorded_max_tokens({}, {"max_tokens": 1234}) == 1234
    assert recorded_max_tokens({"max_tokens": 99}, {"max_tokens": 1234}) == 99
    assert recorded_max_tokens({"max_tokens": "99"}, {"max_tokens": 0}, {"max_tokens": True}) is None


def test_dumps_is_strict_json():
    # NaN and the infinities are written as null (a documented, valid way), in the
    # body and in the arguments string alike; orjson, which refuses them, reads the output.
    import orjson

    assert orjson.loads(dumps({"x": float("nan"), "y": [float("-inf")]})) == {"x": None, "y": [None]}
    view = view_of(Message("user", "u"), Message("assistant", "", tool_calls=(ToolCall("t", "F", {"v": float("inf")}),)),
                   Message("tool", "r", tool_call_id="t"))
    body = orjson.loads(dumps(to_openai(view, "m")))
    call = next(m for m in body["messages"] if m.get("tool_calls"))["tool_calls"][0]
    assert orjson.loads(call["function"]["arguments"]) == {"v": None}


def test_dumps_writes_lone_surrogates_as_the_replacement_character():
    import orjson

    out = dumps({"t": "a\ud800b"})
    out.encode("utf-8")
    assert orjson.loads(out) == {"t": "a\ufffdb"}  # strict parsers refuse a lone surrogate's escape


# --- the command --------------------------------------------------------------------------

def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ctxview", *args], capture_output=True, text=True, timeout=120)


def test_prepare_stats_go_to_stderr_and_the_body_stays_clean(tmp_path):
    out = run("prepare", str(SAMPLES / "anthropic-request.json"), "--shape", "anthropic", "--stats",
              "--tiers", "default", "--keep-recent", "4")
    assert out.returncode == 0, out.stderr
    body = json.loads(out.stdout)
    assert list(body) == ["model", "max_tokens", "system", "messages"]
    lines = out.stderr.strip().splitlines()
    assert lines[0].startswith("'main' from ") and "stored →" in lines[0] and "tokens" in lines[0]
    assert lines[1].startswith("changed: ") and "compressed" in lines[1]
    assert all(line.startswith(("budget: ", "not exported: ")) for line in lines[2:]), out.stderr
    assert run("prepare", str(SAMPLES / "anthropic-request.json")).stderr == ""   # without --stats: nothing


def test_prepare_max_tokens_recorded_then_option(tmp_path):
    doc = json.loads((SAMPLES / "anthropic-request.json").read_text(encoding="utf-8"))
    doc["max_tokens"] = 1234
    path = tmp_path / "req.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    recorded = json.loads(run("prepare", str(path), "--shape", "anthropic").stdout)
    assert recorded["max_tokens"] == 1234 and recorded["model"] == doc["model"]
    given = json.loads(run("prepare", str(path), "--shape", "anthropic", "--max-tokens", "500").stdout)
    assert given["max_tokens"] == 500
    other = run("prepare", str(SAMPLES / "openai-chat.json"), "--shape", "anthropic", "--model", "claude-x")
    assert json.loads(other.stdout)["max_tokens"] == DEFAULT_MAX_TOKENS
    assert json.loads(other.stdout)["model"] == "claude-x" and other.stderr == ""
    bad = run("prepare", str(path), "--max-tokens", "0")
    assert bad.returncode == 2 and "--max-tokens must be ≥ 1" in bad.stderr


def test_prepare_without_a_model_warns_on_stderr():
    out = run("prepare", str(SAMPLES / "openai-chat.json"))
    assert out.returncode == 0 and "model" not in json.loads(out.stdout)
    assert out.stderr.startswith("ctxview: warning: no model recorded for 'main'") and "--model NAME" in out.stderr


def test_prepare_notes_attachments_it_cannot_export(tmp_path):
    doc = {"format": "ctxview", "version": 1, "conversations": [{"name": "c", "model": "gpt-4o", "messages": [
        {"role": "user", "content": {"text": "what is this?", "attachments": ["shot.png"]}},
        {"role": "assistant", "content": "a square"}]}]}
    path = tmp_path / "img.ctxview.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    out = run("prepare", str(path))
    assert out.returncode == 0, out.stderr
    assert out.stderr == "ctxview: note: 1 attachments not exported\n"
    assert json.loads(out.stdout)["messages"][0] == {"role": "user", "content": "what is this?"}


def test_prepare_stats_are_sanitised(tmp_path):
    hostile = Path(__file__).parent / "fixtures" / "hostile.ctxview.json"
    out = run("prepare", str(hostile), "--stats")
    assert out.returncode == 0, out.stderr
    assert "\x1b" not in out.stderr and "\u202e" not in out.stderr
