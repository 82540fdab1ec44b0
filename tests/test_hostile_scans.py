"""Every scan over untrusted text is linear in its length.

Each test times the worst case the issue found at a size N and at 10N, in the
same test, and checks that the time grew about tenfold: a quadratic scan
grows a hundredfold. No wall-clock limit: only the ratio is checked, with
room for a noisy machine (< 30, where linear is 10 and quadratic 100).
"""

from __future__ import annotations

import time

import pytest

from ctxview.engine import reminders
from ctxview.engine.compression import detect_tool_name
from ctxview.export.bodies import dumps
from ctxview.formats.parsing.blocks import is_reminder_only
from ctxview.sanitize import make_visible, sanitize

LINEAR_RATIO = 30


def growth(fn, small, big) -> float:
    """time(fn(big)) / time(fn(small)) in CPU time (a busy machine delays a process, it does not
    make it do more work), each the best of 3 rounds of enough calls to take ~20 ms at the
    small size (so that a fast scan is not measured as timer noise)."""
    calls = 1
    while True:
        t = time.process_time()
        for _ in range(calls):
            fn(small)
        if time.process_time() - t >= 0.02 or calls >= 1 << 16:
            break
        calls *= 2

    def once(arg) -> float:
        t = time.process_time()
        for _ in range(calls):
            fn(arg)
        return time.process_time() - t

    # rounds of the two sizes alternate, so that a burst of load elsewhere hits both alike
    small_times, big_times = [], []
    for _ in range(3):
        small_times.append(once(small))
        big_times.append(once(big))
    return min(big_times) / min(small_times)


OPEN = "<system-reminder>"
CLOSE = "</system-reminder>"

# name -> (function, worst-case text of size n)
CASES = {
    "reminder spans, openers without a closer": (reminders.spans, lambda n: OPEN * n),
    "reminder extract, openers without a closer": (reminders.extract, lambda n: OPEN * n),
    "reminder strip, blocks then unclosed openers": (reminders.strip, lambda n: (OPEN + "x" + CLOSE) * (n // 4)
                                                     + OPEN * n),
    "reminder has, openers without a closer": (reminders.has, lambda n: OPEN * n),
    "reminder-only line test (loaders)": (is_reminder_only, lambda n: OPEN * n),
    "tool-name detection, newlines then an arrow": (detect_tool_name, lambda n: "\n" * (n * 8) + "→"),
    "tool-name detection, blanks and digits per line": (detect_tool_name, lambda n: (" \t1234x\n" * n) + "→"),
    "tool-name detection, glob and grep near-misses": (detect_tool_name,
                                                       lambda n: "Found 12 file matching\nmatches in x\n" * n),
    "sanitizer, every character unsafe": (sanitize, lambda n: "\x1b\u202e\U000e0041\t" * n),
    "make_visible, CRLF and controls": (make_visible, lambda n: "\r\n\x07a" * n),
    "JSON output, characters to escape": (dumps, lambda n: {"t": "\u202e\x85\U000e0041\ud800" * n}),
}


def _search(case):
    # The inspector's search (`/`): a literal term, case-insensitive, over text and tool calls.
    from ctxview.tui.search_state import messages_match

    msg, pattern = case
    return messages_match(msg, msg, pattern)


def _search_case(n: int):
    from ctxview.model import Message, ToolCall
    from ctxview.tui.search_state import term_pattern

    text = "a" * (n * 8)
    msg = Message(role="assistant", content=text, tool_calls=(ToolCall("c", "Read", {"p": text}),))
    return msg, term_pattern("a" * 40 + "b")  # a near-miss at every position


CASES["inspector search, a near-miss at every position"] = (_search, _search_case)


@pytest.mark.parametrize("name", list(CASES))
def test_scan_is_linear(name):
    fn, make = CASES[name]
    small, big = make(6_000), make(60_000)
    # a quadratic scan grows ~100x every time; a linear one measured on a busy machine can miss once:
    # it is measured again (at most three times) before it fails
    ratios = []
    for _ in range(3):
        ratios.append(growth(fn, small, big))
        if ratios[-1] < LINEAR_RATIO:
            break
    assert ratios[-1] < LINEAR_RATIO, f"{name}: 10x the input took {', '.join(f'{r:.1f}' for r in ratios)}x the time"


def test_the_linear_reminder_scan_finds_what_the_regex_finds():
    # The regex is the original's definition; the scan must agree on texts built to be awkward.
    import random

    rng = random.Random(12)
    bits = [OPEN, CLOSE, "x", "\n", "<system-", "reminder>", "</system-reminder", "<", ">"]
    for _ in range(3000):
        text = "".join(rng.choice(bits) for _ in range(rng.randrange(0, 12)))
        assert reminders.spans(text) == [m.span() for m in reminders.SYSTEM_REMINDER_REGEX.finditer(text)], text
        assert reminders.extract(text) == reminders.SYSTEM_REMINDER_REGEX.findall(text)
        assert reminders.has(text) == (reminders.SYSTEM_REMINDER_REGEX.search(text) is not None)
        assert reminders.remove(text) == reminders.SYSTEM_REMINDER_REGEX.sub("", text)


def test_the_read_pattern_finds_what_the_seeds_pattern_finds():
    import random
    import re

    seed = re.compile(r"^[ \t\r\n\f\v]*[0-9]+→", re.MULTILINE)  # /^\s*\d+→/ as the seed wrote it
    from ctxview.engine.tool_names import _READ_RE

    rng = random.Random(7)
    bits = ["\n", " ", "\t", "\r", "\f", "1", "42", "→", "x", "memory://"]
    for _ in range(5000):
        text = "".join(rng.choice(bits) for _ in range(rng.randrange(0, 10)))
        assert (_READ_RE.search(text) is None) == (seed.search(text) is None), repr(text)
