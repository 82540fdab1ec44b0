"""The offline summary's fast twin (which formats only the requests it shows) gives the rule's text."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxview._fast.summary import extractive_summary as fast_summary
from ctxview.engine.budget import extractive_summary
from ctxview.model import Message, ToolCall


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
def test_the_fast_summary_equals_the_rule(messages, max_requests, max_errors):
    assert (fast_summary(messages, max_requests=max_requests, max_errors=max_errors)
            == extractive_summary(messages, max_requests=max_requests, max_errors=max_errors))
