"""The counts of an iterative solve in the run's statistics (``layout.IS_*``): one
helper for every solver that keeps them (Campello's fixed point, the LGVI Newton solves,
the percussions' Gauss–Seidel sweeps, the generalized schemes), issue #34 §4."""

from __future__ import annotations

import numpy as np
from numba import njit

from . import layout as L


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def count_solve(stats, it, i_solves, i_iterations, i_max):
    """One more solve of ``it`` iterations: ``stats[i_solves] += 1``,
    ``stats[i_iterations] += it``, ``stats[i_max] = max(stats[i_max], it)``."""
    stats[i_solves] += 1.0
    stats[i_iterations] += it
    if it > stats[i_max]:
        stats[i_max] = it


def iteration_stats(st: np.ndarray) -> dict[str, float]:
    """The smooth solves' counts in the statistics ``st``: ``solves``, ``iterations``
    (total), ``mean`` and ``max`` per solve (``Simulation.iteration_stats``)."""
    solves = float(st[L.IS_SOLVES])
    return {"solves": solves, "iterations": float(st[L.IS_ITERATIONS]),
            "mean": float(st[L.IS_ITERATIONS]) / solves if solves else 0.0,
            "max": float(st[L.IS_MAX])}


def contact_stats(st: np.ndarray, mean: bool = True) -> dict[str, float]:
    """The hard contacts' counts in the statistics ``st`` (both drivers'
    ``contact_stats``, issue #34 §4): ``contacts``, ``percussions``, ``impacts``, the
    contact solver's ``solves``, ``iterations``, (with ``mean``) ``mean``,
    ``max_iterations`` and the largest ``penetration``."""
    solves = float(st[L.IS_CONTACT_SOLVES])
    out = {"contacts": float(st[L.IS_CONTACTS]), "percussions": float(st[L.IS_PERCUSSIONS]),
           "impacts": float(st[L.IS_IMPACTS]), "solves": solves,
           "iterations": float(st[L.IS_CONTACT_ITERATIONS])}
    if mean:
        out["mean"] = out["iterations"] / solves if solves else 0.0
    out["max_iterations"] = float(st[L.IS_CONTACT_MAX])
    out["penetration"] = float(st[L.IS_PENETRATION])
    return out
