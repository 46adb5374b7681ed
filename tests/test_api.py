"""The documented Python API (docs/api.md): its examples run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import engine

ROOT = Path(__file__).resolve().parent.parent


def example(name: str) -> str:
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    m = re.search(rf"<!-- example: {name} [^\n]*-->\n```python\n(.*?)```", text, re.S)
    assert m, f"docs/api.md has no example {name!r}"
    return m.group(1)


def test_the_figure_example_reproduces_fig1(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    monkeypatch.chdir(tmp_path)
    ns: dict = {}
    exec(compile(example("fig1"), "docs/api.md:fig1", "exec"), ns)
    png = tmp_path / "fig1_energy_error.png"
    assert png.is_file() and png.stat().st_size > 10_000
    for scheme, slope in ns["slopes"].items():
        assert slope == pytest.approx(2.0, abs=0.05), scheme


def documented_output(code: str) -> list[str]:
    """The output an example documents: the ``# …`` comment lines that follow a
    ``print(`` line (the block's comments elsewhere are prose, not output)."""
    out: list[str] = []
    after_print = False
    for line in code.splitlines():
        s = line.strip()
        if after_print and s.startswith("# "):
            out.append(s[2:])
            continue
        after_print = "print(" in s and "#" not in s
    return out


def test_documented_output_is_read_from_the_comments_after_prints():
    code = 'x = 1\n# prose\nprint(x)\n# 1\n# 2\ny = 2\n# prose again\n'
    assert documented_output(code) == ["1", "2"]


def test_the_branch_example_prints_what_it_documents(tmp_path, monkeypatch, capsys):
    """Issue #33 §11: the numbers in the example's comments are what it prints now
    (they drifted once: 3167 impacts documented, 3092 printed)."""
    monkeypatch.chdir(tmp_path)
    code = example("branch")
    exec(compile(code, "docs/api.md:branch", "exec"), {})
    out = capsys.readouterr().out.splitlines()
    expected = documented_output(code)
    assert len(expected) == 3 and "h: 0.001 → 0.0005" in expected[0]
    assert out == expected, "update docs/api.md's branch example to what it prints"
    assert (tmp_path / "impact.h5").is_file()


def test_the_public_names_exist_and_are_documented():
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    for name in engine.__all__:
        if name != "__version__":
            assert getattr(engine, name) is not None
            assert f"engine.{name}" in text, name
    with pytest.raises(AttributeError):
        engine.no_such_thing  # noqa: B018


def test_run_raises_with_the_last_good_state_kept():
    with pytest.raises(engine.SimulationError) as err:
        engine.run("torus", h=9e-3, t_end=2.0, frames=False)
    assert "blew up" in str(err.value) and "\n" not in str(err.value)
    sim = err.value.simulation
    assert sim.state.is_finite() and 0 < sim.t < 2.0
