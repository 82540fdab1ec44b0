"""The engine and the loaders never import textual or rich; the CLI only lazily."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import ctxview


def engine_modules() -> list[str]:
    """Every ctxview module except the CLI and the TUI package."""
    names = []
    for info in pkgutil.walk_packages(ctxview.__path__, "ctxview."):
        name = info.name
        if name in ("ctxview.cli.commands", "ctxview.__main__") or name == "ctxview.tui" or name.startswith("ctxview.tui."):
            continue
        names.append(name)
    return names


def imported_after(code: str) -> set[str]:
    probe = code + "\nimport sys\nprint(' '.join(m for m in ('textual', 'rich') if m in sys.modules))\n"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return set(out.stdout.split())


def test_the_walk_finds_the_engine_and_the_loaders():
    names = engine_modules()
    for expected in ("ctxview.pipeline", "ctxview.engine.tokens", "ctxview.engine.budget", "ctxview.engine.bloat", "ctxview.analysis.report",
                     "ctxview.export.bodies", "ctxview.engine.compression", "ctxview.formats"):
        assert expected in names


def test_engine_and_loaders_import_neither_textual_nor_rich():
    names = engine_modules()
    code = "import importlib\n" + "".join(f"importlib.import_module({n!r})\n" for n in names)
    # the lazy public names too
    code += "import ctxview\n" + "".join(f"getattr(ctxview, {n!r})\n" for n in ctxview.__all__)
    assert imported_after(code) == set()


def test_importing_the_cli_loads_no_terminal_library():
    assert imported_after("import ctxview.cli.commands") == set()


def test_the_inspector_state_imports_neither_textual_nor_rich():
    # ctxview/tui/state.py and search_state.py: the inspector's decisions, tested without a terminal
    assert imported_after("import ctxview.tui.state") == set()
    assert imported_after("import ctxview.tui.search_state") == set()
