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


def test_the_engine_never_imports_qt():
    code = ("import sys, engine, engine.simulation, engine.scenarios, engine.io, "
            "engine.studies; print(sorted(m for m in sys.modules if 'Qt' in m or "
            "m.startswith(('pyvista', 'pyqtgraph'))))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
