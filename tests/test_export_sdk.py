"""Every export of every bundled sample and session fixture, validated against the official SDKs.

The request types are the SDKs' own TypedDicts (anthropic's
MessageCreateParamsNonStreaming, openai's CompletionCreateParamsNonStreaming),
validated with pydantic. Two things pydantic does not do for them by default
are switched on in their core schema: extra keys are forbidden (a TypedDict
ignores them otherwise) and `Iterable[...]` fields are read as lists (pydantic
validates them lazily, as generators, otherwise: the messages would never be
checked). The Anthropic rules the types do not encode are checked by
`anthropic_problems`; the OpenAI tool-call pairing by `openai_problems`.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

# The SDKs are imported by the first test that validates (seconds of pydantic models): every
# test worker collects this module, and only the one that runs its tests pays for them.
if not all(importlib.util.find_spec(name) for name in ("pydantic", "anthropic", "openai")):
    pytest.skip("the test extra's SDKs are not installed", allow_module_level=True)

from pydantic_core import SchemaValidator, ValidationError  # noqa: E402

from ctxview.export.bodies import DEFAULT_MAX_TOKENS, recorded_max_tokens, to_shape  # noqa: E402
from ctxview.formats import LoadError, load_session  # noqa: E402
from ctxview.model import Content, Conversation, Message, ToolCall  # noqa: E402
from ctxview.pipeline import PipelineCache, prepare  # noqa: E402
from ctxview.engine.view import ClearSettings, Settings  # noqa: E402

ROOT = Path(__file__).parents[1]
SAMPLE_DIRS = (ROOT / "sample_sessions", ROOT / "ctxview" / "samples", ROOT / "tests" / "fixtures")
NOT_SESSIONS = ROOT / "tests" / "fixtures" / "parity"   # parity cases for the engine, not session files
EXPECTED = ROOT / "tests" / "fixtures" / "expected"     # figures tests compare against, not session files


def _strict(node: Any) -> None:
    if isinstance(node, dict):
        kind = node.get("type")
        if kind in ("typed-dict", "model-fields", "dataclass-args"):
            node["extra_behavior"] = "forbid"
        elif kind == "generator":
            node["type"] = "list"   # (same keys: items_schema, min_length, max_length)
        for value in node.values():
            _strict(value)
    elif isinstance(node, list):
        for value in node:
            _strict(value)


@functools.cache
def validator(shape: str, strict: bool = True) -> SchemaValidator:
    import pydantic
    from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
    from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming

    kind = MessageCreateParamsNonStreaming if shape == "anthropic" else CompletionCreateParamsNonStreaming
    schema = pydantic.TypeAdapter(kind).core_schema   # a fresh adapter's own dict: changing it touches nothing else
    if strict:
        _strict(schema)
    return SchemaValidator(schema)


def anthropic_problems(body: dict[str, Any]) -> list[str]:
    """The Messages API's rules on the turns that its types do not encode."""
    out: list[str] = []
    turns = body["messages"]
    if not turns:
        return ["no messages"]
    if turns[0]["role"] != "user":
        out.append(f"first message is {turns[0]['role']!r}, not 'user'")
    if "system" in body and not str(body["system"]).strip():
        out.append("empty system")
    for k, turn in enumerate(turns):
        blocks = turn["content"]
        where = f"messages[{k}]"
        if k and turn["role"] == turns[k - 1]["role"]:
            out.append(f"{where}: second {turn['role']!r} turn in a row")
        if not blocks:
            out.append(f"{where}: no content")
        kinds = [b["type"] for b in blocks]
        for b in blocks:
            if b["type"] == "text" and not b["text"].strip():
                out.append(f"{where}: empty text block")
        if "tool_result" in kinds and kinds.index("tool_result") > 0 and kinds[0] != "tool_result":
            out.append(f"{where}: text before its tool_result blocks")
        n_results = kinds.count("tool_result")
        if kinds[:n_results] != ["tool_result"] * n_results:
            out.append(f"{where}: tool_result blocks not all first")
        if turn["role"] == "user":
            results = [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"]
            asked = ([b["id"] for b in turns[k - 1]["content"] if b["type"] == "tool_use"] if k else [])
            if [r for r in results if r not in asked]:
                out.append(f"{where}: tool_result for a tool_use not in the previous message")
        else:
            uses = [b["id"] for b in blocks if b["type"] == "tool_use"]
            if any(not u for u in uses):
                out.append(f"{where}: tool_use without an id")
            answered = ([b["tool_use_id"] for b in turns[k + 1]["content"] if b["type"] == "tool_result"]
                        if k + 1 < len(turns) else [])
            if [u for u in uses if u not in answered]:
                out.append(f"{where}: tool_use not answered by a tool_result in the next message")
    return out


def openai_problems(body: dict[str, Any]) -> list[str]:
    """Every assistant tool call answered by a tool message before the next other message, and back."""
    out: list[str] = []
    msgs = body["messages"]
    k = 0
    while k < len(msgs):
        msg = msgs[k]
        if msg["role"] == "tool":
            out.append(f"messages[{k}]: tool message without the call before it")
        calls = [c["id"] for c in msg.get("tool_calls") or ()]
        k += 1
        answers = []
        while k < len(msgs) and msgs[k]["role"] == "tool":
            answers.append(msgs[k]["tool_call_id"])
            k += 1
        if sorted(calls) != sorted(answers):
            out.append(f"messages[{k - 1 - len(answers)}]: tool calls {calls} answered by {answers}")
    return out


def session_files() -> list[Path]:
    return sorted(p for d in SAMPLE_DIRS for p in d.rglob("*")
                  if p.is_file() and NOT_SESSIONS not in p.parents and EXPECTED not in p.parents)


# (name, settings for a conversation whose as-sent view is given; None: not for this one)
GRID: list[tuple[str, Callable[[Any], Settings | None]]] = [
    ("as sent", lambda sent: Settings()),
    ("tiers=default", lambda sent: Settings(tiers="default")),
    ("tiers=swarm-auto", lambda sent: Settings(tiers="swarm-auto")),
    ("budget", lambda sent: Settings(keep_recent=3, budget=max(1, sent.tokens_prepared // 3))),
    ("clearing", lambda sent: Settings(clear=ClearSettings(keep=2))),
    ("old_messages=remove", lambda sent: Settings(old_messages="remove", keep_recent=4)),
    ("a middle request", lambda sent: Settings(request=sent.requests[len(sent.requests) // 2])
     if sent.requests else None),
]


def test_every_file_under_the_sample_folders_loads():
    # so that a sample which stops loading fails here instead of dropping out of the grid
    files = session_files()
    assert len(files) >= 20
    for path in files:
        load_session(path)
    with pytest.raises(LoadError):
        load_session(NOT_SESSIONS / "parity_cases.json")


@pytest.mark.parametrize("path", session_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_export_is_a_valid_request(path):
    session = load_session(path)
    checked = 0
    problems: list[str] = []
    for conv in session.conversations:
        if not conv.messages:  # (a Gemini CLI file of notes alone: nothing to send; prepare refuses it)
            continue
        cache = PipelineCache()
        sent = prepare(conv, Settings(), cache=cache)
        max_tokens = recorded_max_tokens(conv.metadata, session.metadata) or DEFAULT_MAX_TOKENS
        for name, make in GRID:
            settings = make(sent)
            if settings is None:
                continue
            view = prepare(conv, settings, cache=cache)
            for shape in ("openai", "anthropic"):
                body = to_shape(view, shape, conv.model or "test-model", max_tokens=max_tokens)
                where = f"{conv.name} / {name} / {shape}"
                try:
                    validator(shape).validate_python(body)
                except ValidationError as exc:
                    problems.append(f"{where}: {str(exc)[:2000]}")
                check = anthropic_problems if shape == "anthropic" else openai_problems
                problems.extend(f"{where}: {p}" for p in check(body))
                checked += 1
    assert not problems, "\n".join(problems[:20])
    assert checked >= 10 or not any(c.messages for c in session.conversations)


def demo_body(shape: str) -> dict[str, Any]:
    session = load_session(ROOT / "sample_sessions" / "anthropic-request.json")
    conv = session.conversations[0]
    return to_shape(prepare(conv, Settings(tiers="default")), shape, conv.model)


@pytest.mark.parametrize("shape", ["openai", "anthropic"])
def test_an_extra_key_fails_validation(shape):
    body = demo_body(shape)
    validator(shape).validate_python(body)
    top = {**body, "ctxview": {"tokens_prepared": 1}}
    nested = {**body, "messages": [{**body["messages"][1], "source": "line 3"}, *body["messages"][2:]]}
    for bad in (top, nested):
        validator(shape, strict=False).validate_python(bad)   # what the SDK types alone let through
        with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
            validator(shape).validate_python(bad)


def test_an_extra_key_in_a_block_fails_validation():
    body = demo_body("anthropic")
    turn = body["messages"][2]
    assert turn["content"][0]["type"] == "tool_result"
    bad_block = {**turn["content"][0], "tokens": 12}
    bad = {**body, "messages": [*body["messages"][:2], {**turn, "content": [bad_block, *turn["content"][1:]]},
                                *body["messages"][3:]]}
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        validator("anthropic").validate_python(bad)


def test_the_validators_check_the_messages_themselves():
    # pydantic reads Iterable fields lazily unless told otherwise: a wrong role must fail here
    body = demo_body("anthropic")
    with pytest.raises(ValidationError):
        validator("anthropic").validate_python({**body, "messages": [{"role": "tool", "content": "x"}]})
    with pytest.raises(ValidationError):
        validator("anthropic").validate_python({k: v for k, v in body.items() if k != "max_tokens"})
    oa = demo_body("openai")
    with pytest.raises(ValidationError):
        validator("openai").validate_python({**oa, "messages": [{"role": "tool", "content": "x"}]})  # no call id


def test_the_checkers_find_what_they_check():
    body = demo_body("anthropic")
    assert anthropic_problems(body) == []
    turns = body["messages"]
    assert anthropic_problems({**body, "messages": turns[1:]})[0] == "first message is 'assistant', not 'user'"
    flipped = {**turns[2], "content": [{"type": "text", "text": "hi"}, *turns[2]["content"]]}
    assert "messages[2]: text before its tool_result blocks" in anthropic_problems(
        {**body, "messages": [*turns[:2], flipped, *turns[3:]]})
    assert "messages[1]: tool_use not answered by a tool_result in the next message" in anthropic_problems(
        {**body, "messages": [turns[0], turns[1], {"role": "user", "content": [{"type": "text", "text": "x"}]}]})
    assert "messages[1]: second 'user' turn in a row" in anthropic_problems(
        {**body, "messages": [turns[0], turns[0]]})
    oa = demo_body("openai")
    assert openai_problems(oa) == []
    no_result = [m for m in oa["messages"] if m["role"] != "tool"]
    assert openai_problems({**oa, "messages": no_result})


# --- any conversation -----------------------------------------------------------------------

SIGNED = {"type": "thinking", "thinking": "plan", "signature": "sig"}


@st.composite
def conversations(draw) -> Conversation:
    """User first, then any mix: texts (some blank), tool calls answered, late, or not at all,
    system notes, errors, recorded or unsigned thinking, attachments."""
    msgs = [Message("user", draw(st.sampled_from(["start", "start <system-reminder>r</system-reminder>"])))]
    k = 0
    for _ in range(draw(st.integers(0, 16))):
        kind = draw(st.sampled_from(["user", "assistant", "calls", "system", "blank"]))
        if kind == "calls":
            ids = [f"c{k}_{j}" for j in range(draw(st.integers(1, 3)))]
            k += 1
            meta = {"thinking_blocks": [SIGNED]} if draw(st.booleans()) else {}
            msgs.append(Message("assistant", draw(st.sampled_from(["", "doing it"])), meta=meta,
                                thinking=draw(st.sampled_from([None, "hmm"])),
                                tool_calls=tuple(ToolCall(i, "Read", {"file_path": f"/{i}"}) for i in ids)))
            if draw(st.booleans()):
                msgs.append(Message("user", "<system-reminder>between</system-reminder>"))
            for i in ids:
                if draw(st.integers(0, 5)):   # sometimes a result is missing (an interrupted call)
                    msgs.append(Message("tool", "r" * draw(st.integers(0, 300)), tool_call_id=i,
                                        meta={"is_error": True} if draw(st.booleans()) else {}))
        elif kind == "blank":
            msgs.append(Message(draw(st.sampled_from(["user", "assistant"])), draw(st.sampled_from(["", " \n"]))))
        elif kind == "user" and draw(st.booleans()):
            msgs.append(Message("user", Content("see image", ("img",))))
        else:
            msgs.append(Message(kind, kind[0] * draw(st.integers(1, 200))))
    return Conversation("c", tuple(msgs), system_prompt=draw(st.sampled_from([None, "", "sys"])), model="m")


@hsettings(max_examples=150, deadline=None)
@given(conversations(), st.integers(0, 6), st.sampled_from([None, 5, 40, 200]), st.sampled_from(["off", "default"]),
       st.sampled_from([None, 0, 2]), st.sampled_from(["keep", "truncate", "remove", "llm"]),
       st.sampled_from(["openai", "anthropic"]))
def test_any_conversation_exports_a_valid_request(conv, keep_recent, budget, tiers, clear, old, shape):
    view = prepare(conv, Settings(keep_recent=keep_recent, budget=budget, tiers=tiers, old_messages=old,
                                  clear=None if clear is None else ClearSettings(keep=clear), counter="chars4"))
    body = to_shape(view, shape, "m")
    validator(shape).validate_python(body)
    problems = anthropic_problems(body) if shape == "anthropic" else openai_problems(body)
    if shape == "anthropic" and body["messages"] == []:
        # nothing to send: a budget with keep_recent=0 dropped every message (no API takes an
        # empty list; the checker says so), or what is left is blank
        assert problems == ["no messages"]
        assert all(not m.text.strip() and not m.tool_calls for m in view.prepared if m.role != "system")
        return
    assert problems == []
