"""RRP Studio engine: rigid spheres on SE(3)^n, rescaled Rodrigues parameters and
structure-preserving integrators.  No Qt, no plotting: plain arrays and Numba kernels.

The mathematical contract is ``docs/physics.md``; the public Python API
(``engine.run``, ``engine.make_simulation``, ``engine.load_scenario``,
``engine.Simulation``,
run files) is described in ``docs/api.md``.
"""

from __future__ import annotations

import os
from importlib import metadata
from pathlib import Path


def _toolchain_digest() -> str:
    """A digest of what the cached machine code depends on besides the engine's sources
    (Numba, llvmlite and Python's versions, the processor): a cache of another toolchain
    is never valid here.  The sources are checked kernel by kernel
    (``engine.kernel_cache``)."""
    import hashlib
    import platform
    import sys

    parts = [sys.version, platform.machine(), "kernel-cache-2"]
    for dist in ("numba", "llvmlite", "numpy"):
        try:
            parts.append(metadata.version(dist))
        except metadata.PackageNotFoundError:
            parts.append("-")
    return hashlib.sha1("|".join(parts).encode()).hexdigest()[:12]


def _ensure_numba_cache_dir() -> None:
    """Point ``NUMBA_CACHE_DIR`` at the kernel cache of this toolchain.

    Numba's ``cache=True`` checks a cached function against its own file only: a kernel
    whose callee in another module changed would load stale machine code, which can
    crash.  Each engine kernel therefore records the sources it was made from
    (``engine.kernel_cache``, installed here) and is compiled again when one of them
    changed; an edit recompiles what depends on it, not everything (issue #25).  The
    cache lives in the user's cache, ``~/.cache/rrp-studio/numba/<digest>``
    (``$XDG_CACHE_HOME``), in a directory named by a digest of the toolchain, shared by
    every checkout and install of these sources (``engine.kernel_cache`` keys it by the
    files' content, not their place), and those of other toolchains there are removed;
    ``config.CACHE_DIR`` is set also when Numba was imported first (found when a
    benchmark imported it before the engine).  A ``NUMBA_CACHE_DIR`` set by the user
    is kept."""
    from .interpreted import install as install_interpreted
    from .kernel_cache import install

    install()
    install_interpreted()  # (inert outside engine.interpreted.interpret_while_cold)
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    digest = _toolchain_digest()
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rrp-studio" \
        / "numba"
    try:
        (base / digest).mkdir(parents=True, exist_ok=True)
    except OSError:
        import tempfile

        base = Path(tempfile.gettempdir()) / "rrp-studio-numba"
        (base / digest).mkdir(parents=True, exist_ok=True)
    for old in base.iterdir():  # caches of other toolchains: never valid again here
        if old.is_dir() and old.name != digest and len(old.name) == 12:
            import shutil

            shutil.rmtree(old, ignore_errors=True)
    os.environ["NUMBA_CACHE_DIR"] = str(base / digest)
    import sys

    if "numba" in sys.modules:  # imported before us: its config has read the variable
        from numba.core import config  # (each kernel's cache reads it when decorated)

        config.CACHE_DIR = os.environ["NUMBA_CACHE_DIR"]


_ensure_numba_cache_dir()


# Numba's OpenMP threading layer: threads that wait spin by default and take the core
# from the one that works (measured on 2 cores: 2 threads 3.6–15x slower than 1, issue
# #9); passive waiting unless the user chose otherwise (read when the layer loads)
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

try:
    __version__ = metadata.version("rrp-studio")
except metadata.PackageNotFoundError:  # running from a source tree without install
    __version__ = "0.1.0+src"

_API = {
    "run": "api", "make_simulation": "api", "list_scenarios": "api",
    "list_integrators": "api",
    "load_scenario": "scenarios", "Scenario": "scenarios", "Simulation": "simulation",
    "SimulationError": "simulation", "simulation_for": "drivers", "RunWriter": "io",
    "read_run": "io",
    "set_threads": "parallel",
}
"""The public API (docs/api.md), imported on first use so that ``import engine`` stays
light."""


def __getattr__(name: str):
    if name in _API:
        import importlib

        return getattr(importlib.import_module(f".{_API[name]}", __name__), name)
    raise AttributeError(f"module 'engine' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_API])


__all__ = ["__version__", *_API]
