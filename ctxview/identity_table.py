"""A cache keyed by an object's identity, for values derived from immutable objects.

The engine caches results per message or per text by the tens of thousands.
Keying by `id(obj)` never hashes a long text; keeping `obj` alive in the table
guards the key (an id is not reused while its object is alive), so a hit is
always the entry of that very object.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

__all__ = ["IdentityTable"]


class IdentityTable:
    """{id(source): result}, with an optional name as a second part of the key, emptied when it
    holds `limit` entries.

    The sources are appended to a list, which keeps them alive: while an entry exists the object
    it was stored for is alive and no other live object has its id, so an entry found under id(x)
    for a live x is x's, and a hit is one dict lookup. (A second dict of sources checked on every
    hit made a store two big-dict stores; a cold compression run over 100k messages fills three
    tables of 50k entries, and every store into a big dict is a cache miss.) `names`
    holds only the keys stored with a name. Hot loops read the fields directly
    (compression._compress_into): `results.get(id(x))`, and for a new key with no name,
    `kept.append(x)` then `results[id(x)] = ...`, which keeps `len(kept) == len(results)`.

    Entries can also be handed over in bulk, to be stored when the table is next read
    (`put_later`, `settle`): a cold run over 100k messages makes 50k results nobody may ask for
    again, and storing each into a big dict as it goes was a large share of that run. Every
    reader calls `settle()` first (get, put and len do; hot loops do when they take a table).
    """

    __slots__ = ("results", "names", "kept", "limit", "pending")

    def __init__(self, limit: int) -> None:
        self.results: dict[int, Any] = {}
        self.names: dict[int, str] = {}
        self.kept: list[Any] = []
        self.limit = limit
        self.pending: list[tuple[Sequence[Any], Iterable[Any]]] = []

    def __len__(self) -> int:
        self.settle()
        return len(self.results)

    def put_later(self, sources: Sequence[Any], results: Iterable[Any]) -> None:
        """put(source, result) for each pair in order, with no name, done when the table is next
        read. `results` is in step with `sources` and may be lazy (e.g. a map over a list): it is
        read then. The sources are kept alive meanwhile."""
        if sources:
            self.pending.append((sources, results))

    def waiting(self) -> int:
        """How many entries put_later handed over that are not stored yet."""
        return sum(len(sources) for sources, _ in self.pending)

    def settle(self) -> None:
        """Store what put_later handed over (in one dict update each, in the order given)."""
        while self.pending:
            sources, results = self.pending.pop(0)
            if len(sources) > self.limit:  # (one batch bigger than the table: its last entries)
                sources, results = sources[-self.limit:], list(results)[-self.limit:]
            if len(self.results) + len(sources) > self.limit:
                self._empty()
            new = sources
            if self.results:  # (a source stored already is kept once, and loses its name as put() does)
                new = [source for source in sources if id(source) not in self.results]
                if self.names:
                    for source in sources:
                        self.names.pop(id(source), None)
            before = len(self.results)
            self.results.update(zip(map(id, sources), results))
            if len(self.results) - before < len(new):  # a source given twice is kept once
                new = list({id(source): source for source in new}.values())
            self.kept.extend(new)

    def clear(self) -> None:
        """Forget every entry, pending ones too."""
        self.pending.clear()
        self._empty()

    def _empty(self) -> None:
        self.results.clear()
        self.names.clear()
        self.kept.clear()

    def get(self, source: Any, name: str | None = None) -> Any:
        """The result stored for (source, name), or None."""
        if self.pending:
            self.settle()
        key = id(source)
        hit = self.results.get(key)
        if hit is not None and self.names.get(key) == name:
            return hit
        return None

    def put(self, source: Any, result: Any, name: str | None = None) -> None:
        if self.pending:
            self.settle()
        key = id(source)
        if key not in self.results:  # (a key present is this source's: it is kept already)
            if len(self.results) >= self.limit:
                self._empty()
            self.kept.append(source)
        if name is not None:
            self.names[key] = name
        elif self.names:
            self.names.pop(key, None)
        self.results[key] = result
