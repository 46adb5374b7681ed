"""The counts of an iterative solve in the run's statistics (``layout.IS_*``): one
helper for every solver that keeps them (Campello's fixed point, the LGVI Newton solves,
the percussions' Gauss–Seidel sweeps, the generalized schemes), issue #34 §4."""

from __future__ import annotations

from numba import njit


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def count_solve(stats, it, i_solves, i_iterations, i_max):
    """One more solve of ``it`` iterations: ``stats[i_solves] += 1``,
    ``stats[i_iterations] += it``, ``stats[i_max] = max(stats[i_max], it)``."""
    stats[i_solves] += 1.0
    stats[i_iterations] += it
    if it > stats[i_max]:
        stats[i_max] = it
