"""The Anthropic API's clear_thinking_20251015 edit, a what-if (given by --api-edit).

The rule is engine/api_edits.py (plan_thinking_clearing): the thinking of the
`keep` most recent assistant turns that have thinking is kept, older turns'
thinking is cleared. Which turns keep it depends on the later ones.
"""

from __future__ import annotations

from ctxview.edit_settings import ThinkingClearSettings
from ctxview.stages.declare import Option, Stage, object_from

__all__ = ["STAGE"]


def _status(settings) -> tuple[tuple[str, str, str], ...]:
    if settings.clear_thinking is None:
        return ()
    keep = settings.clear_thinking.keep
    return (f"API clear_thinking_20251015: keep {keep}", f"API thinking {keep}", f"api-thk={keep}"),


STAGE = Stage(
    name="thinking",
    options=(
        Option("clear_thinking", None, "the API's clear_thinking_20251015 edit (--api-edit gives it)", kind="object",
               type=ThinkingClearSettings, off=True, from_file=object_from(ThinkingClearSettings)),
    ),
    describe=lambda s: s.clear_thinking.describe() if s.clear_thinking is not None else None,
    status=_status,
    reads_whole=lambda s: ("thinking",) if s.clear_thinking is not None else (),
)
