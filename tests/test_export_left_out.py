"""Exports that never fail silently: no body without messages, every image sent as text listed on stderr,
and what `prepare` and `w` leave out marked message by message (export.LeftOut, the prepared pane)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ctxview import load_session
from ctxview.export import LeftOut, body_messages, export_stats, images_as_text, to_shape
from ctxview.model import Conversation, Message, ToolCall
from ctxview.pipeline import prepare
from ctxview.view import Settings

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


@pytest.mark.parametrize("shape", ["openai", "anthropic"])
def test_each_image_sent_as_text_is_listed_on_stderr(shape):
    out = run("prepare", str(IMAGE), "--shape", shape)
    assert out.returncode == 0, out.stderr
    lines = out.stderr.splitlines()
    assert lines == [
        "ctxview: changed: #0 (user): [image: image/png, 66 bytes] is sent as that text, not as the image "
        "(the file's image data is not kept)",
        "ctxview: changed: #2 (tool): [image: image/png, 66 bytes] is sent as that text, not as the image "
        "(the file's image data is not kept)",
    ]
    body = json.loads(out.stdout)
    from test_export_sdk import validator   # the official SDK's request type, strict

    validator(shape).validate_python(body)


def test_the_stats_count_the_images_sent_as_text():
    conv = load_session(IMAGE).conversations[0]
    view = prepare(conv, Settings())
    assert [(k, role) for k, role, _ in images_as_text(view.prepared)] == [(0, "user"), (2, "tool")]
    assert export_stats(view, "anthropic")["not_exported"]["images_as_text"] == 2
    out = run("prepare", str(IMAGE), "--stats")
    assert "not exported: 2 images (or files) sent as their placeholder text" in out.stderr


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
