import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxview.sanitize import _FORMAT_RANGES, is_clean, make_visible, sanitize, visible_char

# Characters a terminal would act on or a reader could not see.
def _unsafe(ch: str) -> bool:
    if ch in "\n\t":
        return False
    cat = unicodedata.category(ch)
    return cat in ("Cc", "Cf", "Cs", "Zl", "Zp")


def _assert_safe(out: str) -> None:
    bad = [hex(ord(c)) for c in out if _unsafe(c)]
    assert not bad, bad


def test_escape_sequences_are_inert():
    ansi = "\x1b[31mred\x1b[0m"
    osc_title = "\x1b]0;pwned\x07"
    osc_link = "\x1b]8;;http://evil\x1b\\x\x1b]8;;\x1b\\"
    assert sanitize(ansi) == "␛[31mred␛[0m"
    assert sanitize(osc_title) == "␛]0;pwned␇"
    assert "\x1b" not in sanitize(osc_link)


def test_c0_del_nul_are_control_pictures():
    assert sanitize("a\x00b") == "a␀b"
    assert sanitize("\x7f") == "␡"
    assert sanitize("\x08\x0b\x0c") == "␈␋␌"


def test_c1_and_bidi_are_code_point_notation():
    assert sanitize("\x9b31m") == "<U+009B>31m"
    assert sanitize("\x85") == "<U+0085>"
    assert sanitize("abc\u202edef\u202c") == "abc<U+202E>def<U+202C>"
    assert sanitize("\u2066x\u2069") == "<U+2066>x<U+2069>"
    assert sanitize("\u200e\u200f\u061c") == "<U+200E><U+200F><U+061C>"


def test_invisible_format_characters_are_shown():
    assert sanitize("a\u200bb") == "a<U+200B>b"
    assert sanitize("\ufeffx") == "<U+FEFF>x"
    # Tag characters smuggle invisible ASCII.
    assert sanitize("\U000e0041") == "<U+E0041>"
    assert sanitize("a\u2028b") == "a<U+2028>b"


def test_lone_surrogate_replaced_so_output_encodes():
    out = sanitize("x\ud800y")
    assert out == "x<U+D800>y"
    out.encode("utf-8")


def test_newlines_tabs_and_carriage_returns():
    assert sanitize("a\r\nb\n") == "a\nb\n"
    assert sanitize("a\rb") == "a␍b"
    assert sanitize("a\tb", tab_size=4) == "a   b"
    assert sanitize("a\tb", tab_size=None) == "a\tb"
    assert make_visible("a\tb\n") == "a\tb\n"


def test_markup_is_left_as_text():
    text = "[bold]x[/bold] [$accent] [@click=app.quit]q[/]"
    assert sanitize(text) == text


def test_clean_text_returned_unchanged():
    text = "plain → text, émoji 💡, 中文\nsecond line"
    assert sanitize(text) is text or sanitize(text) == text
    assert is_clean(text)
    assert not is_clean("\x1b")


def test_visible_char_single():
    assert visible_char("\x1b") == "␛"
    assert visible_char("a") == "a"
    assert visible_char("\n") == "\n"


def test_covers_every_format_char_of_this_python():
    missing = [
        hex(cp)
        for cp in range(0x110000)
        if unicodedata.category(chr(cp)) in ("Cc", "Cf", "Cs", "Zl", "Zp")
        and chr(cp) not in "\n\t\r"
        and make_visible(chr(cp)) == chr(cp)
    ]
    assert not missing


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(codec=None, exclude_categories=())))
def test_output_never_holds_unsafe_characters(text):
    _assert_safe(sanitize(text))
    _assert_safe(make_visible(text))
    assert "\t" not in sanitize(text)


def _later_format_character(c: str) -> bool:
    # sanitize also covers format characters of Unicode versions after this interpreter's,
    # which its unicodedata still calls unassigned (U+13439, say): not safe text for this test
    return any(lo <= ord(c) <= hi for lo, hi in _FORMAT_RANGES)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cf", "Cs", "Zl", "Zp")).filter(
    lambda c: not _later_format_character(c))))
def test_safe_text_is_unchanged(text):
    assert sanitize(text, tab_size=None) == text


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(), max_size=5))
def test_piecewise_equals_whole(parts):
    # Renderers sanitise span by span; that must give the same text as the
    # whole (apart from a CRLF split across two pieces).
    whole = "".join(parts)
    if any(p.endswith("\r") for p in parts[:-1]):
        return
    assert "".join(make_visible(p) for p in parts) == make_visible(whole)


@settings(max_examples=150, deadline=None)
@given(st.text())
def test_idempotent(text):
    once = sanitize(text)
    assert sanitize(once) == once
