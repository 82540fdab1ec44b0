"""The recorded ephemeral reminders: added to the request they were sent with (the seed's
embed_ephemeral, engine/context_manager.py). On by default, for that is what was sent;
leaving them out is the what-if."""

from __future__ import annotations

from ctxview.stages.declare import Option, Stage

__all__ = ["STAGE"]

STAGE = Stage(
    name="ephemeral",
    options=(
        Option("embed_ephemeral", True, "the recorded ephemeral reminders, added where they were sent",
               kind="switch", label="ephemeral reminders"),
    ),
    describe=lambda s: None if s.embed_ephemeral else "ephemeral reminders left out",
    status=lambda s: () if s.embed_ephemeral else (("ephemeral reminders left out", "no ephemeral", "-eph"),),
    palette="Ephemeral reminders on/off",
)
