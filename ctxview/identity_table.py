"""A cache keyed by an object's identity, for values derived from immutable objects.

The engine caches results per message or per text by the tens of thousands.
Keying by `id(obj)` never hashes a long text; keeping `obj` in the table
guards the key (an id is not reused while its object is alive), so a hit is
always the entry of that very object.
"""

from __future__ import annotations

from typing import Any

__all__ = ["IdentityTable"]


class IdentityTable:
    """{id(source): (source, name, result)} as parallel dicts, emptied when it holds `limit` entries.

    Parallel dicts rather than a tuple per entry: tens of thousands of entries
    are added per recompute, and a tuple each would be one more object for the
    cyclic GC to walk. `name` is an optional second part of the key (a tool
    name given by the caller); it is stored only when not None. Hot loops read
    the dicts directly (`results.get(id(x))`, then check `sources[key] is x`).
    """

    __slots__ = ("sources", "names", "results", "limit")

    def __init__(self, limit: int) -> None:
        self.sources: dict[int, Any] = {}
        self.names: dict[int, str | None] = {}
        self.results: dict[int, Any] = {}
        self.limit = limit

    def __len__(self) -> int:
        return len(self.results)

    def get(self, source: Any, name: str | None = None) -> Any:
        """The result stored for (source, name), or None."""
        key = id(source)
        hit = self.results.get(key)
        if hit is not None and self.sources[key] is source and self.names.get(key) == name:
            return hit
        return None

    def put(self, source: Any, result: Any, name: str | None = None) -> None:
        if len(self.results) >= self.limit:
            self.sources.clear()
            self.names.clear()
            self.results.clear()
        key = id(source)
        self.sources[key] = source
        if name is not None:
            self.names[key] = name
        elif self.names:
            self.names.pop(key, None)
        self.results[key] = result
