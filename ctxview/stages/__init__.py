"""The what-if stages, in the order the pipeline runs them: a module each, a line each here.

To add one: write a module in this folder that makes a `Stage` named STAGE
(declare.py says what it holds) and add the module's name to STAGE_MODULES.
Its options become fields of Settings, keys of the config and session files,
flags of the command line and rows of the settings dialog; its words go into
the view's name and onto the status bar; its `rewrite` rule runs in both
pipelines (after clearing, before the summary, the reminders and the budget,
which measure what it left).
"""

from __future__ import annotations

import importlib

from ctxview.stages.declare import Field, Option, Stage

__all__ = ["Field", "Option", "STAGES", "STAGE_MODULES", "Stage", "options"]

# The modules of this folder that make a STAGE, in the order the pipeline runs them.
STAGE_MODULES = (
    "tiers",
    "clearing",
    "thinking",
    "old_messages",
    "compaction",
    "ephemeral",
    "budget",
)
STAGES: tuple[Stage, ...] = tuple(importlib.import_module(f"ctxview.stages.{name}").STAGE for name in STAGE_MODULES)


def options(stages: tuple[Stage, ...] = STAGES) -> tuple[Option, ...]:
    """Every stage's options, in the stages' order."""
    return tuple(option for stage in stages for option in stage.options)
