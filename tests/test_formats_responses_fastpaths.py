"""The Responses builder's (and the Codex loader's) fast paths give what the simple rules give.

ResponsesBuilder names each tool result after its call as it comes (no pass of
link_tool_results afterwards); the readers take `type(x) is dict` before a
Mapping check. Each must equal the simple rule: link_tool_results over the
same messages, and the Mapping path for a mapping that is not a dict.
"""

from __future__ import annotations

import re
from pathlib import Path
from types import MappingProxyType

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxview.formats import load_session
from ctxview.formats.parsing.blocks import openai_parts_text
from ctxview.formats.parsing.builders import arguments_from, openai_usage
from ctxview.formats.parsing.linking import link_tool_results
from ctxview.formats.responses import ResponsesBuilder, output_text

ROOT = Path(__file__).resolve().parent.parent
ROLLOUTS = [ROOT / "tests" / "fixtures" / "samples" / "codex" / "agentlogs-crud.jsonl",
            *sorted((ROOT / "sample_sessions" / "codex").glob("*.jsonl"))]

ids = st.sampled_from(["c1", "c2", "c3", "", None, 7])
names = st.sampled_from(["shell", "apply_patch", "", None])
items = st.one_of(
    st.builds(lambda i, n: {"type": "function_call", "call_id": i, "name": n, "arguments": "{}"}, ids, names),
    st.builds(lambda i, n: {"type": "custom_tool_call", "call_id": i, "name": n, "input": "x"}, ids, names),
    st.builds(lambda i: {"type": "local_shell_call", "id": i, "action": {"command": ["ls"]}}, ids),
    st.builds(lambda i, t: {"type": t, "call_id": i, "output": "ok"}, ids,
              st.sampled_from(["function_call_output", "custom_tool_call_output", "local_shell_call_output"])),
    st.builds(lambda r: {"type": "message", "role": r, "content": [{"type": "input_text", "text": "hi"}]},
              st.sampled_from(["user", "assistant", "developer"])),
    st.just({"type": "reasoning", "summary": [{"type": "summary_text", "text": "hmm"}]}),
)


def unnamed(messages):
    return [m.replace(tool_name=None) if m.role == "tool" else m for m in messages]


@settings(max_examples=300, deadline=None)
@given(st.lists(items, max_size=14))
def test_the_builder_names_tool_results_as_link_tool_results_does(seq):
    b = ResponsesBuilder()
    for k, item in enumerate(seq):
        b.item(item, f"line {k}")
    b.flush()
    assert link_tool_results(unnamed(b.messages)) == (b.messages, b.unlinked)


def test_the_bundled_rollouts_load_with_their_tool_results_named_as_link_tool_results_does():
    for path in ROLLOUTS:
        conv = load_session(path).conversations[0]
        linked, unlinked = link_tool_results(unnamed(conv.messages))
        assert linked == list(conv.messages), path
        warned = [w for w in load_session(path).warnings if "tool result" in w]
        assert unlinked == (int(re.search(r"(\d+) tool result", warned[0]).group(1)) if warned else 0)


json_values = st.recursive(st.none() | st.booleans() | st.integers(-2**63, 2**63 - 1) | st.text(max_size=6),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                                       max_size=3), max_leaves=6)


@settings(max_examples=200, deadline=None)
@given(value=json_values)
def test_a_mapping_that_is_not_a_dict_reads_as_the_dict_does(value):
    # the `type(x) is dict` fast paths and the Mapping checks behind them agree
    proxy = MappingProxyType(value) if isinstance(value, dict) else value
    assert dict(arguments_from(proxy)) == arguments_from(value)
    assert openai_usage(proxy) == openai_usage(value)
    if not isinstance(value, dict) or "content" in value:  # (other objects are dumped as JSON: dicts only)
        assert output_text(proxy) == output_text(value)
    parts = [MappingProxyType(v) if isinstance(v, dict) else v for v in value] if isinstance(value, list) else value
    assert openai_parts_text(parts) == openai_parts_text(value)


def test_an_openai_responses_document_is_linked_by_its_builder_alone(tmp_path):
    # openai.load runs link_tool_results only for Chat Completions: a Responses document's results
    # are named as the builder makes them, and its unlinked count gives the same warning
    import orjson

    doc = {"input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]},
                     {"type": "function_call", "call_id": "c1", "name": "shell", "arguments": "{}"},
                     {"type": "function_call_output", "call_id": "c1", "output": "ok"},
                     {"type": "function_call_output", "call_id": "nowhere", "output": "lost"}]}
    path = tmp_path / "r.json"
    path.write_bytes(orjson.dumps(doc))
    session = load_session(path, format="openai")
    messages = session.conversations[0].messages
    linked, unlinked = link_tool_results(messages)
    assert all(a is b for a, b in zip(linked, messages)) and unlinked == 1
    assert [m.tool_name for m in messages if m.role == "tool"] == ["shell", None]
    assert "main: 1 tool result names a call the file does not hold" in session.warnings
    sample = load_session(ROOT / "sample_sessions" / "openai-responses.json").conversations[0].messages
    assert all(a is b for a, b in zip(link_tool_results(sample)[0], sample))
