"""ctxview.engine.codex_truncation against the cases of Codex's own unit tests.

The expected strings are those of openai/codex codex-rs/utils/output-truncation/src/truncate_tests.rs
(formatted_truncate_text's cases without the "Total output lines: N" header it adds, which is
truncate_text's result) and codex-rs/utils/string/src/truncate/tests.rs.
"""

from __future__ import annotations

import pytest

from ctxview.engine.codex_truncation import (
    approx_token_count,
    history_policy,
    split_at,
    truncate_output,
    truncate_text,
)


def B(n):
    return {"mode": "bytes", "limit": n}


def T(n):
    return {"mode": "tokens", "limit": n}


LONG = "this is an example of a long output that should be truncated"
TWO_LINES = LONG + "\nalso some other line"
EMOJI = "😀😀😀😀😀😀😀😀😀😀\nsecond line with text\n"


@pytest.mark.parametrize("text, policy, expected", [
    # truncate_tests.rs (output-truncation)
    ("example output", B(1), "…13 chars truncated…t"),
    ("example output", T(1), "ex…3 tokens truncated…ut"),
    ("example output", T(10), "example output"),
    ("example output", B(20), "example output"),
    (LONG, T(5), "this is an…10 tokens truncated… truncated"),
    (LONG, B(30), "this is an exam…30 chars truncated…ld be truncated"),
    (TWO_LINES, B(30), "this is an exam…51 chars truncated…some other line"),
    (TWO_LINES, T(10), "this is an example o…11 tokens truncated…also some other line"),
    (EMOJI, B(20), "😀😀…21 chars truncated…with text\n"),
    ("abc", B(0), "…3 chars truncated…"),  # the empty-leading-text items case, text part
    # truncate/tests.rs (utils/string)
    ("short output", T(100), "short output"),
    ("abcdef", T(0), "…2 tokens truncated…"),
    (EMOJI, T(8), "😀😀😀😀…8 tokens truncated… line with text\n"),
    ("", T(0), ""),
    ("", B(0), ""),
])
def test_truncate_text_matches_codex(text, policy, expected):
    assert truncate_text(text, policy) == expected


@pytest.mark.parametrize("text, head, tail, expected", [
    ("hello world", 5, 5, (1, "hello", "world")),
    ("abc", 0, 0, (3, "", "")),
    ("", 4, 4, (0, "", "")),
    ("abcdef", 3, 0, (3, "abc", "")),
    ("abcdef", 0, 3, (3, "", "def")),
    ("abcdef", 4, 4, (0, "abcd", "ef")),
    ("😀abc😀", 5, 5, (1, "😀a", "c😀")),
    ("😀😀😀😀😀", 1, 1, (5, "", "")),
    ("😀😀😀😀😀", 7, 7, (3, "😀", "😀")),
    ("😀😀😀😀😀", 8, 8, (1, "😀😀", "😀😀")),
])
def test_split_matches_codex_split_string(text, head, tail, expected):
    data = text.encode()
    prefix_end, suffix_start, removed = split_at(data, head, tail)
    assert (removed, data[:prefix_end].decode(), data[suffix_start:].decode()) == expected


def test_history_applies_codex_serialization_allowance():
    # ContextManager.process_item: policy * 1.2, rounded up as Rust's f64 ceil
    assert history_policy(B(10)) == B(12)
    assert history_policy(T(3)) == T(4)  # 3 * 1.2 = 3.5999999999999996
    assert history_policy(T(25000)) == T(30000)
    assert history_policy(B(0)) == B(0)
    alphabet = "abcdefghijklmnopqrstuvwxyz"
    # 12 bytes: 6 + 6 kept, 14 characters removed (worked by hand from split_string)
    assert truncate_output(alphabet, B(10)) == "abcdef…14 chars truncated…uvwxyz"
    assert truncate_text(alphabet, B(10)) == "abcde…16 chars truncated…vwxyz"
    # 4 tokens = 16 bytes: 8 + 8 kept, (26 - 16) bytes over = 3 tokens (rounded up)
    assert truncate_output(alphabet, T(3)) == "abcdefgh…3 tokens truncated…stuvwxyz"
    assert truncate_output(alphabet, T(7)) == alphabet  # 9 tokens = 36 bytes: fits


def test_token_estimate_is_utf8_bytes_over_four_rounded_up():
    assert [approx_token_count(s) for s in ("", "a", "abcd", "abcde", "😀")] == [0, 1, 1, 2, 1]


@pytest.mark.parametrize("policy", [{"mode": "chars", "limit": 3}, {"mode": "bytes", "limit": -1},
                                    {"mode": "tokens", "limit": "10"}, {}])
def test_bad_policies_are_refused(policy):
    with pytest.raises(ValueError):
        truncate_output("x", policy)


def test_the_loader_records_the_policy_truncate_output_takes():
    from pathlib import Path

    from ctxview.formats import load_session

    conv = load_session(Path(__file__).parent / "fixtures" / "samples" / "codex" / "agentlogs-crud.jsonl").conversations[0]
    tools = [m for m in conv.messages if m.role == "tool"]
    # every output of that session fits its 25,000-token turn policy: the model saw them whole
    assert tools and all(truncate_output(m.text, m.meta["truncation_policy"]) == m.text for m in tools)
