"""The `ctxview` command.

    ctxview [FILE|DIR] [options]          open the inspector; with DIR or no FILE, the session browser
                                          (no FILE and no sessions found: the bundled demo; --demo: always)
    ctxview report FILE [options] [--json]
    ctxview prepare FILE [options] [-o OUT] [--shape openai|anthropic]
    ctxview sessions [DIR] [--json]       the browser's index, for scripts

A first argument `report`, `prepare` or `sessions` is the subcommand; to open
a file of that name write `ctxview -- report` or `ctxview ./report`.

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
from typing import Any, Sequence

from ctxview.cli.arguments import (
    InputError,
    UsageError,
    open_parser,
    prepare_parser,
    price_table,
    report_parser,
    sessions_parser,
)
from ctxview.stages import STAGES

SUBCOMMANDS = ("report", "prepare", "sessions")
EXIT_OK, EXIT_INPUT, EXIT_USAGE = 0, 1, 2


# --- shared steps ----------------------------------------------------------------

def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The settings the command line gives: each stage's flags (their option's field), the API's
    edits (--api-edit, each setting the field its edit names) and the settings of the request."""
    given = {o.name: getattr(args, o.name) for stage in STAGES for o in stage.options if o.flag}
    edits = dict(args.api_edit)  # the Settings field each sets -> its settings (the last given wins)
    for name in edits:
        flag = next((o.flag for stage in STAGES for o in stage.options if o.name == name and o.flag), None)
        if flag is not None and given.get(name) is not None:
            raise UsageError(f"{flag} and --api-edit both give the {name} setting: give one")
    return {
        **given,
        **edits,
        "context_window": args.context_window,
        "counter": args.counter,
        "request_number": args.request,
    }


def _check_counter(name: str | None) -> None:
    if name is None:
        return
    from ctxview.engine.tokens import COUNTER_NAMES, CounterUnavailable, get_counter

    try:
        get_counter(name)
    except CounterUnavailable as exc:
        raise UsageError(str(exc)) from None
    except ValueError:
        raise UsageError(f"unknown counter {name!r} (choices: {', '.join(COUNTER_NAMES)})") from None


def _check_format(fmt: str | None) -> None:
    if fmt is None:
        return
    from ctxview.formats import FORMATS

    if fmt not in FORMATS:
        raise UsageError(f"unknown format {fmt!r} (choices: {', '.join(FORMATS)})")


def _check_file(name: str, hint: bool = True) -> None:
    """The cheap checks of the input (it exists, is a regular file, is not empty), before the inspector
    takes the screen: an error then is one line on a normal terminal, not one behind the app."""
    from ctxview.formats import LoadError
    from ctxview.formats.parsing.jsonio import check_path

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


def _load_trace(path: str | None):
    """(name, requests) of the capture log (claude-trace, claude-tap, LHAR, HAR) `--trace` names, or None;
    InputError for bad input."""
    if path is None:
        return None
    from ctxview.formats import LoadError
    from ctxview.formats.captures import capture_requests

    try:
        _check_file(path, hint=False)
    except InputError as exc:
        raise InputError(f"--trace {exc}") from None
    try:
        return path, capture_requests(path)
    except LoadError as exc:
        raise InputError(f"--trace {exc}") from None


def _check_given_settings(args: argparse.Namespace) -> None:
    """The settings the command line gives, checked before anything is read: options that cannot go
    together (the API's compaction and --old-messages) are a usage error, whatever the file holds."""
    from ctxview.settings import settings_from

    try:
        settings_from(None, {k: v for k, v in _overrides(args).items() if k != "request_number"})
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _load(args: argparse.Namespace):
    from ctxview.formats import LoadError, load_session

    _check_format(args.fmt)
    _check_counter(args.counter)
    _check_given_settings(args)
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
    args = open_parser().parse_args(argv)
    _check_format(args.fmt)
    _check_counter(args.counter)
    _check_given_settings(args)
    browse: str | None = None
    if args.demo and args.file is not None:
        raise UsageError("--demo opens the bundled demo session: give it no FILE")
    if args.file is not None and args.file != "-":
        if os.path.isdir(args.file):
            from ctxview.sessions.places import any_files

            if not any_files(args.file):
                raise InputError(f"{args.file}: no session files (.json, .jsonl) in this directory")
            browse = args.file
        else:
            _check_file(args.file, hint="--" not in argv)
    elif args.file is None and not args.demo:
        from ctxview.sessions.places import any_sessions  # (the walk only; the index loads with the browser)

        browse = "" if any_sessions() else None
    if args.trace is not None and (browse is not None or args.file is None):
        raise UsageError("--trace compares one session file with its log: give it FILE")
    trace = _load_trace(args.trace)  # before the app takes the screen: its errors are one line
    from ctxview.engine.view import Settings

    try:
        from ctxview.tui.keymap import binding_ids, theme_names
        from ctxview.tui.launch import run_app, run_browser
    except ImportError as exc:
        raise InputError(f"the inspector is not available in this installation ({exc})") from None
    from ctxview.cli.user_config import ConfigError, load_user_config

    try:
        config = load_user_config(binding_ids=binding_ids(), themes=theme_names())
    except ConfigError as exc:
        raise InputError(str(exc)) from None
    # The config's settings are defaults: the options typed win over them.
    values = {**config.settings, **{k: v for k, v in _overrides(args).items() if v is not None}}
    settings = Settings(**{k: v for k, v in values.items() if k != "request_number"})
    if browse is not None:
        return run_browser(browse or None, settings, args.fmt, args.lenient, overrides=values, config=config)
    extra = {"trace": trace} if trace is not None else {}
    return run_app(args.file, settings, args.agent, args.fmt, args.lenient, overrides=values, config=config,
                   **extra)


def _run_sessions(argv: Sequence[str]) -> int:
    args = sessions_parser().parse_args(argv)
    _stdout()
    if args.dir is not None and not os.path.isdir(args.dir):
        raise InputError(f"{args.dir}: {'not a directory' if os.path.exists(args.dir) else 'no such directory'}")
    from ctxview.sessions import build_index

    def notice(line: str) -> None:  # (a cache that could not be used: said once, the list goes on)
        print(f"ctxview: warning: {_one_line(line)}", file=sys.stderr)

    rows = build_index(args.dir, cache=not args.no_cache, notice=notice)
    from ctxview.cli.sessions_command import sessions_output

    _write_stdout(sessions_output(rows, args, notice))
    return EXIT_OK


def _run_report(argv: Sequence[str]) -> int:
    args = report_parser().parse_args(argv)
    _stdout()  # closed (`>&-`): one line now, not after the work (sys.stdout is None then)
    session = _load(args)
    trace = _load_trace(args.trace)
    from ctxview.analysis.report import build_report

    try:
        data = build_report(session, _overrides(args), agent=args.agent, rows=args.messages, requests=args.requests,
                            prices=price_table(args), cache_ttl=args.cache_ttl, compare=args.compare,
                            series=not args.json and sys.stdout.isatty(),  # the chart: on a terminal only
                            trace=trace)
    except ValueError as exc:  # e.g. a conversation's own settings are invalid
        raise InputError(f"{args.file}: {exc}") from None
    if args.json:
        from ctxview.export.bodies import dumps

        _write_stdout(dumps(data))
        return EXIT_OK
    out = _stdout()
    try:
        from ctxview.analysis.report_render import render_report

        render_report(data, out, warnings=session.warnings, skipped=session.skipped)
        out.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise OutputError(f"cannot write to standard output: {exc.strerror or exc}") from None
    return EXIT_OK


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
    from ctxview.atomic import UnsafeTarget, check_target

    try:
        target = str(check_target(args.output, follow_symlink=args.follow_symlink))
    except UnsafeTarget as exc:
        raise UsageError(f"-o {exc}") from None
    except OSError as exc:
        raise UsageError(f"-o {args.output}: {exc.strerror or exc}") from None
    if args.file == "-" and _is_stdin(target):
        raise UsageError(f"refusing to overwrite the input: standard input is read from {args.output}")
    from ctxview.formats.inputs import same_file, writes_over_input

    if args.file != "-" and same_file(target, args.file):
        raise UsageError(f"refusing to overwrite the input file {args.file}")
    if writes_over_input(target, [args.file, getattr(args, "trace", None)]):
        raise UsageError(f"refusing to overwrite a file the session is read from: {args.output}")
    return target


def _run_prepare(argv: Sequence[str]) -> int:
    args = prepare_parser().parse_args(argv)
    target = _output_target(args) if args.output not in (None, "-") else None   # (-o -: stdout, as FILE - is stdin)
    if target is None:
        _stdout()
    session = _load(args)
    from ctxview.engine.api_edits import api_edits_of
    from ctxview.export.bodies import (
        DEFAULT_MAX_TOKENS,
        body_for,
        body_messages,
        default_shape,
        dumps,
        export_stats,
        recorded_max_tokens,
        stats_text,
        write_atomic,
    )
    from ctxview.pipeline import prepare
    from ctxview.sanitize import sanitize
    from ctxview.settings import settings_for

    conv = session.conversation(args.agent) if args.agent is not None else session.conversations[0]
    model = args.model or conv.model
    if not model:  # the body is written all the same, for editing: say what it lacks
        print(f"ctxview: warning: {_one_line(f'no model recorded for {conv.name!r}')}: the body has no \"model\" "
              "(the API requires one); name one with --model NAME", file=sys.stderr)
    max_tokens = args.max_tokens or recorded_max_tokens(conv.metadata, session.metadata) or DEFAULT_MAX_TOKENS
    if args.shape is None:
        args.shape = default_shape(session.format, model)
    try:
        view = prepare(conv, settings_for(conv, _overrides(args)))
        source = None if args.file == "-" else args.file  # (images are read back from its lines)
        body, betas, images = body_for(conv, view, args.shape, model, max_tokens=max_tokens, source=source)
        text = dumps(body)
    except ValueError as exc:  # bad saved settings; a NaN in a tool call's arguments
        raise InputError(f"{args.file}: {exc}") from None
    if not body_messages(body, args.shape):  # the APIs refuse a body without messages: nothing is written
        raise InputError(f"{args.file}: nothing to write: the {args.shape} body of {conv.name!r} would hold no "
                         f"messages ({len(view.prepared):,} prepared, none the API takes)")
    stats = export_stats(view, args.shape, images)
    if betas:  # the API runs the edits only with their beta headers (the docs' curl examples send them)
        print(f"ctxview: note: the body's context_management asks the API for the edits of the {view.view_label}; send the header "
              f"anthropic-beta: {','.join(betas)} (the SDK: betas=[{', '.join(repr(b) for b in betas)}])",
              file=sys.stderr)
    elif args.shape == "openai" and api_edits_of(view.settings):
        print("ctxview: note: an OpenAI body cannot ask for the Anthropic API's edits: its messages are "
              "written with ctxview's stand-in for them applied", file=sys.stderr)
    if args.stats:
        print(sanitize(stats_text(stats, conv.name, args.shape, args.file)), file=sys.stderr)
    elif stats["not_exported"]["attachments"]:  # never silently
        print(f"ctxview: note: {stats['not_exported']['attachments']:,} attachments not exported", file=sys.stderr)
    _note_images(view.prepared, view.rows, images, args.shape)
    if target is None:
        _write_stdout(text)
        return EXIT_OK
    try:
        write_atomic(target, text, keep=() if args.file == "-" else (args.file,))
    except OSError as exc:
        raise InputError(f"cannot write {args.output}: {exc.strerror or exc}") from None
    print(sanitize(f"ctxview: wrote {len(view.prepared):,} prepared messages of {conv.name!r} to {args.output}"),
          file=sys.stderr)
    return EXIT_OK


def _note_images(prepared, rows, images, shape: str) -> None:
    """Each image (or file) the body carries as its placeholder text, on stderr: changed, never silently."""
    from ctxview.export.bodies import images_as_text
    from ctxview.sanitize import sanitize

    found = images_as_text(prepared, images, shape)
    if not found:
        return
    from ctxview.engine.view import row_columns

    indices, _, column = row_columns(rows)
    index = [i for i, p in zip(indices, column) if p is not None]  # the stored index of each prepared message
    for k, role, placeholder in found[:20]:
        where = f"#{index[k]}" if k < len(index) and index[k] is not None else f"prepared message {k + 1}"
        why = ("a Chat Completions tool message is text only" if shape == "openai" and role == "tool"
               else "the file holds no image data ctxview can read back")
        print(sanitize(f"ctxview: changed: {where} ({role}): {placeholder} is sent as that text, not as the "
                       f"image ({why})"), file=sys.stderr)
    if len(found) > 20:
        print(f"ctxview: changed: {len(found) - 20:,} more images sent as their placeholder text", file=sys.stderr)


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
        if argv and argv[0] == "sessions":
            return _run_sessions(argv[1:])
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


def _one_line(exc: BaseException | str) -> str:
    from ctxview.sanitize import sanitize

    return " ".join(sanitize(str(exc)).split())


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
