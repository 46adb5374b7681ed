"""The code base stays ruff-clean (settings in pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_ruff_clean():
    out = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "engine", "app",
                          "tests", "benchmarks"], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
