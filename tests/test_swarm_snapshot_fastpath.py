"""A big SwarmSDK snapshot read a piece at a time (swarm_snapshot.load_in_pieces) gives exactly
the session a whole parse gives; a file it cannot read so is parsed whole."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxview.formats import LoadError, load_session, swarm_snapshot
from ctxview.formats.parsing import json_pieces
from ctxview.formats.parsing.jsonio import open_input

SAMPLE = Path(__file__).resolve().parent.parent / "sample_sessions" / "swarm-demo.snapshot.json"


@pytest.fixture
def tiny_pieces(monkeypatch):
    """Every snapshot read in pieces of a few bytes: all of the piece path on small files."""
    monkeypatch.setattr(swarm_snapshot, "PIECES_ABOVE", 0)
    monkeypatch.setattr(json_pieces, "PIECE_BYTES", 16)


def both_ways(path: Path):
    inp = open_input(path)
    return swarm_snapshot.load_in_pieces(inp), swarm_snapshot.load(inp, "json")


def test_the_bundled_snapshot_reads_the_same_in_pieces(tmp_path, tiny_pieces):
    pieces, whole = both_ways(SAMPLE)
    assert pieces is not None and pieces == whole
    assert [m.origin for m in pieces.conversations[0].messages[:2]] == [
        m.origin for m in whole.conversations[0].messages[:2]]
    flat = tmp_path / "flat.json"  # the same without indentation
    flat.write_bytes(orjson.dumps(orjson.loads(SAMPLE.read_bytes())))
    pieces, whole = both_ways(flat)
    assert pieces is not None and pieces == whole


def _doc(convs: list[list[dict]], delegations: int, messages_key_at: int | None) -> dict:
    agents = {}
    for k, msgs in enumerate(convs):
        key = "messages" if k == messages_key_at else "conversation"
        agents[f"agent/{k}~"] = {key: msgs, "system_prompt": f"you are {k}",
                                 "context_state": {"compression_applied": k % 2 == 0}}
    doc = {"version": "2.1", "type": "swarm", "agents": agents, "metadata": {"id": "s", "name": "conversation"}}
    if delegations:
        doc["delegation_instances"] = {f"d@{k}": {"conversation": convs[0]} for k in range(delegations)}
    return doc


_text = st.sampled_from(["", "x", "}, {\"role\": \"user\"", '"conversation": [1]', "ü" * 40])
_message = st.one_of(
    st.builds(lambda t: {"role": "user", "content": t}, _text),
    st.builds(lambda t, i: {"role": "assistant", "content": t, "input_tokens": i, "model_id": "m",
                            "tool_calls": [{"id": f"c{i}", "name": "Read", "arguments": {"file_path": t}}]},
              _text, st.integers(0, 3)),
    st.builds(lambda t, i: {"role": "tool", "content": {"text": t, "attachments": []}, "tool_call_id": f"c{i}"},
              _text, st.integers(0, 3)))


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(_message, max_size=6), min_size=1, max_size=3), st.integers(0, 2),
       st.one_of(st.none(), st.integers(0, 2)), st.booleans(), st.integers(8, 200))
def test_pieces_property(tmp_path_factory, monkeypatch, convs, delegations, messages_key_at, indent, piece):
    monkeypatch.setattr(swarm_snapshot, "PIECES_ABOVE", 0)
    monkeypatch.setattr(json_pieces, "PIECE_BYTES", piece)
    path = tmp_path_factory.mktemp("snap") / "s.json"
    path.write_bytes(orjson.dumps(_doc(convs, delegations, messages_key_at),
                                  option=orjson.OPT_INDENT_2 if indent else 0))
    pieces, whole = both_ways(path)
    if pieces is not None:
        assert pieces == whole
        for a, b in zip(pieces.conversations, whole.conversations):
            assert [m.origin for m in a.messages] == [m.origin for m in b.messages]


def test_a_bad_message_is_named_by_the_whole_parse(tmp_path, tiny_pieces):
    path = tmp_path / "bad.json"
    path.write_bytes(orjson.dumps(_doc([[{"role": "user", "content": "a"}, {"content": "no role"}]], 0, None)))
    assert swarm_snapshot.load_in_pieces(open_input(path)) is None
    with pytest.raises(LoadError, match="/agents/agent~10~0/conversation/1: message has no role"):
        load_session(path)


def test_small_snapshots_are_parsed_whole(tmp_path):
    assert SAMPLE.stat().st_size < swarm_snapshot.PIECES_ABOVE
    assert swarm_snapshot.load_in_pieces(open_input(SAMPLE)) is None


def test_load_session_reads_big_snapshots_in_pieces(monkeypatch):
    monkeypatch.setattr(swarm_snapshot, "PIECES_ABOVE", 0)
    monkeypatch.setattr(json_pieces, "PIECE_BYTES", 4096)
    calls = []
    real = swarm_snapshot.swarm_message
    monkeypatch.setattr(swarm_snapshot, "swarm_message", lambda *a: (calls.append(a[1]), real(*a))[1])
    session = load_session(SAMPLE)
    assert calls and all(origin == "" for origin in calls)  # every message came from a piece
    assert session.format == "swarm-snapshot"
