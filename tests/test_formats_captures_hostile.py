"""Hostile input for the request captures (claude_tap.py, context_lens.py, har.py): truncated files,
wrong types, huge bodies and terminal escapes give a Session or one clear LoadError line, never a
traceback, and escapes never reach the terminal raw."""

from __future__ import annotations

import base64
import copy
import json
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxview.formats import LoadError, load_session
from ctxview.formats.sent_requests import message_key
from ctxview.model import Session, request_indices

CAPTURES = Path(__file__).parent / "fixtures" / "captures"
TAP, BUNDLE = CAPTURES / "claude-tap.jsonl", CAPTURES / "claude-tap.ctap.json"
LHAR, LHAR_JSON, HAR = CAPTURES / "context-lens.lhar", CAPTURES / "context-lens.lhar.json", CAPTURES / "anthropic.har"
ESC = "\x1b]0;PWNED\x07\x1b[2J\x9b31m"


def lines(p: Path) -> list[dict]:
    return [json.loads(x) for x in p.read_text().splitlines()]


def write_lines(tmp_path, records, name="t.jsonl") -> Path:
    p = tmp_path / name
    p.write_text("".join(json.dumps(r) + "\n" for r in records))
    return p


def write_doc(tmp_path, doc, name="t.json") -> Path:
    p = tmp_path / name
    p.write_text(json.dumps(doc))
    return p


def error(p: Path, fmt: str | None = None, lenient: bool = False) -> str:
    with pytest.raises(LoadError) as err:
        load_session(p, format=fmt, lenient=lenient)
    text = str(err.value)
    assert "\n" not in text and text.startswith(str(p))
    return text


# --- truncated -----------------------------------------------------------------------------

@pytest.mark.parametrize("src,fmt", [(TAP, "claude-tap"), (LHAR, "context-lens")])
def test_a_jsonl_capture_cut_short_is_a_last_line_still_being_written(tmp_path, src, fmt):
    data = src.read_bytes()
    cut = data[:data.index(b"\n", len(data) // 2) + 41]  # a few records, then 40 bytes of the next
    p = tmp_path / "cut.jsonl"
    p.write_bytes(cut)
    s = load_session(p)  # (as every JSONL loader reads a live file: the half line is left out, and said)
    n = cut.count(b"\n") + 1
    assert s.format == fmt and s.warnings[0] == f"last line still being written (line {n}, 40 bytes): left out"


@pytest.mark.parametrize("src,fmt", [(TAP, "claude-tap"), (LHAR, "context-lens")])
def test_a_broken_line_inside_a_jsonl_capture_is_named_and_lenient_skips_it(tmp_path, src, fmt):
    rows = src.read_bytes().splitlines(keepends=True)
    rows[4] = rows[4][: len(rows[4]) // 2] + b"\n"
    p = tmp_path / "broken.jsonl"
    p.write_bytes(b"".join(rows))
    msg = error(p)
    assert msg.startswith(f"{p}:5:") and "invalid JSON" in msg and "--lenient" in msg
    s = load_session(p, lenient=True)
    assert s.format == fmt and s.skipped == 1 and s.conversations


@pytest.mark.parametrize("src", [BUNDLE, LHAR_JSON, HAR])
def test_a_truncated_json_capture_is_invalid_json_at_its_line_and_column(tmp_path, src):
    p = tmp_path / src.name
    p.write_bytes(src.read_bytes()[: src.stat().st_size * 2 // 3])
    msg = error(p)
    assert "invalid JSON" in msg or "unexpected end" in msg or "EOF" in msg, msg


# --- wrong types ---------------------------------------------------------------------------

def test_claude_tap_wrong_types(tmp_path):
    recs = lines(TAP)
    bad = copy.deepcopy(recs)
    bad[2]["request"]["body"]["messages"] = "hello"
    p = write_lines(tmp_path, bad)
    assert error(p) == (f"{p}:3: request.body: expected a Messages API body with a \"messages\" list "
                        "(claude-tap trace expected)")
    bad = copy.deepcopy(recs)
    bad[2]["request"] = ["POST"]
    p = write_lines(tmp_path, bad)
    assert error(p) == f"{p}:3: expected a claude-tap record: an object with a \"request\" object (claude-tap trace expected)"
    bad = copy.deepcopy(recs)
    bad[2]["request"]["body"]["messages"][0] = 7
    p = write_lines(tmp_path, bad)
    assert error(p) == f"{p}:3: line 3: /request/body/messages/0: expected a message object with a role (claude-tap trace expected)"


def test_claude_tap_a_body_kept_as_text_and_a_reply_only_in_its_events(tmp_path):
    recs = lines(TAP)
    recs[2]["request"]["body"] = json.dumps(json.dumps(recs[2]["request"]["body"]))  # serialised twice
    recs[2]["response"]["body"] = None  # only the stored stream events say what came back
    recs[3]["response"]["body"]["content"][0] = {"type": "tool_use", "id": "toolu_x", "name": "Bash", "input": {},
                                                 "_partial_json": "{\"command\": \"ls\"}"}  # cut before its stop
    s = load_session(write_lines(tmp_path, recs))
    main = s.conversations[0]
    r1, r2 = (main.messages[i] for i in request_indices(main.messages)[:2])
    assert r1.id == "msg_01Main" and r1.tool_calls[0].arguments == {"file_path": "parser.py"}
    assert r1.usage.output_tokens == 61
    assert r2.tool_calls[0].arguments == {"command": "ls"}


def test_claude_tap_bundle_wrong_types(tmp_path):
    doc = json.loads(BUNDLE.read_text())
    bad = copy.deepcopy(doc)
    bad["__claude_tap_compact_trace__"]["version"] = 2
    p = write_doc(tmp_path, bad)
    assert error(p) == f"{p}: compact trace bundle version 2 (ctxview reads version 1) (claude-tap trace expected)"
    bad = copy.deepcopy(doc)
    bad["blobs"] = {}
    p = write_doc(tmp_path, bad)
    assert f"{p}: records[0] /request/body/tools: blob sha256:" in error(p) and "is not in the bundle's \"blobs\"" in error(p)
    bad = copy.deepcopy(doc)
    bad["records"] = {"a": 1}
    p = write_doc(tmp_path, bad)
    assert error(p) == (f"{p}: a compact trace bundle must hold a \"records\" list and a \"blobs\" object "
                        "(claude-tap trace expected)")
    bad = copy.deepcopy(doc)
    compact = next(r for r in bad["records"] if "__claude_tap_compact_record__" in r)
    compact["__claude_tap_compact_record__"]["refs"][0]["path"] = "/a" * 40
    p = write_doc(tmp_path, bad)
    assert "is deeper than 8 steps" in error(p)
    for step in ("²", "9" * 4400):  # a list index str.isdigit() takes and int() refuses: left as it is
        bad = copy.deepcopy(doc)
        compact = next(r for r in bad["records"] if "__claude_tap_compact_record__" in r)
        compact["__claude_tap_compact_record__"]["refs"] = [{"path": f"/request/body/messages/{step}"}]
        assert load_session(write_doc(tmp_path, bad)).conversations


def test_claude_tap_json_export_wrong_types(tmp_path):
    items = json.loads((CAPTURES / "claude-tap.export.json").read_text())
    items[2]["messages"] = {"role": "user"}
    p = write_doc(tmp_path, items)
    assert error(p) == (f"{p}: records[2].request.body: expected a Messages API body with a \"messages\" list "
                        "(claude-tap trace expected)")
    items[2] = "turn"
    p = write_doc(tmp_path, items)
    assert error(p, "claude-tap") == (f"{p}: records[2]: expected a claude-tap record: an object with a \"request\" "
                                      "object (claude-tap trace expected)")


def test_context_lens_wrong_types_and_bodies_not_recorded(tmp_path):
    recs = lines(LHAR)
    bad = copy.deepcopy(recs)
    bad[3]["raw"] = [1]
    p = write_lines(tmp_path, bad)
    assert error(p) == (f"{p}:4: expected an LHAR entry with \"http\" and \"raw\" objects "
                        "(context-lens LHAR file expected)")
    # what context-lens writes below --privacy=full: no bodies at all
    bare = [r if r["type"] == "session" else {**r, "raw": {"request_body": None, "response_body": None}} for r in recs]
    p = write_lines(tmp_path, bare)
    assert error(p) == (f"{p}: no /v1/messages request with a response (count_tokens ×1, no request body "
                        "(context-lens records bodies only at --privacy=full) ×5, status 529 ×1) "
                        "(context-lens LHAR file expected)")
    doc = json.loads(LHAR_JSON.read_text())
    doc["lhar"]["entries"] = {"0": 1}
    p = write_doc(tmp_path, doc)
    assert error(p, "context-lens") == f"{p}: lhar.entries: expected a list (context-lens LHAR file expected)"


def test_context_lens_other_apis_are_skipped_and_said(tmp_path):
    recs = lines(LHAR)
    recs[2]["http"]["api_format"] = "openai-chat"
    s = load_session(write_lines(tmp_path, recs))
    assert s.metadata["skipped_pairs"]["api_format openai-chat"] == 1 and len(s.conversations) == 2


def test_har_wrong_types(tmp_path):
    doc = json.loads(HAR.read_text())
    bad = copy.deepcopy(doc)
    bad["log"]["entries"][2]["request"]["postData"]["text"] = "{\"model\": \"x\", \"messages\": \"hi\"}"
    p = write_doc(tmp_path, bad, "t.har")
    assert error(p) == (f"{p}: log.entries[2].request.postData.text: expected a Messages API body with a "
                        "\"messages\" list (HAR (HTTP Archive) file expected)")
    bad = copy.deepcopy(doc)
    bad["log"]["entries"][2]["request"]["postData"]["text"] = "not json {"
    p = write_doc(tmp_path, bad, "t.har")
    assert "log.entries[2].request.postData.text: expected a Messages API body" in error(p)
    bad = copy.deepcopy(doc)
    bad["log"]["entries"][4]["response"]["content"]["text"] = "%%% not base64"
    p = write_doc(tmp_path, bad, "t.har")
    assert error(p) == (f"{p}: log.entries[4].response.content.text: \"encoding\" says base64, but the text is "
                        "not base64 (HAR (HTTP Archive) file expected)")
    bad = copy.deepcopy(doc)
    bad["log"]["entries"][1] = "entry"
    p = write_doc(tmp_path, bad, "t.har")
    assert error(p) == f"{p}: log.entries[1]: expected a HAR entry with a \"request\" object (HAR (HTTP Archive) file expected)"
    p = write_doc(tmp_path, {"log": {"version": "1.2", "entries": "x"}}, "t.har")
    assert error(p, "har") == (f"{p}: expected a HAR document: {{\"log\": {{\"version\", \"entries\": [...]}}}} "
                               "(HAR (HTTP Archive) file expected)")


def test_har_entries_without_bodies_or_with_a_broken_reply_are_skipped_and_said(tmp_path):
    doc = json.loads(HAR.read_text())
    del doc["log"]["entries"][3]["request"]["postData"]              # a browser that left the body out
    doc["log"]["entries"][6]["response"]["content"]["text"] = '{"id": "msg_03Main", "cont'  # cut short
    s = load_session(write_doc(tmp_path, doc, "t.har"))
    assert s.metadata["skipped_pairs"]["no request body recorded (postData.text)"] == 1
    assert s.metadata["skipped_pairs"]["response holds no message"] == 1


# --- huge bodies ---------------------------------------------------------------------------

def test_a_huge_tool_result_in_each_capture_loads_whole(tmp_path):
    big = "x" * 4_000_000
    har = json.loads(HAR.read_text())
    body = json.loads(har["log"]["entries"][3]["request"]["postData"]["text"])
    body["messages"][2]["content"][0]["content"] = big
    har["log"]["entries"][3]["request"]["postData"]["text"] = json.dumps(body)
    tap = lines(TAP)
    tap[3]["request"]["body"]["messages"][2]["content"][0]["content"] = big
    lhar = lines(LHAR)
    lhar[4]["raw"]["request_body"]["messages"][2]["content"][0]["content"] = big
    for p in (write_doc(tmp_path, har, "t.har"), write_lines(tmp_path, tap, "tap.jsonl"),
              write_lines(tmp_path, lhar, "t.lhar")):
        main = load_session(p).conversations[0]
        assert main.messages[2].text == big, p


# --- escapes -------------------------------------------------------------------------------

def run(*args):
    return subprocess.run([sys.executable, "-m", "ctxview", *args], capture_output=True, text=True, timeout=120)


def test_escapes_in_a_har_never_reach_the_terminal_raw(tmp_path):
    doc = json.loads(HAR.read_text())
    body = json.loads(doc["log"]["entries"][6]["request"]["postData"]["text"])
    body["messages"][-1]["content"].append({"type": "text", "text": "note " + ESC})
    doc["log"]["entries"][6]["request"]["postData"]["text"] = json.dumps(body)
    # a skip reason names the method: the warning shows it, made visible
    doc["log"]["entries"][0]["request"].update(method=ESC, url="https://api.anthropic.com/v1/messages")
    p = write_doc(tmp_path, doc, "t.har")
    out = run("report", str(p))
    assert out.returncode == 0, out.stderr
    assert "(␛]0;PWNED␇␛[2J<U+009B>31m request ×1, no response (orphaned) ×1" in out.stdout
    out2 = run("prepare", str(p))
    assert out2.returncode == 0 and '"note \\u001b]0;PWNED\\u0007' in out2.stdout
    assert not any(c in out.stdout + out.stderr + out2.stdout + out2.stderr for c in "\x1b\x07\x9b")


def test_escapes_in_an_error_never_reach_the_terminal_raw(tmp_path):
    doc = json.loads(BUNDLE.read_text())
    for rec in doc["records"]:
        for ref in rec.get("__claude_tap_compact_record__", {}).get("refs", []):
            rec["record"]["request"]["body"]["tools"] = {"__claude_tap_blob_ref__": {"version": 1, "kind": "json",
                                                                                     "hash": ESC}}
            ref["path"] = "/request/body/tools"
    p = write_doc(tmp_path, doc, "t.ctap.json")
    out = run("report", str(p))
    assert out.returncode == 1 and "Traceback" not in out.stderr and "is not in the bundle" in out.stderr
    assert not any(c in out.stderr for c in "\x1b\x07\x9b")


# --- mutations -----------------------------------------------------------------------------

KEYS = ["request", "response", "body", "messages", "content", "role", "raw", "http", "log", "entries", "postData",
        "text", "status", "status_code", "sse_events", "request_body", "response_body", "records", "blobs", "path",
        "refs", "type", "method", "url", "api_format", "encoding", "usage"]
scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 10 ** 6), st.text(max_size=8),
                    st.sampled_from(["POST", "entry", "session", "/v1/messages", "base64", "user", "assistant"]))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(st.sampled_from(KEYS), inner, max_size=4)),
                      max_leaves=12)


def mutate(value, choices, replacement):
    if not choices or not isinstance(value, (dict, list)) or not value:
        return replacement
    keys = list(value) if isinstance(value, dict) else list(range(len(value)))
    k = keys[choices[0] % len(keys)]
    out = dict(value) if isinstance(value, dict) else list(value)
    out[k] = mutate(value[k], choices[1:], replacement)
    return out


def check(p: Path, fmt: str | None) -> None:
    try:
        s = load_session(p, format=fmt)
    except LoadError as err:
        assert "\n" not in str(err)
        return
    assert isinstance(s, Session)


SOURCES = {"claude-tap": (TAP, True), "context-lens": (LHAR, True), "claude-tap-bundle": (BUNDLE, False),
           "claude-tap-export": (CAPTURES / "claude-tap.export.json", False),
           "lhar-json": (LHAR_JSON, False), "har": (HAR, False)}
FORMAT_OF = {"claude-tap-bundle": "claude-tap", "claude-tap-export": "claude-tap", "lhar-json": "context-lens"}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(which=st.sampled_from(sorted(SOURCES)), choices=st.lists(st.integers(0, 40), max_size=7), replacement=values)
def test_mutated_captures_load_or_fail_in_one_line(tmp_path, which, choices, replacement):
    src, jsonl = SOURCES[which]
    fmt = FORMAT_OF.get(which, which)
    p = tmp_path / "m"
    if jsonl:
        recs = mutate(lines(src), choices, replacement)
        p.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in (recs if isinstance(recs, list) else [recs])))
    else:
        p.write_bytes(orjson.dumps(mutate(json.loads(src.read_text()), choices, replacement)))
    check(p, fmt)
    check(p, None)


def test_a_base64_reply_of_the_fixture_is_decoded():
    doc = json.loads(HAR.read_text())
    content = doc["log"]["entries"][4]["response"]["content"]
    assert content["encoding"] == "base64" and b"msg_01Agent" in base64.b64decode(content["text"])
    agent = load_session(HAR).conversations[2]
    assert agent.messages[-1].id == "msg_01Agent" and agent.messages[-1].text == "parser.py line 2 slices tokens[:-1]."


def test_claude_tap_capture_only_replies_are_said_and_carry_no_usage(tmp_path):
    recs = lines(TAP)
    for r in recs:  # what claude-tap's capture-only mode (its prompt export) answers in place of the API
        if r["request"]["path"].startswith("/v1/messages?"):
            r["response"] = {"status": 200, "headers": {"Content-Type": "application/json"}, "body": {
                "id": "msg_claude_tap_capture", "type": "message", "role": "assistant",
                "model": r["request"]["body"]["model"], "content": [{"type": "text", "text": "captured"}],
                "stop_reason": "end_turn", "usage": {"input_tokens": 0, "output_tokens": 0}}}
    s = load_session(write_lines(tmp_path, recs))
    assert s.warnings[0] == ("6 repl(ies) made up by claude-tap's capture-only mode (msg_claude_tap_capture): the "
                             "request bodies are real, those replies and their usage are not")
    replies = [m for c in s.conversations for m in c.messages if m.origin.endswith(": response")]
    assert len(replies) == 6 and all(m.text == "captured" and m.usage is None for m in replies)


def test_claude_tap_an_early_bundle_without_refs_has_its_references_found_where_they_stand(tmp_path):
    doc = json.loads(BUNDLE.read_text())
    for rec in doc["records"]:
        if "__claude_tap_compact_record__" in rec:
            rec["__claude_tap_compact_record__"] = {"version": 1}  # as claude-tap's viewer tests write them
    # and a whole request as one blob, as those tests do
    rec = doc["records"][2]["record"] if "record" in doc["records"][2] else doc["records"][2]
    doc["blobs"]["hash_1"] = {"kind": "json", "payload": lines(TAP)[2]["request"]}
    rec["request"] = {"__claude_tap_blob_ref__": {"version": 1, "kind": "json", "hash": "hash_1"}}
    got = load_session(write_doc(tmp_path, doc))
    want = load_session(BUNDLE)
    assert [[message_key(m) for m in c.messages] for c in got.conversations] == \
        [[message_key(m) for m in c.messages] for c in want.conversations]


def test_context_lens_export_entry_of_the_wrong_type_names_its_place(tmp_path):
    doc = json.loads(LHAR_JSON.read_text())
    doc["lhar"]["entries"][1] = ["entry"]
    p = write_doc(tmp_path, doc)
    assert error(p) == f"{p}: lhar.entries[1]: expected an LHAR record (an object) (context-lens LHAR file expected)"
    doc["lhar"]["entries"][1] = {"type": "entry", "http": None, "raw": {}}
    p = write_doc(tmp_path, doc)
    assert error(p) == (f"{p}: lhar.entries[1]: expected an LHAR entry with \"http\" and \"raw\" objects "
                        "(context-lens LHAR file expected)")


def test_har_a_base64_post_body_is_decoded(tmp_path):
    doc = json.loads(HAR.read_text())
    post = doc["log"]["entries"][2]["request"]["postData"]
    post.update(text=base64.b64encode(post["text"].encode()).decode(), encoding="base64")
    got = load_session(write_doc(tmp_path, doc, "t.har"))
    assert [[m.text for m in c.messages] for c in got.conversations] == \
        [[m.text for m in c.messages] for c in load_session(HAR).conversations]
    post["text"] = "@@"
    p = write_doc(tmp_path, doc, "t.har")
    assert error(p) == (f"{p}: log.entries[2].request.postData.text: \"encoding\" says base64, but the text is not "
                        "base64 (HAR (HTTP Archive) file expected)")
    post["text"] = base64.b64encode(b"\xff\xfe{").decode()
    p = write_doc(tmp_path, doc, "t.har")
    assert error(p) == (f"{p}: log.entries[2].request.postData.text: the body is not UTF-8 text "
                        "(HAR (HTTP Archive) file expected)")


def test_bedrock_and_vertex_routes_are_messages_requests_and_a_binary_reply_is_skipped(tmp_path):
    recs = lines(TAP)
    # Claude Code on Bedrock through claude-tap: the model in the path, anthropic_version in the body
    for r in recs[1:]:
        if r["request"]["path"].startswith("/v1/messages?"):
            r["request"]["path"] = "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke"
            body = r["request"]["body"]
            body.pop("model")
            body["anthropic_version"] = "bedrock-2023-05-31"
    s = load_session(write_lines(tmp_path, recs))
    assert [c.name for c in s.conversations] == ["main", "line-2", "line-5"]
    assert s.conversations[0].model == "claude-sonnet-4-5-20250929"  # (from the replies)
    doc = json.loads(HAR.read_text())
    for e in doc["log"]["entries"]:
        e["request"]["url"] = e["request"]["url"].replace(
            "https://api.anthropic.com/v1/messages",
            "https://us-east5-aiplatform.googleapis.com/v1/projects/p/locations/us-east5/publishers/anthropic/"
            "models/claude-sonnet-4-5@20250929:streamRawPredict")
    vertex = load_session(write_doc(tmp_path, doc, "v.har"))
    assert vertex.metadata["requests"] == 5
    # a reply the HAR holds as binary (base64 of an AWS event stream): skipped, said
    doc["log"]["entries"][2]["response"]["content"].update(
        text=base64.b64encode(b"\x00\x00\x01\x0b\xff\xfe:event-type").decode(), encoding="base64")
    s = load_session(write_doc(tmp_path, doc, "b.har"))
    assert s.metadata["skipped_pairs"]["binary response (not JSON or SSE text: an AWS event stream?)"] == 1
