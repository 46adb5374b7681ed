"""The documentation stays true to the code."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _gen():
    spec = importlib.util.spec_from_file_location("gen", ROOT / "docs" / "_gen_scenarios.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_parameter_tables_in_sync_with_the_schemas():
    text = (ROOT / "docs" / "scenarios.md").read_text(encoding="utf-8")
    assert _gen().render(text) == text, "run: python docs/_gen_scenarios.py"


def test_readme_starts_with_the_two_commands():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "```bash" and lines[3] == "```"
    assert "pip install" in lines[1] and "rrp" in lines[1]
    assert "pip install -e '.[test]'" in lines[2] and "pytest" in lines[2]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert lines[2] in ci


def test_every_builtin_scenario_documents_every_parameter():
    """The shipped scenario files list every parameter (users copy them)."""
    import tomllib

    from engine.models import MODELS

    for path in (ROOT / "assets" / "scenarios").glob("*.toml"):
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        if path.stem in ("torus", "pendulum", "dumbbells"):
            names = {p.name for p in MODELS[data["model"]].schema}
            assert set(data["parameters"]) == names, path.name
