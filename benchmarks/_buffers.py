"""The buffers of a run laid out as the simulation driver does, for the benchmarks that
call the stepping loop directly (``bench_kernels.py``, ``bench_threads.py``; issue #34
item 4: one copy)."""

from __future__ import annotations

import numpy as np

from engine.forcefield import compute_forces
from engine.integrators.advance import new_state_buffer, new_work, prime_kernels
from engine.layout import OK


def prepared(ff, st, scheme_id: int, pi: np.ndarray | None = None) -> tuple:
    """``(s0, s1, work, info)`` for force field ``ff`` (a copy: its neighbour list is
    rebuilt by the run) and state ``st``, with the initial forces evaluated and the
    scheme's kernels compiled (before any clock starts)."""
    s0 = new_state_buffer(st.x, st.v, st.q, st.omega, pi)
    s1 = tuple(a.copy() for a in s0)
    work = new_work(st.n, n_walls=ff.n_walls)
    info = np.zeros(4)
    if compute_forces(s0[0], s0[2], ff.arrays, s0[4], s0[5], s0[6]) != OK:
        raise RuntimeError("cannot evaluate the initial forces")
    prime_kernels(scheme_id, ff.arrays[-1])  # (compiled before the clock starts)
    return s0, s1, work, info
