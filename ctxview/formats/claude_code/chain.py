"""The chain of a Claude Code conversation: the entries on the path to its last message, and side chains apart."""

from __future__ import annotations

from typing import Any

from .records import AGENT, ASSISTANT, DATA, K, KIND, NODE, O, P, SIDE, USER, origin_text

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
    # it when a result was written in between: the model made those calls too.
    calls: set[str] = set()
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
    if mids:
        for i, e in enumerate(entries):
            if not visited[i] and e[KIND] == ASSISTANT and e[DATA][0] in mids and e[P] in on_path:
                visited[i] = 1
                path.append(i)
                on_path.add(e[K])
    for i in path:
        e = entries[i]
        if e[KIND] == ASSISTANT:
            for c in e[DATA][4]:
                calls.add(c.id)
    open_calls = calls - answered
    if open_calls:
        for i, e in enumerate(entries):
            if (not visited[i] and e[KIND] == USER and e[P] in on_path and e[DATA][0]
                    and not e[DATA][1] and all(r[0] in open_calls for r in e[DATA][0])):
                path.append(i)
                open_calls.difference_update(r[0] for r in e[DATA][0])
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
