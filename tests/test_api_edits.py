"""The Anthropic API's own context edits as what-ifs (api_edits.py): what each does on a worked
example computed by hand, the cached pipeline equal to the reference with them, their names on
screen, and the `context_management` block `prepare --shape anthropic` writes, validated against
the official SDK's beta request types."""

from __future__ import annotations

import dataclasses
import functools
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxview.cli import commands as cli
from ctxview.engine.api_edits import (
    beta_headers,
    compaction_point,
    context_management,
    parse_api_edit,
    plan_thinking_clearing,
)
from ctxview.engine.clearing import plan_clearing
from ctxview.export.bodies import body_for
from ctxview.formats import load_session
from ctxview.model import Conversation, Message, ToolCall
from ctxview.pipeline import PipelineCache, prepare, prepare_reference
from ctxview.settings import ClearSettings, CompactSettings, Settings, ThinkingClearSettings, settings_from
from ctxview.engine.tokens import CharsCounter, SwarmEstimate

from test_pipeline_reference import assert_same_view, conversations

ROOT = Path(__file__).resolve().parents[1]
ANTHROPIC_SAMPLE = ROOT / "sample_sessions" / "anthropic-request.json"
CHARS = CharsCounter()  # ceil(len / 4): the examples below are computed with it


def tool_turns(sizes: list[int], names: list[str] | None = None) -> list[Message]:
    """A user message of 40 chars (10 tokens), then per size an assistant call (no text) and its
    result of `size` chars."""
    out = [Message("user", "u" * 40)]
    for k, size in enumerate(sizes):
        name = names[k] if names else "Read"
        out.append(Message("assistant", "", tool_calls=(ToolCall(f"c{k}", name, {}),)))
        out.append(Message("tool", "r" * size, tool_call_id=f"c{k}", tool_name=name))
    return out


# --- clear_tool_uses_20250919 --------------------------------------------------------------------

def test_the_preset_has_the_api_defaults():
    field, value = parse_api_edit("clear_tool_uses_20250919")
    assert field == "clear"
    assert value == ClearSettings(keep=3, trigger=100_000, api=True)
    assert parse_api_edit("clear_thinking_20251015") == ("clear_thinking", ThinkingClearSettings(keep=1))
    assert parse_api_edit("compact_20260112") == ("compact", CompactSettings(trigger=150_000))


def test_clear_tool_uses_counts_the_whole_prompt_for_its_trigger():
    # 5 results of 400 chars: messages 10 + 5 * (100 + call "Read{}" 2 tokens) = 520 tokens
    msgs = tool_turns([400] * 5)
    counts = [CHARS.count_message(m) for m in msgs]
    assert sum(counts) == 520
    api = ClearSettings(keep=3, trigger=600, api=True)
    # with a system prompt and tools of 100 tokens the prompt is 620 > 600: the API clears
    cleared = plan_clearing(msgs, api, CHARS, base=100)
    # the results at 2 and 4 (all but the 3 most recent), each 100 tokens → the placeholder's 10
    placeholder = CHARS.count(api.placeholder)
    assert cleared.cleared == (2, 4)
    assert cleared.saved_tokens == 2 * (100 - placeholder)
    # ctxview's own clearing counts the messages alone: 520 ≤ 600, nothing cleared
    own = dataclasses.replace(api, api=False)
    assert plan_clearing(msgs, own, CHARS, base=100).cleared == ()
    # the prompt at the trigger is not over it (the API: "once the prompt exceeds this threshold")
    assert plan_clearing(msgs, api, CHARS, base=80).cleared == ()


def test_both_pipelines_count_the_system_prompt_for_the_api_trigger():
    # the example above in a conversation whose system prompt is 400 chars (100 tokens)
    conv = Conversation("main", tuple(tool_turns([400] * 5)), system_prompt="s" * 400)
    s = Settings(clear=ClearSettings(keep=3, trigger=600, api=True), counter="chars4")
    for view in (prepare(conv, s), prepare_reference(conv, s)):
        assert [r.index for r in view.rows if r.changes] == [2, 4]
    assert prepare(conv, dataclasses.replace(s, clear=ClearSettings(keep=3, trigger=600))).stats["cleared"] == 0


def test_clear_tool_uses_options_as_the_docs_say():
    msgs = tool_turns([400] * 5, names=["Read", "web_search", "Read", "Bash", "Read"])
    # exclude_tools: web_search's result (index 4) is never cleared, the rest of the old ones are
    got = plan_clearing(msgs, ClearSettings(keep=2, exclude=("web_search",), api=True), CHARS)
    assert got.cleared == (2, 6)
    # clear_at_least: clearing 2 results saves 2 * 90 = 180 tokens; asking for 181 clears nothing
    assert plan_clearing(msgs, ClearSettings(keep=2, exclude=("web_search",), min_saving=180, api=True),
                         CHARS).cleared == (2, 6)
    assert plan_clearing(msgs, ClearSettings(keep=2, exclude=("web_search",), min_saving=181, api=True),
                         CHARS).cleared == ()
    # clear_tool_inputs as a list: only the named tools' calls lose their inputs
    with_args = [m.replace(tool_calls=tuple(ToolCall(c.id, c.name, {"path": "a" * 40}) for c in m.tool_calls))
                 for m in msgs]
    got = plan_clearing(with_args, ClearSettings(keep=1, clear_inputs=("Bash",), api=True), CHARS)
    assert got.cleared == (2, 4, 6, 8)
    assert got.inputs_cleared == (7,)  # the Bash call
    assert got.messages[7].tool_calls[0].arguments == {}
    assert got.messages[1].tool_calls[0].arguments == {"path": "a" * 40}
    # trigger in tool uses: 5 results > 4 triggers, 5 ≤ 5 does not
    assert plan_clearing(msgs, ClearSettings(keep=3, trigger=4, trigger_unit="tool_uses", api=True),
                         CHARS).cleared == (2, 4)
    assert plan_clearing(msgs, ClearSettings(keep=3, trigger=5, trigger_unit="tool_uses", api=True),
                         CHARS).cleared == ()


# --- clear_thinking_20251015 ---------------------------------------------------------------------

def thinking_conversation() -> list[Message]:
    """Four assistant turns; turns 1, 2 and 4 have thinking, turn 2 is stored as two messages."""
    blocks = {"thinking_blocks": [{"type": "thinking", "thinking": "t", "signature": "sig"}]}
    return [
        Message("user", "go"),
        Message("assistant", "a1", thinking="think 1", meta=blocks),          # turn 1
        Message("user", "more"),
        Message("assistant", "", thinking="think 2a", tool_calls=(ToolCall("c1", "Read", {}),)),  # turn 2
        Message("assistant", "a2", thinking="think 2b"),                      # turn 2, a second line
        Message("user", "again"),
        Message("assistant", "a3"),                                           # turn 3: no thinking
        Message("user", "last"),
        Message("assistant", "a4", thinking="think 4"),                       # turn 4
    ]


def test_clear_thinking_keeps_the_last_turns_with_thinking():
    msgs = thinking_conversation()
    one = plan_thinking_clearing(msgs, 1)   # the API's default: the last turn's thinking only
    assert one.cleared == (1, 3, 4)
    assert [m.thinking for m in one.messages] == [None, None, None, None, None, None, None, None, "think 4"]
    assert "thinking_blocks" not in one.messages[1].meta
    assert one.messages[1].text == "a1" and one.messages[3].tool_calls == msgs[3].tool_calls
    # keep 2: turns 2 (both its messages) and 4 keep theirs; turn 3 has none and does not count
    assert plan_thinking_clearing(msgs, 2).cleared == (1,)
    assert plan_thinking_clearing(msgs, 3).cleared == ()
    assert plan_thinking_clearing(msgs, "all").cleared == ()


def test_clear_thinking_in_the_view_and_its_name():
    conv = Conversation("main", tuple(thinking_conversation()))
    s = Settings(clear_thinking=ThinkingClearSettings(keep=1))
    view = prepare(conv, s)
    assert view.stats["thinking_cleared"] == 3
    changed = {r.index: [c.action for c in r.changes] for r in view.rows if r.changes}
    assert changed == {1: ["thinking cleared"], 3: ["thinking cleared"], 4: ["thinking cleared"]}
    assert view.view_label == "what-if: API clear_thinking_20251015 (keep thinking: 1 turn)"


# --- compact_20260112 ----------------------------------------------------------------------------

def test_compaction_point_by_hand():
    # messages: u(30k) a(1k) t(25k) a(1k) t(30k) a(1k) u(5k); requests at 1, 3, 5 and the next (7)
    msgs = [Message(r) for r in ("user", "assistant", "tool", "assistant", "tool", "assistant", "user")]
    counts = [30_000, 1_000, 25_000, 1_000, 30_000, 1_000, 5_000]
    # base 2k, trigger 50k: request 1 sees 32k, request 3 58k ≥ 50k → compacted at 3; from there
    # request 5 sees 2k + 1k + 30k = 33k, the next 33k + 1k + 5k = 39k: the point stays 3
    assert compaction_point(msgs, counts, 2_000, 50_000) == 3
    # trigger 58k: request 3 reaches it exactly ("reaches": compacted at 3)
    assert compaction_point(msgs, counts, 2_000, 58_000) == 3
    # trigger 59k: request 3 (58k) does not, request 5 (2k + 87k = 89k) does
    assert compaction_point(msgs, counts, 2_000, 59_000) == 5
    # never reached: nothing compacted
    assert compaction_point(msgs, counts, 2_000, 200_000) == 0


def test_compaction_in_the_view_replaces_what_came_before_the_point():
    # chars4: u 10 tokens, results of 120,000 chars = 30,000 tokens each, calls 2 tokens
    msgs = tool_turns([120_000, 120_000, 400])
    conv = Conversation("main", tuple(msgs))
    # requests at 1 (10), 3 (10 + 2 + 30,000 + ... = 30,012), 5 (60,014 ≥ 50,000: compacted at 5)
    s = Settings(compact=CompactSettings(trigger=50_000), counter="chars4")
    view = prepare(conv, s)
    gone = [r.index for r in view.rows if r.changes and r.changes[-1].action == "summarised"]
    assert gone == [0, 1, 2, 3, 4]
    assert view.prepared[0].role != "tool" and "summary" in view.prepared[0].text.lower()
    assert view.prepared[1:] == tuple(msgs[5:])
    assert view.view_label == "what-if: API compact_20260112 (trigger 50,000 input tokens)"
    # below the trigger nothing happens
    assert prepare(conv, Settings(compact=CompactSettings(trigger=70_000), counter="chars4")).prepared == tuple(msgs)


def test_compact_settings_are_checked():
    assert "≥ 50,000" in Settings(compact=CompactSettings(trigger=49_999)).problems()[0]
    assert "use one of them" in Settings(compact=CompactSettings(), old_messages="llm").problems()[0]
    assert "clear_thinking.keep" in Settings(clear_thinking=ThinkingClearSettings(keep=0)).problems()[0]
    with pytest.raises(ValueError, match="unknown API edit"):
        parse_api_edit("clear_everything")
    with pytest.raises(ValueError, match="not key=value"):
        parse_api_edit("compact_20260112:keep=3")
    # from a session file's settings
    s = settings_from({"clear_thinking": {"keep": "all"}, "compact": {"trigger": 60_000, "instructions": "x"}})
    assert s.clear_thinking == ThinkingClearSettings("all") and s.compact == CompactSettings(60_000, "x")


# --- the cached pipeline equals the reference with the API's edits ------------------------------

@st.composite
def api_cases(draw):
    conv = draw(conversations())
    msgs = list(conv.messages)
    for i, m in enumerate(msgs):  # some thinking, some big results (for compaction's 50,000 minimum)
        if m.role == "assistant" and draw(st.booleans()):
            msgs[i] = m.replace(thinking=f"thought {i}")
        elif m.role == "tool" and draw(st.integers(0, 3)) == 0:
            msgs[i] = m.with_content("z" * draw(st.sampled_from([80_000, 160_000])))
    # a long system prompt at times: the API's triggers count it (8,500 chars, about 2,100 tokens)
    system = draw(st.sampled_from([conv.system_prompt, "You are careful. " * 500]))
    conv = dataclasses.replace(conv, messages=tuple(msgs), system_prompt=system)
    requests = [i for i, m in enumerate(msgs) if m.role == "assistant"]
    runs = []
    for _ in range(draw(st.integers(1, 4))):
        clear = draw(st.none() | st.builds(
            ClearSettings, keep=st.integers(0, 5), api=st.just(True),
            trigger=st.sampled_from([0, 2_000, 9_000, 60_000]), trigger_unit=st.sampled_from(["input_tokens", "tool_uses"]),
            clear_inputs=st.sampled_from([False, True, ("Read",)]), exclude=st.sampled_from([(), ("Bash",)]),
            min_saving=st.sampled_from([0, 500])))
        runs.append(Settings(
            keep_recent=draw(st.integers(0, 20)), tiers=draw(st.sampled_from(["off", "default"])),
            clear=clear, clear_thinking=draw(st.none() | st.builds(ThinkingClearSettings,
                                                                   st.sampled_from([1, 2, "all"]))),
            compact=draw(st.none() | st.builds(CompactSettings, st.sampled_from([50_000, 90_000]))),
            budget=draw(st.none() | st.integers(1_000, 200_000)),
            request=draw(st.none() | st.sampled_from(requests))))
    return conv, runs


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(api_cases(), st.sampled_from([SwarmEstimate(), CharsCounter()]))
def test_prepare_equals_the_reference_with_the_api_edits(case, counter):
    conv, runs = case
    cache = PipelineCache()
    wanted = [prepare_reference(conv, s, counter=counter) for s in runs]
    for s, want in zip(runs, wanted):
        assert_same_view(prepare(conv, s, counter=counter), want)
        assert_same_view(prepare(conv, s, counter=counter, cache=cache), want)
    for s, want in reversed(list(zip(runs, wanted))):
        assert_same_view(prepare(conv, s, counter=counter, cache=cache), want)


def test_the_sample_with_thinking_equals_the_reference():
    conv = load_session(ANTHROPIC_SAMPLE).conversations[0]
    cache = PipelineCache()
    for s in (Settings(clear_thinking=ThinkingClearSettings(1)), Settings(clear=parse_api_edit(
            "clear_tool_uses_20250919:trigger=1000,keep=2")[1], clear_thinking=ThinkingClearSettings(2)),
              Settings(compact=CompactSettings(50_000), tiers="default")):
        assert_same_view(prepare(conv, s, cache=cache), prepare_reference(conv, s))


# --- the request block ---------------------------------------------------------------------------

@functools.cache
def beta_validator():
    pydantic = pytest.importorskip("pydantic")
    from anthropic.types.beta.message_create_params import MessageCreateParamsNonStreaming
    from pydantic_core import SchemaValidator

    schema = pydantic.TypeAdapter(MessageCreateParamsNonStreaming).core_schema
    _strict(schema)
    return SchemaValidator(schema)


def _strict(node) -> None:
    """test_export_sdk._strict (extra keys forbidden, iterables read as lists), less the nodes that
    allow extra keys by a schema of their own (a tool's input_schema, in the beta types)."""
    if isinstance(node, dict):
        kind = node.get("type")
        if kind in ("typed-dict", "model-fields", "dataclass-args") and "extras_schema" not in node:
            node["extra_behavior"] = "forbid"
        elif kind == "generator":
            node["type"] = "list"
        for value in node.values():
            _strict(value)
    elif isinstance(node, list):
        for value in node:
            _strict(value)


EDIT_SETS = [
    ["clear_tool_uses_20250919"],
    ["clear_tool_uses_20250919:trigger=30000,keep=3,clear_at_least=5000,exclude_tools=web_search|Read,"
     "clear_tool_inputs=true"],
    ["clear_tool_uses_20250919:trigger_tool_uses=10,clear_tool_inputs=Bash|Edit"],
    ["clear_thinking_20251015:keep=all"],
    ["clear_thinking_20251015:keep=2", "clear_tool_uses_20250919:trigger=50000,keep=5"],
    ["compact_20260112"],
    ["compact_20260112:trigger=60000,instructions=Keep the file names, and the open bugs."],
]


@pytest.mark.parametrize("edits", EDIT_SETS, ids=lambda e: "+".join(x.split(":")[0] for x in e))
def test_the_block_validates_against_the_sdk_beta_types(edits):
    pytest.importorskip("anthropic")
    conv = load_session(ANTHROPIC_SAMPLE).conversations[0]
    s = Settings(**dict(parse_api_edit(e) for e in edits))
    body, betas, _ = body_for(conv, prepare(conv, s), "anthropic", "claude-opus-4-6", max_tokens=1024)
    beta_validator().validate_python(body)  # raises on a key or value the SDK's types do not take
    assert body["context_management"] == context_management(s)
    assert betas == beta_headers(s) and betas
    # the messages are those the client sends: prepared without the API's edits
    client, _, _ = body_for(conv, prepare(conv, Settings()), "anthropic", "claude-opus-4-6", max_tokens=1024)
    assert body["messages"] == client["messages"]


def test_the_block_holds_the_values_tried_in_the_api_order():
    s = Settings(**dict(parse_api_edit(e) for e in (
        "compact_20260112:trigger=80000", "clear_tool_uses_20250919:keep=4,clear_at_least=5000",
        "clear_thinking_20251015:keep=2")))
    assert context_management(s) == {"edits": [  # clear_thinking first, as the docs require
        {"type": "clear_thinking_20251015", "keep": {"type": "thinking_turns", "value": 2}},
        {"type": "clear_tool_uses_20250919", "trigger": {"type": "input_tokens", "value": 100_000},
         "keep": {"type": "tool_uses", "value": 4}, "clear_at_least": {"type": "input_tokens", "value": 5_000}},
        {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 80_000}}]}
    assert beta_headers(s) == ("context-management-2025-06-27", "compact-2026-01-12")
    # ctxview's own clearing is no API edit: no block
    assert context_management(Settings(clear=ClearSettings(keep=2))) is None


# --- the command line ----------------------------------------------------------------------------

def test_prepare_writes_the_block_and_names_the_header(capsys):
    code = cli.main(["prepare", str(ANTHROPIC_SAMPLE), "--shape", "anthropic",
                     "--api-edit", "clear_tool_uses_20250919:trigger=1000,keep=2", "--api-edit", "clear_thinking"])
    out, err = capsys.readouterr()
    assert code == 0
    body = json.loads(out)
    assert [e["type"] for e in body["context_management"]["edits"]] == ["clear_thinking_20251015",
                                                                       "clear_tool_uses_20250919"]
    assert "anthropic-beta: context-management-2025-06-27" in err


def test_report_json_names_the_api_edit(capsys):
    code = cli.main(["report", str(ANTHROPIC_SAMPLE), "--json", "--api-edit", "compact_20260112:trigger=50000"])
    out, _ = capsys.readouterr()
    assert code == 0
    conv = json.loads(out)["conversations"][0]
    assert conv["view"] == "what-if"
    assert conv["view_label"] == "what-if: API compact_20260112 (trigger 50,000 input tokens)"


@pytest.mark.parametrize("args, words", [
    (["--api-edit", "compact_20260112:trigger=1000"], "≥ 50,000"),
    (["--api-edit", "clear_tool_uses_20250919", "--clear-keep", "2"], "give one"),
    (["--api-edit", "nope"], "unknown API edit"),
])
def test_bad_api_edits_are_one_line(capsys, args, words):
    code = cli.main(["report", str(ANTHROPIC_SAMPLE), "--json", *args])
    err = capsys.readouterr().err
    assert code == 2
    assert words in err and err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize("edit", [
    {"type": "clear_tool_uses_20250919", "keep": {"type": "input_tokens", "value": 3}},   # keep counts tool uses
    {"type": "clear_thinking_20251015", "keep": {"type": "thinking_turns"}},             # no value
    {"type": "compact_20260112", "trigger": {"type": "tool_uses", "value": 60_000}},     # input_tokens only
    {"type": "compact_20260112", "placeholder": "x"},                                      # no such key
])
def test_the_validator_refuses_a_block_the_sdk_does_not_take(edit):
    pytest.importorskip("anthropic")
    from pydantic_core import ValidationError

    body = {"model": "claude-opus-4-6", "max_tokens": 1024, "messages": [{"role": "user", "content": "hi"}]}
    beta_validator().validate_python(body)
    with pytest.raises(ValidationError):
        beta_validator().validate_python({**body, "context_management": {"edits": [edit]}})


def test_the_prepared_pane_title_names_the_api_edit():
    from ctxview.tui.widgets.basic import prepared_title

    s = Settings(clear=parse_api_edit("clear_tool_uses_20250919:keep=2")[1])
    conv = load_session(ANTHROPIC_SAMPLE).conversations[0]
    title = prepared_title(prepare(conv, s), s, "14").plain
    assert "what-if: API clear_tool_uses_20250919 (trigger 100,000 input tokens, keep 2 tool uses)" in title


def test_the_inspector_body_asks_the_api_too():
    from ctxview.tui.workers import request_body

    conv = load_session(ANTHROPIC_SAMPLE).conversations[0]
    view = prepare(conv, Settings(compact=CompactSettings(60_000)))
    body = json.loads(request_body(view, "anthropic", "claude-opus-4-6", None, conv))
    assert body["context_management"] == {"edits": [{"type": "compact_20260112",
                                                     "trigger": {"type": "input_tokens", "value": 60_000}}]}
    assert "context_management" not in json.loads(request_body(view, "openai", "gpt-5", None, conv))


def test_the_status_bar_names_the_api_edits():
    from ctxview.tui.widgets.chrome import what_if_pieces

    s = Settings(clear=parse_api_edit("clear_tool_uses_20250919")[1], clear_thinking=ThinkingClearSettings(2),
                 compact=CompactSettings(80_000))
    full = [p[0] for p in what_if_pieces(s)]
    assert "API clear_thinking_20251015: keep 2" in full
    assert "API clear_tool_uses_20250919: keep 3, over 100,000 tok" in full
    assert "API compact_20260112 at 80,000 tok" in full
    own = [p[0] for p in what_if_pieces(Settings(clear=ClearSettings(keep=2)))]
    assert "clearing: keep 2" in own


def test_the_config_file_takes_the_api_edits(tmp_path):
    from ctxview.cli.user_config import ConfigError, load_user_config

    path = tmp_path / "config.toml"
    path.write_text('[settings]\nclear_thinking = true\n[settings.compact]\ntrigger = 80000\n')
    got = load_user_config(path).settings
    assert got == {"clear_thinking": ThinkingClearSettings(1), "compact": CompactSettings(80_000)}
    path.write_text('[settings.compact]\ntrigger = 1000\n')
    with pytest.raises(ConfigError, match=r"settings.compact.trigger: .*≥ 50,000"):
        load_user_config(path)


def test_the_settings_dialog_keeps_the_api_edits():
    from ctxview.stages.dialog import read as read_settings
    from ctxview.stages.dialog import shown as _shown

    base = Settings(clear=parse_api_edit("clear_tool_uses_20250919:clear_tool_inputs=Bash|Edit")[1],
                    clear_thinking=ThinkingClearSettings(2), compact=CompactSettings(90_000))
    shown = _shown(base)
    assert shown["clear_inputs"] is True    # a switch: on or off
    got, errors = read_settings(base, {**shown, "clear_keep": "5"})
    assert not errors
    assert got == dataclasses.replace(base, clear=dataclasses.replace(base.clear, keep=5))


@pytest.mark.parametrize("given", ["x" * 100_000, "clear_tool_uses_20250919:" + "k" * 100_000,
                                   "clear_tool_uses_20250919:keep=" + "9" * 100_000])
def test_a_huge_api_edit_is_quoted_short(given):
    with pytest.raises(ValueError) as err:
        parse_api_edit(given)
    assert len(str(err.value)) < 400 and "100,0" in str(err.value)
