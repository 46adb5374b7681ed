"""Compile every kernel a run calls, on a one-body stand-in, so that a process of its own
can fill the kernel cache before the run's process starts (``rrp run`` on an empty
cache: ``app.cli``).

Numba keeps much of the compiler's memory in the process that compiled: a first
10⁶-sphere run that compiled its kernels itself peaked 0.5 GB higher than one that
loaded them (BENCHMARKS.md, "memory of a frictional 10⁶-sphere run").  Priming the
stepping loop alone (``engine.integrators.advance.prime_kernels``) left the run's
process to compile the public force kernel, the stability estimate, the pile's
placement check and the rotation helpers of the output; this primes those too.  The
kernels are compiled for the argument *types*, which a one-body force field of the
same arrays shares with any model.
"""

from __future__ import annotations

import numpy as np

from .forcefield import compute_forces, one_body_stand_in
from .integrators.advance import prime_kernels
from .layout import N_ENERGY, N_NL_STATE
from .neighbours import build_neighbours, forget_grid, new_neighbour_scratch
from .rotations import quat_to_matrix
from .stability import estimate_stability


def prime_run_kernels() -> None:
    """Compile (or load from the cache) the kernels of a run: the stepping loop, then,
    on a one-body stand-in, those that ``engine.simulation.Simulation``, the stability
    estimate, ``engine.models.tori_pile`` and the run's output call from Python."""
    prime_kernels((), ())
    ff, q = one_body_stand_in()
    x = np.zeros((1, 3))
    compute_forces(x, q, ff, np.zeros((1, 3)), np.zeros((1, 3)), np.zeros(N_ENERGY))
    estimate_stability(x, np.zeros((1, 3)), q, np.zeros((1, 3)), ff)
    build_neighbours(x, np.ones(1), 0.0, np.zeros((16, 2), dtype=np.int64),
                     np.zeros(N_NL_STATE, dtype=np.int64), np.zeros((1, 3)))
    forget_grid(new_neighbour_scratch(1), 1)
    quat_to_matrix(q)
