"""Untrusted text made safe to display: every invisible or terminal-active
character is replaced by something visible.

Session text comes from models and tools. Written raw to a terminal, an ESC
starts an escape sequence (colours, cursor moves, an OSC that sets the window
title or a hyperlink), C1 controls do the same in 8-bit form, NUL and other
C0 controls can corrupt the screen, and bidi overrides reorder what the
reader sees (the "Trojan Source" trick). Format characters such as zero-width
spaces or Unicode tag characters hide text ("ASCII smuggling").

- C0 controls and DEL become their Control Pictures (ESC → ␛, NUL → ␀,
  BEL → ␇, DEL → ␡), so `ESC[31m` shows as `␛[31m` and does nothing.
- C1 controls, lone surrogates, format characters (bidi marks, overrides and
  isolates, zero-width characters, tag characters, BOM, soft hyphen, ...) and
  the line/paragraph separators become `<U+XXXX>`.
- `\\n` is kept; `\\r\\n` becomes `\\n`; a lone `\\r` shows as ␍.
- `\\t` is expanded to spaces by `sanitize` (or kept by `make_visible`, for
  renderers that expand tabs themselves).

This does not escape Rich/Textual markup: `[bold]` is ordinary text here.
Renderers must build Text objects from the result, never markup strings.
"""

from __future__ import annotations

import re

__all__ = ["UNSAFE", "excerpt", "is_clean", "make_visible", "safe_file_name", "sanitize", "utf8_text", "visible_char"]

# Format (Cf) characters and the Zl/Zp separators, as ranges. Covers Unicode
# 14 (Python 3.11) plus the later additions in the same blocks; a test checks
# this against the running interpreter's unicodedata.
_FORMAT_RANGES = (
    (0x00AD, 0x00AD),    # soft hyphen
    (0x0600, 0x0605),    # Arabic number signs
    (0x061C, 0x061C),    # Arabic letter mark (bidi)
    (0x06DD, 0x06DD),
    (0x070F, 0x070F),
    (0x0890, 0x0891),
    (0x08E2, 0x08E2),
    (0x180E, 0x180E),    # Mongolian vowel separator
    (0x200B, 0x200F),    # zero-width space/non-joiner/joiner, LRM, RLM
    (0x2028, 0x202E),    # line/paragraph separator, bidi embeddings and overrides
    (0x2060, 0x2064),    # word joiner, invisible operators
    (0x2066, 0x206F),    # bidi isolates, deprecated format characters
    (0xFEFF, 0xFEFF),    # BOM / zero-width no-break space
    (0xFFF9, 0xFFFB),    # interlinear annotation
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x1343F),  # Egyptian hieroglyph format controls
    (0x1BCA0, 0x1BCA3),  # shorthand format controls
    (0x1D173, 0x1D17A),  # musical symbol format controls
    (0xE0001, 0xE0001),  # language tag
    (0xE0020, 0xE007F),  # tag characters (invisible ASCII copies)
)


def _char_class() -> str:
    parts = [
        r"\x00-\x08",        # C0 before TAB
        r"\x0b-\x1f",        # C0 after LF (CR handled here too)
        r"\x7f-\x9f",        # DEL and C1
        r"\ud800-\udfff",    # lone surrogates (can't be encoded for output)
    ]
    for lo, hi in _FORMAT_RANGES:
        parts.append(re.escape(chr(lo)) if lo == hi else f"{re.escape(chr(lo))}-{re.escape(chr(hi))}")
    return "[" + "".join(parts) + "]"


_UNSAFE = re.compile(_char_class())
UNSAFE = _UNSAFE  # one unsafe character; export.dumps escapes the same set in its JSON


def visible_char(ch: str) -> str:
    """The visible stand-in for one unsafe character (the character itself if safe)."""
    cp = ord(ch)
    if cp < 0x20:
        if ch in "\n\t":
            return ch
        return chr(0x2400 + cp)  # Control Pictures: ␀ .. ␟
    if cp == 0x7F:
        return "\u2421"  # ␡
    if _UNSAFE.match(ch):
        return f"<U+{cp:04X}>"
    return ch


def _replace(match: re.Match[str]) -> str:
    return visible_char(match.group())


def is_clean(text: str) -> bool:
    """True when `text` holds nothing `make_visible` would change (tabs allowed)."""
    return _UNSAFE.search(text) is None


def make_visible(text: str) -> str:
    """Replace every unsafe character by a visible stand-in; keep `\\n` and `\\t`.

    `\\r\\n` becomes `\\n`. The result holds no C0 (other than LF and TAB),
    DEL, C1, surrogate or format character.
    """
    if "\r\n" in text:
        text = text.replace("\r\n", "\n")
    if _UNSAFE.search(text) is None:
        return text
    return _UNSAFE.sub(_replace, text)


def sanitize(text: str, tab_size: int | None = 8) -> str:
    """Untrusted text as displayable text: `make_visible`, then tabs expanded.

    `tab_size=None` keeps tabs. Newlines are kept.
    """
    text = make_visible(text)
    if tab_size is not None and "\t" in text:
        text = text.expandtabs(tab_size)
    return text


_NAME_UNSAFE = re.compile(_char_class()[:-1] + r"\n\t/\\]")


def safe_file_name(text: str) -> str:
    """`text` as a file name to offer (the inspector's default export name, from the input's name):
    every unsafe character, newline, tab and path separator becomes "_". A name is shown in an input
    box that draws what it holds as it is, so an OSC sequence in the input's name would reach the
    terminal; and a name made visible with control pictures would be a strange file to create."""
    return _NAME_UNSAFE.sub("_", text)


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def utf8_text(text: str) -> str:
    """`text` as UTF-8 can hold it: a lone surrogate (JSON's "\\ud800", which a session may hold)
    becomes U+FFFD, as an encoder with errors="replace" writes it; for what encodes strictly (the
    clipboard, SQLite)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub("\ufffd", text)
    return text


def excerpt(text: str, limit: int = 60) -> str:
    """`text` as an error line quotes it: repr'd, at most `limit` characters of it, and its length
    when cut (a 10 MB value given by mistake must not become a 10 MB line)."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}… ({len(text):,} chars)"
