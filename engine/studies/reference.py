"""Reference runs at a much smaller ``h``, cached on disk.

A reference is a :class:`~.trajectory.Trajectory` keyed by the scenario, its resolved
parameters, the integrator, ``h``, ``t_end`` and the sampling interval.  The cache
directory is, in order: the ``cache_dir`` argument, ``$RRP_CACHE_DIR``,
``~/.cache/rrp-studio/reference``.  Files are written atomically (a temporary file and
a rename), so concurrent workers computing the same reference do not corrupt it.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .. import __version__
from ..scenarios import load_scenario
from .trajectory import Trajectory, sample_run

CACHE_FORMAT = 1
_ARRAYS = ("t", "x", "v", "q", "omega", "energy")
_FINE = ("t", "energy", "energy_total", "P", "L")


def cache_dir(path: str | os.PathLike | None = None) -> Path:
    """The reference cache directory (see the module docstring)."""
    if path is not None:
        return Path(path).expanduser()
    env = os.environ.get("RRP_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "rrp-studio" / "reference"


def reference_key(scenario: str, overrides: Mapping[str, Any] | None, integrator: str,
                  h: float, t_end: float, dt_sample: float) -> str:
    """A stable hash of everything that determines a reference run (the parameters are
    resolved first, so ``--set v0=1`` and the default give the same key)."""
    sc = load_scenario(scenario, dict(overrides or {}))
    src = sc.path.read_text(encoding="utf-8") if sc.path is not None else ""
    blob = json.dumps({"format": CACHE_FORMAT, "scenario": sc.name, "model": sc.model,
                       "file": hashlib.sha256(src.encode()).hexdigest(),
                       "params": sc.params, "integrator": integrator, "h": repr(float(h)),
                       "t_end": repr(float(t_end)), "dt_sample": repr(float(dt_sample)),
                       "engine": __version__}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _file(directory: Path, scenario: str, integrator: str, h: float, key: str) -> Path:
    stem = Path(str(scenario)).stem
    return directory / f"{stem}-{integrator}-h{h:.6g}-{key}.npz"


def save_trajectory(tr: Trajectory, path: Path) -> None:
    """Write ``tr`` to ``path`` (``.npz``) atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays = {k: getattr(tr, k) for k in _ARRAYS}
    arrays.update({f"fine_{k}": v for k, v in tr.fine.items() if k in _FINE})
    info = {"e0": tr.e0, "e_scale": tr.e_scale, "status": tr.status, "message": tr.message,
            "t_reached": tr.t_reached, "steps": tr.steps, "wall_seconds": tr.wall_seconds,
            "kernel_seconds": tr.kernel_seconds, "meta": tr.meta}
    arrays["info"] = np.array(json.dumps(info, default=float))
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp.npz")
    os.close(fd)
    try:
        np.savez(tmp, **arrays)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def load_trajectory(path: Path) -> Trajectory:
    """Read a trajectory written by :func:`save_trajectory`."""
    with np.load(path, allow_pickle=False) as z:
        info = json.loads(str(z["info"]))
        fine = {k[5:]: z[k] for k in z.files if k.startswith("fine_")}
        return Trajectory(*(z[k] for k in _ARRAYS), e0=info["e0"], e_scale=info["e_scale"],
                          status=info["status"], message=info["message"],
                          t_reached=info["t_reached"], steps=info["steps"],
                          wall_seconds=info["wall_seconds"],
                          kernel_seconds=info["kernel_seconds"], fine=fine, meta=info["meta"])


def reference_run(scenario: str, overrides: Mapping[str, Any] | None, integrator: str,
                  h: float, t_end: float, dt_sample: float, *,
                  cache: str | os.PathLike | None = None, use_cache: bool = True) -> Trajectory:
    """The reference trajectory, from the cache if present, else computed and stored.

    No energy tolerance is applied (a reference must not stop early on a large error;
    a non-finite state still ends it, and the ``status`` says so)."""
    directory = cache_dir(cache)
    key = reference_key(scenario, overrides, integrator, h, t_end, dt_sample)
    path = _file(directory, scenario, integrator, h, key)
    if use_cache and path.is_file():
        try:
            return load_trajectory(path)
        except (OSError, ValueError, KeyError):
            pass  # a damaged file: recompute it
    tr = sample_run(scenario, overrides, integrator, h, t_end, dt_sample, energy_tolerance=None)
    tr.meta["cache_key"] = key
    if use_cache:
        save_trajectory(tr, path)
    return tr
