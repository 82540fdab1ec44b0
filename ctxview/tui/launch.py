"""Starting the inspector and the browser from the command line.

`ctxview FILE` calls `run_app`, which reads stdin first when the file is
`-` (Textual reads its keys from stdin), runs the app and turns a failed
opening into one line on stderr and exit status 1, never a traceback.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Mapping

from ctxview.model import Session
from ctxview.sanitize import sanitize
from ctxview.settings import Settings

from ctxview.tui.failures import LoadFailed, one_line

__all__ = ["run_app", "run_browser"]


def _session_from_stdin(fmt: str | None, lenient: bool) -> Session:
    from ctxview.formats import load_session

    session = load_session("-", format=fmt, lenient=lenient)
    try:
        tty = os.open("/dev/tty", os.O_RDONLY)
    except OSError:
        raise LoadFailed("<stdin>: the inspector needs a terminal for its keys; "
                         "save the session to a file, or use 'ctxview report -'") from None
    os.dup2(tty, sys.__stdin__.fileno())
    os.close(tty)
    return session


def run_app(
    path: str | None,
    settings: Settings,
    agent: str | None = None,
    fmt: str | None = None,
    lenient: bool = False,
    overrides: Mapping[str, Any] | None = None,
    trace: tuple[str, Any] | None = None,
    config: Any = None,
) -> int:
    """Open the inspector; the exit status (1 with one line on stderr if opening failed).

    `overrides` (Settings field names) win over the settings saved in the
    file, even where they equal the defaults; without them, the fields of
    `settings` that differ from the defaults do. `config` (user_config.UserConfig): the user's
    keymap and theme, and a note when its settings make every view a what-if."""
    from ctxview.tui.app import CtxviewApp

    session = None
    if path == "-":
        # The session comes on stdin, and Textual reads keys from stdin: read
        # the session first, then take the keyboard from the terminal.
        try:
            session = _session_from_stdin(fmt, lenient)
        except Exception as exc:  # noqa: BLE001 - one line, never a traceback
            print(f"ctxview: error: {sanitize(one_line(exc))}", file=sys.stderr)
            return 1
        path = "<stdin>"
    app = CtxviewApp(path, settings, agent=agent, fmt=fmt, lenient=lenient, session=session, overrides=overrides,
                     trace=trace)
    if config is not None:
        app.configure(config.keys, config.theme, config.what_if_note(), config.export_dir)
    result = app.run()
    if app.error is not None:
        print(f"ctxview: error: {sanitize(app.error)}", file=sys.stderr)
        return 1
    if app.return_code not in (None, 0):
        return int(app.return_code or 1)
    return int(result or 0)


def run_browser(
    root: str | None,
    settings: Settings,
    fmt: str | None = None,
    lenient: bool = False,
    overrides: Mapping[str, Any] | None = None,
    config: Any = None,
) -> int:
    """The session browser (browser.py) on `root`, else on the known places: Enter opens the session in
    the inspector, Escape there comes back to the list where it was; a session that cannot be opened
    comes back too, with its one line as a notification. The exit status. `config`
    (user_config.UserConfig): as for run_app, given to every inspector opened; its theme to the
    browser too."""
    from ctxview.tui.app import CtxviewApp
    from ctxview.tui.browser import BrowserApp

    rows, filter_text, selected, notice = None, "", None, None
    while True:
        browser = BrowserApp(root, rows=rows, filter_text=filter_text, selected=selected, notice=notice)
        if config is not None and config.theme:
            browser.theme = config.theme
        path = browser.run()
        if not path:
            return int(browser.return_code or 0)
        rows, filter_text, selected = browser.rows, browser.filter_text, path
        app = CtxviewApp(path, settings, fmt=fmt, lenient=lenient, overrides=overrides, browsing=True)
        if config is not None:
            app.configure(config.keys, config.theme, config.what_if_note(), config.export_dir)
        result = app.run()
        notice = app.error
        if notice is None and not app.went_back:
            return int(app.return_code or result or 0)
