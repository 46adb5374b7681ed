"""The layers of docs/architecture.md hold: no import loops and no import from a lower
layer up to a higher one, function-local imports included (issue #34 §1).

The imports are read from the sources with :mod:`ast` (nothing is imported), relative
imports resolved, each name resolved to the engine or app module that defines it.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

LAYERS: tuple[tuple[str, ...], ...] = (
    # 1: rotations, array layout, state, the kernel cache, the family gates and constants
    ("engine.rotations", "engine.layout", "engine.state", "engine.kernel_cache", "engine.inputs",
     "engine.specialize", "engine.solver_counts", "engine.interpreted"),
    # 2: the force terms and what finds their pairs
    ("engine.potentials", "engine.neighbours", "engine.contact", "engine.parallel",
     "engine.generalized.spring_pendulum"),
    # 3: the force field and what reads it
    ("engine.forcefield", "engine.stability", "engine.diagnostics"),
    # 4: integrators, energy-stepping, models, priming of the kernels
    ("engine.integrators", "engine.energy_stepping", "engine.models",
     "engine.generalized.schemes", "engine.priming",
     # (LAMMPS data files, read by the assembly model: issue #43 item 5)
     "engine.io.lammps.read_data", "engine.io.lammps.write_data",
     "engine.io.lammps.tables", "engine.io.lammps.styles", "engine.io.lammps.units",
     "engine.io.lammps.read_deck"),
    # 5: the drivers and their parts
    ("engine.simulation", "engine.generalized", "engine.drivers", "engine.run_steps"),
    # 6: run files, scenarios
    ("engine.io", "engine.scenarios"),
    # 7: studies and the public API
    ("engine.studies", "engine.api", "engine"),
    # 8: what the window and the command line share (no Qt widgets, no argparse)
    ("app.errors", "app.run_signals", "app.run_loop", "app.scene", "app.plot_style", "app.export",
     "app.resume_checks", "app.cold_start"),
    # 9: the window
    ("app.gui",),
    # 10: the command line
    ("app.cli", "app.__main__", "app"),
)
"""Each layer may import its own and the layers above it in this list (lower numbers);
the longest matching prefix places a module."""


def modules() -> dict[str, Path]:
    """Every module of ``engine`` and ``app``: dotted name → file."""
    out = {}
    for path in [*(ROOT / "engine").rglob("*.py"), *(ROOT / "app").rglob("*.py")]:
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def imports_of(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The engine/app modules that module ``name`` (at ``path``) imports, anywhere in
    it (function-local imports too); ``from pkg import x`` counts ``pkg.x`` where that is
    a module, else ``pkg``.  A module's own parent packages are not counted."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]

    def resolve(dotted: str) -> str | None:
        while dotted and dotted not in known:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            subs = [f"{mod}.{a.name}" for a in node.names if f"{mod}.{a.name}" in known]
            targets = subs if len(subs) == len(node.names) else [mod, *subs]
        for t in targets:
            r = resolve(t)
            if r and r != name and not name.startswith(r + "."):
                found.add(r)
    return found


def layer_of(name: str) -> int:
    best = (-1, -1)
    for i, layer in enumerate(LAYERS):
        for prefix in layer:
            if (name == prefix or name.startswith(prefix + ".")) and len(prefix) > best[1]:
                best = (i, len(prefix))
    assert best[0] >= 0, f"{name} is in no layer: place it in tests/test_layers.py"
    return best[0]


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports_of(name, path, known) for name, path in known.items()}


def loops(g: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in g.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def upward(g: dict[str, set[str]]) -> list[str]:
    return sorted(f"{a} (layer {layer_of(a) + 1}) imports {b} (layer {layer_of(b) + 1})"
                  for a, deps in g.items() for b in deps if layer_of(b) > layer_of(a))


def test_no_import_loops():
    found = loops(graph())
    assert not found, f"import loops: {found}"


def test_no_upward_imports():
    found = upward(graph())
    assert not found, "\n".join(found)


def test_the_checks_catch_a_planted_loop_and_an_upward_import(tmp_path):
    """The checks themselves: a loop and an upward import planted in a copy of the
    graph are found (and a function-local import counts)."""
    g = graph()
    g["engine.rotations"] = g["engine.rotations"] | {"engine.simulation"}
    assert any("engine.rotations" in c and "engine.simulation" in c for c in loops(g))
    assert any(s.startswith("engine.rotations (layer 1) imports engine.simulation")
               for s in upward(g))
    f = tmp_path / "m.py"
    f.write_text("def f():\n    from ..simulation import Simulation\n")
    assert imports_of("engine.io.m", f, modules()) == {"engine.simulation"}
