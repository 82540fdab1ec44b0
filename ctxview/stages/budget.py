"""The budget, a what-if: the whole request fitted to so many of the model's tokens.

The rule is engine/budget.py (fit_to_budget): the oldest units are dropped
until what is sent (the system prompt and tools too) fits; the recent part and
an inserted summary stay. Which are kept depends on the whole context.
"""

from __future__ import annotations

from ctxview.stages.declare import Option, Stage, short_number

__all__ = ["STAGE"]

STAGE = Stage(
    name="budget",
    options=(
        Option("budget", None, "fit the whole request (system prompt and tools too) to this many of the model's "
               "tokens, calibrated on the file's recorded requests (oldest dropped first)", minimum=1, off=True,
               label="budget (model tokens)", flag="--budget", metavar="TOKENS", placeholder="off"),
    ),
    describe=lambda s: None if s.budget is None else f"budget {s.budget:,}",
    status=lambda s: () if s.budget is None else (
        (f"budget {s.budget:,}", f"budget {short_number(s.budget)}", f"b={short_number(s.budget)}"),),
    reads_whole=lambda s: ("budget",) if s.budget is not None else (),
    palette="Token budget (or off)",
)
