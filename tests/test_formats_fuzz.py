"""Whatever the bytes, a loader returns a Session or raises LoadError: nothing else."""

from __future__ import annotations

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxview.formats import FORMATS, LoadError, load_session
from ctxview.model import Session

# JSON values shaped like the formats' own records, so the fuzz reaches past the first checks.
KEYS = ["type", "role", "content", "message", "uuid", "parentUuid", "payload", "agent", "timestamp", "tool_calls",
        "tool_call_id", "id", "name", "arguments", "input", "text", "tool_use_id", "isSidechain", "isMeta",
        "subtype", "compactMetadata", "usage", "messages", "agents", "conversation", "format", "conversations",
        "loglines", "call_id", "output", "summary", "replacement_history", "result", "system", "ephemeral",
        "settings", "events", "index", "kind", "logicalParentUuid", "agentId", "metadata", "info", "thinking"]
VALUES = ["user", "assistant", "tool", "system", "tool_use", "tool_result", "text", "thinking", "image",
          "response_item", "event_msg", "compacted", "session_meta", "message", "function_call",
          "function_call_output", "token_count", "agent_step", "tool_result", "user_prompt", "ctxview",
          "compact_boundary", "u1", "u2", "t1", "base64"]

scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 10 ** 6), st.sampled_from(VALUES),
                    st.text(max_size=8))
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.sampled_from(KEYS), inner, max_size=6)),
    max_leaves=30,
)


def check(path, fmt):
    try:
        s = load_session(path, format=fmt)
    except LoadError as err:
        assert "\n" not in str(err)
        return
    assert isinstance(s, Session)
    for conv in s.conversations:
        for m in conv.messages:
            assert isinstance(m.role, str)
            assert m.content is None or isinstance(m.content, str) or hasattr(m.content, "text")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=json_values, fmt=st.sampled_from([None, *FORMATS]))
def test_any_json_document(tmp_path, doc, fmt):
    p = tmp_path / "doc.json"
    p.write_bytes(orjson.dumps(doc))
    check(p, fmt)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(json_values, min_size=1, max_size=6), fmt=st.sampled_from([None, *FORMATS]),
       lenient=st.booleans())
def test_any_json_lines(tmp_path, lines, fmt, lenient):
    p = tmp_path / "lines.jsonl"
    p.write_bytes(b"".join(orjson.dumps(v) + b"\n" for v in lines))
    try:
        s = load_session(p, format=fmt, lenient=lenient)
    except LoadError:
        return
    assert isinstance(s, Session)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=200), fmt=st.sampled_from([None, *FORMATS]))
def test_any_bytes(tmp_path, data, fmt):
    p = tmp_path / "bytes.bin"
    p.write_bytes(data)
    check(p, fmt)


# Real records with one value replaced somewhere deep inside: the fuzz reaches every branch.
from pathlib import Path  # noqa: E402

FIX = Path(__file__).parent / "fixtures" / "samples"
SAMPLES = Path(__file__).parent.parent / "sample_sessions"
SOURCES = {
    "claude-code": [orjson.loads(x) for x in (FIX / "claude-code" / "spotter-short.jsonl").read_bytes().splitlines()],
    "codex": [orjson.loads(x) for x in (FIX / "codex" / "agentlogs-crud.jsonl").read_bytes().splitlines()][:30],
    "swarm-events": [orjson.loads(x) for x in (SAMPLES / "swarm-demo.events.jsonl").read_bytes().splitlines()][:40],
}
DOCS = {
    "openai": orjson.loads((SAMPLES / "openai-chat.json").read_bytes())[:12],
    "anthropic": orjson.loads((SAMPLES / "anthropic-request.json").read_bytes()),
    "swarm-snapshot": {"version": "2.1.0", "metadata": {"id": "m"}, "agents": {"lead": {
        "system_prompt": "S", "context_state": {"compression_applied": None},
        "conversation": orjson.loads((SAMPLES / "openai-chat.json").read_bytes())[1:6]}},
        "delegation_instances": {"b@lead": {"conversation": [{"role": "user", "content": {"text": "t",
                                                                                          "attachments": []}}]}}},
    "claude-code": {"loglines": orjson.loads((FIX / "claude-code" / "claude-code-transcripts-web.json").read_bytes())[
        "loglines"][:8]},
    "ctxview": {"format": "ctxview", "conversations": [{"name": "c", "messages": [
        {"role": "assistant", "content": "x", "tool_calls": [{"id": "1", "name": "Read", "arguments": {}}],
         "usage": {"input_tokens": 1}}, {"role": "tool", "content": {"text": "t", "attachments": []},
                                         "tool_call_id": "1"}], "ephemeral": {"0": ["r"]}, "settings": {}}]},
}


def mutate(value, path_choices, replacement):
    """Replace the value at a path picked by `path_choices` (a list of ints) with `replacement`."""
    if not path_choices or not isinstance(value, (dict, list)) or not value:
        return replacement
    keys = list(value.keys()) if isinstance(value, dict) else list(range(len(value)))
    k = keys[path_choices[0] % len(keys)]
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[k] = mutate(value[k], path_choices[1:], replacement)
    return copy


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(fmt=st.sampled_from(sorted(SOURCES)), line=st.integers(0, 100), path=st.lists(st.integers(0, 50), max_size=6),
       replacement=json_values)
def test_mutated_real_lines(tmp_path, fmt, line, path, replacement):
    records = list(SOURCES[fmt])
    i = line % len(records)
    records[i] = mutate(records[i], path, replacement)
    p = tmp_path / "m.jsonl"
    p.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    check(p, fmt)
    check(p, None)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(fmt=st.sampled_from(sorted(DOCS)), path=st.lists(st.integers(0, 50), max_size=7), replacement=json_values)
def test_mutated_real_documents(tmp_path, fmt, path, replacement):
    p = tmp_path / "m.json"
    p.write_bytes(orjson.dumps(mutate(DOCS[fmt], path, replacement)))
    check(p, fmt)
    check(p, None)
