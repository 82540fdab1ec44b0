"""config.toml: the keymap, default settings and theme, checked with one-line errors naming the key."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ctxview.cli import commands as cli
from ctxview.settings import ClearSettings, Settings
from ctxview.tui import launch
from ctxview.tui.keymap import binding_ids, theme_names
from ctxview.cli.user_config import (
    ConfigError,
    UserConfig,
    config_path,
    load_user_config,
    shown_path,
)

GOOD = """
theme = "gruvbox"

[keys]
"ctxview.search" = "f"
ctxview.settings = "S, o"          # (a dotted key: a nested table in TOML)

[settings]
keep_recent = 5
tiers = "default"
budget = 50000
old_messages = "truncate"

[settings.clear]
keep = 2
exclude = ["Read", "Grep"]
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def load(path: Path) -> UserConfig:
    return load_user_config(path, binding_ids=binding_ids(), themes=theme_names())


def test_keys_settings_and_theme(tmp_path):
    config = load(write(tmp_path, GOOD))
    assert config.theme == "gruvbox"
    assert config.keys == {"ctxview.search": "f", "ctxview.settings": "S,o"}
    assert config.settings == {"keep_recent": 5, "tiers": "default", "budget": 50000, "old_messages": "truncate",
                               "clear": ClearSettings(keep=2, exclude=("Read", "Grep"))}
    assert "makes every view a what-if: tiers=default, keep_recent=5" in config.what_if_note()


def test_the_environment_variable_names_the_file_and_the_default_is_the_user_config_dir(tmp_path, monkeypatch):
    path = write(tmp_path, 'theme = "nord"\n')
    monkeypatch.setenv("CTXVIEW_CONFIG", str(path))
    assert config_path() == path and load_user_config().theme == "nord"
    monkeypatch.delenv("CTXVIEW_CONFIG")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert config_path() == tmp_path / "xdg" / "ctxview" / "config.toml"
    assert load_user_config() == UserConfig()                      # no file there: no configuration


@pytest.mark.parametrize("text, message", [
    ('[keys]\nctxview.search = 3\n', "keys.ctxview.search: expected a key name string, got 3"),
    ('[keys]\n"ctxview.search" = ""\n', "keys.ctxview.search: expected a key name string, got ''"),
    ('[keys]\n"ctxview.search" = "ctrl f"\n', "keys.ctxview.search: expected key names such as"),
    ('[keys]\n"ctxview.serch" = "f"\n', "keys.ctxview.serch: unknown binding id (did you mean ctxview.search?)"),
    ('[settings]\nkeep_recent = -1\n', "settings.keep_recent: must be a whole number ≥ 0, not -1"),
    ('[settings]\nkeep_recent = true\n', "settings.keep_recent: must be a whole number ≥ 0, not True"),
    ('[settings]\ntiers = "5:full,3:100"\n', "settings.tiers: tier spec '5:full,3:100': ages must be strictly"),
    ('[settings]\nbudget = 0\n', "settings.budget: must be a whole number ≥ 1, not 0"),
    ('[settings]\nold_messages = "forget"\n', "settings.old_messages: unknown old_messages strategy 'forget'"),
    ('[settings]\ncounter = "words"\n', "settings.counter: expected one of auto, swarm"),
    ('[settings]\nrequest = 3\n', "settings.request: unknown setting"),
    ('[settings.clear]\nkeep = "3"\n', "settings.clear.keep: must be a whole number ≥ 0, not '3'"),
    ('[settings.clear]\nexclude = "Read"\n', "settings.clear.exclude: must be a list of tool names"),
    ('[settings.clear]\nkeeep = 3\n', "settings.clear.keeep: unknown clear setting"),
    ('theme = "neon"\n', "theme: unknown theme 'neon' (themes: ansi-dark"),
    ('theme = 1\n', "theme: expected a theme name string, got 1"),
    ('colour = "red"\n', "colour: unknown key (expected theme, export_dir, [keys] or [settings])"),
    ('keys = "f"\n', "keys: expected a table of binding id = key, got 'f'"),
])
def test_a_bad_value_names_the_file_and_the_key(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load(path)
    line = str(info.value)
    assert line.startswith(f"{shown_path(path)}: ") and message in line and "\n" not in line


def test_a_toml_syntax_error_names_the_line(tmp_path):
    path = write(tmp_path, 'theme = "nord"\n[settings]\nkeep_recent = = 3\n')
    with pytest.raises(ConfigError, match=r":3: .*\(TOML\)$"):
        load(path)
    path.write_bytes(b'theme = "\xff"\n')
    with pytest.raises(ConfigError, match="not UTF-8"):
        load(path)


def test_a_named_file_that_is_missing_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setenv("CTXVIEW_CONFIG", str(tmp_path / "nope.toml"))
    with pytest.raises(ConfigError, match=r"nope.toml: no such file \(\$CTXVIEW_CONFIG\)"):
        load_user_config()
    monkeypatch.setenv("CTXVIEW_CONFIG", str(tmp_path))          # a directory
    with pytest.raises(ConfigError, match="is a directory; a config file must be a regular file"):
        load_user_config()


# -- hostile files (the subprocess cases, FIFOs and devices, are in test_hostile_config.py) ----------

@pytest.mark.parametrize("text", [
    "theme = " + "[" * 3000 + "]" * 3000 + "\n",                       # tomllib itself recurses
    "[keys]\na = " + "{b = " * 3000 + "1" + "}" * 3000 + "\n",
    "[keys]\n" + ".".join(["ctxview"] * 5000) + ' = "f"\n',          # parses; 5,000 tables deep
    "[" + ".".join(["settings"] * 5000) + "]\nkeep = 1\n",
    "[keys]\n" + ".".join(["k"] * 33) + ' = "f"\n',                   # just over the limit
], ids=["arrays", "inline tables", "dotted key", "table header", "33 deep"])
def test_nesting_past_the_limit_is_one_line_not_a_recursion_error(tmp_path, text):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load(path)
    assert str(info.value).startswith(f"{shown_path(path)}: nested deeper than 32 tables or arrays")


def test_nesting_up_to_the_limit_is_read(tmp_path):
    path = write(tmp_path, "[keys]\n" + ".".join(["k"] * 31) + ' = "f"\n')   # depth 32 with [keys]
    with pytest.raises(ConfigError, match="unknown binding id"):                 # read, then checked
        load(path)
    assert load_user_config(path).keys == {".".join(["k"] * 31): "f"}            # (ids not checked)


def test_a_file_over_the_size_limit_is_refused_unread(tmp_path):
    from ctxview.cli.user_config import MAX_CONFIG_BYTES

    path = write(tmp_path, "# " + "x" * MAX_CONFIG_BYTES + "\n")
    with pytest.raises(ConfigError, match=r"larger than 1 MiB, the limit for a config file$"):
        load(path)
    path.write_text("# " + "x" * (MAX_CONFIG_BYTES - 30) + '\ntheme = "nord"\n')  # just under: read
    assert load(path).theme == "nord"


@pytest.mark.parametrize("text, start", [
    ("theme = " + repr("n" * 500_000).replace("'", '"') + "\n", "theme: unknown theme 'nnnn"),
    ("[keys]\n" + '"ctxview.' + "s" * 500_000 + '" = "f"\n', "keys.ctxview.ssss"),
    ("[settings]\n" + "s" * 500_000 + " = 1\n", "settings.ssss"),
    ('"' + "k" * 500_000 + '" = 1\n', "kkkk"),
    ("[settings.clear]\n" + "k" * 500_000 + " = 1\n", "settings.clear.kkkk"),
    ("[settings.clear]\nexclude = [" + "1," * 100_000 + "]\n", "settings.clear.exclude: must be a list"),
    ("[settings]\ntool_name_from = " + '"' + "x" * 500_000 + '"\n', "settings.tool_name_from: must be one"),
], ids=["theme", "binding id", "setting", "top-level key", "clearing setting", "exclude", "tool_name_from"])
def test_an_error_quotes_a_short_excerpt_of_a_long_name_or_value(tmp_path, text, start):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load(path)
    line = str(info.value)
    assert line.startswith(f"{shown_path(path)}: {start}"), line[:300]
    assert len(line) <= len(shown_path(path)) + 300, f"{len(line):,} characters"


def test_an_error_quotes_names_made_visible(tmp_path):
    from ctxview.sanitize import UNSAFE

    evil = "\x1b]0;PWNED\x07\u202eevil\u200b"
    path = write(tmp_path, "[keys]\n" + json.dumps("ctxview." + evil) + ' = "f"\n')
    with pytest.raises(ConfigError) as info:
        load(path)
    assert "keys.ctxview.␛]0;PWNED␇<U+202E>evil<U+200B>: unknown binding id" in str(info.value)
    assert UNSAFE.search(str(info.value)) is None


def test_a_path_under_home_is_shown_with_a_tilde(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert shown_path(tmp_path / ".config" / "ctxview" / "config.toml") == "~/.config/ctxview/config.toml"


# -- the command line ---------------------------------------------------------------


@pytest.fixture
def opened(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.jsonl").write_text("{}")
    calls = []

    def fake_run_app(path, settings, agent=None, fmt=None, lenient=False, overrides=None, config=None):
        calls.append((settings, overrides, config))
        return 0

    monkeypatch.setattr(launch, "run_app", fake_run_app)
    return calls


def test_command_line_options_win_over_the_config(opened, tmp_path, monkeypatch):
    monkeypatch.setenv("CTXVIEW_CONFIG", str(write(tmp_path, GOOD)))
    assert cli.main(["s.jsonl", "--keep-recent", "7", "--tiers", "light"]) == 0
    settings, overrides, config = opened[0]
    assert settings == Settings(keep_recent=7, tiers="light", budget=50000, old_messages="truncate",
                                clear=ClearSettings(keep=2, exclude=("Read", "Grep")))
    assert overrides["keep_recent"] == 7 and overrides["budget"] == 50000
    assert config.keys["ctxview.search"] == "f" and config.theme == "gruvbox"


def test_report_and_prepare_do_not_read_the_config(tmp_path, monkeypatch):
    monkeypatch.setenv("CTXVIEW_CONFIG", str(write(tmp_path, "this is not toml")))
    sample = Path(__file__).parent / "fixtures" / "hostile.ctxview.json"
    assert cli.main(["report", str(sample), "--json"]) == 0


def test_a_bad_config_is_one_line_and_exit_1_before_the_app(tmp_path):
    path = write(tmp_path, '[keys]\n"ctxview.search" = 3\n')
    sample = Path(__file__).parent / "fixtures" / "hostile.ctxview.json"
    env = {"CTXVIEW_CONFIG": str(path), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "ctxview", str(sample)], capture_output=True, text=True,
                          env=env, stdin=subprocess.DEVNULL)
    assert done.returncode == 1
    # (HOME is tmp_path here: the file is named as under the home directory)
    assert done.stderr == "ctxview: error: ~/config.toml: keys.ctxview.search: expected a key name string, got 3\n"
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_export_dir_is_a_folder_path_with_the_home_expanded(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert load(write(tmp_path, 'export_dir = "~/exports"\n')).export_dir == str(tmp_path / "exports")
    assert load(write(tmp_path, 'theme = "nord"\n')).export_dir is None
    for bad in ("export_dir = 3", 'export_dir = ""', "export_dir = [\"a\"]"):
        with pytest.raises(ConfigError, match="export_dir: expected a folder's path string"):
            load(write(tmp_path, bad + "\n"))
