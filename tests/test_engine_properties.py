"""Property tests of the engine (hypothesis): what holds for any input."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxview import Content, ContextManager, Message
from ctxview._fast import compression as fast
from ctxview.engine import compression as comp
from ctxview.engine import reminders
from ctxview.engine.compression import (
    CompressionPolicy,
    Tier,
    format_tiers,
    get_policy,
    tier_for_age,
)

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Text likely to hit the detection patterns and the Ruby/Python differences.
PIECES = ["     1→", "12→", "→", "\n", "\r\n", " ", "\t", "\v", "\xa0", "\u2003", "\u0663", "7", "x" * 40,
          "Found 3 files matching", "Found 1 file matching", "matches in 2 files", "No matches found",
          "memory://", "Memory entries matching", "Stored at memory://", "Deleted memory://",
          "<system-reminder>", "</system-reminder>", "💡", "é", "\x00", "y" * 250, "     9→line\n" * 30,
          "\xa012→", "\u2003 5→", "\u0663→", "\x1c1→", "\x851→", "\v3→", "\r\n 4→",
          # near misses of the one-character tests detection makes first ("M"/"F" of the globs, ":" of memory://)
          "M", "F", ":", "ound 3 files matching", "emory entries matching", "memory//", "memory:/", " matching"]
texts = st.lists(st.sampled_from(PIECES) | st.text(max_size=30), max_size=40).map("".join)
contents = st.one_of(texts, st.none(), st.builds(Content, texts, st.tuples(st.just("img.png"))))
roles = st.sampled_from(["user", "assistant", "system", "tool", "tool", "tool", "developer"])
messages = st.builds(
    Message, role=roles, content=contents, tool_call_id=st.none() | st.sampled_from(["a", "b", "c"]),
    model_id=st.none() | st.just("m"), tool_name=st.none() | st.sampled_from(["Read", "Bash"]),
)
# Ages count from the end: trailing filler puts the drawn messages in the older tiers.
message_lists = st.builds(
    lambda head, filler, tail: head + [Message("user", "u")] * filler + tail,
    st.lists(messages, max_size=20), st.integers(0, 70), st.lists(messages, max_size=5),
)


@st.composite
def policies(draw):
    ages = sorted(draw(st.sets(st.integers(0, 80), min_size=0, max_size=5)))
    limits = [draw(st.none() | st.integers(1, 400)) for _ in ages]
    tiers = [Tier(a, c) for a, c in zip(ages, limits)]
    if draw(st.booleans()) or not tiers:
        tiers.append(Tier(None, draw(st.none() | st.integers(1, 400))))
    return CompressionPolicy(
        name="drawn", tiers=tuple(tiers), tool_name_from=draw(st.sampled_from(["content", "tool_call"])),
        marker=draw(st.sampled_from([comp.DEFAULT_MARKER, " [{n} cut]", ""])),
    )


any_policy = st.sampled_from(list(comp.PRESETS.values())) | policies()


# --- a naive transcription of the Ruby original, to compare the fast engine with ---

RUBY_READ = re.compile(r"^[ \t\r\n\f\v]*[0-9]+→", re.M)
RUBY_CASES = [
    (RUBY_READ, lambda t: "MemoryRead" if "memory://" in t else "Read"),
    (re.compile(r"^Memory entries matching", re.M), lambda t: "MemoryGlob"),
    (re.compile(r"^Found [0-9]+ files? matching", re.M), lambda t: "Glob"),
    (re.compile(r"matches in [0-9]+ files?|No matches found"), lambda t: "MemoryGrep" if "memory://" in t else "Grep"),
    (re.compile(r"^Stored at memory://", re.M), lambda t: "MemoryWrite"),
    (re.compile(r"^Deleted memory://", re.M), lambda t: "MemoryDelete"),
]


def ruby_detect(content):
    for pattern, name in RUBY_CASES:
        if isinstance(content, str) and pattern.search(content):
            return name(content)
    return None


def ruby_compress_message(msg, age):
    content = msg.text
    if 0 <= age <= 10:
        return msg
    max_length = 1000 if 11 <= age <= 20 else 500 if 21 <= age <= 40 else 200 if 41 <= age <= 60 else 100
    if len(content) <= max_length:
        return msg
    out = content[:max_length] + f"\n...[{len(content) - max_length} chars truncated for context management]"
    name = ruby_detect(content)
    if name in ("Read", "MemoryRead", "Grep", "MemoryGrep", "Glob", "MemoryGlob"):
        out += f"\n\n💡 If you need the full output, re-run the {name} tool with the same parameters."
    return msg.replace(role="tool", content=out)


def ruby_compress_results(msgs, keep_recent):
    n = len(msgs)
    return [
        m if i >= n - keep_recent or m.role in ("user", "assistant") or m.role != "tool"
        else ruby_compress_message(m, n - i)
        for i, m in enumerate(msgs)
    ]


@SETTINGS
@given(texts)
def test_fast_detection_equals_the_plain_regex_cascade(text):
    assert comp.detect_tool_name(text) == ruby_detect(text)


@SETTINGS
@given(messages, st.integers(-5, 120))
def test_default_message_compression_equals_the_naive_original(msg, age):
    assert comp.compress_tool_message(msg, age) == ruby_compress_message(msg, age)


@SETTINGS
@given(message_lists, st.integers(-3, 100))
def test_default_compression_equals_the_naive_original(msgs, keep_recent):
    assert comp.compress_tool_results(msgs, keep_recent) == ruby_compress_results(msgs, keep_recent)


@SETTINGS
@given(message_lists, st.integers(-3, 100), any_policy)
def test_inputs_never_mutated_and_conversation_kept(msgs, keep_recent, policy):
    before = list(msgs)
    out = comp.compress_tool_results(msgs, keep_recent, policy)
    assert msgs == before and all(a is b for a, b in zip(msgs, before))
    assert len(out) == len(msgs) and out is not msgs
    for m, o in zip(msgs, out):
        if m.role != "tool":
            assert o is m  # user, assistant, system and other roles never change
    if keep_recent > 0:
        assert all(a is b for a, b in zip(out[-keep_recent:], msgs[-keep_recent:]))


@SETTINGS
@given(message_lists, any_policy)
def test_compressed_result_within_tier_limit_plus_marker_and_hint(msgs, policy):
    out = comp.compress_tool_results(msgs, 0, policy)
    n = len(msgs)
    for i, (m, o) in enumerate(zip(msgs, out)):
        if o is m:
            continue
        limit = tier_for_age(policy, n - i)[1].max_chars
        assert limit is not None
        cut = len(m.text) - limit
        longest_hint = max((len(policy.hint.replace("{tool}", t)) for t in policy.rerunnable_tools), default=0)
        assert len(o.text) <= limit + len(policy.marker.replace("{n}", str(cut))) + longest_hint
        assert o.text.startswith(m.text[:limit])
        assert isinstance(o.content, str) and o.role == "tool"
        for name in Message.__slots__:  # every other field kept
            if name not in ("content", "role"):
                assert getattr(o, name) == getattr(m, name)


@SETTINGS
@given(message_lists, st.integers(0, 50), any_policy)
def test_keep_recent_at_least_len_returns_equal_messages(msgs, extra, policy):
    out = comp.compress_tool_results(msgs, len(msgs) + extra, policy)
    assert out == msgs and out is not msgs


@SETTINGS
@given(message_lists)
def test_prepare_without_ephemeral_returns_new_equal_list(msgs):
    cm = ContextManager()
    out = cm.prepare_for_llm(msgs)
    assert out == msgs and out is not msgs


@SETTINGS
@given(message_lists, st.lists(st.tuples(st.integers(-2, 95), texts), max_size=6))
def test_prepare_appends_only_to_the_chosen_messages(msgs, ephemeral):
    cm = ContextManager()
    before = list(msgs)
    for index, text in ephemeral:
        cm.add_ephemeral_content_for_message(index, text)
    out = cm.prepare_for_llm(msgs)
    assert msgs == before and len(out) == len(msgs)
    chosen = {i for i, _ in ephemeral}
    for i, (m, o) in enumerate(zip(msgs, out)):
        if i not in chosen:
            assert o is m
        else:
            added = "".join("\n\n" + t for j, t in ephemeral if j == i)
            assert o.text == m.text + added
            assert type(o.content) is (Content if isinstance(m.content, Content) else str)
            assert (o.role, o.tool_call_id, o.model_id, o.tool_name) == (m.role, m.tool_call_id, m.model_id, m.tool_name)


@SETTINGS
@given(message_lists, st.integers(0, 60), any_policy)
def test_cached_results_equal_cold_results(msgs, keep_recent, policy):
    warm = fast.compress_tool_results(msgs, keep_recent, policy)
    shifted = fast.compress_tool_results(msgs, keep_recent + 1, policy)
    fast.clear_caches()
    assert fast.compress_tool_results(msgs, keep_recent, policy) == warm
    assert fast.compress_tool_results(msgs, keep_recent + 1, policy) == shifted


@SETTINGS
@given(policies())
def test_tier_spec_round_trip(policy):
    spec = format_tiers(policy)
    assert get_policy(spec).tiers == policy.tiers
    assert format_tiers(get_policy(spec)) == spec


@SETTINGS
@given(policies(), st.integers(-5, 200))
def test_every_age_falls_in_exactly_one_tier(policy, age):
    index, tier = tier_for_age(policy, age)
    assert policy.tiers[index] == tier
    if age >= 0:
        inside = [i for i, t in enumerate(policy.tiers)
                  if (t.max_age is None or age <= t.max_age) and (i == 0 or age > policy.tiers[i - 1].max_age)]
        assert inside == [index]


@SETTINGS
@given(texts)
def test_reminder_spans_extract_and_strip_agree(text):
    spans = reminders.spans(text)
    assert [text[s:e] for s, e in spans] == reminders.extract(text)
    assert reminders.has(text) == bool(spans)
    rest = "".join(text[a:b] for a, b in zip([0] + [e for _, e in spans], [s for s, _ in spans] + [len(text)]))
    if text:
        assert reminders.strip(text) == rest.strip(" \t\n\v\f\r\0")
