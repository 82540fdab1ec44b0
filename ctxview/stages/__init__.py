"""The what-if stages, in the order the pipeline runs them: one module each, one line here.

To add one: write a module that makes a `Stage` (declare.py says what it holds)
and list it below. Its options become fields of Settings, keys of the config
and session files, flags of the command line and rows of the settings
dialog; its names go into the view's name and the status bar; a `rewrite`
rule runs in both pipelines (after clearing, before the summary, the
reminders and the budget, which measure what it left).
"""

from __future__ import annotations

from ctxview.stages import budget, clearing, compaction, ephemeral, old_messages, thinking, tiers
from ctxview.stages.declare import Field, Option, Stage

__all__ = ["Field", "Option", "STAGES", "Stage", "options"]

STAGES: tuple[Stage, ...] = (
    tiers.STAGE,
    clearing.STAGE,
    thinking.STAGE,
    old_messages.STAGE,
    compaction.STAGE,
    ephemeral.STAGE,
    budget.STAGE,
)


def options(stages: tuple[Stage, ...] = STAGES) -> tuple[Option, ...]:
    """Every stage's options, in the stages' order."""
    return tuple(option for stage in stages for option in stage.options)
