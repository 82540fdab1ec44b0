"""The `ctxview` command.

    ctxview [FILE] [options]              open the inspector (the bundled demo without FILE)
    ctxview report FILE [options] [--json]
    ctxview prepare FILE [options] [-o OUT] [--shape openai|anthropic]

A first argument `report` or `prepare` is the subcommand; to open a file of
that name write `ctxview -- report` or `ctxview ./report`.

Exit status: 0 success, 2 usage error, 1 unreadable input; errors are one
line, `ctxview: error: ...`, never a traceback. The TUI (Textual) is imported
only when the app opens, Rich only when a report is printed to a terminal,
so `--help`, `--version`, `report --json` and `prepare` start fast.
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
from typing import Any, NoReturn, Sequence

from . import __version__
from .view import OLD_MESSAGE_STRATEGIES, ClearSettings

SUBCOMMANDS = ("report", "prepare")
EXIT_OK, EXIT_INPUT, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Bad command line: exit status 2."""


class InputError(Exception):
    """Unreadable or unusable input: exit status 1."""


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (`ctxview: error: ...`) and exit status 2."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see '{self.prog} --help')")


# --- option types ---------------------------------------------------------------

_MAX_NUMBER = 10**15  # the largest number any option takes (as Settings allows)


def _int_at_least(minimum: int, what: str):
    def parse(text: str) -> int:
        digits = text.replace("_", "").replace(",", "")
        if len(digits) > 20:  # int() of thousands of digits is slow, and no setting needs them
            raise argparse.ArgumentTypeError(f"{what} must be at most {_MAX_NUMBER:,}, not a {len(digits):,}-digit "
                                             "number")
        try:
            value = int(digits)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what} must be a whole number, not {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{what} must be ≥ {minimum}, not {value}")
        if value > _MAX_NUMBER:
            raise argparse.ArgumentTypeError(f"{what} must be at most {_MAX_NUMBER:,}, not {value:,}")
        return value

    return parse


def _tiers(text: str) -> str:
    from .compression import get_policy  # engine only: no terminal libraries

    try:
        get_policy(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--agent", metavar="NAME", help="the conversation (agent) to use")
    parser.add_argument("--keep-recent", metavar="N", type=_int_at_least(0, "--keep-recent"),
                        help="recent messages never compressed (default 10)")
    parser.add_argument("--tiers", metavar="PRESET|SPEC", type=_tiers,
                        help="compression tiers: default, light, aggressive, off, or e.g. '10:full,20:1000,*:100'")
    parser.add_argument("--budget", metavar="TOKENS", type=_int_at_least(1, "--budget"),
                        help="fit the prepared messages to this many tokens (oldest dropped first)")
    parser.add_argument("--context-window", metavar="N", type=_int_at_least(1, "--context-window"),
                        help="context window in tokens (default: from the session or the model table)")
    parser.add_argument("--format", metavar="FMT", dest="fmt",
                        help="the file's format (default: detected); see 'Supported session files' in the README")
    parser.add_argument("--lenient", action="store_true", help="skip malformed lines instead of failing")
    parser.add_argument("--counter", metavar="NAME",
                        help="token counter: auto, swarm, chars4, o200k_base, cl100k_base (default auto)")
    parser.add_argument("--old-messages", metavar="STRATEGY", choices=OLD_MESSAGE_STRATEGIES,
                        help="what happens to messages before the recent part: keep, truncate, remove, llm "
                             "(an offline extractive summary)")
    parser.add_argument("--summarize-before", metavar="INDEX", type=_int_at_least(0, "--summarize-before"),
                        help="with --old-messages: the first message index left alone (default: the recent part)")
    parser.add_argument("--request", metavar="N", type=_int_at_least(1, "--request"),
                        help="the request to show, 1-based as the inspector numbers them (default: the next one)")
    parser.add_argument("--clear-keep", metavar="N", type=_int_at_least(0, "--clear-keep"),
                        help="clear old tool results, keeping the N most recent (Anthropic's clear_tool_uses)")


def _open_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="ctxview",
        usage="ctxview [options] [FILE]\n       ctxview report FILE [options] [--json]\n"
              "       ctxview prepare FILE [options] [-o OUT] [--shape openai|anthropic]",
        description="Inspect what an LLM agent stored and what it sent to the model. "
                    "Without FILE, opens the bundled SwarmSDK demo session.",
        epilog="commands: 'report' prints tokens, the context-window gauge and the bloat analysis; "
               "'prepare' writes the prepared messages as JSON. A file named like a command: "
               "'ctxview -- report' or 'ctxview ./report'.",
    )
    parser.add_argument("--version", action="version", version=f"ctxview {__version__}")
    parser.add_argument("file", nargs="?", metavar="FILE", help="session file ('-' for stdin)")
    _add_common(parser)
    return parser


def _report_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="ctxview report", description="Tokens stored versus prepared, the context-window "
                     "gauge and the bloat analysis, per conversation.")
    parser.add_argument("file", metavar="FILE", help="session file ('-' for stdin)")
    _add_common(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--messages", action="store_true",
                        help="also list every message: tokens stored and prepared, and what changed")
    _add_usage_options(parser)
    return parser


# --- usage, cost and the prompt cache: the report's options -----------------------

def _price(text: str):
    from .prices import parse_price_override

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
    parser.add_argument("--price", metavar="MODEL=IN,OUT,CACHE_READ,CACHE_WRITE", type=_price, action="append",
                        default=[], help="a model's prices in dollars per million tokens, over genai-prices' table "
                                         "(repeatable)")
    parser.add_argument("--cache-ttl", choices=("5m", "1h"), default="5m",
                        help="the prompt cache's lifetime in the simulation (default 5m; 1h writes cost more)")
    parser.add_argument("--compare", metavar="SETTINGS", type=_compare, default=[],
                        help="replay every request under each setting and compare tokens, cache reads and cost "
                             "with the as-sent view, e.g. 'default,light,aggressive,swarm-auto,off', "
                             "'10:full,*:100', 'default+clear=3', 'budget=50000'")


def _price_table(args: argparse.Namespace):
    from .prices import PriceTable

    return PriceTable(dict(args.price))


def _prepare_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="ctxview prepare", description="Write the prepared messages, as the model would get "
                     "them, as JSON (stdout without -o).")
    parser.add_argument("file", metavar="FILE", help="session file ('-' for stdin)")
    _add_common(parser)
    parser.add_argument("-o", "--output", metavar="OUT", help="write here (atomically) instead of stdout: a "
                        "regular file or a new path, never the input")
    parser.add_argument("--follow-symlink", action="store_true",
                        help="when OUT is a symbolic link, write the file it points to (refused otherwise)")
    parser.add_argument("--shape", choices=("openai", "anthropic"), default="openai",
                        help="request shape (default openai)")
    parser.add_argument("--model", metavar="NAME", help="the body's model (default: the one the session recorded)")
    parser.add_argument("--max-tokens", metavar="N", type=_int_at_least(1, "--max-tokens"),
                        help="max_tokens of an Anthropic body (default: the recorded request's, else 8192)")
    parser.add_argument("--stats", action="store_true",
                        help="print what was prepared (messages, tokens, what changed) to stderr")
    return parser


# --- shared steps ----------------------------------------------------------------

def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "keep_recent": args.keep_recent,
        "tiers": args.tiers,
        "budget": args.budget,
        "context_window": args.context_window,
        "counter": args.counter,
        "old_messages": args.old_messages,
        "summarize_before": args.summarize_before,
        "clear": None if args.clear_keep is None else ClearSettings(keep=args.clear_keep),
        "request_number": args.request,
    }


def _check_counter(name: str | None) -> None:
    if name is None:
        return
    from .tokens import COUNTER_NAMES, CounterUnavailable, get_counter

    try:
        get_counter(name)
    except CounterUnavailable as exc:
        raise UsageError(str(exc)) from None
    except ValueError:
        raise UsageError(f"unknown counter {name!r} (choices: {', '.join(COUNTER_NAMES)})") from None


def _check_format(fmt: str | None) -> None:
    if fmt is None:
        return
    from .formats import FORMATS

    if fmt not in FORMATS:
        raise UsageError(f"unknown format {fmt!r} (choices: {', '.join(FORMATS)})")


def _check_file(name: str, hint: bool = True) -> None:
    """The cheap checks of the input (it exists, is a regular file, is not empty), before the inspector
    takes the screen: an error then is one line on a normal terminal, not one behind the app."""
    from .formats import LoadError
    from .formats.jsonio import check_path

    try:
        st = check_path(name)
    except LoadError as exc:
        # a bare word that is no file was perhaps meant as a command
        commands = (f" (commands: {', '.join(SUBCOMMANDS)}; see 'ctxview --help')"
                    if hint and exc.message.endswith("no such file") and os.sep not in name and "." not in name
                    else "")
        raise InputError(f"{exc}{commands}") from None
    if st.st_size == 0:
        raise InputError(f"{name}: file is empty")


def _load(args: argparse.Namespace):
    from .formats import LoadError, load_session

    _check_format(args.fmt)
    _check_counter(args.counter)
    try:
        session = load_session(args.file, format=args.fmt, lenient=args.lenient)
    except LoadError as exc:
        raise InputError(str(exc)) from None
    except OSError as exc:  # the loaders report these as LoadError; belt and braces
        raise InputError(f"{args.file}: {exc.strerror or exc}") from None
    if not session.conversations:
        raise InputError(f"{args.file}: no conversation found")
    if args.agent is not None:
        try:
            session.conversation(args.agent)
        except KeyError as exc:
            raise UsageError(str(exc.args[0])) from None
    return session


# --- commands --------------------------------------------------------------------

def _run_open(argv: Sequence[str]) -> int:
    args = _open_parser().parse_args(argv)
    _check_format(args.fmt)
    _check_counter(args.counter)
    if args.file is not None and args.file != "-":
        _check_file(args.file, hint="--" not in argv)
    from .view import Settings

    values = {k: v for k, v in _overrides(args).items() if v is not None}
    settings = Settings(**{k: v for k, v in values.items() if k != "request_number"})
    try:
        from .tui.app import run_app
    except ImportError as exc:
        raise InputError(f"the inspector is not available in this installation ({exc})") from None
    return run_app(args.file, settings, args.agent, args.fmt, args.lenient, overrides=values)


def _run_report(argv: Sequence[str]) -> int:
    args = _report_parser().parse_args(argv)
    session = _load(args)
    from .report import build_report

    try:
        data = build_report(session, _overrides(args), agent=args.agent, rows=args.messages,
                            prices=_price_table(args), cache_ttl=args.cache_ttl, compare=args.compare,
                            series=not args.json and sys.stdout.isatty())  # the chart: on a terminal only
    except ValueError as exc:  # e.g. a conversation's own settings are invalid
        raise InputError(f"{args.file}: {exc}") from None
    if args.json:
        from .export import dumps

        _write_stdout(dumps(data))
        return EXIT_OK
    out = _stdout()
    try:
        from .report_render import render_report

        render_report(data, out, warnings=session.warnings, skipped=session.skipped)
        out.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise OutputError(f"cannot write to standard output: {exc.strerror or exc}") from None
    return EXIT_OK


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)


def _is_stdin(path: str) -> bool:
    """Whether `path` is the file standard input reads (`prepare - -o FILE < FILE`)."""
    try:
        a, b = os.fstat(0), os.stat(path)
    except OSError:
        return False
    return stat.S_ISREG(a.st_mode) and (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _output_target(args: argparse.Namespace) -> str:
    """Where `-o` writes, checked before anything is loaded: a regular file or a new path (a link only
    with --follow-symlink, then its target), and never the input, however it is named."""
    from .atomic import UnsafeTarget, check_target

    try:
        target = str(check_target(args.output, follow_symlink=args.follow_symlink))
    except UnsafeTarget as exc:
        raise UsageError(f"-o {exc}") from None
    except OSError as exc:
        raise UsageError(f"-o {args.output}: {exc.strerror or exc}") from None
    if args.file == "-" and _is_stdin(target):
        raise UsageError(f"refusing to overwrite the input: standard input is read from {args.output}")
    if args.file != "-" and _same_file(target, args.file):
        raise UsageError(f"refusing to overwrite the input file {args.file}")
    return target


def _run_prepare(argv: Sequence[str]) -> int:
    args = _prepare_parser().parse_args(argv)
    target = _output_target(args) if args.output else None
    if target is None:
        _stdout()
    session = _load(args)
    from .export import DEFAULT_MAX_TOKENS, dumps, export_stats, recorded_max_tokens, stats_text, to_shape, write_atomic
    from .pipeline import prepare
    from .sanitize import sanitize
    from .settings import settings_for

    conv = session.conversation(args.agent) if args.agent is not None else session.conversations[0]
    model = args.model or conv.model
    if not model:  # the body is written all the same, for editing: say what it lacks
        print(f"ctxview: warning: {_one_line(f'no model recorded for {conv.name!r}')}: the body has no \"model\" "
              "(the API requires one); name one with --model NAME", file=sys.stderr)
    max_tokens = args.max_tokens or recorded_max_tokens(conv.metadata, session.metadata) or DEFAULT_MAX_TOKENS
    try:
        view = prepare(conv, settings_for(conv, _overrides(args)))
        text = dumps(to_shape(view, args.shape, model, max_tokens=max_tokens))
    except ValueError as exc:  # bad saved settings; a NaN in a tool call's arguments
        raise InputError(f"{args.file}: {exc}") from None
    stats = export_stats(view, args.shape)
    if args.stats:
        print(sanitize(stats_text(stats, conv.name, args.shape, args.file)), file=sys.stderr)
    elif stats["not_exported"]["attachments"]:  # never silently
        print(f"ctxview: note: {stats['not_exported']['attachments']:,} attachments not exported", file=sys.stderr)
    if target is None:
        _write_stdout(text)
        return EXIT_OK
    try:
        write_atomic(target, text)
    except OSError as exc:
        raise InputError(f"cannot write {args.output}: {exc.strerror or exc}") from None
    print(sanitize(f"ctxview: wrote {len(view.prepared):,} prepared messages of {conv.name!r} to {args.output}"),
          file=sys.stderr)
    return EXIT_OK


class OutputError(Exception):
    """Standard output cannot be written (closed, a full disk): exit status 1."""


def _stdout():
    """sys.stdout, or OutputError when the process was started with it closed (`>&-`)."""
    if sys.stdout is None or _STDOUT_CLOSED:
        raise OutputError("standard output is closed; nothing to write to (use -o FILE with prepare)")
    return sys.stdout


def _write_stdout(text: str) -> None:
    out = _stdout()
    try:
        out.write(text)
        out.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:  # /dev/full: ENOSPC; a revoked terminal: EIO
        raise OutputError(f"cannot write to standard output: {exc.strerror or exc}") from None


_STDOUT_CLOSED = False


def _guard_standard_fds() -> None:
    """Give a closed stdin, stdout or stderr (`>&-`) /dev/null, so that no file ctxview opens takes
    descriptor 1 (where a print would then write into it: the input, say); a closed stdout is
    remembered, and writing to it is an error."""
    global _STDOUT_CLOSED
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            try:
                null = os.open(os.devnull, os.O_RDWR)
            except OSError:
                continue
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
            if fd == 1:
                _STDOUT_CLOSED = True


def _silence_stdout() -> None:
    """After a failed write to stdout: point descriptor 1 at /dev/null, so that the flush at exit
    succeeds instead of printing 'Exception ignored'."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.close(null)
    except OSError:
        pass


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    _guard_standard_fds()
    try:
        if argv and argv[0] == "report":
            return _run_report(argv[1:])
        if argv and argv[0] == "prepare":
            return _run_prepare(argv[1:])
        return _run_open(argv)
    except UsageError as exc:
        print(f"ctxview: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except InputError as exc:
        print(f"ctxview: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_INPUT
    except OutputError as exc:
        _silence_stdout()
        print(f"ctxview: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_INPUT
    except BrokenPipeError:  # `ctxview report x | head`
        _silence_stdout()
        return EXIT_OK
    except KeyboardInterrupt:
        return 130


def _one_line(exc: BaseException) -> str:
    from .sanitize import sanitize

    return " ".join(sanitize(str(exc)).split())


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
