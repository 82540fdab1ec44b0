"""Exports that never fail silently: no body without messages, every image sent as text listed on stderr,
and what `prepare` and `w` leave out marked message by message (export.LeftOut, the prepared pane)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ctxview import load_session
from ctxview.export.bodies import (
    LeftOut,
    body_messages,
    export_stats,
    images_as_text,
    recorded_images,
    to_shape,
)
from ctxview.model import Conversation, Message, ToolCall
from ctxview.pipeline import prepare
from ctxview.engine.view import Settings
from ctxview.settings import ClearSettings

IMAGE = Path(__file__).parent / "fixtures" / "export" / "claude-code-image.jsonl"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ctxview", *args], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("doc, shape", [
    ({"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": [{"role": "user", "content": "   "}]},
     "anthropic"),
    ({"model": "gpt-4o", "messages": [{"role": "system", "content": "be brief"}]}, "openai"),
])
def test_prepare_refuses_a_body_without_messages_in_one_line(tmp_path, doc, shape):
    path = tmp_path / "req.json"
    path.write_text(json.dumps(doc))
    out_file = tmp_path / "body.json"
    out = run("prepare", str(path), "--shape", shape, "-o", str(out_file))
    assert out.returncode == 1
    assert out.stderr.count("\n") == 1 and "nothing to write" in out.stderr and "no messages" in out.stderr
    assert str(path) in out.stderr and "Traceback" not in out.stderr
    assert not out_file.exists() and out.stdout == ""


def test_body_messages_counts_what_the_api_takes():
    assert body_messages({"messages": [{"role": "system", "content": "x"}]}, "openai") == 0
    assert body_messages({"messages": [{"role": "user", "content": "x"}]}, "openai") == 1
    assert body_messages({"system": "x", "messages": []}, "anthropic") == 0


def test_images_are_read_back_and_sent_as_image_blocks_in_the_anthropic_shape():
    out = run("prepare", str(IMAGE), "--shape", "anthropic")
    assert out.returncode == 0 and out.stderr == ""
    body = json.loads(out.stdout)
    first, result = body["messages"][0]["content"], body["messages"][2]["content"][0]
    assert [b["type"] for b in first] == ["image", "text"] and first[1]["text"] == "What is in this picture?"
    assert first[0]["source"]["media_type"] == "image/png" and first[0]["source"]["data"].startswith("iVBORw0KGgo")
    assert result["type"] == "tool_result" and [b["type"] for b in result["content"]] == ["image"]
    from test_export_sdk import anthropic_problems, validator   # the official SDK's request type, strict

    validator("anthropic").validate_python(body)
    assert anthropic_problems(body) == []


def test_openai_sends_the_users_image_and_lists_the_tool_results_as_changed():
    out = run("prepare", str(IMAGE), "--shape", "openai")
    assert out.returncode == 0, out.stderr
    assert out.stderr.splitlines() == [
        "ctxview: changed: #2 (tool): [image: image/png, 66 bytes] is sent as that text, not as the image "
        "(a Chat Completions tool message is text only)"]
    body = json.loads(out.stdout)
    parts = body["messages"][0]["content"]
    assert [p["type"] for p in parts] == ["image_url", "text"]
    assert parts[0]["image_url"]["url"].startswith("data:image/png;base64,iVBORw0KGgo")
    from test_export_sdk import validator

    validator("openai").validate_python(body)


def test_an_image_the_file_does_not_hold_is_listed_on_stderr(tmp_path):
    doc = {"format": "ctxview", "version": 1, "conversations": [{"name": "c", "model": "claude-sonnet-4-5",
           "messages": [{"role": "user", "content": "[image: image/png, 1.0 KB]\nwhat is it?"},
                        {"role": "assistant", "content": "a square"}]}]}
    path = tmp_path / "s.ctxview.json"
    path.write_text(json.dumps(doc))
    out = run("prepare", str(path), "--shape", "anthropic")
    assert out.returncode == 0
    assert out.stderr == ("ctxview: changed: #0 (user): [image: image/png, 1.0 KB] is sent as that text, not as the "
                          "image (the file holds no image data ctxview can read back)\n")


def test_the_stats_count_the_images_sent_as_text():
    conv = load_session(IMAGE).conversations[0]
    view = prepare(conv, Settings())
    assert [(k, role) for k, role, _ in images_as_text(view.prepared)] == [(0, "user"), (2, "tool")]
    back = recorded_images(str(IMAGE), view.prepared)
    assert len(back) == 2
    assert export_stats(view, "anthropic", back)["not_exported"]["images_as_text"] == 0
    assert export_stats(view, "openai", back)["not_exported"]["images_as_text"] == 1
    assert export_stats(view, "anthropic")["not_exported"]["images_as_text"] == 2
    out = run("prepare", str(IMAGE), "--stats", "--shape", "openai")
    assert "not exported: 1 images (or files) sent as their placeholder text" in out.stderr


def _view(*messages: Message):
    conv = Conversation(name="c", model="claude-sonnet-4-5", messages=tuple(messages))
    return prepare(conv, Settings(counter="chars4"))


def test_left_out_names_what_the_body_leaves_out_or_changes():
    view = _view(Message("user", "look [image: image/png, 1.0 KB]"),
                 Message("assistant", "", tool_calls=(ToolCall("t1", "Read", {}), ToolCall("t2", "Read", {}))),
                 Message("tool", "one", tool_call_id="t1"),
                 Message("tool", "orphan", tool_call_id="zz"),
                 Message("assistant", "done"))
    left = LeftOut(view.prepared)
    reasons = [left.reason(m) for m in view.prepared]
    assert reasons == ["image sent as text", "calls not exported: no result", "", "not exported: no call", ""]
    assert [left.reason(m, short=True) for m in view.prepared] == ["img→txt", "!calls", "", "!exp", ""]
    body = to_shape(view, "anthropic", "m")
    blocks = [b for turn in body["messages"] for b in turn["content"]]
    assert [b["type"] for b in blocks].count("tool_use") == 1        # t2 left out: no result
    assert all(b.get("tool_use_id") != "zz" for b in blocks)          # the orphan left out


# --- LeftOut reads paired's rule from each message's window -------------------------------------

from hypothesis import given, settings as hsettings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from ctxview.export.bodies import paired  # noqa: E402

_ids = st.sampled_from(["a", "b", "c", None])


@st.composite
def _sequences(draw) -> list[Message]:
    out: list[Message] = []
    for _ in range(draw(st.integers(0, 14))):
        kind = draw(st.sampled_from(["user", "assistant", "calls", "tool", "tool", "again"]))
        if kind == "user":
            out.append(Message("user", "u"))
        elif kind == "assistant":
            out.append(Message("assistant", "a"))
        elif kind == "calls":
            calls = tuple(ToolCall(i, "Read", {}) for i in draw(st.lists(_ids, min_size=1, max_size=3)))
            out.append(Message("assistant", "", tool_calls=calls))
        elif kind == "tool":
            out.append(Message("tool", "r", tool_call_id=draw(_ids)))
        elif out:   # the same message object again (a view may hold one twice)
            out.append(out[draw(st.integers(0, len(out) - 1))])
    return out


def _reasons_by_paired(prepared: list[Message]) -> list[str]:
    out, _, _ = paired(prepared)
    kept = {id(m) for m in out}
    cut = {id(m) for m in prepared if m.role == "assistant" and m.tool_calls and id(m) not in kept}
    return ["not exported: no call" if m.role == "tool" and id(m) not in kept
            else "calls not exported: no result" if id(m) in cut else "" for m in prepared]


@hsettings(max_examples=120, deadline=None)
@given(_sequences(), st.randoms(use_true_random=False))
def test_left_out_says_what_paired_leaves_out_asking_in_any_order(prepared, rnd):
    left = LeftOut(prepared)
    order = list(range(len(prepared)))
    rnd.shuffle(order)   # (its memo of windows and owners must not depend on the order rows are drawn)
    said = {i: left.reason(prepared[i]) for i in order}
    assert [said[i] for i in range(len(prepared))] == _reasons_by_paired(prepared)


_SAMPLES = sorted([*(Path(__file__).parent / "fixtures" / "samples").rglob("*.jsonl"),
                   *(Path(__file__).parent.parent / "sample_sessions").glob("*.json*")])


@pytest.mark.parametrize("path", _SAMPLES, ids=lambda p: p.name)
def test_left_out_says_what_paired_leaves_out_on_the_samples(path):
    for conversation in load_session(str(path)).conversations:
        for settings in (Settings(), Settings(tiers="default", clear=ClearSettings(keep=2, trigger=0))):
            prepared = list(prepare(conversation, settings).prepared)
            left = LeftOut(prepared)
            assert [left.reason(m) for m in reversed(prepared)][::-1] == _reasons_by_paired(prepared), path
