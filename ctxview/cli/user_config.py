"""The user's configuration for the inspector: `~/.config/ctxview/config.toml`.

Where: `$CTXVIEW_CONFIG` when set (tests use it; a missing file there is an
error), else `config.toml` in platformdirs' `user_config_dir("ctxview")`
(none there: no configuration). What it holds:

```toml
theme = "gruvbox"                 # a Textual theme name

[keys]                            # binding id (ctxview/tui/keys.py) = key(s)
"ctxview.search" = "f"
"ctxview.settings" = "S,o"

[settings]                        # the inspector's starting settings (command-line options win)
keep_recent = 5
tiers = "default"
budget = 50000
[settings.clear]
keep = 3
exclude = ["Read"]
```

Everything is checked when it is read, by the rules the command line and
the session files follow (Settings.problems()); a bad value is a
`ConfigError` whose one line names the file, the key and what was expected:
`~/.config/ctxview/config.toml: keys.ctxview.search: expected a key name
string, got 3`; what the line quotes of the file (a name, a value) is a short
excerpt made visible (sanitize.make_visible), never the whole of it. The file
must be a regular file of at most MAX_CONFIG_BYTES, nested at most MAX_DEPTH
tables or arrays deep: a FIFO, a device, a huge or absurdly nested file is
refused with one line, before it can hang, fill memory or overflow the stack.
Only the inspector reads the file: `report` and `prepare`
print the same for everyone. This module imports neither textual nor rich:
the ids and themes to check against are given by the caller.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import re
import stat
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Collection, Mapping

from ctxview.sanitize import make_visible
from ctxview.settings import Settings
from ctxview.stages import Option

__all__ = ["CONFIG_ENV", "ConfigError", "MAX_CONFIG_BYTES", "MAX_DEPTH", "UserConfig", "config_path",
           "load_user_config", "shown_path"]

CONFIG_ENV = "CTXVIEW_CONFIG"
MAX_CONFIG_BYTES = 1 << 20   # a real config.toml is a few hundred bytes
MAX_DEPTH = 32               # tables and arrays within each other; the deepest real key is 4 ([settings.clear] exclude)
_EXCERPT = 40                # characters of a name or value an error line quotes
_WHAT = 200                  # characters of the explanation after the key

# The settings a config file may give: the ones that make sense on every file (not `request`).
SETTINGS = {option.name: option for option in Settings.OPTIONS if option.name != "request"}
SETTING_NAMES = tuple(SETTINGS)
_KEY_NAME = re.compile(r"[A-Za-z0-9_+\-]+|[!-~]")  # Textual key names ("ctrl+f", "question_mark") or one character


class ConfigError(ValueError):
    """A configuration file that cannot be used; the message is the one line the user sees."""


@dataclass(frozen=True, slots=True)
class UserConfig:
    path: str | None = None                               # the file read, as shown (None: none)
    keys: dict[str, str] = field(default_factory=dict)    # binding id → keys ("f", "S,o")
    settings: dict[str, Any] = field(default_factory=dict)  # Settings field → value, checked
    theme: str | None = None
    export_dir: str | None = None                         # where `w` offers to write (None: the current folder)

    def what_if_note(self) -> str:
        """'' when the config's settings leave the view as sent; else a line saying they do not."""
        label = Settings(**self.settings).label() if self.settings else "as sent"
        return "" if label == "as sent" else f"{self.path} makes every view a {label}"


def config_path() -> Path:
    """$CTXVIEW_CONFIG, else config.toml in the user's configuration directory."""
    given = os.environ.get(CONFIG_ENV)
    if given:
        return Path(given).expanduser()
    from platformdirs import user_config_dir  # (only when there is no override: tests never touch it)

    return Path(user_config_dir("ctxview", appauthor=False)) / "config.toml"


def shown_path(path: Path) -> str:
    """The path as an error names it: `~/...` under the home directory."""
    try:
        return "~/" + path.expanduser().resolve().relative_to(Path.home().resolve()).as_posix()
    except (ValueError, RuntimeError, OSError):
        return str(path)


def load_user_config(path: Path | None = None, *, binding_ids: Collection[str] | None = None,
                     themes: Collection[str] | None = None) -> UserConfig:
    """The configuration at `path` (default: config_path()); an empty one when the default file does
    not exist. `binding_ids` and `themes`: what keys.* and theme may name (None: not checked)."""
    from_env = path is None and bool(os.environ.get(CONFIG_ENV))
    explicit = path is not None or from_env
    path = path if path is not None else config_path()
    shown = shown_path(path)
    raw = _read_regular(path, shown, explicit, from_env)
    if raw is None:
        return UserConfig()
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{shown}: not UTF-8 text (byte {exc.start:,})") from None
    except RecursionError:  # (tomllib recurses once per nested array or inline table)
        raise ConfigError(f"{shown}: nested deeper than {MAX_DEPTH} tables or arrays (TOML)") from None
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        at = re.search(r" \(at line (\d+), column \d+\)$", message)
        if at:
            raise ConfigError(f"{shown}:{at.group(1)}: {_short(message[:at.start()], _WHAT)} (TOML)") from None
        raise ConfigError(f"{shown}: {_short(message, _WHAT)} (TOML)") from None
    # A dotted key of 5,000 parts parses without recursing, into tables 5,000 deep, that anything
    # recursive (repr, ==, the walks below) would overflow on: refused here, by a walk with a stack.
    if _too_deep(data, MAX_DEPTH):
        raise ConfigError(f"{shown}: nested deeper than {MAX_DEPTH} tables or arrays (a key of more than "
                          f"{MAX_DEPTH} dotted parts, or as many [[...]] or {{...}} within each other)")
    return _read(data, shown, binding_ids, themes)


def _read_regular(path: Path, shown: str, explicit: bool, from_env: bool) -> bytes | None:
    """The bytes of the regular file `path`, at most MAX_CONFIG_BYTES; None when the default file is
    missing. Opened with O_NONBLOCK, so that a FIFO does not wait for a writer, and refused by its
    fstat (FIFO, device, socket, directory) before a byte is read: /dev/zero never ends."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        if explicit:  # named on purpose: a typo there should not pass unseen
            raise ConfigError(f"{shown}: no such file" + (f" (${CONFIG_ENV})" if from_env else "")) from None
        return None
    except OSError as exc:
        raise ConfigError(f"{shown}: cannot read: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
            raise ConfigError(f"{shown}: is {kind}; a config file must be a regular file")
        parts, total = [], 0
        while total <= MAX_CONFIG_BYTES:  # (by pieces: a file that grows while it is read stops here too)
            piece = os.read(fd, MAX_CONFIG_BYTES + 1 - total)
            if not piece:
                break
            parts.append(piece)
            total += len(piece)
    except OSError as exc:
        raise ConfigError(f"{shown}: cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if total > MAX_CONFIG_BYTES:
        raise ConfigError(f"{shown}: larger than {MAX_CONFIG_BYTES >> 20} MiB, the limit for a config file")
    return b"".join(parts)


_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a named pipe (FIFO)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _too_deep(data: Any, limit: int) -> bool:
    """Whether tables and arrays in `data` are nested more than `limit` deep (walked with a stack)."""
    stack = [(data, 0)]
    while stack:
        value, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(value, dict):
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, list):
            stack.extend((v, depth + 1) for v in value)
    return False


def _short(text: str, limit: int = _EXCERPT) -> str:
    """`text` made visible and cut to `limit` characters: what an error line quotes of the file."""
    text = make_visible(text[:limit + 1]).replace("\n", "\\n").replace("\t", "\\t")
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _got(value: Any) -> str:
    text = repr(value)  # (at most a few MB: the file is at most MAX_CONFIG_BYTES)
    return text if len(text) <= _EXCERPT else text[:_EXCERPT - 3] + "..."


def _read(data: Mapping[str, Any], shown: str, binding_ids: Collection[str] | None,
          themes: Collection[str] | None) -> UserConfig:
    def fail(key: str, what: str) -> ConfigError:
        # the key and the explanation quote the file: both cut (what Settings.problems() says is a repr)
        return ConfigError(f"{shown}: {_short(key, 2 * _EXCERPT)}: {_short(what, _WHAT)}")

    for key in data:
        if key not in ("keys", "settings", "theme", "export_dir"):
            raise fail(key, "unknown key (expected theme, export_dir, [keys] or [settings])")
    export_dir = data.get("export_dir")
    if export_dir is not None:
        if not isinstance(export_dir, str) or not export_dir.strip() or "\x00" in export_dir:
            raise fail("export_dir", f"expected a folder's path string, got {_got(export_dir)}")
        export_dir = os.path.expanduser(export_dir)
    theme = data.get("theme")
    if theme is not None:
        if not isinstance(theme, str) or not theme.strip():
            raise fail("theme", f"expected a theme name string, got {_got(theme)}")
        if themes is not None and theme not in themes:
            raise fail("theme", f"unknown theme {_got(theme)} (themes: {', '.join(sorted(themes))})")
    keys = _keys(data.get("keys", {}), fail, binding_ids)
    settings = _settings(data.get("settings", {}), fail)
    return UserConfig(shown, keys, settings, theme, export_dir)


def _flat(table: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """`ctxview.search = "f"` in [keys] is a nested table in TOML: its dotted name again (recursive:
    the depth is bounded already, by MAX_DEPTH)."""
    out: dict[str, Any] = {}
    for key, value in table.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(_flat(value, name + "."))
        else:
            out[name] = value
    return out


def _keys(table: Any, fail, binding_ids: Collection[str] | None) -> dict[str, str]:
    if not isinstance(table, dict):
        raise fail("keys", f"expected a table of binding id = key, got {_got(table)}")
    out = {}
    for binding_id, value in _flat(table).items():
        where = f"keys.{binding_id}"
        if binding_ids is not None and binding_id not in binding_ids:
            near = difflib.get_close_matches(binding_id, list(binding_ids), n=1) if len(binding_id) <= 100 else []
            hint = f"did you mean {near[0]}?" if near else "see the keys in the README"
            raise fail(where, f"unknown binding id ({hint})")
        if not isinstance(value, str) or not value.strip():
            raise fail(where, f"expected a key name string, got {_got(value)}")
        names = [k.strip() for k in value.split(",")]
        bad = next((k for k in names if not _KEY_NAME.fullmatch(k)), None)
        if bad is not None:
            raise fail(where, f"expected key names such as \"f\", \"ctrl+f\" or \"f,ctrl+f\", got {_got(value)}")
        out[binding_id] = ",".join(names)
    return out


def _settings(table: Any, fail) -> dict[str, Any]:
    if not isinstance(table, dict):
        raise fail("settings", f"expected a table of settings, got {_got(table)}")
    out: dict[str, Any] = {}
    for name, value in table.items():
        where = f"settings.{name}"
        option = SETTINGS.get(name)
        if option is None:
            raise fail(where, f"unknown setting (settings: {', '.join(SETTINGS)})")
        if option.kind == "object":
            out[name] = _object(option, value, fail)
            continue
        if name == "counter":
            from ctxview.engine.tokens import COUNTER_NAMES

            if value not in COUNTER_NAMES:
                raise fail(where, f"expected one of {', '.join(COUNTER_NAMES)}, got {_got(value)}")
        problem = option.problem(value)
        if problem:
            raise fail(where, _without_name(problem, name))
        out[name] = value
    return out


def _object(option: Option, value: Any, fail) -> Any:
    """An object's settings (clear, clear_thinking, compact): false (off), true (its defaults) or a
    table of its fields, each checked where it is (`settings.clear.keep`)."""
    kind, name = option.type, option.name
    names = [f.name for f in dataclasses.fields(kind)]  # type: ignore[arg-type]
    if value is False:
        return None
    if value is True:
        return kind()  # type: ignore[misc]
    if not isinstance(value, dict):
        raise fail(f"settings.{name}", f"expected true, false or a table ({', '.join(names)}), got {_got(value)}")
    values = {}
    for key, item in value.items():
        if key not in names:
            raise fail(f"settings.{name}.{key}", f"unknown {name} setting (settings: {', '.join(names)})")
        item = tuple(item) if isinstance(item, list) else item  # (lists of tool names are kept as tuples)
        problems = kind(**{key: item}).problems()  # type: ignore[misc]
        if problems:
            raise fail(f"settings.{name}.{key}", _without_name(problems[0], f"{name}.{key}"))
        values[key] = item
    return kind(**values)  # type: ignore[misc]


def _without_name(problem: str, name: str) -> str:
    """"keep_recent must be ≥ 0, not -1" → "must be ≥ 0, not -1" (the key is named already)."""
    for prefix in (f"{name}: ", f"{name} "):
        if problem.startswith(prefix):
            return problem[len(prefix):]
    return problem
