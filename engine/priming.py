"""Compile the kernels a run calls, on a one-body stand-in, so that a process of its own
can fill the kernel cache before the run's process starts (``rrp run`` and ``rrp
compile``: ``app.cli``).

Numba keeps much of the compiler's memory in the process that compiled: a first
10⁶-sphere run that compiled its kernels itself peaked 0.5 GB higher than one that
loaded them (BENCHMARKS.md, "memory of a frictional 10⁶-sphere run").  Priming the
stepping loop alone (``engine.integrators.advance.prime_kernels``) left the run's
process to compile the force kernel it calls from Python, the stability estimate and
the rotation helpers of the output; this primes those too, for the run's scheme and
its model's family only (``engine.specialize``, issue #25).  The kernels are compiled
for the argument *types*, which a one-body force field of the same family shares with
any model of it.
"""

from __future__ import annotations

import numpy as np

from .forcefield import compute_forces_ws, new_scratch, one_body_stand_in
from .integrators.advance import loop_kernel, prime_kernels, stand_in_args
from .layout import N_ENERGY
from .neighbours import forget_grid, new_neighbour_scratch
from .rotations import quat_to_matrix
from .stability import estimate_stability


def prime_run_kernels(scheme: int, family: tuple) -> None:
    """Compile (or load from the cache) the kernels of a run of ``scheme`` on a model of
    the force-field ``family`` (``engine.specialize``): the stepping loop, then, on a
    one-body stand-in of that family, those that ``engine.simulation.Simulation``, the
    stability estimate and the run's output call from Python.  Nothing of another
    scheme or another family is compiled (the model is built before: its own kernels,
    the pile's placement check, are the caller's)."""
    prime_kernels(scheme, family)
    ff, q = one_body_stand_in(family)
    x = np.zeros((1, 3))
    compute_forces_ws(x, q, ff, np.zeros((1, 3)), np.zeros((1, 3)), np.zeros(N_ENERGY),
                      new_scratch(1, ff))
    estimate_stability(x, np.zeros((1, 3)), q, np.zeros((1, 3)), ff)
    forget_grid(new_neighbour_scratch(1), 1)
    quat_to_matrix(q)


def _loop_signature(family: tuple) -> tuple:
    """The argument types of a stepping loop on a model of ``family``."""
    from numba import typeof

    return tuple(typeof(x) for x in stand_in_args(family))


def run_kernels_cached(scheme: int, family: tuple) -> bool:
    """Whether the disk cache holds the stepping loop of ``scheme`` compiled for
    ``family`` (then a run loads its kernels in a fraction of a second; else it
    compiles them: ``rrp compile``, BENCHMARKS.md "Start-up and compile").  Loads it
    into this process when it does."""
    kernel = loop_kernel(scheme)
    sig = _loop_signature(family)
    if sig in kernel.overloads:
        return True
    cache = getattr(kernel, "_cache", None)
    try:
        cres = cache.load_overload(sig, kernel.targetctx) if cache is not None else None
    except Exception:  # (a damaged cache file counts as a miss: it is compiled again)
        return False
    if cres is None:
        return False
    kernel.add_overload(cres)
    return True


def compile_run(model, integrator: str, h: float) -> str:
    """Build (or load from the cache) every kernel a run of ``integrator`` on ``model``
    calls: the simulation is made and warmed up, no step is taken.  Returns
    ``"cached"`` when the stepping loop was in the cache already, else ``"compiled"``;
    raises ``engine.simulation.SimulationError`` when the scheme cannot drive the
    model (``rrp compile``)."""
    from .integrators.registry import get_integrator
    from .simulation import Simulation

    info = get_integrator(integrator)
    body_model = getattr(model, "coordinates", "bodies") == "bodies"
    cached = body_model and run_kernels_cached(info.scheme_id, model.forcefield.arrays[-1])
    Simulation(model, integrator, h, record_frames=False).warm_up()
    return "cached" if cached else "compiled"
