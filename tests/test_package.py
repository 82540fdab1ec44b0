"""The package's outer shape: version, CLI entry points, import hygiene."""

import subprocess
import sys

import ctxview


def test_version_flag_prints_version():
    out = subprocess.run(
        [sys.executable, "-m", "ctxview", "--version"], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == f"ctxview {ctxview.__version__}"


def test_help_flag_exits_zero_and_describes_the_tool():
    out = subprocess.run([sys.executable, "-m", "ctxview", "--help"], capture_output=True, text=True)
    assert out.returncode == 0
    assert "usage: ctxview" in out.stdout
