"""The Codex loader's fast paths give what its simple rules give.

_exit_code reads Codex's exec header in one regex match before the line-by-line
reading of _exit_code_simple; each must give the simple rule's answer.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxview.formats.codex import _exit_code, _exit_code_simple

# header lines as Codex writes them, and the near misses around them
_codes = st.one_of(st.integers(-300, 300).map(str), st.sampled_from(["", "-", "--5", "7" * 18, "7" * 19, "1 ", "x",
                                                                      "٣", "0x1"]))
_lines = st.one_of(
    st.builds(lambda c: f"Process exited with code {c}", _codes),
    st.builds(lambda c: f"Exit code: {c}", _codes),
    st.sampled_from(["Chunk ID: 5f5f9d", "Chunk ID: ", "Wall time: 0.5155 seconds", "Wall time: ",
                     "Original token count: 402", "Original token count: ", "Original token count: x",
                     "Output:", "Output: Process exited with code 4", "xProcess exited with code 9", ""]),
    st.text(alphabet="PEOxc:\n 0-", max_size=12),
)
_headers = st.lists(_lines, max_size=7).map("\n".join)


def _header(chunk, wall, code, count, body, pad):
    return (f"Chunk ID: {chunk}\nWall time: {wall}\nProcess exited with code {code}\nOriginal token count: {count}"
            f"\nOutput:{body}").replace("Chunk ID: ", "Chunk ID: " + "." * pad, 1)


_codex_headers = st.builds(_header, st.text(max_size=8), st.text(max_size=8), _codes,
                           st.sampled_from(["402", "", "x", "4\nOutput:", "Process exited with code 1"]),
                           st.text(max_size=40), st.sampled_from([0, 0]) | st.integers(400, 460))


@settings(max_examples=600, deadline=None)
@given(st.one_of(_headers, _codex_headers, _codex_headers.map(lambda h: "\n" + h), st.text(max_size=60)))
def test_exit_code_reads_the_header_as_the_simple_rule_does(output):
    assert _exit_code(output) == _exit_code_simple(output)


def test_exit_code_reads_codex_headers_by_the_fast_match_up_to_the_500th_character():
    from ctxview.formats.codex import _EXEC_HEADER

    out = "Chunk ID: 5f5f9d\nWall time: 0.5155 seconds\nProcess exited with code 3\nOriginal token count: 4\nOutput:\nx"
    assert _EXEC_HEADER.match(out) and _exit_code(out) == _exit_code_simple(out) == 3
    for pad in range(380, 420):  # "\nOutput:" ending at the 500th character and either side of it
        padded = out.replace("5f5f9d", "5" * pad)
        assert _exit_code(padded) == _exit_code_simple(padded), pad
    assert {_exit_code(out.replace("5f5f9d", "5" * pad)) for pad in range(380, 420)} == {3, None}
