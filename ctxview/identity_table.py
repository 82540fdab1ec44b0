"""A cache keyed by an object's identity, for values derived from immutable objects.

The engine caches results per message or per text by the tens of thousands.
Keying by `id(obj)` never hashes a long text; keeping `obj` alive in the table
guards the key (an id is not reused while its object is alive), so a hit is
always the entry of that very object.
"""

from __future__ import annotations

from typing import Any

__all__ = ["IdentityTable"]


class IdentityTable:
    """{id(source): result}, with an optional name as a second part of the key, emptied when it
    holds `limit` entries.

    The sources are appended to a list, which keeps them alive: while an entry exists the object
    it was stored for is alive and no other live object has its id, so an entry found under id(x)
    for a live x is x's, and a hit is one dict lookup. (A second dict of sources checked on every
    hit made a store two big-dict stores; a cold compression run over 100k messages fills three
    tables of 50k entries, and every store into a big dict is a cache miss: issue 16.) `names`
    holds only the keys stored with a name. Hot loops read the fields directly
    (compression._compress_into): `results.get(id(x))`, and for a new key with no name,
    `kept.append(x)` then `results[id(x)] = ...`, which keeps `len(kept) == len(results)`.
    """

    __slots__ = ("results", "names", "kept", "limit")

    def __init__(self, limit: int) -> None:
        self.results: dict[int, Any] = {}
        self.names: dict[int, str] = {}
        self.kept: list[Any] = []
        self.limit = limit

    def __len__(self) -> int:
        return len(self.results)

    def get(self, source: Any, name: str | None = None) -> Any:
        """The result stored for (source, name), or None."""
        key = id(source)
        hit = self.results.get(key)
        if hit is not None and self.names.get(key) == name:
            return hit
        return None

    def put(self, source: Any, result: Any, name: str | None = None) -> None:
        key = id(source)
        if key not in self.results:  # (a key present is this source's: it is kept already)
            if len(self.results) >= self.limit:
                self.results.clear()
                self.names.clear()
                self.kept.clear()
            self.kept.append(source)
        if name is not None:
            self.names[key] = name
        elif self.names:
            self.names.pop(key, None)
        self.results[key] = result
