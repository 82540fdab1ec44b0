"""The chain of a Claude Code conversation: the entries on the path to its last message, and side chains apart."""

from __future__ import annotations

from typing import Any

from ctxview.formats.claude_code.records import AGENT, ASSISTANT, DATA, K, KIND, NODE, O, P, SIDE, USER, origin_text

def chain_of(entries: list[tuple], branched: bool = True) -> list[tuple]:
    """The entries on the path ending at the last message, oldest first.

    Follows parent links; where a record has no (known) parent but is not the
    first record, continues with the record just before it in the file, so
    files without links (hand-written, exported) keep their line order.
    Without branches (no parent with two message children) that path is every
    entry in file order, so it is not walked.
    """
    if not branched:
        return entries
    n = len(entries)
    leaf = None
    for i in range(n - 1, -1, -1):
        if entries[i][KIND] != NODE:
            leaf = i
            break
    if leaf is None:
        return []
    pos = {e[K]: i for i, e in enumerate(entries)}
    visited = bytearray(n)
    path: list[int] = []
    i = leaf
    while i is not None:
        visited[i] = 1
        path.append(i)
        p = entries[i][P]
        j = pos.get(p) if p is not None else None
        if j is not None and not visited[j]:
            i = j
            continue
        # a root (or a dangling or cyclic link): fall back to file order
        k = i - 1
        while k >= 0 and visited[k]:
            k -= 1
        i = k if k >= 0 else None
    # Parallel tool calls: each result's parent is the line of its own call, so
    # all but the last result hang off the path as siblings. Take them back in.
    # Likewise the later lines of one streamed response (same message.id) can hang off
    # such a result, or off a progress line after it, when Claude Code wrote the result
    # before the next call of the response (its sub-agents do: six calls of one response
    # over twelve lines, each a child of the line before): the model made those calls too.
    # Parents are written before their children and calls before their results, so one
    # pass in file order takes in every such line, however deep it hangs off the path.
    answered: set[str] = set()
    on_path: set = set()
    mids: set[str] = set()
    for i in path:
        e = entries[i]
        on_path.add(e[K])
        if e[KIND] == ASSISTANT:
            if e[DATA][0]:
                mids.add(e[DATA][0])
        elif e[KIND] == USER:
            for r in e[DATA][0]:
                answered.add(r[0])
    open_calls = {c.id for i in path if entries[i][KIND] == ASSISTANT for c in entries[i][DATA][4]} - answered
    for i, e in enumerate(entries):
        if visited[i] or e[P] not in on_path:
            continue
        kind = e[KIND]
        if kind == ASSISTANT:
            if not e[DATA][0] or e[DATA][0] not in mids:
                continue
            open_calls.update(c.id for c in e[DATA][4] if c.id not in answered)
        elif kind == USER:
            data = e[DATA]
            if not data[0] or data[1] or not all(r[0] in open_calls for r in data[0]):
                continue
            open_calls.difference_update(r[0] for r in data[0])
        elif kind == NODE:  # a progress line between them: on the way, no message of its own
            on_path.add(e[K])
            continue
        else:
            continue
        visited[i] = 1
        path.append(i)
        on_path.add(e[K])
    path.sort()  # parents are written before their children: file order is model order
    return [entries[i] for i in path]


def split_chains(entries: list[tuple], all_main: bool,
            linked: bool = True) -> tuple[list[tuple], list[tuple[str, list[tuple]]]]:
    """Main-chain entries, and side-chain entries grouped by conversation name: agent-<id>
    (the name of the sub-agent's own file), else by chain root; without any parent link in
    the file, side entries of no agent are one side chain in file order."""
    if all_main:
        return entries, []
    main = [e for e in entries if not e[SIDE]]
    if len(main) == len(entries):
        return main, []
    side: dict[str, list[tuple]] = {}
    parent_of = {e[K]: e[P] for e in entries if e[SIDE]}
    origin_of = {e[K]: e[O] for e in entries if e[SIDE]}
    roots: dict = {}
    for e in entries:
        if not e[SIDE]:
            continue
        if e[AGENT]:
            gid = f"agent-{e[AGENT]}"
        elif not linked:
            gid = "sidechain"
        else:
            gid = "sidechain from " + origin_text(origin_of[_root(e[K], parent_of, roots)])
        side.setdefault(gid, []).append(e)
    return main, list(side.items())


def _root(key: Any, parent_of: dict, cache: dict) -> Any:
    trail: list = []
    on_trail: set = set()
    k = key
    while True:
        if k in cache:
            root = cache[k]
            break
        p = parent_of.get(k)
        if p is None or p not in parent_of or p in on_trail or p == k:
            root = k
            break
        trail.append(k)
        on_trail.add(k)
        k = p
    for t in trail:
        cache[t] = root
    cache[k] = root
    return root
