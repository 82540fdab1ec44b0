"""Tool-name detection remembered per text: detect_tool_name's twin for loops over many results.

Detection depends on the text only, so what is remembered is shared by every policy and survives
tier changes (identity_table says why an id found here is the id of the text stored).
"""

from __future__ import annotations

from ctxview.engine.tool_names import detect_tool_name
from ctxview.identity_table import IdentityTable

__all__ = ["NameTable", "UNNAMED"]

CACHE_LIMIT = 400_000  # entries before the table is emptied
UNNAMED = object()  # not detected yet (a detected name may be None)


class NameTable(IdentityTable):
    """{id(text): detected name}: detect_tool_name remembered per text object (the texts of a
    loaded session do not change). The compressor's Memo owns one (a PipelineCache's memo)."""

    __slots__ = ()

    def __init__(self, limit: int = CACHE_LIMIT) -> None:
        super().__init__(limit)

    def detect(self, text: str) -> str | None:
        """detect_tool_name(text), remembered."""
        if self.pending:
            self.settle()
        name = self.results.get(id(text), UNNAMED)
        if name is UNNAMED:
            name = detect_tool_name(text)
            if len(self.kept) >= self.limit:
                self.clear()
            self.kept.append(text)
            self.results[id(text)] = name
        return name  # type: ignore[return-value]
