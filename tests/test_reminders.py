"""System-reminder handling, with the Ruby details the original has."""

import re

import pytest

from ctxview.engine import reminders
from ctxview.engine.context_manager import ContextManager

R = "<system-reminder>{}</system-reminder>"


def test_pattern_is_compiled_and_shared_with_the_class():
    assert isinstance(reminders.SYSTEM_REMINDER_REGEX, re.Pattern)
    assert ContextManager.SYSTEM_REMINDER_REGEX is reminders.SYSTEM_REMINDER_REGEX


def test_dot_matches_newlines_like_ruby_m_flag():
    text = "a " + R.format("\nline one\nline two\n") + " b"
    assert reminders.extract(text) == [R.format("\nline one\nline two\n")]


def test_non_greedy_and_not_nested():
    text = R.format("a") + "mid" + R.format("b")
    assert reminders.extract(text) == [R.format("a"), R.format("b")]
    nested = "<system-reminder><system-reminder>x</system-reminder></system-reminder>"
    assert reminders.strip(nested) == "</system-reminder>"


def test_case_sensitive_and_unclosed_blocks_do_not_count():
    assert not reminders.has("<SYSTEM-REMINDER>x</SYSTEM-REMINDER>")
    assert not reminders.has("<system-reminder>unclosed")
    assert reminders.extract("<system-reminder>unclosed") == []


@pytest.mark.parametrize("empty", [None, ""])
def test_none_and_empty(empty):
    assert reminders.extract(empty) == []
    assert reminders.has(empty) is False
    assert reminders.strip(empty) is empty
    assert reminders.spans(empty) == []


def test_strip_uses_ruby_whitespace_only():
    # NUL and ASCII whitespace go; U+00A0 and U+3000 stay (Python's strip() would remove them).
    assert reminders.strip("\x00 padded " + R.format("x") + " \xa0") == "padded  \xa0"
    assert reminders.strip("\u3000a" + R.format("z") + "\u3000") == "\u3000a\u3000"
    assert reminders.strip("\v\fvt ff\v") == "vt ff"
    assert reminders.strip("\x1c x \x85") == "\x1c x \x85"


def test_ruby_strip_set():
    assert reminders.ruby_strip(" \t\n\v\f\r\0x\0\r\f\v\n\t ") == "x"
    assert reminders.ruby_strip("\u2003x\u2003") == "\u2003x\u2003"


def test_strip_leaves_inner_whitespace():
    assert reminders.strip("before " + R.format("a") + " mid " + R.format("b") + " after") == "before  mid  after"


def test_spans_locate_every_block():
    text = "ab" + R.format("1") + "\n" + R.format("two\nlines")
    spans = reminders.spans(text)
    assert [text[s:e] for s, e in spans] == reminders.extract(text)
    assert spans[0][0] == 2
    assert spans[-1][1] == len(text)


def test_spans_count_code_points():
    text = "💡é" + R.format("x")
    assert reminders.spans(text) == [(2, 2 + len(R.format("x")))]
