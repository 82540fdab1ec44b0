"""SwarmSDK snapshots and event logs."""

from __future__ import annotations

import orjson
import pytest

from ctxview.formats import LoadError, load_session
from ctxview.model import Content


def dump(tmp_path, obj, name="s.json"):
    p = tmp_path / name
    p.write_bytes(orjson.dumps(obj, option=orjson.OPT_INDENT_2))
    return p


def snapshot(version="2.1.0"):
    return {
        "version": version, "type": "swarm", "snapshot_at": "2026-01-01T00:00:00Z", "swarm_sdk_version": "2.5.0",
        "metadata": {"id": "main", "parent_id": None, "first_message_sent": True},
        "agents": {
            "lead": {"system_prompt": "LEAD", "context_state": {"compression_applied": True,
                                                                 "warning_thresholds_hit": [60]},
                     "conversation": [
                         {"role": "user", "content": {"text": "look at this", "attachments": [
                             {"source": "/tmp/a.png", "mime_type": "image/png", "data": "A" * 5000}]}},
                         {"role": "assistant", "content": "", "model_id": "gpt-5", "input_tokens": 100,
                          "output_tokens": 20, "tool_calls": [{"id": "c1", "name": "Read", "arguments": {"file": "x"}}]},
                         {"role": "tool", "content": "     1\u2192x", "tool_call_id": "c1"},
                         {"role": "assistant", "content": None}]},
            "backend": {"system_prompt": None, "context_state": {}, "conversation": []},
        },
        "delegation_instances": {
            "backend@lead": {"system_prompt": "BACK", "context_state": {"compression_applied": None},
                             "conversation": [{"role": "user", "content": "task"}]}},
    }


def test_snapshot_agents_then_delegation_instances(tmp_path):
    s = load_session(dump(tmp_path, snapshot()))
    assert s.format == "swarm-snapshot"
    assert [c.name for c in s.conversations] == ["lead", "backend", "backend@lead"]
    lead = s.conversations[0]
    assert lead.system_prompt == "LEAD" and lead.compression_applied is True
    assert lead.metadata["warning_thresholds_hit"] == [60]
    first = lead.messages[0]
    assert isinstance(first.content, Content) and first.content.text == "look at this"
    assert first.content.attachments[0]["data"].startswith("[data: image/png")
    a = lead.messages[1]
    assert (a.usage.input_tokens, a.usage.output_tokens, a.model_id) == (100, 20, "gpt-5")
    assert lead.messages[2].tool_name == "Read"
    assert lead.messages[3].content is None
    assert lead.messages[2].origin == "/agents/lead/conversation/2"
    assert s.conversations[2].messages[0].origin == "/delegation_instances/backend@lead/conversation/0"
    assert s.metadata["version"] == "2.1.0" and s.metadata["swarm_id"] == "main"


def test_snapshot_version_1(tmp_path):
    doc = snapshot("1.0.0")
    doc["swarm"] = doc.pop("metadata")
    s = load_session(dump(tmp_path, doc))
    assert s.format == "swarm-snapshot" and s.metadata["swarm_id"] == "main"


def test_snapshot_bad_message_names_the_pointer(tmp_path):
    doc = snapshot()
    doc["agents"]["lead"]["conversation"][1]["tool_calls"] = ["oops"]
    with pytest.raises(LoadError) as exc:
        load_session(dump(tmp_path, doc))
    assert "/agents/lead/conversation/1/tool_calls/0" in str(exc.value)
    assert exc.value.expected == "SwarmSDK snapshot"


def events():
    ev = [
        {"type": "swarm_start", "timestamp": "2026-01-01T00:00:00Z", "agent": "lead", "lead_agent": "lead",
         "swarm_id": "main", "swarm_name": "Team"},
        {"type": "agent_start", "timestamp": "2026-01-01T00:00:01Z", "agent": "backend@lead", "swarm_id": "main",
         "system_prompt": "BACK", "model": "m", "is_delegation_instance": True},
        {"type": "agent_start", "timestamp": "2026-01-01T00:00:01Z", "agent": "lead", "swarm_id": "main",
         "system_prompt": "LEAD", "model": "m"},
        {"type": "user_prompt", "timestamp": "2026-01-01T00:00:02Z", "agent": "lead", "swarm_id": "main",
         "metadata": {"prompt": "build it"}},
        {"type": "agent_step", "timestamp": "2026-01-01T00:00:03Z", "agent": "lead", "swarm_id": "main",
         "content": "delegating", "tool_calls": [{"id": "d1", "name": "WorkWithBackend", "arguments": {"t": 1}}],
         "usage": {"input_tokens": 50, "output_tokens": 5, "context_limit": 200000}},
        {"type": "user_prompt", "timestamp": "2026-01-01T00:00:04Z", "agent": "backend@lead", "swarm_id": "main",
         "metadata": {"prompt": "t"}, "source": "delegation"},
        {"type": "agent_stop", "timestamp": "2026-01-01T00:00:05Z", "agent": "backend@lead", "swarm_id": "main",
         "content": "done", "usage": {"input_tokens": 9, "output_tokens": 1}},
        {"type": "context_threshold_hit", "timestamp": "2026-01-01T00:00:05.500Z", "agent": "lead", "swarm_id": "main",
         "threshold": 60},
        {"type": "delegation_result", "timestamp": "2026-01-01T00:00:06Z", "agent": "lead", "swarm_id": "main",
         "delegate_from": "backend", "tool_call_id": "d1", "result": "done"},
        {"type": "compression_completed", "timestamp": "2026-01-01T00:00:07Z", "agent": "lead", "swarm_id": "main",
         "messages_compressed": 3},
        {"type": "agent_stop", "timestamp": "2026-01-01T00:00:08Z", "agent": "lead", "swarm_id": "main",
         "content": "all done", "usage": {"input_tokens": 70, "output_tokens": 4}},
    ]
    return ev


def test_event_log_rebuilds_conversations_per_agent(tmp_path):
    ev = events()
    shuffled = ev[::-1]  # sorted by timestamp, not file order
    s = load_session(dump(tmp_path, shuffled))
    assert s.format == "swarm-events"
    assert [c.name for c in s.conversations] == ["lead", "backend@lead"]
    lead = s.conversations[0]
    assert lead.system_prompt == "LEAD" and lead.context_window == 200000 and lead.compression_applied is True
    assert [(m.role, m.text) for m in lead.messages] == [("user", "build it"), ("assistant", "delegating"),
                                                         ("tool", "done"), ("assistant", "all done")]
    assert lead.messages[2].tool_name == "WorkWithBackend"
    assert [(e.kind, e.index) for e in lead.events] == [("threshold_hit", 2), ("compression", 3)]
    assert lead.messages[1].usage.input_tokens == 50
    back = s.conversations[1]
    assert back.system_prompt == "BACK" and [m.text for m in back.messages] == ["t", "done"]


def test_event_log_as_jsonl(tmp_path):
    p = tmp_path / "events.jsonl"
    p.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in events()))
    s = load_session(p)
    assert s.format == "swarm-events"
    assert s.conversations[0].messages[0].origin == "line 4"


def test_event_log_without_messages_is_an_error(tmp_path):
    with pytest.raises(LoadError, match="no agent messages"):
        load_session(dump(tmp_path, events()[:1]))
