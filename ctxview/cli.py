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
    return parser


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
        data = build_report(session, _overrides(args), agent=args.agent, rows=args.messages)
    except ValueError as exc:  # e.g. a conversation's own settings are invalid
        raise InputError(f"{args.file}: {exc}") from None
    if args.json:
        from .export import dumps

        _write_stdout(dumps(data))
        return EXIT_OK
    out = _stdout()
    try:
        render_report(data, out, warnings=session.warnings, skipped=session.skipped)
        out.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise OutputError(f"cannot write to standard output: {exc.strerror or exc}") from None
    return EXIT_OK


# --- report rendering ------------------------------------------------------------
# One neutral description (titles, tables, lines) rendered either with Rich on a
# terminal or as plain aligned text when piped. Every cell from the session goes
# through the sanitiser and into a Text object, never into markup.

def _fmt_int(value: Any) -> str:
    return "-" if value is None else f"{value:,}"


def _gauge(share: float | None, width: int = 40, *, ascii_only: bool = False) -> str:
    """A bar with SwarmSDK's 60/80/90% marks: ████████│░░░│░│░."""
    from .windows import WARNING_MARKS

    if share is None:
        return ""
    full, empty, mark = ("#", ".", "|") if ascii_only else ("█", "░", "│")
    filled = min(width, round(share * width))
    cells = [full if i < filled else empty for i in range(width)]
    for m in WARNING_MARKS:
        pos = round(m * width)
        if 0 <= pos < width and pos >= filled:
            cells[pos] = mark
    return "[" + "".join(cells) + "]"


def _report_sections(conv: dict[str, Any], *, ascii_only: bool) -> list[tuple]:
    """A conversation's report as ("title", str) / ("line", str, level) / ("table", title, headers, rows)."""
    out: list[tuple] = []
    model = conv.get("model") or "unknown model"
    out.append(("title", f"{conv['name']} · {model} · counter {conv['counter']}"))
    req = conv["request"]
    which = "the next request" if req["index"] is None else f"request {req['number']} of {req['of']} (#{req['index']})"
    # As sent, or a what-if: never let a simulation read as what the model saw.
    out.append(("line", f"view: {conv['view_label']} · {which}", 0 if conv["view"] == "as-sent" else 1))
    for c in conv["compactions"]:
        what = {"compaction": f"{c.get('messages_replaced', 0):,} messages replaced by its summary",
                "microcompaction": f"{c.get('results_cleared', 0):,} tool results cleared",
                "compression": "old tool results compressed by SwarmSDK"}.get(c["kind"], "")
        extra = ", ".join(x for x in (c["trigger"], f"{c['tokens_before']:,} tokens before"
                                      if c["tokens_before"] is not None else None) if x)
        out.append(("line", f"{c['kind']} at #{c['index']}" + (f" ({extra})" if extra else "") + f": {what}", 0))
    rows = []
    for role, e in conv["by_role"].items():
        rows.append([role, _fmt_int(e["stored"]), _fmt_int(e["prepared"]),
                     _fmt_int(e["tokens_stored"]), _fmt_int(e["tokens_prepared"])])
    t = conv["tokens"]
    if t.get("system"):
        rows.append(["system prompt", "1", "1", _fmt_int(t["system"]), _fmt_int(t["system"])])
    rows.append(["total", _fmt_int(conv["messages"]["stored"]), _fmt_int(conv["messages"]["prepared"]),
                 _fmt_int(t["stored"]), _fmt_int(t["prepared"])])
    out.append(("table", "Messages and tokens", ["role", "stored", "prepared", "tokens stored", "tokens prepared"],
                rows))
    w = conv["window"]
    if w["size"]:
        share = w["share"] or 0.0
        level = w["marks_reached"]
        out.append(("line", f"context window {w['size']:,}: prepared {t['prepared']:,} = {share:.1%} "
                            f"{_gauge(share, ascii_only=ascii_only)} marks 60/80/90%", level))
    else:
        out.append(("line", "context window unknown (use --context-window N)", 0))
    tr = conv["tool_results"]
    ch = conv["changes"]
    out.append(("line", f"tool results {tr['total']:,}: {tr['compressed']:,} compressed, {tr['cleared']:,} cleared; "
                        f"{ch.get('excerpted', 0):,} excerpted, {ch.get('removed', 0) + ch.get('summarised', 0):,} "
                        f"summarised or removed, {ch.get('dropped', 0):,} dropped for the budget", 0))
    if conv["budget"]["tokens"]:
        short = conv["budget"]["shortfall"]
        out.append(("line", f"budget {conv['budget']['tokens']:,} tokens: "
                            + (f"still {short:,} over (the protected part alone is too big)" if short else "fits"),
                    2 if short else 0))
    r = conv["reminders"]
    out.append(("line", f"system reminders: {r['stored']:,} tokens stored in history, "
                        f"{r['ephemeral']:,} ephemeral for this request", 0))
    cal = conv["calibration"]
    if cal["requests"]:
        error = "n/a" if cal["mean_abs_error"] is None else f"{cal['mean_abs_error']:.1%}"
        factor = "n/a (the estimate is 0)" if cal["factor"] is None else f"×{cal['factor']:.3f}"
        out.append(("line", f"calibration over {cal['requests']:,} recorded requests: estimate "
                            f"{cal['estimated_total']:,} vs recorded {cal['recorded_total']:,} tokens, mean error "
                            f"{error}, correction factor {factor}", 0))
        if cal.get("slope") is not None:
            r2 = f", r² {cal['r2']:.3f}" if cal.get("r2") is not None else ""
            out.append(("line", f"  fit ({cal.get('view', 'as-stored')}{r2}): recorded ≈ {cal['overhead']:,} + "
                                f"{cal['slope']:.3f} × estimate "
                                "(the constant is what each request carried that the file does not store: "
                                "system prompt, tool definitions)", 0))
    b = conv["bloat"]
    verdict = "BLOATED" if b["bloated"] else "not bloated"
    out.append(("line", f"bloat: {verdict} (threshold {b['threshold']:.0%})", 3 if b["bloated"] else 0))
    if b["by_tool"]:
        out.append(("table", "Tokens by tool", ["tool", "tokens"],
                    [[name, _fmt_int(v)] for name, v in list(b["by_tool"].items())[:10]]))
    if b["largest"]:
        out.append(("table", "Largest messages", ["index", "role", "tool", "tokens"],
                    [[str(x["index"]), x["role"], x["tool"] or "", _fmt_int(x["tokens"])] for x in b["largest"]]))
    if b["repeated"]:
        out.append(("table", "Repeated tool results", ["kind", "tool", "copies", "wasted tokens"],
                    [[x["kind"], x["tool"], str(len(x["indices"])), _fmt_int(x["wasted_tokens"])]
                     for x in b["repeated"][:10]]))
    if b["stale"]:
        stale_tokens = sum(x["tokens"] for x in b["stale"])
        out.append(("line", f"stale large tool results: {len(b['stale']):,} ({stale_tokens:,} tokens)", 0))
    if conv.get("rows") is not None:
        out.append(("table", "Messages", ["index", "role", "tool", "stored", "prepared", "what changed"],
                    [["+" if r["index"] is None else str(r["index"]), r["role"] or "", r["tool"] or "",
                      _fmt_int(r["tokens_stored"]), _fmt_int(r["tokens_prepared"]),
                      "; ".join(f"{c['action']}: {c['detail']}" for c in r["changes"])] for r in conv["rows"]]))
    if b["recommendations"]:
        out.append(("table", "Recommendations", ["action", "setting", "saves tokens"],
                    [[x["action"], x["setting"], _fmt_int(x["saves"])] for x in b["recommendations"]]))
    return out


def render_report(data: dict[str, Any], stream: Any, *, warnings: Sequence[str] = (), skipped: int = 0) -> None:
    """Print the report: Rich tables on a terminal, plain text otherwise."""
    from .sanitize import sanitize

    tty = hasattr(stream, "isatty") and stream.isatty()
    header = f"{data['source']} ({data['format']})"
    # The loaders' warnings say what was skipped and why; the bare count only
    # when they said nothing.
    notes = list(warnings) or ([f"{skipped:,} lines skipped"] if skipped else [])
    if not tty:
        lines = [sanitize(header)]
        lines.extend(f"note: {sanitize(n)}" for n in notes)
        for conv in data["conversations"]:
            for section in _report_sections(conv, ascii_only=False):
                lines.extend(_plain_section(section, sanitize))
        stream.write("\n".join(lines) + "\n")
        return
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console(file=stream, highlight=False)
    console.print(Text(sanitize(header), style="bold"))
    for n in notes:
        console.print(Text(f"note: {sanitize(n)}", style="yellow"))
    styles = {0: "", 1: "yellow", 2: "dark_orange", 3: "bold red"}
    for conv in data["conversations"]:
        for section in _report_sections(conv, ascii_only=False):
            kind = section[0]
            if kind == "title":
                console.print()
                console.print(Text(sanitize(section[1]), style="bold cyan"))
            elif kind == "line":
                console.print(Text(sanitize(section[1]), style=styles.get(section[2], "")))
            else:
                _, title, headers, rows = section
                table = Table(title=Text(title), title_justify="left")
                for i, h in enumerate(headers):
                    numeric = all(str(r[i]).replace(",", "").replace("-", "").isdigit() for r in rows)
                    table.add_column(Text(h), justify="right" if numeric else "left")
                for row in rows:
                    table.add_row(*(Text(sanitize(str(c))) for c in row))
                console.print(table)


def _plain_section(section: tuple, sanitize) -> list[str]:
    kind = section[0]
    if kind == "title":
        return ["", f"== {sanitize(section[1])} =="]
    if kind == "line":
        return [sanitize(section[1])]
    _, title, headers, rows = section
    cells = [[sanitize(str(c)) for c in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]

    numeric = [all(r[i].replace(",", "").replace("-", "").isdigit() or not r[i] for r in cells) if cells else False
               for i in range(len(headers))]

    def fmt(row: Sequence[str]) -> str:
        parts = [c.rjust(widths[i]) if numeric[i] else c.ljust(widths[i]) for i, c in enumerate(row)]
        return "  ".join(parts).rstrip()

    return ["", f"{title}:", fmt(headers), *(fmt(r) for r in cells)]


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
