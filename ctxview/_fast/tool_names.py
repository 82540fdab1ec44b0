"""Tool-name detection remembered per text: detect_tool_name's twin for loops over many results.

Detection depends on the text only, so what is remembered is shared by every policy and survives
tier changes (identity_table says why an id found here is the id of the text stored).
"""

from __future__ import annotations

from ctxview.engine.tool_names import detect_tool_name
from ctxview.identity_table import IdentityTable

__all__ = ["NAMES", "UNNAMED", "clear_names", "detect_tool_name_cached"]

CACHE_LIMIT = 400_000  # entries before the table is emptied

# {id(text): detected name}
NAMES = IdentityTable(CACHE_LIMIT)
UNNAMED = object()  # not detected yet (a detected name may be None)


def detect_tool_name_cached(text: str) -> str | None:
    """detect_tool_name, remembered per text object (the texts of a loaded session do not change)."""
    if NAMES.pending:
        NAMES.settle()
    name = NAMES.results.get(id(text), UNNAMED)
    if name is UNNAMED:
        name = detect_tool_name(text)
        if len(NAMES.kept) >= CACHE_LIMIT:
            clear_names()
        NAMES.kept.append(text)
        NAMES.results[id(text)] = name
    return name  # type: ignore[return-value]


def clear_names() -> None:
    """Forget every remembered detection."""
    NAMES.clear()
