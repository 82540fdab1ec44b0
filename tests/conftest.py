"""Every test runs with the session places and the index cache pointed into a temporary folder, so
that `ctxview` with no file (which looks for sessions there) never reads the real home or cache."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _no_real_sessions(monkeypatch, tmp_path_factory):
    base = tmp_path_factory.getbasetemp() / "no-sessions-here"
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "CTXVIEW_CACHE_DIR"):
        monkeypatch.setenv(name, str(base / name.lower()))
