"""A sequence that is another with a few positions replaced, without copying it.

A keep_recent step changes the rows between two boundaries (a few, for a
press of + or -); copying the previous view's prepared messages and row
entries around them costs more than the step itself at 100k+ messages (each
copied reference touches a message's header: cache misses, ~7 ms per 100k).
`Spliced` reads through to the previous sequence instead.
"""

from __future__ import annotations

from typing import Any, Iterator, Sequence

__all__ = ["MAX_PATCH", "Spliced", "spliced"]

# A patch holding more positions than this (and more than 1/8 of the sequence) is folded into a
# plain copy: reads stay O(1), the patches of successive steps stay small to merge.
MAX_PATCH = 4_096


class Spliced(Sequence[Any]):
    """`base` with the items at the positions of `patch` (position -> item) replaced. Reads like
    the tuple it stands for (==, hash, +, slices are tuples); `entry[i] = x` replaces one more
    (view.Rows keeps the rows it made so)."""

    __slots__ = ("base", "patch")

    def __init__(self, base: Sequence[Any], patch: dict[int, Any]) -> None:
        self.base, self.patch = base, patch

    def __len__(self) -> int:
        return len(self.base)

    def __getitem__(self, i):  # type: ignore[override]
        if type(i) is slice:
            return tuple(self[j] for j in range(*i.indices(len(self.base))))
        if i < 0:
            i += len(self.base)
        hit = self.patch.get(i, self)
        if hit is not self:
            return hit
        return self.base[i]

    def __setitem__(self, i: int, item: Any) -> None:
        if i < 0:
            i += len(self.base)
        if not 0 <= i < len(self.base):
            raise IndexError(i)
        self.patch[i] = item

    def __iter__(self) -> Iterator[Any]:
        patch = self.patch
        if not patch:
            return iter(self.base)
        return (patch.get(i, item) for i, item in enumerate(self.base))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (tuple, Spliced)):
            return len(self) == len(other) and all(a is b or a == b for a, b in zip(self, other))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __add__(self, other: object) -> tuple:
        if isinstance(other, (tuple, Spliced)):
            return tuple(self) + tuple(other)
        return NotImplemented

    def __radd__(self, other: object) -> tuple:
        if isinstance(other, tuple):
            return other + tuple(self)
        return NotImplemented

    def __repr__(self) -> str:
        return f"Spliced({len(self.base):,} items, {len(self.patch):,} replaced)"


def spliced(previous: Sequence[Any], lo: int, items: Sequence[Any], copy: type = tuple) -> Sequence[Any]:
    """`previous` with items[k] at position lo + k: a Spliced over `previous` (over its base, when
    it is one), or, once the replaced positions are many, a plain `copy` (tuple or list)."""
    changes = {lo + k: item for k, item in enumerate(items)}
    if type(previous) is Spliced:
        base, patch = previous.base, {**previous.patch, **changes}
    else:
        base, patch = previous, changes
    if len(patch) > MAX_PATCH and len(patch) > len(base) // 8:
        flat = Spliced(base, patch)
        return copy(flat)
    return Spliced(base, patch)
