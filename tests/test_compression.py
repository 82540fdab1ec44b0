"""Tiered compression: policies as data, tool-name detection, the seed's exact output."""

import pytest

from ctxview import Content, Message, ToolCall, Usage
from ctxview._fast import compression as fast
from ctxview.engine import compression as comp
from ctxview.engine.compression import (
    DEFAULT_POLICY,
    PRESETS,
    CompressionPolicy,
    Tier,
    compress_text,
    compress_tool_message,
    compress_tool_results,
    describe_tier,
    detect_tool_name,
    format_tiers,
    get_policy,
    is_rerunnable,
    tier_for_age,
    tool_names_by_call_id,
)

MARK = "\n...[{} chars truncated for context management]"
HINT = "\n\n💡 If you need the full output, re-run the {} tool with the same parameters."
READ = "".join(f"{i:6d}→line {i} " + "x" * 30 + "\n" for i in range(1, 60))


# --- detect_tool_name: the seed's patterns with Ruby's regex rules ------------

@pytest.mark.parametrize(
    "text, name",
    [
        ("     1→hello", "Read"),
        ("\t 7→tab", "Read"),
        ("x\n  12→second line", "Read"),           # ^ is line-anchored
        ("\r\n 1→", "Read"),                        # \s* spans line breaks
        ("\v1→", "Read"),                           # Ruby's \s includes \v
        ("1→memory://x", "MemoryRead"),
        ("\xa0 1→", None),                          # NBSP is not Ruby \s
        ("\u2003 5→em-space", None),                # nor EM SPACE
        ("\x1c1→", None),
        ("\x851→", None),
        ("\u0663→arabic-indic digit", None),        # Ruby \d is [0-9]
        ("x 1→ not at line start", None),
        ("1→", "Read"),
        ("Memory entries matching z", "MemoryGlob"),
        ("a\nMemory entries matching z", "MemoryGlob"),
        (" Memory entries matching z", None),
        ("Found 1 file matching", "Glob"),
        ("x\nFound 2 files matching y", "Glob"),
        ("found 1 file matching", None),
        ("Found one file matching", None),
        ("3 matches in 1 file", "Grep"),
        ("text 50 matches in 9 files", "Grep"),     # unanchored
        ("No matches found here", "Grep"),
        ("No matches found in memory://x", "MemoryGrep"),
        ("Stored at memory://x", "MemoryWrite"),
        (" Stored at memory://x", None),
        ("Deleted memory://y", "MemoryDelete"),
        ("x\nDeleted memory://y", "MemoryDelete"),
        ("", None),
        (None, None),
        ("plain output", None),
    ],
)
def test_detect_tool_name(text, name):
    assert detect_tool_name(text) == name


def test_detection_order_follows_the_seed():
    # Read is tested first, so a Read result mentioning Grep's phrase stays Read.
    assert detect_tool_name("     1→No matches found") == "Read"
    assert detect_tool_name("Found 3 files matching x\n10 matches in 2 files") == "Glob"


def test_detect_rejects_non_strings():
    assert detect_tool_name(Content("     1→x")) is None  # Ruby: Regexp === Content is false


def test_is_rerunnable():
    for name in ("Read", "MemoryRead", "Grep", "MemoryGrep", "Glob", "MemoryGlob"):
        assert is_rerunnable(name)
    for name in ("Bash", "Write", "MemoryWrite", "read", "", None):
        assert not is_rerunnable(name)
    assert is_rerunnable("Bash", CompressionPolicy(rerunnable_tools={"Bash"}))


# --- the seed's tiers ---------------------------------------------------------

@pytest.mark.parametrize(
    "age, limit",
    [(-5, 100), (0, None), (10, None), (11, 1000), (20, 1000), (21, 500), (40, 500), (41, 200), (60, 200),
     (61, 100), (10_000, 100)],
)
def test_default_tiers_match_the_seed(age, limit):
    assert tier_for_age(DEFAULT_POLICY, age)[1].max_chars == limit


def test_compress_tool_message_exact_output():
    text = "p" * 320
    out = compress_tool_message(Message("tool", text, tool_call_id="c1"), age=70)
    assert out.content == "p" * 100 + MARK.format(220)
    assert out.role == "tool" and out.tool_call_id == "c1"


def test_hint_for_rerunnable_tool_detected_on_full_text():
    out = compress_tool_message(Message("tool", READ, tool_call_id="c"), age=45)
    assert out.content == READ[:200] + MARK.format(len(READ) - 200) + HINT.format("Read")


def test_no_hint_for_other_tools():
    text = "Stored at memory://x " + "z" * 300
    out = compress_tool_message(Message("tool", text), age=99)
    assert out.content == text[:100] + MARK.format(len(text) - 100)


def test_at_or_under_the_limit_returns_the_same_message():
    msg = Message("tool", "x" * 200, tool_call_id="c")
    assert compress_tool_message(msg, age=60) is msg
    assert compress_tool_message(msg, age=5) is msg


def test_lengths_and_slices_count_code_points():
    text = "💡é" * 300
    out = compress_tool_message(Message("tool", text), age=61)
    assert out.content == text[:100] + MARK.format(500)


def test_content_object_and_none():
    msg = Message("tool", Content("y" * 150, ("img.png",)), tool_call_id="c")
    out = compress_tool_message(msg, age=61)
    assert out.content == "y" * 100 + MARK.format(50)  # the original rebuilds with a plain string
    none = Message("tool", None)
    assert compress_tool_message(none, age=100) is none


def test_compressed_message_keeps_every_other_field():
    msg = Message(
        "tool", "q" * 500, tool_call_id="c9", tool_calls=[ToolCall("t", "Read", {"a": 1})], model_id="m",
        tool_name="Bash", usage=Usage(1, 2), thinking="t", injected=True, origin="line 3", id="id1",
        meta={"k": "v"},
    )
    out = compress_tool_message(msg, age=99)
    assert out.content != msg.content
    for name in Message.__slots__:
        if name != "content":
            assert getattr(out, name) == getattr(msg, name), name


def test_compress_tool_message_makes_role_tool_like_the_original():
    out = compress_tool_message(Message("user", "u" * 300), age=99)
    assert out.role == "tool"


def test_compress_tool_results_ages_and_roles():
    msgs = [Message("tool", "t" * 2000, tool_call_id=f"c{i}") if i % 2 else Message("user", "u" * 2000)
            for i in range(80)]
    out = compress_tool_results(msgs, keep_recent=10)
    assert len(out) == 80
    for i, (m, o) in enumerate(zip(msgs, out)):
        age = 80 - i
        if m.role == "user" or i >= 70:
            assert o is m
        else:
            limit = tier_for_age(DEFAULT_POLICY, age)[1].max_chars
            assert o.content == "t" * limit + MARK.format(2000 - limit)


def test_system_and_other_roles_are_never_compressed():
    msgs = [Message("system", "s" * 5000), Message("developer", "d" * 5000)] + [Message("user", "u")] * 10
    out = compress_tool_results(msgs, keep_recent=0)
    assert out[0] is msgs[0] and out[1] is msgs[1]


@pytest.mark.parametrize("keep_recent", [-3, 0])
def test_keep_recent_zero_or_negative_compresses_everything_old_enough(keep_recent):
    msgs = [Message("tool", "t" * 1500)] * 15
    out = compress_tool_results(msgs, keep_recent=keep_recent)
    assert [o.content for o in out[:5]] == ["t" * 1000 + MARK.format(500)] * 5  # ages 15..11
    assert out[5:] == msgs[5:]  # ages 10..1 are in the full tier


def test_repeat_with_cache_gives_identical_results():
    msgs = [Message("tool", f"{i}" + "r" * 1500, tool_call_id=str(i)) for i in range(100)]
    first = fast.compress_tool_results(msgs, keep_recent=10)
    fast.clear_caches()
    cold = fast.compress_tool_results(msgs, keep_recent=10)
    again = fast.compress_tool_results(msgs, keep_recent=11)
    assert first == cold
    assert again[:89] == first[:89] and again[89] is msgs[89]


def test_a_text_shared_by_messages_is_cut_into_one_string_per_tool_name():
    text = READ + "x" * 50
    by_call = CompressionPolicy(tool_name_from="tool_call")
    msgs = [Message("tool", text, tool_name="Read"), Message("tool", text, tool_name="Read"),
            Message("tool", text, tool_name="Bash")] + [Message("user", "u")] * 70
    assert fast.compress_tool_results(msgs, keep_recent=10, policy=by_call) == compress_tool_results(msgs, 10, by_call)
    out = fast.compress_tool_results(msgs, keep_recent=10, policy=by_call)
    assert out[0] is not out[1] and out[0].content is out[1].content   # one cut string, two messages
    assert out[0].content == text[:100] + MARK.format(len(text) - 100) + HINT.format("Read")
    assert out[2].content == text[:100] + MARK.format(len(text) - 100)  # another name: its own cut


def test_policies_do_not_share_results_wrongly():
    msgs = [Message("tool", READ)] + [Message("user", "u")] * 70
    default = compress_tool_results(msgs, keep_recent=10)[0].content
    no_hint = compress_tool_results(msgs, keep_recent=10, policy=CompressionPolicy(hint=""))[0].content
    other_marker = compress_tool_results(msgs, 10, CompressionPolicy(marker=" [cut {n}]"))[0].content
    assert default.endswith(HINT.format("Read"))
    assert no_hint == READ[:100] + MARK.format(len(READ) - 100)
    assert other_marker == READ[:100] + f" [cut {len(READ) - 100}]" + HINT.format("Read")


def test_disabled_policy_changes_nothing():
    msgs = [Message("tool", "x" * 5000)] + [Message("user", "u")] * 100
    out = compress_tool_results(msgs, keep_recent=0, policy=PRESETS["off"])
    assert out == msgs and out is not msgs
    assert compress_tool_message(msgs[0], age=500, policy=PRESETS["off"]) is msgs[0]


def test_compress_text():
    assert compress_text("abc", 5, "Read") == "abc"
    assert compress_text("abcdef", 2, None) == "ab" + MARK.format(4)
    assert compress_text("abcdef", 2, "Glob") == "ab" + MARK.format(4) + HINT.format("Glob")


# --- tool names from the linked tool call ---------------------------------------

def _linked_conversation():
    plain = "plain output with no telltale pattern " * 20
    return [
        Message("assistant", "", tool_calls=[{"id": "a", "name": "Read", "arguments": {}}]),
        Message("tool", plain, tool_call_id="a"),
        Message("assistant", "", tool_calls=[ToolCall("b", "Bash")]),
        Message("tool", READ, tool_call_id="b"),
        Message("tool", plain, tool_call_id="z", tool_name="Grep"),
    ] + [Message("user", "u")] * 70


def test_tool_names_by_call_id():
    assert tool_names_by_call_id(_linked_conversation()) == {"a": "Read", "b": "Bash"}


def test_tool_call_policy_uses_the_linked_call():
    msgs = _linked_conversation()
    by_call = CompressionPolicy(tool_name_from="tool_call")
    out = compress_tool_results(msgs, keep_recent=10, policy=by_call)
    assert out[1].content.endswith(HINT.format("Read"))        # plain text, but the call was Read
    assert out[3].content.endswith(MARK.format(len(READ) - 100))  # looks like Read, but the call was Bash
    assert out[4].content.endswith(HINT.format("Grep"))        # message.tool_name wins
    by_content = compress_tool_results(msgs, keep_recent=10)
    assert by_content[1].content.endswith("management]") and by_content[3].content.endswith(HINT.format("Read"))


def test_compress_tool_message_with_tool_call_policy():
    by_call = CompressionPolicy(tool_name_from="tool_call")
    msg = Message("tool", "o" * 300, tool_call_id="a")
    assert compress_tool_message(msg, 99, by_call, tool_name="Glob").content.endswith(HINT.format("Glob"))
    assert compress_tool_message(msg, 99, by_call).content.endswith("management]")


# --- policies, presets, specs ----------------------------------------------------

def test_default_policy_is_the_seed():
    assert DEFAULT_POLICY.tiers == (Tier(10, None), Tier(20, 1000), Tier(40, 500), Tier(60, 200), Tier(None, 100))
    assert DEFAULT_POLICY.rerunnable_tools == {"Read", "MemoryRead", "Grep", "MemoryGrep", "Glob", "MemoryGlob"}
    assert format_tiers(DEFAULT_POLICY) == "10:full,20:1000,40:500,60:200,*:100"
    assert get_policy("default") is DEFAULT_POLICY


def test_presets():
    assert set(PRESETS) == {"default", "light", "aggressive", "off", "swarm-auto"}
    assert not PRESETS["off"].enabled
    # swarm-auto cuts nothing per request: the pipeline's stage 0 runs SwarmSDK's one compression
    assert not PRESETS["swarm-auto"].enabled and PRESETS["swarm-auto"].tiers == DEFAULT_POLICY.tiers
    for name, policy in PRESETS.items():
        assert policy.name == name
        assert get_policy(name) is policy
        assert get_policy(f" {name.upper()} ") is policy
    msgs = [Message("tool", "x" * 3000)] * 30 + [Message("user", "u")] * 30
    lengths = {n: sum(len(m.text) for m in compress_tool_results(msgs, 10, p)) for n, p in PRESETS.items()}
    assert lengths["aggressive"] < lengths["default"] < lengths["light"] < lengths["off"] == lengths["swarm-auto"]


@pytest.mark.parametrize(
    "spec",
    ["10:full,20:1000,40:500,60:200,*:100", "*:50", "0:full,*:full", "5:300", "3:full,7:10,100:5,*:1"],
)
def test_spec_round_trip(spec):
    policy = get_policy(spec)
    assert get_policy(format_tiers(policy)).tiers == policy.tiers
    if spec.endswith(("*:50", "*:100", "*:full", "*:1")):
        assert format_tiers(policy) == spec


def test_spec_without_catch_all_keeps_older_ages_in_full():
    policy = get_policy("5:full,10:50")
    assert format_tiers(policy) == "5:full,10:50,*:full"
    assert tier_for_age(policy, 11) == (2, Tier(None, None))


def test_spec_tolerates_spaces():
    assert get_policy(" 10 : full , * : 100 ").tiers == (Tier(10, None), Tier(None, 100))


@pytest.mark.parametrize(
    "spec, words",
    [
        ("", "empty"),
        ("banana", "unknown compression preset"),
        ("10:full,5:100", "strictly ascending"),
        ("10:full,10:100", "strictly ascending"),
        ("*:100,10:full", "only the last tier"),
        ("10:0", "positive"),
        ("10:-5", "positive"),
        ("10:lots", "positive"),
        ("ten:100", "whole number"),
        ("-1:100", "whole number"),
        ("10", "unknown compression preset"),
        ("10:full,20", "AGE:LIMIT"),
        ("10:", "AGE:LIMIT"),
    ],
)
def test_bad_specs_raise_clear_errors(spec, words):
    with pytest.raises(ValueError, match=words):
        get_policy(spec)


@pytest.mark.parametrize(
    "tiers, words",
    [
        ((), "at least one tier"),
        ((Tier(20, None), Tier(10, 5)), "strictly ascending"),
        ((Tier(None, 5), Tier(None, 5)), "only the last tier"),
        ((Tier(10, 0),), "positive"),
        ((Tier(10, 2.5),), "positive"),
        ((Tier(-1, 5),), "whole number"),
        ((Tier(True, 5),), "whole number"),
        (("x",), "a tier must be"),
    ],
)
def test_bad_policies_raise_clear_errors(tiers, words):
    with pytest.raises(ValueError, match=words):
        CompressionPolicy(tiers=tiers)


def test_policy_validates_other_fields_and_coerces():
    with pytest.raises(ValueError, match="tool_name_from"):
        CompressionPolicy(tool_name_from="guess")
    with pytest.raises(ValueError, match="rerunnable_tools"):
        CompressionPolicy(rerunnable_tools="Read")
    policy = CompressionPolicy(tiers=[(10, None), (None, 50)], rerunnable_tools=["Bash"])
    assert policy.tiers == (Tier(10, None), Tier(None, 50))
    assert policy.rerunnable_tools == frozenset({"Bash"})
    assert CompressionPolicy(tiers="4:full,*:9").tiers == (Tier(4, None), Tier(None, 9))


def test_describe_tier():
    assert [describe_tier(DEFAULT_POLICY, i) for i in range(5)] == [
        "ages 0-10 → full",
        "ages 11-20 → 1000 chars",
        "ages 21-40 → 500 chars",
        "ages 41-60 → 200 chars",
        "ages 61+ → 100 chars",
    ]
    assert describe_tier(get_policy("*:50"), 0) == "all ages → 50 chars"
    assert describe_tier(get_policy("0:full,1:20,*:10"), 1) == "age 1 → 20 chars"


def test_tier_for_age_returns_index_and_tier():
    assert tier_for_age(DEFAULT_POLICY, 27) == (2, Tier(40, 500))
    assert tier_for_age(DEFAULT_POLICY, 0) == (0, Tier(10, None))


def test_huge_tier_ages_do_not_blow_up():
    policy = get_policy("5:full,1000000000:7,*:3")
    assert compress_tool_message(Message("tool", "abcdefghij"), 999_999_999, policy).content == "abcdefg" + MARK.format(3)
    assert compress_tool_message(Message("tool", "abcdefghij"), 1_000_000_001, policy).content == "abc" + MARK.format(7)
    msgs = [Message("tool", "abcdefghij")] * 5000
    assert compress_tool_results(msgs, 0, policy)[0].content == "abcdefg" + MARK.format(3)


def test_marker_placeholder_may_repeat_or_be_absent():
    repeat = CompressionPolicy(marker=" [{n} of {n}]", hint="")
    none = CompressionPolicy(marker=" [cut]", hint="")
    msg = Message("tool", "z" * 150)
    assert compress_tool_message(msg, 99, repeat).content == "z" * 100 + " [50 of 50]"
    assert compress_tool_message(msg, 99, none).content == "z" * 100 + " [cut]"
    assert compress_text("z" * 150, 100, None, repeat) == "z" * 100 + " [50 of 50]"


@pytest.mark.parametrize("spec", ["default", "light", "aggressive", "3:full,*:50", "*:full", "5000:10,*:5"])
def test_limits_by_age_is_tier_for_age_as_a_table(spec):
    from ctxview.tiers import get_policy, limits_by_age, tier_for_age

    policy = get_policy(spec)
    table, top = limits_by_age(policy, longest=300)
    assert top == max((t.max_age for t in policy.tiers if t.max_age is not None), default=-1)
    assert len(table) == min(top, 300) + 1
    assert table == [tier_for_age(policy, age)[1].max_chars for age in range(len(table))]
    # past `top` every age has the last tier's limit, as the loops that read the table assume
    assert all(tier_for_age(policy, age)[1].max_chars == policy.tiers[-1].max_chars for age in (top + 1, top + 99))
