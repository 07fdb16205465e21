"""The code is clean under the project's ruff rules (pyproject.toml [tool.ruff]): no unused imports
or variables, no undefined names, no statement-level mistakes, in the package, tests, benchmarks
and chapter sources."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_ruff_finds_nothing():
    root = Path(__file__).resolve().parents[1]
    run = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise", "."],
        cwd=root,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout + run.stderr
