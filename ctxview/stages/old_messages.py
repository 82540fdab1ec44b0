"""Old messages, a what-if: those before the recent part excerpted, removed or summarised.

The rule is engine/budget.py (plan_summary). The boundary is `summarize_before`,
or the recent part's start (keep_recent from the end), which moves with
keep_recent: the summary reads the whole context.
"""

from __future__ import annotations

from ctxview.stages.declare import Option, Stage

__all__ = ["OLD_MESSAGE_STRATEGIES", "STAGE"]

OLD_MESSAGE_STRATEGIES = ("keep", "truncate", "remove", "llm")
_SHORT = {"truncate": "trunc", "remove": "rm", "llm": "llm", "keep": "keep"}


def _where(settings) -> str:
    return f" before #{settings.summarize_before}" if settings.summarize_before is not None else ""


def _describe(settings) -> str | None:
    if settings.old_messages == "keep":
        return None
    return f"old messages: {settings.old_messages}{_where(settings)}"


def _status(settings) -> tuple[tuple[str, str, str], ...]:
    strategy = settings.old_messages
    if strategy == "keep":
        return ()
    return (f"old messages: {strategy}{_where(settings)}", f"old: {strategy}", f"old={_SHORT.get(strategy, strategy)}"),


STAGE = Stage(
    name="old messages",
    options=(
        Option("old_messages", "keep", "what happens to messages before the recent part: keep, truncate, remove, "
               "llm (an offline extractive summary)", kind="choice", choices=OLD_MESSAGE_STRATEGIES,
               label="old messages", flag="--old-messages", metavar="STRATEGY",
               check=lambda value: f"unknown old_messages strategy {value!r} "
                                   f"(valid: {', '.join(OLD_MESSAGE_STRATEGIES)})"),
        Option("summarize_before", None, "with --old-messages: the first message index left alone (default: the "
               "recent part)", label="  before # (empty: recent)", off=True, flag="--summarize-before",
               metavar="INDEX", placeholder="the recent part"),
    ),
    describe=_describe,
    status=_status,
    reads_whole=lambda s: ("summary",) if s.old_messages != "keep" else (),
    palette="Old messages strategy (keep, truncate, remove, llm)",
)
