"""`ctxview sessions`: the list, the sessions whose text holds some words (`--search`), or the
recorded usage and cost summed by project or day (`--by`), as text or JSON."""

from __future__ import annotations

import argparse
import shutil
import sys
from typing import Callable, Sequence

from ctxview.sessions import SessionRow

__all__ = ["sessions_output"]


def sessions_output(rows: Sequence[SessionRow], args: argparse.Namespace, notice: Callable[[str], None]) -> str:
    """What `ctxview sessions` prints for the rows of the index."""
    from ctxview.export.bodies import dumps
    from ctxview.sessions.columns import table, totals_table
    from ctxview.sessions.contents import open_contents

    width = shutil.get_terminal_size((160, 24)).columns if sys.stdout.isatty() else 1000
    contents = None
    if args.search is not None or args.by is not None:
        contents = open_contents(notice=notice, cache=not args.no_cache)
        contents.update(rows)
        unread = contents.unread()
        if unread:  # (said on stderr: the search and the totals leave them out)
            why = next(iter(unread.values()))
            more = f" (and {len(unread) - 1:,} more)" if len(unread) > 1 else ""
            notice(f"{len(unread):,} session file(s) could not be read whole, so the search and the totals "
                   f"leave them out: {why}{more}")
    if args.search is not None:
        found = contents.search(args.search) or set()  # type: ignore[union-attr]
        rows = [r for r in rows if r.path in found]
    if args.by is not None:
        totals = contents.totals(rows, args.by)  # type: ignore[union-attr]
        if args.json:
            return dumps([t.to_json(args.by) for t in totals])
        return totals_table(totals, args.by, width, contents.sessions_with_usage(rows))  # type: ignore[union-attr]
    if args.json:
        return dumps([row.as_json() for row in rows])
    return table(list(rows), width, contents.cost_by_path() if contents is not None else None)
