"""Claude Code transcripts: the parent chain, merging, dedupe, side chains, compaction."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from ctxview.formats import load_session

FIX = Path(__file__).parent / "fixtures" / "samples" / "claude-code"


class Transcript:
    """Builds Claude Code records the way Claude Code writes them."""

    def __init__(self) -> None:
        self.lines: list[dict] = []
        self.n = 0
        self.last: str | None = None

    def _uuid(self) -> str:
        self.n += 1
        return f"00000000-0000-4000-8000-{self.n:012d}"

    def add(self, rec: dict, parent: str | None | bool = True) -> str:
        u = rec.get("uuid") or self._uuid()
        base = {"parentUuid": self.last if parent is True else parent, "isSidechain": False,
                "sessionId": "sess-1", "version": "2.1.0", "cwd": "/w", "uuid": u,
                "timestamp": f"2026-01-01T00:00:{self.n % 60:02d}Z"}
        self.lines.append({**base, **rec})
        self.last = u
        return u

    def user(self, content, parent=True, **extra) -> str:
        return self.add({"type": "user", "message": {"role": "user", "content": content}, **extra}, parent)

    def assistant(self, block: dict, mid: str, usage: dict | None = None, parent=True, **extra) -> str:
        msg = {"id": mid, "role": "assistant", "model": "claude-opus-4", "content": [block],
               "usage": usage or {"input_tokens": 5, "output_tokens": 7, "cache_read_input_tokens": 100,
                                  "cache_creation_input_tokens": 20}}
        return self.add({"type": "assistant", "message": msg, **extra}, parent)

    def result(self, tool_use_id: str, text, parent=True, **extra) -> str:
        return self.user([{"type": "tool_result", "tool_use_id": tool_use_id, "content": text}], parent, **extra)

    def write(self, path: Path) -> Path:
        path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in self.lines))
        return path


def texts(conv):
    return [(m.role, m.text) for m in conv.messages]


def test_lines_of_one_response_merge_and_usage_counts_once(tmp_path):
    t = Transcript()
    t.user("read both files")
    a1 = t.assistant({"type": "thinking", "thinking": "plan", "signature": "s"}, "msg_1")
    t.assistant({"type": "text", "text": "Reading."}, "msg_1")
    c1 = t.assistant({"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "a"}}, "msg_1")
    c2 = t.assistant({"type": "tool_use", "id": "t2", "name": "Grep", "input": {"pattern": "x"}}, "msg_1",
                     usage={"input_tokens": 5, "output_tokens": 90, "cache_read_input_tokens": 100,
                            "cache_creation_input_tokens": 20})
    # parallel results: each one's parent is the line of its own call
    t.result("t1", "     1\u2192a", parent=c1)
    r2 = t.result("t2", "Found 1 matches in 1 file", parent=c2)
    t.assistant({"type": "text", "text": "Done."}, "msg_2", parent=r2)
    conv = load_session(t.write(tmp_path / "s.jsonl")).conversations[0]
    assert [m.role for m in conv.messages] == ["user", "assistant", "tool", "tool", "assistant"]
    a = conv.messages[1]
    assert a.text == "Reading." and a.thinking == "plan"
    assert [c.id for c in a.tool_calls] == ["t1", "t2"]
    assert a.usage.output_tokens == 90 and a.usage.cache_read_tokens == 100 and a.usage.cache_write_tokens == 20
    assert a.id == "msg_1" and a.origin == "line 2"
    assert [(m.tool_call_id, m.tool_name) for m in conv.messages[2:4]] == [("t1", "Read"), ("t2", "Grep")]
    assert sum(m.usage.output_tokens for m in conv.messages if m.usage) == 90 + 7
    assert a1 not in {m.id for m in conv.messages}  # merged lines are one message, named by message.id


def test_the_chain_not_the_line_order_decides(tmp_path):
    t = Transcript()
    u1 = t.user("first question")
    a1 = t.assistant({"type": "text", "text": "first answer"}, "m1")
    t.user("abandoned follow-up")
    t.assistant({"type": "text", "text": "abandoned answer"}, "m2")
    t.user("edited follow-up", parent=a1)  # the user rewound and edited
    t.assistant({"type": "text", "text": "final answer"}, "m3")
    s = load_session(t.write(tmp_path / "s.jsonl"))
    assert texts(s.conversations[0]) == [("user", "first question"), ("assistant", "first answer"),
                                         ("user", "edited follow-up"), ("assistant", "final answer")]
    assert u1 == s.conversations[0].messages[0].id


def test_branch_keeps_parallel_results_and_later_lines_of_a_response(tmp_path):
    # A rewind forces the full chain walk; the walk must still keep results and
    # response lines that hang off the path as siblings (spotter-tool-heavy has this).
    t = Transcript()
    t.user("old")
    t.assistant({"type": "text", "text": "old answer"}, "m0")
    u = t.user("go", parent=None)
    u_old = t.lines[0]["uuid"]
    t.lines[2]["parentUuid"] = u_old  # "go" replaces the old answer: a branch at the first user line
    c1 = t.assistant({"type": "tool_use", "id": "t1", "name": "Read", "input": {}}, "m1", parent=u)
    c2 = t.assistant({"type": "tool_use", "id": "t2", "name": "Bash", "input": {}}, "m1", parent=c1)
    r2 = t.result("t2", "ok", parent=c2)
    r1 = t.result("t1", "text", parent=c1)
    t.assistant({"type": "text", "text": "end"}, "m2", parent=r1)
    conv = load_session(t.write(tmp_path / "s.jsonl")).conversations[0]
    assert [m.role for m in conv.messages] == ["user", "user", "assistant", "tool", "tool", "assistant"]
    assert [c.id for c in conv.messages[2].tool_calls] == ["t1", "t2"]
    assert {m.tool_call_id for m in conv.messages if m.role == "tool"} == {"t1", "t2"}
    assert all(m.tool_name for m in conv.messages if m.role == "tool")
    assert "old answer" not in [m.text for m in conv.messages]
    assert r2


def test_duplicate_uuids_from_a_resumed_session_are_dropped(tmp_path):
    t = Transcript()
    t.user("hello")
    t.assistant({"type": "text", "text": "hi"}, "m1")
    t.lines += [dict(r) for r in t.lines]  # the resumed session repeats them
    t.last = t.lines[-1]["uuid"]
    t.user("again")
    s = load_session(t.write(tmp_path / "s.jsonl"))
    assert texts(s.conversations[0]) == [("user", "hello"), ("assistant", "hi"), ("user", "again")]
    assert s.metadata["duplicates_dropped"] == 2


def test_unknown_record_types_are_skipped_and_counted(tmp_path):
    t = Transcript()
    t.user("hi")
    t.lines.append({"type": "future-thing", "payload": 1})
    t.lines.append({"type": "file-history-snapshot", "messageId": "x", "snapshot": {}})
    t.assistant({"type": "text", "text": "yo"}, "m1")
    s = load_session(t.write(tmp_path / "s.jsonl"))
    assert s.skipped == 1
    assert any("unknown type" in w and "future-thing" in w for w in s.warnings)
    assert len(s.conversations[0].messages) == 2


def test_meta_and_reminder_only_lines_are_injected(tmp_path):
    t = Transcript()
    t.user("Caveat: local command output follows", isMeta=True)
    t.user([{"type": "text", "text": "<system-reminder>todo list is empty</system-reminder>"}])
    t.user([{"type": "text", "text": "real question"},
            {"type": "text", "text": "<system-reminder>x</system-reminder>"}])
    t.assistant({"type": "text", "text": "answer"}, "m1")
    conv = load_session(t.write(tmp_path / "s.jsonl")).conversations[0]
    assert [m.injected for m in conv.messages] == [True, True, False, False]
    assert conv.messages[2].text == "real question\n<system-reminder>x</system-reminder>"


def test_images_and_binary_blocks_become_placeholders(tmp_path):
    png = "iVBORw0KGgo" + "A" * 65_000
    t = Transcript()
    t.user([{"type": "text", "text": "look"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}}])
    c = t.assistant({"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "x.pdf"}}, "m1")
    t.result("t1", [{"type": "text", "text": "page 1"},
                    {"type": "document", "source": {"type": "base64", "media_type": "application/pdf",
                                                    "data": "QUJD" * 1000}}], parent=c)
    conv = load_session(t.write(tmp_path / "s.jsonl")).conversations[0]
    assert conv.messages[0].text == "look\n[image: image/png, 47.6 KB]"
    assert conv.messages[2].text == "page 1\n[document: application/pdf, 2.9 KB]"
    assert png not in conv.messages[0].text


def test_tool_result_text_blocks_join_into_one_string(tmp_path):
    t = Transcript()
    t.user("q")
    c = t.assistant({"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}, "m1")
    t.result("t1", [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}], parent=c, )
    msg = load_session(t.write(tmp_path / "s.jsonl")).conversations[0].messages[2]
    assert msg.content == "a\nb" and isinstance(msg.content, str)


def test_compaction_boundary_becomes_an_event(tmp_path):
    t = Transcript()
    t.user("start")
    t.assistant({"type": "text", "text": "working"}, "m1")
    before = t.last
    b = t.add({"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
               "logicalParentUuid": before, "compactMetadata": {"trigger": "auto", "preTokens": 155_000}},
              parent=None)
    t.user("This session is being continued... Summary: did things", parent=b, isCompactSummary=True,
           isVisibleInTranscriptOnly=True)
    t.user("next task")
    t.assistant({"type": "text", "text": "ok"}, "m2")
    conv = load_session(t.write(tmp_path / "s.jsonl")).conversations[0]
    assert [m.text for m in conv.messages][:2] == ["start", "working"]
    (ev,) = conv.events
    assert (ev.kind, ev.index, ev.trigger, ev.tokens_before) == ("compaction", 2, "auto", 155_000)
    assert ev.summary.startswith("This session is being continued")
    assert [m.text for m in ev.replaced] == ["start", "working"]
    summary = conv.messages[2]
    assert summary.injected and summary.meta.get("compact_summary")
    assert ev.origin == "line 3"


def write_subagent_abc(tmp_path: Path) -> None:
    """sess-1's sub-agent file <tmp_path>/sess-1/subagents/agent-abc.jsonl: one task, one answer."""
    sub = Transcript()
    sub.user("sub task", isSidechain=True, agentId="abc")
    sub.assistant({"type": "text", "text": "sub answer"}, "s9", isSidechain=True, agentId="abc")
    (tmp_path / "sess-1" / "subagents").mkdir(parents=True)
    sub.write(tmp_path / "sess-1" / "subagents" / "agent-abc.jsonl")


def test_side_chains_and_subagent_files_are_their_own_conversations(tmp_path):
    t = Transcript()
    t.user("main q")
    t.assistant({"type": "tool_use", "id": "task1", "name": "Task", "input": {"prompt": "look"}}, "m1")
    main_last = t.last
    # an old-style side chain in the main file
    t.add({"type": "user", "isSidechain": True, "message": {"role": "user", "content": "look"}}, parent=None)
    t.add({"type": "assistant", "isSidechain": True,
           "message": {"id": "s1", "role": "assistant", "content": [{"type": "text", "text": "found it"}]}})
    t.result("task1", "found it", parent=main_last)
    t.assistant({"type": "text", "text": "main done"}, "m2")
    path = t.write(tmp_path / "sess-1.jsonl")
    write_subagent_abc(tmp_path)
    s = load_session(path)
    names = [c.name for c in s.conversations]
    assert names[0] == "main" and names[-1] == "agent-abc" and len(names) == 3
    assert names[1].startswith("sidechain")
    assert texts(s.conversations[0]) == [("user", "main q"), ("assistant", ""), ("tool", "found it"),
                                         ("assistant", "main done")]
    assert texts(s.conversations[1]) == [("user", "look"), ("assistant", "found it")]
    assert texts(s.conversations[2]) == [("user", "sub task"), ("assistant", "sub answer")]


def test_web_export_loglines(tmp_path):
    doc = {"loglines": [
        {"type": "user", "message": {"role": "user", "content": "hi"}},
        {"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": "x", "name": "Write", "input": {}}]}},
        {"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "x", "content": "ok"}]}},
    ]}
    p = tmp_path / "web.json"
    p.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2))
    s = load_session(p)
    assert s.format == "claude-code"
    assert [m.origin for m in s.conversations[0].messages] == ["/loglines/0", "/loglines/1", "/loglines/2"]
    assert s.conversations[0].messages[2].tool_name == "Write"


def test_metadata_holds_ids_times_and_version(tmp_path):
    t = Transcript()
    t.lines.append({"type": "summary", "summary": "Fix the build", "leafUuid": "x"})
    t.user("hi")
    t.assistant({"type": "text", "text": "yo"}, "m1")
    s = load_session(t.write(tmp_path / "s.jsonl"))
    m = s.metadata
    assert (m["title"], m["session_id"], m["cli_version"], m["cwd"]) == ("Fix the build", "sess-1", "2.1.0", "/w")
    assert m["started_at"] <= m["ended_at"]


# --- the real transcripts ------------------------------------------------------------------

REAL = sorted(FIX.glob("*.json*"))


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name)
def test_real_transcripts_load_with_every_result_linked(path):
    s = load_session(path)
    assert s.format == "claude-code"
    conv = s.conversations[0]
    assert conv.messages
    calls = {c.id: c.name for m in conv.messages for c in m.tool_calls}
    results = [m for m in conv.messages if m.role == "tool"]
    for r in results:
        assert r.tool_name == calls[r.tool_call_id]
    unanswered = set(calls) - {r.tool_call_id for r in results}
    if path.name == "claude-code-log-edge_cases.jsonl":
        # the file's own damage: one result line has "contenst", and the last call has no result
        assert unanswered == {"tool_edge_002", "toolu_todowrite_002"}
    else:
        assert not unanswered
    for m in conv.messages:
        assert m.origin and (m.origin.startswith("line ") or m.origin.startswith("/"))


def test_spotter_short_parallel_calls_and_rejection():
    conv = load_session(FIX / "spotter-short.jsonl").conversations[0]
    a = conv.messages[1]
    assert len(a.tool_calls) == 2 and a.thinking and a.usage.cache_write_tokens == 13835
    assert a.usage.input_tokens == 3
    # the response spans six lines, its usage counts once
    assert sum(1 for m in conv.messages if m.usage) == 1
    errors = [m for m in conv.messages if m.role == "tool" and m.meta.get("is_error")]
    assert len(errors) == 2
    assert any("doesn't want to proceed" in m.text for m in errors)


def test_spotter_tool_heavy_keeps_the_reminder_inside_a_read_result():
    conv = load_session(FIX / "spotter-tool-heavy.jsonl").conversations[0]
    reads = [m for m in conv.messages if m.tool_name == "Read"]
    assert any("<system-reminder>" in m.text for m in reads)
    assert len(conv.messages) == 17


def test_edge_cases_file_loads_with_warnings():
    s = load_session(FIX / "claude-code-log-edge_cases.jsonl")
    assert s.skipped == 6  # four non-object lines, two malformed records
    assert any("unknown type" in w for w in s.warnings)
    assert any("malformed" in w for w in s.warnings)
    assert s.metadata["duplicates_dropped"] == 0


def test_empty_and_broken_subagent_files(tmp_path):
    t = Transcript()
    t.user("q")
    t.assistant({"type": "text", "text": "a"}, "m1")
    path = t.write(tmp_path / "sess-1.jsonl")
    sub_dir = tmp_path / "sess-1" / "subagents"
    sub_dir.mkdir(parents=True)
    (sub_dir / "agent-empty.jsonl").write_bytes(b"")
    s = load_session(path)
    assert [c.name for c in s.conversations] == ["main"]
    assert any("agent-empty.jsonl: sub-agent file is empty" in w for w in s.warnings)
    (sub_dir / "agent-bad.jsonl").write_bytes(b'{"type":"user",\n{"x":1}\n')
    from ctxview.formats import LoadError

    with pytest.raises(LoadError) as exc:
        load_session(path)
    assert exc.value.path.endswith("agent-bad.jsonl") and exc.value.line == 1
    assert load_session(path, lenient=True).skipped == 2  # the broken line and the unknown record


def test_microcompact_boundary_names_the_cleared_results(tmp_path):
    t = Transcript()
    t.user("go")
    c1 = t.assistant({"type": "tool_use", "id": "t1", "name": "Read", "input": {}}, "m1")
    t.result("t1", "big file", parent=c1)
    c2 = t.assistant({"type": "tool_use", "id": "t2", "name": "Bash", "input": {}}, "m2")
    t.result("t2", "output", parent=c2)
    t.add({"type": "system", "subtype": "microcompact_boundary", "content": "Context microcompacted",
           "microcompactMetadata": {"trigger": "auto", "preTokens": 90000, "tokensSaved": 40000,
                                    "compactedToolIds": ["t1"], "clearedAttachmentUUIDs": []}})
    t.user("more")
    conv = load_session(t.write(tmp_path / "s.jsonl")).conversations[0]
    assert [m.text for m in conv.messages][-1] == "more" and len(conv.messages) == 6  # the chain goes on
    (ev,) = conv.events
    assert (ev.kind, ev.index, ev.trigger, ev.tokens_before) == ("microcompaction", 5, "auto", 90000)
    assert [m.tool_call_id for m in ev.replaced] == ["t1"]
    assert ev.meta["tokens_saved"] == 40000


# --- what the model really saw: unlinked files, usage-only files, sub-agents, thinking ----------

def _unlinked(t: Transcript) -> None:
    for r in t.lines:
        r["parentUuid"] = None


@pytest.mark.parametrize("drop_key", [False, True], ids=["null", "missing"])
def test_files_without_any_parent_link_are_read_in_file_order(tmp_path, drop_key):
    # isSidechain lines with no parent used to become one conversation per line
    t = Transcript()
    t.user("q1", isSidechain=True)
    t.assistant({"type": "tool_use", "id": "t1", "name": "Read", "input": {}}, "m1", isSidechain=True)
    t.result("t1", "body", isSidechain=True)
    t.assistant({"type": "text", "text": "a1"}, "m2", isSidechain=True)
    t.user("q2", isSidechain=True)
    t.assistant({"type": "text", "text": "a2"}, "m3", isSidechain=True)
    _unlinked(t)
    if drop_key:
        for r in t.lines:
            del r["parentUuid"]
    s = load_session(t.write(tmp_path / "s.jsonl"))
    assert [c.name for c in s.conversations] == ["sidechain"]
    assert texts(s.conversations[0]) == [("user", "q1"), ("assistant", ""), ("tool", "body"), ("assistant", "a1"),
                                         ("user", "q2"), ("assistant", "a2")]
    assert s.conversations[0].messages[2].tool_name == "Read" and not s.warnings


def test_unlinked_main_and_side_lines_keep_their_own_order(tmp_path):
    t = Transcript()
    t.user("main q")
    t.user("side q", isSidechain=True)
    t.assistant({"type": "text", "text": "side a"}, "s1", isSidechain=True)
    t.assistant({"type": "text", "text": "main a"}, "m1")
    t.user("agent q", isSidechain=True, agentId="b7")
    _unlinked(t)
    s = load_session(t.write(tmp_path / "s.jsonl"))
    assert [(c.name, texts(c)) for c in s.conversations] == [
        ("main", [("user", "main q"), ("assistant", "main a")]),
        ("sidechain", [("user", "side q"), ("assistant", "side a")]),
        ("agent-b7", [("user", "agent q")]),
    ]


def test_claude_code_log_fixture_without_links_loads_every_record():
    s = load_session(FIX / "claude-code-log-representative_messages.jsonl")
    lines = [orjson.loads(x) for x in (FIX / "claude-code-log-representative_messages.jsonl").read_bytes().splitlines()
             if x.strip()]
    assert not any(r.get("parentUuid") for r in lines)
    ids = [r["uuid"] for r in lines if r.get("type") in ("user", "assistant")]
    got = [m.id for m in s.conversations[0].messages]
    assert [i for i in ids if i in got] == [i for i in got if i in ids]  # file order
    assert len(s.conversations) == 1


def test_usage_only_lines_load_as_usage_only_requests(tmp_path):
    t = Transcript()
    for k, n in enumerate((120, 340)):
        t.add({"type": "assistant", "message": {"id": f"msg_{k}", "model": "claude-sonnet-4-5",
                                                 "usage": {"input_tokens": n, "output_tokens": 9,
                                                           "cache_read_input_tokens": 1000}}})
    s = load_session(t.write(tmp_path / "s.jsonl"))
    msgs = s.conversations[0].messages
    assert [(m.role, m.text, m.usage.input_tokens, m.usage.cache_read_tokens) for m in msgs] == [
        ("assistant", "", 120, 1000), ("assistant", "", 340, 1000)]
    assert any("usage records only" in w and "2 request" in w for w in s.warnings)


def test_ccusage_shaped_lines_without_a_type_are_claude_code_usage(tmp_path):
    # what ccusage reads: timestamp, message.usage (and model, id), costUSD, requestId; no "type"
    lines = [{"timestamp": "2026-01-02T10:00:00Z", "requestId": "req_1", "costUSD": 0.01, "sessionId": "s",
              "message": {"id": "msg_1", "model": "claude-opus-4", "usage": {"input_tokens": 10, "output_tokens": 5,
                                                                           "cache_creation_input_tokens": 7}}},
             {"timestamp": "2026-01-02T10:01:00Z",
              "message": {"usage": {"input_tokens": 11, "output_tokens": 6}}}]
    p = tmp_path / "usage.jsonl"
    p.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in lines))
    from ctxview.formats import detect_format

    assert detect_format(p) == "claude-code"
    s = load_session(p)
    msgs = s.conversations[0].messages
    assert [(m.usage.input_tokens, m.usage.cache_write_tokens, m.model_id) for m in msgs] == [
        (10, 7, "claude-opus-4"), (11, 0, None)]
    assert s.skipped == 0 and any("usage records only" in w for w in s.warnings)
    assert s.metadata["started_at"] == "2026-01-02T10:00:00Z"


def test_a_session_with_content_has_no_usage_only_warning():
    s = load_session(FIX / "spotter-short.jsonl")
    assert not any("usage records only" in w for w in s.warnings)


def test_thinking_blocks_are_kept_as_recorded_in_order(tmp_path):
    t = Transcript()
    t.user("think")
    t.assistant({"type": "thinking", "thinking": "first", "signature": "sig-1"}, "m1")
    t.assistant({"type": "redacted_thinking", "data": "opaque=="}, "m1")
    t.assistant({"type": "thinking", "thinking": "", "signature": "sig-3"}, "m1")
    t.assistant({"type": "text", "text": "answer"}, "m1")
    a = load_session(t.write(tmp_path / "s.jsonl")).conversations[0].messages[1]
    assert a.meta["thinking_blocks"] == (
        {"type": "thinking", "thinking": "first", "signature": "sig-1"},
        {"type": "redacted_thinking", "data": "opaque=="},
        {"type": "thinking", "thinking": "", "signature": "sig-3"},
    )
    assert a.thinking == "first\n\n[redacted thinking]" and a.text == "answer"
    plain = load_session(FIX / "spotter-short.jsonl").conversations[0]
    assert all(("thinking_blocks" in m.meta) == bool(m.thinking) for m in plain.messages)
    blocks = [b for m in plain.messages for b in m.meta.get("thinking_blocks", ())]
    assert blocks and all(b["type"] == "thinking" and b["signature"] for b in blocks)


def test_is_error_and_injected_lines(tmp_path):
    t = Transcript()
    t.user("<command-name>/clear</command-name>", isMeta=True)
    t.user("go")
    t.assistant({"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}, "m1")
    t.user([{"type": "tool_result", "tool_use_id": "t1", "content": "boom", "is_error": True}])
    t.assistant({"type": "tool_use", "id": "t2", "name": "Bash", "input": {}}, "m2")
    t.result("t2", "fine")
    msgs = load_session(t.write(tmp_path / "s.jsonl")).conversations[0].messages
    assert [m.injected for m in msgs if m.role == "user"] == [True, False]
    assert [m.meta.get("is_error") for m in msgs if m.role == "tool"] == [True, None]


# The real session with Task sub-agents (tests/fixtures/samples/claude-code/spotter-258c7280/)
SPOTTER = FIX / "spotter-258c7280" / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"


def test_subagent_files_have_one_name_a_label_and_their_task_call():
    s = load_session(SPOTTER)
    assert [c.name for c in s.conversations] == ["main", "agent-a881341", "agent-acompact-fffbd0"]
    main, sub, compact = s.conversations
    assert sub.metadata == {"kind": "subagent", "parent_tool_call_id": "toolu_01VmaERAwhb19LGUwu9GenaK",
                            "parent": "main", "label": "Research Claude hook output"}
    (task,) = [c for m in main.messages for c in m.tool_calls if c.id == sub.metadata["parent_tool_call_id"]]
    assert task.name == "Task" and task.arguments["subagent_type"] == "claude-code-guide"
    assert compact.metadata["kind"] == "compaction" and "compaction" in compact.metadata["label"]
    # opened alone, the sub-agent's file gives the same name
    alone = load_session(SPOTTER.with_suffix("") / "subagents" / "agent-a881341.jsonl")
    assert [c.name for c in alone.conversations] == ["agent-a881341"]
    assert texts(alone.conversations[0]) == texts(sub)
    # and its label and Task call, from the lines of the parent beside it that name them
    assert alone.conversations[0].metadata == sub.metadata


def test_a_subagent_file_alone_without_its_parent_has_no_task_call(tmp_path):
    sub_dir = tmp_path / "sess-9" / "subagents"
    sub_dir.mkdir(parents=True)
    src = SPOTTER.with_suffix("") / "subagents" / "agent-a881341.jsonl"
    (sub_dir / src.name).write_bytes(src.read_bytes())
    (conv,) = load_session(sub_dir / src.name).conversations
    assert conv.name == "agent-a881341" and conv.metadata == {"kind": "subagent"}


def test_without_its_file_a_subagent_is_rebuilt_from_agent_progress(tmp_path):
    whole = load_session(SPOTTER).conversation("agent-a881341")
    alone = tmp_path / SPOTTER.name
    alone.write_bytes(SPOTTER.read_bytes())  # the parent without its <session>/subagents/ folder
    s = load_session(alone)
    assert [c.name for c in s.conversations] == ["main", "agent-a881341"]
    sub = s.conversation("agent-a881341")
    assert sub.metadata["rebuilt_from"] == "agent_progress"
    assert sub.metadata["parent_tool_call_id"] == "toolu_01VmaERAwhb19LGUwu9GenaK"
    assert sub.metadata["label"] == "Research Claude hook output"
    assert [m.role for m in sub.messages] == [m.role for m in whole.messages]
    assert [[c.id for c in m.tool_calls] for m in sub.messages] == [[c.id for c in m.tool_calls] for m in whole.messages]
    # prompt, tool results and the final answer are the sub-agent's own; the progress lines left
    # out the text the model wrote before its tool calls
    for got, want in zip(sub.messages, whole.messages):
        if got.role != "assistant" or got is sub.messages[-1]:
            assert got.text == want.text
        assert got.tool_name == want.tool_name
    assert [m.origin for m in sub.messages] == ["line 1474", "line 1475", "line 1476", "line 1477", "line 1478",
                                                "line 1480"]
    last = sub.messages[-1]
    assert last.meta == {"rebuilt_from": "task_result"}
    assert (last.usage.input_tokens, last.usage.cache_read_tokens, last.usage.output_tokens) == (6, 22041, 997)
    assert [m.usage for m in sub.messages[1:-1:2]] == [m.usage for m in whole.messages[1:-1:2]]
    assert not s.warnings


def test_an_inline_side_chain_gives_way_to_the_agents_own_file(tmp_path):
    t = Transcript()
    t.user("q")
    t.add({"type": "user", "isSidechain": True, "agentId": "abc", "message": {"role": "user", "content": "partial"}})
    t.assistant({"type": "text", "text": "a"}, "m1")
    path = t.write(tmp_path / "sess-1.jsonl")
    write_subagent_abc(tmp_path)
    s = load_session(path)
    assert [c.name for c in s.conversations] == ["main", "agent-abc"]
    assert texts(s.conversations[1]) == [("user", "sub task"), ("assistant", "sub answer")]


def test_odd_agent_progress_lines_are_ignored_not_fatal(tmp_path):
    t = Transcript()
    t.user("q")
    for data in ({"type": "agent_progress", "agentId": ["a"], "message": {"type": "user"}},
                 {"type": "agent_progress", "agentId": "b1", "message": {"type": ["user"], "message": {}}},
                 {"type": "agent_progress", "agentId": "b2", "message": "text"},
                 {"type": "agent_progress", "agentId": "b3", "message": {"type": "user", "message": {"content": 5}}}):
        t.add({"type": "progress", "data": data, "parentToolUseID": ["x"]})
    t.assistant({"type": "text", "text": "a"}, "m1")
    s = load_session(t.write(tmp_path / "s.jsonl"))
    assert [c.name for c in s.conversations] == ["main"]  # nothing usable: no empty sub-agent either
