"""The kernel cache survives edits where it can and is never stale (issue #25 §4;
``engine.kernel_cache``).

A copy of the package runs the pendulum with ``rrp-newmark`` and with ``rk4`` in fresh
processes sharing one cache, and counts what each process compiles (Numba's
``numba:compile`` events): nothing when nothing changed (nor in another copy of the same
sources, elsewhere, written later); after an edit of ``rk4.py``
the RK4 loop and kernels but not the velocity-Verlet loop; after an edit of
``forcefield.py``, which every step calls, both loops.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from compile_probe import compiled_by

ROOT = Path(__file__).resolve().parent.parent


VERLET_LOOP = "engine.integrators.advance.advance_s1"
RK4_LOOP = "engine.integrators.advance.advance_s4"
RK4_KERNEL = "engine.integrators.rk4.rk4_step_ws"


@pytest.fixture(scope="module")
def package(tmp_path_factory) -> Path:
    """A copy of the engine and its scenarios, with a cache of its own."""
    root = tmp_path_factory.mktemp("pkg")
    shutil.copytree(ROOT / "engine", root / "engine",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "assets", root / "assets")
    return root


def compiled_in(root: Path, cache: Path | None = None) -> set[str]:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache or root / "cache"),
               PYTHONPATH=str(root))
    return compiled_by(root, env, "pendulum", "rrp-newmark", "rk4")


def touch(path: Path) -> None:
    """An edit that changes the file but not what it computes."""
    path.write_text(path.read_text() + "\n# edited by tests/test_kernel_cache.py\n")


@pytest.mark.slow  # compiles a fresh cache twice (docs/testing.md)
def test_an_edit_recompiles_what_depends_on_it(package):
    first = compiled_in(package)
    assert {VERLET_LOOP, RK4_LOOP, RK4_KERNEL} <= first
    assert compiled_in(package) == set()  # all loaded from the cache
    # another checkout of the same sources (another place, newer files) shares it
    other = package.parent / "elsewhere"
    shutil.copytree(package / "engine", other / "engine",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(package / "assets", other / "assets")
    assert compiled_in(other, package / "cache") == set()

    touch(package / "engine" / "integrators" / "rk4.py")
    after_rk4 = compiled_in(package)
    assert {RK4_LOOP, RK4_KERNEL} <= after_rk4
    assert VERLET_LOOP not in after_rk4
    assert "engine.integrators.verlet.verlet_step_ws" not in after_rk4
    assert len(after_rk4) < len(first)

    # a callee of every loop changed: each caller is compiled again, none loaded stale
    touch(package / "engine" / "forcefield.py")
    after_ff = compiled_in(package)
    assert {VERLET_LOOP, RK4_LOOP, "engine.forcefield.compute_forces_ws"} <= after_ff
    assert compiled_in(package) == set()
