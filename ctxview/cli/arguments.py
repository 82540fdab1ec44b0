"""The `ctxview` command line: its errors, option types and parsers (cli.py runs the commands)."""

from __future__ import annotations

import argparse
from typing import Any, NoReturn

from ctxview import __version__
from ctxview.settings import ClearSettings
from ctxview.stages import STAGES, Option
from ctxview.stages.declare import count_from_text
from ctxview.stages import tiers as tiers_stage

__all__ = ["InputError", "UsageError"]  # (and the parsers cli.py builds: open_parser, report_parser, prepare_parser)


class UsageError(Exception):
    """Bad command line: exit status 2."""


class InputError(Exception):
    """Unreadable or unusable input: exit status 1."""


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (`ctxview: error: ...`) and exit status 2."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see '{self.prog} --help')")


# --- option types ---------------------------------------------------------------

def _int_at_least(minimum: int, what: str):
    """A flag's type: a whole number ≥ minimum, read as the stages' options read theirs."""
    def parse(text: str) -> int:
        try:
            return count_from_text(text, minimum, what)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse


def _from_text(option: Option):
    """An option's flag's type: its declaration's parse, its errors argparse's."""
    def parse(text: str) -> Any:
        try:
            return option.parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    parse.__name__ = option.name  # (argparse names a type in "invalid <name> value")
    return parse


_tiers = _from_text(tiers_stage.STAGE.options[1])


def _api_edit(text: str):
    from ctxview.engine.api_edits import parse_api_edit  # engine only: no terminal libraries

    try:
        return parse_api_edit(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--agent", metavar="NAME", help="the conversation (agent) to use")
    for option in (o for stage in STAGES for o in stage.options if o.flag):
        # (a choice is argparse's: its "invalid choice" lists them)
        parser.add_argument(option.flag, metavar=option.metavar, dest=option.name, help=option.help,
                            **({"choices": option.choices} if option.kind == "choice" else {"type": _from_text(option)}))
    parser.add_argument("--context-window", metavar="N", type=_int_at_least(1, "--context-window"),
                        help="context window in tokens (default: from the session or the model table)")
    parser.add_argument("--format", metavar="FMT", dest="fmt",
                        help="the file's format (default: detected); see docs/formats.md")
    parser.add_argument("--lenient", action="store_true", help="skip malformed lines instead of failing")
    parser.add_argument("--counter", metavar="NAME",
                        help="token counter: auto, swarm, chars4, o200k_base, cl100k_base (default auto)")
    parser.add_argument("--request", metavar="N", type=_int_at_least(1, "--request"),
                        help="the request to show, 1-based as the inspector numbers them (default: the next one)")
    parser.add_argument("--api-edit", metavar="EDIT[:KEY=VALUE,...]", type=_api_edit, action="append", default=[],
                        help="one of the Anthropic API's own context edits as a what-if, with the API's defaults: "
                             "clear_tool_uses_20250919 (trigger, trigger_tool_uses, keep, clear_at_least, "
                             "exclude_tools=A|B, clear_tool_inputs), clear_thinking_20251015 (keep=N|all), "
                             "compact_20260112 (trigger, instructions); repeatable, e.g. "
                             "'clear_tool_uses_20250919:trigger=30000,keep=5'")


def _add_trace(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--trace", metavar="LOG",
                        help="a capture of the same session's requests (claude-trace or claude-tap log, context-lens "
                             "LHAR, HAR): compare each request as ctxview "
                             "reconstructs it (as sent) with the body really sent")


def open_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="ctxview",
        usage="ctxview [options] [FILE|DIR]\n       ctxview report FILE [options] [--json]\n"
              "       ctxview prepare FILE [options] [-o OUT] [--shape openai|anthropic]\n"
              "       ctxview sessions [DIR] [--json] [--search WORDS] [--by project|day]",
        description="Inspect what an LLM agent stored and what it sent to the model. "
                    "Without FILE, opens the session browser on the sessions Claude Code, Codex and Gemini CLI "
                    "keep (the bundled SwarmSDK demo session when there are none); with DIR, the browser on "
                    "the session files under DIR.",
        epilog="commands: 'report' prints tokens, the context-window gauge and the bloat analysis; "
               "'prepare' writes the prepared messages as JSON; 'sessions' lists the sessions. A file named like "
               "a command: "
               "'ctxview -- report' or 'ctxview ./report'.",
    )
    parser.add_argument("--version", action="version", version=f"ctxview {__version__}")
    parser.add_argument("file", nargs="?", metavar="FILE", help="session file ('-' for stdin), or a directory "
                        "to browse")
    parser.add_argument("--demo", action="store_true", help="open the bundled demo session")
    _add_common(parser)
    _add_trace(parser)
    return parser


def sessions_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="ctxview sessions", description="List the sessions (newest first) from each file's head "
                     "and tail: in DIR, else where Claude Code, Codex and Gemini CLI keep them.")
    parser.add_argument("dir", nargs="?", metavar="DIR", help="the directory to look in (default: the known places)")
    parser.add_argument("--json", action="store_true", help="print a JSON list of objects (path, format, project, "
                        "title, started, updated, messages, size_bytes, model, ...)")
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the index cache")
    parser.add_argument("--by", choices=("project", "day"), help="the recorded usage and its cost summed by project "
                        "or by day (UTC) instead of the list (each file read whole once, then kept beside the cache)")
    parser.add_argument("--search", metavar="WORDS", help="only the sessions whose text holds every word (as a "
                        "word's start, any case)")
    return parser


def report_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="ctxview report", description="Tokens stored versus prepared, the context-window "
                     "gauge and the bloat analysis, per conversation.")
    parser.add_argument("file", metavar="FILE", help="session file ('-' for stdin)")
    _add_common(parser)
    _add_trace(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--messages", action="store_true",
                        help="also list every message: tokens stored and prepared, and what changed")
    parser.add_argument("--requests", action="store_true",
                        help="also list every request: its context in the model's tokens (recorded, calibrated or "
                             "counted), what it holds by category, the prompt cache (read, written, lost and why) "
                             "and its cost")
    _add_usage_options(parser)
    return parser


# --- usage, cost and the prompt cache: the report's options -----------------------

def _price(text: str):
    from ctxview.analysis.prices import parse_price_override

    try:
        return parse_price_override(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _compare(text: str) -> list[tuple[str, dict[str, Any]]]:
    """`default,light,10:full,*:100,default+clear=3,budget=50000`: settings separated by commas, a run
    of AGE:LIMIT pairs being one tier spec; `+` joins tiers=, keep_recent=, clear= and budget= parts."""
    items: list[str] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            raise argparse.ArgumentTypeError(f"--compare: an empty setting in {text!r}")
        if items and ":" in part and ":" in items[-1].rsplit("+", 1)[-1] and "=" not in part.split("+")[0]:
            items[-1] += "," + part  # the next pair of a tier spec
        else:
            items.append(part)
    out = []
    for item in items:
        values: dict[str, Any] = {}
        for piece in item.split("+"):
            key, sep, value = piece.partition("=")
            if not sep:
                key, value = "tiers", piece
            key = {"keep": "keep_recent", "keep-recent": "keep_recent"}.get(key, key)
            try:
                if key == "tiers":
                    values["tiers"] = _tiers(value)
                elif key in ("keep_recent", "budget"):
                    values[key] = _int_at_least(0 if key == "keep_recent" else 1, key)(value)
                elif key == "clear":
                    values["clear"] = ClearSettings(keep=_int_at_least(0, "clear")(value))
                else:
                    raise argparse.ArgumentTypeError(f"unknown part {key!r} (tiers, keep_recent, clear, budget)")
            except argparse.ArgumentTypeError as exc:
                raise argparse.ArgumentTypeError(f"--compare {item!r}: {exc}") from None
        out.append((item, values))
    return out


def _add_usage_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--price", metavar="MODEL=IN,OUT,CACHE_READ,CACHE_WRITE[,CACHE_WRITE_1H]", type=_price,
                        action="append", default=[],
                        help="a model's prices in dollars per million tokens, over genai-prices' table; the "
                             "fifth, the 1-hour cache write (default: twice the input) (repeatable)")
    parser.add_argument("--cache-ttl", choices=("5m", "1h"), default=None,
                        help="the prompt cache's lifetime in the simulation (default: the file's, from its recorded "
                             "1-hour or 5-minute writes, else 5m; 1h writes cost more)")
    parser.add_argument("--compare", metavar="SETTINGS", type=_compare, default=[],
                        help="replay every request under each setting and compare tokens, cache reads and cost "
                             "with the as-sent view, e.g. 'default,light,aggressive,swarm-auto,off', "
                             "'10:full,*:100', 'default+clear=3', 'budget=50000'")


def price_table(args: argparse.Namespace):
    from ctxview.analysis.prices import PriceTable

    return PriceTable(dict(args.price))


def prepare_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="ctxview prepare", description="Write the prepared messages, as the model would get "
                     "them, as JSON (stdout without -o).")
    parser.add_argument("file", metavar="FILE", help="session file ('-' for stdin)")
    _add_common(parser)
    parser.add_argument("-o", "--output", metavar="OUT", help="write here (atomically) instead of stdout (- is "
                        "stdout): a regular file or a new path, never the input")
    parser.add_argument("--follow-symlink", action="store_true",
                        help="when OUT is a symbolic link, write the file it points to (refused otherwise)")
    parser.add_argument("--shape", choices=("openai", "anthropic"), default=None,
                        help="request shape (default: the source's own, as the inspector's w offers: anthropic "
                             "for Claude Code and Anthropic files and for sessions on a Claude model, else openai)")
    parser.add_argument("--model", metavar="NAME", help="the body's model (default: the one the session recorded)")
    parser.add_argument("--max-tokens", metavar="N", type=_int_at_least(1, "--max-tokens"),
                        help="max_tokens of an Anthropic body (default: the recorded request's, else 8192)")
    parser.add_argument("--stats", action="store_true",
                        help="print what was prepared (messages, tokens, what changed) to stderr")
    return parser


