"""The Anthropic API's server-side compaction, compact_20260112, a what-if (given by --api-edit).

Once a request's input reaches the trigger, the conversation before it is
replaced by a summary. It runs in the summary's step (engine/api_edits.py,
compaction_point, then engine/budget.py, plan_summary): its point depends on
the whole context.
"""

from __future__ import annotations

from ctxview.edit_settings import CompactSettings
from ctxview.stages.declare import Option, Stage, object_from, short_number

__all__ = ["STAGE"]


def _problems(settings) -> list[str]:
    if settings.compact is not None and settings.old_messages != "keep":
        return ["compact (the API's compaction) and old_messages both replace the old messages: use one of them"]
    return []


def _status(settings) -> tuple[tuple[str, str, str], ...]:
    if settings.compact is None:
        return ()
    trigger = settings.compact.trigger
    return (f"API compact_20260112 at {trigger:,} tok", f"API compact >{short_number(trigger)}", "api-cmp"),


STAGE = Stage(
    name="compaction",
    options=(
        Option("compact", None, "the API's compact_20260112 (--api-edit gives it)", kind="object",
               type=CompactSettings, off=True, from_file=object_from(CompactSettings)),
    ),
    describe=lambda s: s.compact.describe() if s.compact is not None else None,
    status=_status,
    problems=_problems,
    reads_whole=lambda s: ("summary",) if s.compact is not None else (),
)
