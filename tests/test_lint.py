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


def _imported_modules(path: Path, package: str) -> set[str]:
    """Every module ``path`` imports, function-local imports included, relative imports
    resolved against ``package`` (the dotted package the file sits in)."""
    import ast

    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            found.add(mod)
            found.update(f"{mod}.{a.name}" for a in node.names)
    return found


def test_the_window_never_imports_the_command_line():
    """Issue #34 §2: ``app/gui`` (and the scene and export renderer it uses) import
    nothing of ``app.cli*``, function-local imports included; what both need (the step
    rule: ``engine.run_steps``) lives below them."""
    offenders = []
    for path in [*(ROOT / "app" / "gui").glob("*.py"), *(ROOT / "app" / "scene").glob("*.py"),
                 *(ROOT / "app" / "export").glob("*.py")]:
        package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
        bad = {m for m in _imported_modules(path, package)
               if m == "app.cli" or m.startswith(("app.cli.", "app.cli_"))}
        if bad:
            offenders.append(f"{path.relative_to(ROOT)}: {sorted(bad)}")
    assert not offenders, offenders


def test_the_import_reader_sees_function_local_and_relative_imports(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("def f():\n    from ..cli import check_h\n    import app.cli_export\n")
    assert {"app.cli", "app.cli.check_h", "app.cli_export"} <= _imported_modules(f, "app.gui")
