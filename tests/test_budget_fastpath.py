"""extractive_summary (which formats only the requests it shows) gives what the simple loop gives."""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxview.engine.budget import (
    _ERROR_RE,
    _PATH_KEYS,
    _first_line,
    extractive_summary,
    summary_text,
)
from ctxview.model import Message, ToolCall
from ctxview.engine.reminders import strip as strip_reminders


def simple_summary(messages, *, max_requests: int = 10, max_errors: int = 5) -> str:
    """The summary as first written: every request formatted, then the first max_requests shown
    (through the same summary_text: the fast path changes only what is collected)."""
    requests, tools, files, errors = [], Counter(), {}, []
    for msg in messages:
        if msg.role == "user" and not msg.injected:
            text = strip_reminders(msg.text) or ""
            if text.strip():
                requests.append(_first_line(text))
        for call in msg.tool_calls:
            tools[call.name or "?"] += 1
            for key in _PATH_KEYS:
                value = call.arguments.get(key) if hasattr(call.arguments, "get") else None
                if isinstance(value, str) and value:
                    files.setdefault(value, None)
        if msg.role == "tool" and len(errors) < max_errors:
            m = _ERROR_RE.search(msg.text)
            if m:
                errors.append(_first_line(m.group(0)))
    shown = requests[:max_requests]
    return summary_text(shown, len(requests) - len(shown), tools, files, errors)


_texts = st.sampled_from(["", "  ", "fix the parser", "<system-reminder>x</system-reminder>", "error: boom\nmore",
                          "<system-reminder>y</system-reminder>\nand then", "No such file: not found", "ok"])
_calls = st.lists(st.builds(ToolCall, st.sampled_from(["c1", "c2", ""]), st.sampled_from(["Read", "Bash", ""]),
                            st.dictionaries(st.sampled_from(["file_path", "path", "q"]),
                                            st.sampled_from(["a.py", "b.py", "", 3]), max_size=2)), max_size=2)
_messages = st.lists(st.one_of(
    st.builds(lambda t, inj: Message("user", t, injected=inj), _texts, st.booleans()),
    st.builds(lambda t, c: Message("assistant", t, tool_calls=tuple(c)), _texts, _calls),
    st.builds(lambda t: Message("tool", t, tool_call_id="c1"), _texts),
    st.builds(lambda t: Message("system", t), _texts)), max_size=30)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_messages, st.integers(0, 12), st.integers(0, 6))
def test_extractive_summary_equals_the_simple_loop(messages, max_requests, max_errors):
    assert (extractive_summary(messages, max_requests=max_requests, max_errors=max_errors)
            == simple_summary(messages, max_requests=max_requests, max_errors=max_errors))
