"""Hostile config files through the real `ctxview` command: `$CTXVIEW_CONFIG`, or `config.toml` in
the user's config folder, as a FIFO, a device, a directory, a file too big, TOML nested thousands
deep, names and values megabytes long, escapes and bidi controls in names.

Every case is written at test time (FIFOs and megabyte files do not go into git) and runs as a
subprocess, the inspector on a good session or the session browser on a folder: the config is read
before either takes the screen. Each must exit 1 with exactly one short `ctxview: error:` line
naming the file, on stderr, with no traceback and no unsafe character, and leave the config as it
was. The subprocess runs with its address space capped (MEMORY_CAP), so that a config read
without end (/dev/zero) fails the test with a MemoryError instead of taking the machine's memory,
and with a timeout (HANG_GUARD) that turns a hang (a FIFO with no writer) into a failure.
"""

from __future__ import annotations

import json
import os
import resource
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from ctxview.sanitize import UNSAFE

HANG_GUARD = 60          # seconds; see the module docstring
MEMORY_CAP = 2 << 30     # bytes of address space for the subprocess (a good run takes ~0.5 GiB)
LONGEST_LINE = 400       # characters: an error line quotes a short excerpt of the file, never the whole
CTXVIEW = [sys.executable, "-m", "ctxview"]
ESCAPES = "\x1b]0;PWNED\x07\x1b[31m\u202eevil\u200b"


@dataclass
class ConfigCase:
    name: str
    config: str                    # the path given as $CTXVIEW_CONFIG ("" : none; the default file is used)
    error: str                     # a substring of the one error line
    browse: bool = False           # the session browser on a folder instead of the inspector on a file


def _toml_string(text: str) -> str:
    return json.dumps(text)  # (a JSON string of escapes is a TOML basic string)


def write_cases(d: Path) -> list[ConfigCase]:
    """Every hostile config of this module, written into `d`, with what ctxview must say of it."""
    cases: list[ConfigCase] = []
    add = cases.append

    def put(name: str, text: str | bytes) -> str:
        p = d / name
        p.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
        return str(p)

    os.mkfifo(d / "config.fifo")
    add(ConfigCase("a FIFO with no writer", str(d / "config.fifo"), "config.fifo: is a named pipe"))
    add(ConfigCase("a FIFO, the session browser", str(d / "config.fifo"), "is a named pipe", browse=True))
    add(ConfigCase("/dev/zero", "/dev/zero", "/dev/zero: is a character device"))
    add(ConfigCase("/dev/urandom", "/dev/urandom", "/dev/urandom: is a character device"))
    add(ConfigCase("/dev/zero, the session browser", "/dev/zero", "is a character device", browse=True))
    os.symlink("/dev/zero", d / "zero-link.toml")
    add(ConfigCase("a link to /dev/zero", str(d / "zero-link.toml"), "zero-link.toml: is a character device"))
    (d / "config-dir").mkdir()
    add(ConfigCase("a directory", str(d / "config-dir"), "config-dir: is a directory"))
    # the default place (no $CTXVIEW_CONFIG): $XDG_CONFIG_HOME/ctxview/config.toml as a FIFO
    (d / "xdg" / "ctxview").mkdir(parents=True)
    os.mkfifo(d / "xdg" / "ctxview" / "config.toml")
    add(ConfigCase("the default config.toml as a FIFO", "", "config.toml: is a named pipe"))

    big = put("big.toml", "# " + "x" * (2 << 20) + "\n")
    add(ConfigCase("a file of 2 MiB", big, "big.toml: larger than 1 MiB"))
    ten = put("ten-mb-theme.toml", "theme = " + _toml_string("n" * (10 << 20)) + "\n")
    add(ConfigCase("a 10 MB theme name", ten, "larger than 1 MiB"))
    arrays = put("deep-arrays.toml", "theme = " + "[" * 3000 + "]" * 3000 + "\n")
    add(ConfigCase("arrays nested 3,000 deep", arrays, "deep-arrays.toml: nested deeper than 32"))
    inline = put("deep-inline.toml", "[keys]\na = " + "{b = " * 3000 + "1" + "}" * 3000 + "\n")
    add(ConfigCase("inline tables nested 3,000 deep", inline, "deep-inline.toml: nested deeper than 32"))
    dotted = put("dotted.toml", "[keys]\n" + ".".join(["ctxview"] * 5000) + ' = "f"\n')
    add(ConfigCase("a dotted key of 5,000 parts", dotted, "dotted.toml: nested deeper than 32"))
    header = put("header.toml", "[" + ".".join(["settings"] * 5000) + "]\nkeep = 1\n")
    add(ConfigCase("a table header of 5,000 parts", header, "header.toml: nested deeper than 32"))
    array_tables = put("array-tables.toml", "[[" + ".".join(["keys"] * 5000) + "]]\n")
    add(ConfigCase("an array of tables 5,000 parts deep", array_tables, "nested deeper than 32"))

    long_theme = put("long-theme.toml", "theme = " + _toml_string("n" * 900_000) + "\n")
    add(ConfigCase("a 900 kB theme name", long_theme, "long-theme.toml: theme: unknown theme 'nnnn"))
    long_id = put("long-id.toml", "[keys]\n" + _toml_string("ctxview." + "s" * 900_000) + ' = "f"\n')
    add(ConfigCase("a 900 kB binding id", long_id, "long-id.toml: keys.ctxview.sssss"))
    long_key = put("long-key.toml", "[keys]\n" + _toml_string("ctxview.search") + " = "
                   + _toml_string("f," * 400_000 + "ctrl f") + "\n")
    add(ConfigCase("900 kB of key names", long_key, "keys.ctxview.search: expected key names"))
    long_setting = put("long-setting.toml", "[settings]\n" + "s" * 900_000 + " = 1\n")
    add(ConfigCase("a 900 kB setting name", long_setting, "long-setting.toml: settings.ssss"))
    long_tiers = put("long-tiers.toml", "[settings]\ntiers = " + _toml_string("1:2," * 200_000) + "\n")
    add(ConfigCase("a 800 kB tier spec", long_tiers, "settings.tiers"))
    exclude = put("long-exclude.toml", "[settings.clear]\nexclude = [" + "1," * 200_000 + "]\n")
    add(ConfigCase("clear.exclude of 200,000 numbers", exclude, "settings.clear.exclude"))
    unknown = put("unknown-top.toml", _toml_string("k" * 900_000) + " = 1\n")
    add(ConfigCase("a 900 kB unknown top-level key", unknown, "unknown-top.toml: kkkk"))
    escapes = put("escapes.toml", "theme = " + _toml_string(ESCAPES) + "\n[keys]\n"
                  + _toml_string("ctxview." + ESCAPES) + ' = "f"\n')
    add(ConfigCase("escapes and bidi in a theme name", escapes, "escapes.toml: theme: unknown theme"))
    escaped_id = put("escaped-id.toml", "[keys]\n" + _toml_string("ctxview." + ESCAPES) + ' = "f"\n')
    add(ConfigCase("escapes and bidi in a binding id", escaped_id, "keys.ctxview.␛]0;PWNED␇␛[31m<U+202E>evil"))
    return cases


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile-config")
    sessions = folder / "saved"
    sessions.mkdir()
    (sessions / "good.json").write_text(json.dumps([{"role": "user", "content": "hi"},
                                                   {"role": "assistant", "content": "ok"}]))
    return folder, {c.name: c for c in write_cases(folder)}


def _names() -> list[str]:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        return [c.name for c in write_cases(Path(tmp))]


def _snapshot(path: str):
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        return "link", os.readlink(path)
    if not stat.S_ISREG(st.st_mode):
        return stat.S_IFMT(st.st_mode), None
    return "file", Path(path).read_bytes()


def _cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def run(folder: Path, case: ConfigCase) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "CTXVIEW_CONFIG"}
    env.update(HOME=str(folder), XDG_CONFIG_HOME=str(folder / "xdg"), COLUMNS="120", TERM="xterm-256color")
    if case.config:
        env["CTXVIEW_CONFIG"] = case.config
    target = "saved" if case.browse else "saved/good.json"
    return subprocess.run(CTXVIEW + [target], cwd=folder, stdin=subprocess.DEVNULL, capture_output=True,
                          env=env, timeout=HANG_GUARD, preexec_fn=_cap_memory)


@pytest.mark.parametrize("name", _names())
def test_a_hostile_config_is_one_short_line(corpus, name):
    folder, cases = corpus
    case = cases[name]
    watched = case.config or str(folder / "xdg" / "ctxview" / "config.toml")
    before = _snapshot(watched)
    done = run(folder, case)
    err = done.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err and "MemoryError" not in err, err[-2000:]
    assert done.returncode == 1, f"exit {done.returncode}; stderr: {err[-500:]}"
    assert done.stdout == b""
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("ctxview: error: "), err[:1000]
    assert case.error in lines[0], lines[0]
    assert len(lines[0]) <= LONGEST_LINE, f"{len(lines[0]):,} characters: {lines[0][:300]}"
    assert UNSAFE.search(err) is None, repr(err[:300])
    assert _snapshot(watched) == before


def test_every_surface_has_cases(corpus):
    _, cases = corpus
    config_paths = {c.config for c in cases.values()}
    assert "" in config_paths and "/dev/zero" in config_paths      # the default place, and $CTXVIEW_CONFIG
    assert any(c.browse for c in cases.values()) and any(not c.browse for c in cases.values())
