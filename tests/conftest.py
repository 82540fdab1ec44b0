"""Every test runs with the session places and the index cache pointed into a temporary folder, so
that `ctxview` with no file (which looks for sessions there) never reads the real home or cache; and
with an empty config.toml."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# The inspector reads the user's config.toml (ctxview/cli/user_config.py): the tests read an empty one
# instead, whatever the machine's user has configured. A test that wants another sets its own.
os.environ["CTXVIEW_CONFIG"] = str(Path(__file__).parent / "config" / "empty.toml")  # (not under fixtures/: no session)


@pytest.fixture(autouse=True)
def _no_real_sessions(monkeypatch, tmp_path_factory):
    base = tmp_path_factory.getbasetemp() / "no-sessions-here"
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "CTXVIEW_CACHE_DIR"):
        monkeypatch.setenv(name, str(base / name.lower()))


# Long property runs are `slow`: the README's `pytest` leaves them out (addopts: -m "not slow"), and
# CI runs them too (`pytest -m slow` in .ci/run). A property test of 150 examples or more is one;
# a test marked @pytest.mark.slow by hand (a big generated input) is another.
SLOW_EXAMPLES = 150


def pytest_collection_modifyitems(config, items):
    for item in items:
        settings = getattr(getattr(item, "obj", None), "_hypothesis_internal_use_settings", None)
        if settings is not None and settings.max_examples >= SLOW_EXAMPLES:
            item.add_marker(pytest.mark.slow)
