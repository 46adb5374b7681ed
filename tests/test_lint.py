"""The code base stays ruff-clean (settings in pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from test_layers import imports_of, modules  # (one reader of the imports: issue #34, D45)

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


def test_the_window_never_imports_the_command_line():
    """Issue #34 §2: ``app/gui`` (and the scene and export renderer it uses) import
    nothing of ``app.cli*``, function-local imports included; what both need (the step
    rule: ``engine.run_steps``) lives below them."""
    offenders = []
    known = modules()
    for path in [*(ROOT / "app" / "gui").glob("*.py"), *(ROOT / "app" / "scene").glob("*.py"),
                 *(ROOT / "app" / "export").glob("*.py")]:
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(
            ".__init__")
        bad = {m for m in imports_of(name, path, known)
               if m == "app.cli" or m.startswith("app.cli.")}
        if bad:
            offenders.append(f"{path.relative_to(ROOT)}: {sorted(bad)}")
    assert not offenders, offenders


def test_the_import_reader_sees_function_local_and_relative_imports(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("def f():\n    from ..cli import check_h\n    import app.cli.export\n")
    assert {"app.cli", "app.cli.export"} <= imports_of("app.gui.m", f, modules())
