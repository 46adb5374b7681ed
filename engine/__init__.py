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


def _ensure_numba_cache_dir() -> None:
    """Numba's ``cache=True`` writes next to the sources; when that directory is not
    writable (an installed package), point NUMBA_CACHE_DIR at the user's cache."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    here = Path(__file__).resolve().parent
    if os.access(here, os.W_OK):
        return
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "rrp-studio" / "numba"
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError:
        import tempfile

        cache = Path(tempfile.gettempdir()) / "rrp-studio-numba"
        cache.mkdir(parents=True, exist_ok=True)
    os.environ["NUMBA_CACHE_DIR"] = str(cache)


_ensure_numba_cache_dir()

try:
    __version__ = metadata.version("rrp-studio")
except metadata.PackageNotFoundError:  # running from a source tree without install
    __version__ = "0.1.0+src"

_API = {
    "run": "api", "make_simulation": "api", "list_scenarios": "api",
    "list_integrators": "api",
    "load_scenario": "scenarios", "Scenario": "scenarios", "Simulation": "simulation",
    "SimulationError": "simulation", "RunWriter": "io", "read_run": "io",
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
