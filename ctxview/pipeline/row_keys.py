"""Row keys: what a changed row's changes are made of, as one flat tuple.

A row key is (index, *specs); a spec is a kind and its figures (SPEC_FIELDS
names them). Rows are kept by key (or by index, for the common shapes the
predicates below name), and a row's Changes are made from its key only
when the row is first read.
"""

from __future__ import annotations

from typing import Any, Iterator, Sequence

from ctxview.engine import compression
from ctxview.model import Message
from ctxview.engine.view import Change
from ctxview.pipeline import changes as made

# (the table of a cache that interns changes: interned.Interned, which builds on this module)
Interned = Any

class Specs:
    """What changed, per stored index: the key of each changed message's row, (index, *specs)
    (see changes_of). Stage 1's compression is read from its messages (the bulk of a view: no
    tuple per result); the specs the later stages add are kept by index."""

    __slots__ = ("n", "tag", "stage1", "msgs", "compressed", "more")

    def __init__(self, n: int, tag: int, stage1: Sequence[Message], msgs: Sequence[Message],
                 compressed: Sequence[int]) -> None:
        self.n, self.tag = n, tag
        self.stage1, self.msgs = stage1, msgs   # stage 1's messages and the stored ones
        self.compressed = compressed             # the indices where they differ, in order
        self.more: dict[int, tuple] = {}

    def copy(self) -> Specs:
        other = Specs(self.n, self.tag, self.stage1, self.msgs, self.compressed)
        other.more = dict(self.more)
        return other

    def get(self, i: int) -> tuple:
        spec = self.more.get(i)
        if spec is None:
            spec = (i, "compressed", self.n - i, self.tag) if self.stage1[i] is not self.msgs[i] else (i,)
        return spec

    def add(self, i: int, *spec: Any) -> None:
        self.more[i] = self.get(i) + spec

    def indices(self) -> Iterator[int]:
        """Every index with a spec (some twice)."""
        yield from self.compressed
        yield from self.more


# What each kind of spec holds after its kind: a row's specs are one flat tuple, (index, *specs).
SPEC_FIELDS: dict[str, tuple[str, ...]] = {
    "compressed": ("age", "policy_tag"),
    "cleared": ("saved", "inputs_cleared", "is_result", "keep"),
    "thinking_cleared": ("keep", "saved"),
    "rewritten_by": ("stage", "words", "saved"),
    "ephemeral": ("pieces", "added"),
    "excerpted": ("boundary", "cut", "saved"),
    "removed": ("boundary", "total", "tokens"),
    "summarised": ("boundary", "total", "tokens"),
    "dropped": ("budget", "tokens"),
}
SPEC_LENGTHS = {kind: 1 + len(fields) for kind, fields in SPEC_FIELDS.items()}  # kind included

# Positions in a key, named: where the spec after a compression starts, and where the spec after a
# compression and a clearing starts; the cleared spec's flags.
AFTER_COMPRESSED = 1 + SPEC_LENGTHS["compressed"]
_AFTER_CLEARED = AFTER_COMPRESSED + SPEC_LENGTHS["cleared"]
_CLEARED_INPUTS = AFTER_COMPRESSED + 1 + SPEC_FIELDS["cleared"].index("inputs_cleared")
_CLEARED_IS_RESULT = AFTER_COMPRESSED + 1 + SPEC_FIELDS["cleared"].index("is_result")
_EPHEMERAL_LENGTH = SPEC_LENGTHS["ephemeral"]
_GONE = ("removed", "summarised", "dropped")


def spec_fields(spec: tuple) -> dict[str, Any]:
    """One spec (kind, *figures) as {field: value} (for reading a key; the pipeline keeps them flat)."""
    return dict(zip(SPEC_FIELDS[spec[0]], spec[1:]))


def by_index(key: tuple) -> bool:
    """Whether the row of `key` is kept by index in the compressed-rows table of (counter, policy
    tag, n): compressed, maybe then embedded. The table fixes the age and tag; the embedded message
    (one object per body and reminder tuple, so per piece count) and its tokens are fixed by the
    row's prepared message, which a hit must be."""
    end = len(key)
    return key[1] == "compressed" and (end == AFTER_COMPRESSED or (
        end == AFTER_COMPRESSED + _EPHEMERAL_LENGTH and key[AFTER_COMPRESSED] == "ephemeral"))


def cleared_by_index(key: tuple) -> bool:
    """Whether the row of `key` is kept by index in the table of (counter, policy tag, n, clear.keep):
    compressed then cleared (maybe then embedded), a tool result whose calls were not emptied. The
    table fixes age, tag and keep; the prepared message, which a hit must be, is the one blanked
    object of its compressed message (so fixes the tokens saved) or the one embedding of it."""
    end = len(key)
    return (key[1] == "compressed" and (end == _AFTER_CLEARED or (
                end == _AFTER_CLEARED + _EPHEMERAL_LENGTH and key[_AFTER_CLEARED] == "ephemeral"))
            and key[AFTER_COMPRESSED] == "cleared" and key[_CLEARED_INPUTS] is False
            and key[_CLEARED_IS_RESULT] is True)


def gone_by_index(key: tuple) -> bool:
    """Whether the row of `key` is kept by index in the table of (counter, policy tag, n, "gone"):
    removed, summarised or dropped, with at most a compression before. The table fixes the
    compression's age and tier; its figures then follow from the stored message (nothing is
    prepared), and the last spec is one shared Change, which a hit's last change must be."""
    p = AFTER_COMPRESSED if key[1] == "compressed" else 1
    return len(key) > p and key[p] in _GONE and len(key) == p + SPEC_LENGTHS[key[p]]


def changes_of(key: tuple, policy: compression.CompressionPolicy, stored_tokens: int, prepared_tokens: int,
               stored: Message, interned: Interned, start: int = 1) -> tuple[Change, ...]:
    """The Changes of a row key (index, *specs) from position `start` on, one per spec, in order
    (all but a compression's the one object `interned` keeps for its spec)."""
    out = []
    p, end = start, len(key)
    while p < end:
        kind = key[p]
        q = p + SPEC_LENGTHS[kind]
        if kind == "compressed":
            out.append(change_of(key[p:q], policy, stored_tokens, prepared_tokens, stored, interned))
        else:
            out.append(interned.change(key[p:q]))
        p = q
    return tuple(out)


def change_of(spec: tuple, policy: compression.CompressionPolicy, stored_tokens: int, prepared_tokens: int,
              stored: Message, interned: Interned | None = None) -> Change:
    """The Change a spec tuple stands for (see changes.py), its names and lines from `interned`'s
    tables when given."""
    kind = spec[0]
    if kind == "compressed":  # spec[2]: the policy's tag, so rows of different tiers are cached apart
        if interned is not None:
            return made.compressed(policy, spec[1], len(stored.text), stored_tokens - prepared_tokens, interned.tier)
        return made.compressed(policy, spec[1], len(stored.text), stored_tokens - prepared_tokens)
    if kind == "cleared":
        _, saved, _inputs, is_result, keep = spec
        return made.cleared(saved, is_result, keep)
    if kind == "thinking_cleared":
        return made.thinking_cleared(spec[1], spec[2])
    if kind == "ephemeral":
        return made.ephemeral(spec[1], spec[2])
    if kind == "rewritten_by":
        return made.rewritten_by(spec[1], spec[2], spec[3])
    if kind == "excerpted":
        return made.excerpted(spec[1], spec[2], spec[3])
    detail = made.detail_line if interned is None else interned.detail
    if kind in ("removed", "summarised"):
        return made.removed(*spec, detail)
    if kind == "dropped":
        return made.dropped(spec[1], spec[2], detail)
    raise AssertionError(f"unknown change {kind!r}")  # pragma: no cover
