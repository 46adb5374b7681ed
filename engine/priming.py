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

import os
import subprocess
import sys
from pathlib import Path

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
    ff, q = one_body_stand_in(family)
    x = np.zeros((1, 3))
    # the forces first, as a run's process does: the step and the loop then find the
    # kernels beside them in the cache (prime_sibling_kernels, started at the same time)
    compute_forces_ws(x, q, ff, np.zeros((1, 3)), np.zeros((1, 3)), np.zeros(N_ENERGY),
                      new_scratch(1, ff))
    prime_kernels(scheme, family)
    estimate_stability(x, np.zeros((1, 3)), q, np.zeros((1, 3)), ff)
    forget_grid(new_neighbour_scratch(1), 1)
    quat_to_matrix(q)


def prime_sibling_kernels(scheme: int, family: tuple) -> list[str]:
    """Compile (or load) the kernels of a run of ``scheme`` on ``family`` that its
    stepping loop calls *beside* the chain forces → step → loop: the loop's own helpers
    (the kinetic energy, the energy check, the record, the state copy, the in-place
    attitude map), the velocity-Verlet step's drift and kick, and the stability
    estimate.  Returns their names.

    A process that runs this while another builds the chain (:func:`spawn_priming`)
    puts the second core to work on a cold start: Numba compiles a function when the
    first caller is typed, one function at a time in a process, and each caller
    optimises again all it calls, so the chain is serial; these leaves are not on it
    and are loaded from the cache when the chain reaches them (issue #25).  Each is
    compiled for the exact types the loop calls it with (``stand_in_args``, the
    literal counts and scheme ids included: ``tests/test_compile_scope.py`` checks that
    the run's process then compiles none of them); only the stability estimate is run,
    on the one-body stand-in.  Each is compiled under the flags of the kernel that calls
    it in the chain (the loop; ``verlet_step_ws`` for the velocity-Verlet halves, whose
    ``forceinline`` they inherit there): the cache keys a kernel by the flags it
    inherits (``engine.kernel_cache``), and a half compiled on its own, not inlined into
    the loop, made Yoshida's pendulum step 2.2× slower."""
    from numba import typeof, types

    from .integrators.advance import (
        S_YOSHIDA,
        _copy_state,
        energy_status,
        in_place_rot_map,
        kinetic_energy,
        record,
        verlet_rot_map,
    )
    from .integrators.verlet import (
        _after_forces,
        _before_forces,
        state_shapes_ok,
        verlet_step_ws,
    )

    _, _, _, _, _, s0, s1, ff, _, e_ctrl, rec, _, info, ws = stand_in_args(family)
    ts, tff, tws = typeof(s0), typeof(ff), typeof(ws)
    f64, i64, zero = types.float64, types.int64, types.literal(0)
    wanted = []  # (in the order the loop's typing reaches them)
    base = scheme - S_YOSHIDA if scheme >= S_YOSHIDA else scheme
    if scheme < S_YOSHIDA and verlet_rot_map.py_func(scheme) >= 0:
        wanted.append((in_place_rot_map, (types.literal(scheme), ts, tff, tws)))
    if verlet_rot_map.py_func(base) >= 0:
        tm, tj = typeof(ff[0]), typeof(ff[1])
        wanted += [(state_shapes_ok, (ts,)),
                   (_before_forces, (f64, i64, tm, tj, ts, ts, zero, i64)),
                   (_after_forces, (f64, tm, tj, ts, ts, zero, i64))]
    wanted += [(kinetic_energy, (ts, tff, tws)),
               (energy_status, (f64, typeof(e_ctrl), typeof(info))),
               (record, (ts, tff, i64, typeof(rec), types.boolean, f64)),
               (_copy_state, (ts, ts))]
    with _called_by(loop_kernel(scheme)):
        for kernel, sig in wanted:
            if kernel in (_before_forces, _after_forces):
                with _called_by(verlet_step_ws):
                    kernel.compile(sig)
            else:
                kernel.compile(sig)
    estimate_stability(*s0[:4], ff)
    return [k.py_func.__name__ for k, _ in wanted] + ["stiffness_rows"]


def _called_by(caller):
    """The context in which Numba compiles a kernel that ``caller`` calls: ``caller``'s
    flags on Numba's ``ConfigStack``, whence the callee inherits those it does not set
    (``engine.kernel_cache.INHERITED``)."""
    from numba.core.compiler import Flags
    from numba.core.targetconfig import ConfigStack

    flags = Flags()
    caller.targetdescr.options.parse_as_flags(flags, caller.targetoptions)
    return ConfigStack().enter(flags)


PARTS = {"run": "prime_run_kernels", "siblings": "prime_sibling_kernels"}
"""What :func:`spawn_priming` can build in a process of its own."""


def spawn_priming(scheme: int, family: tuple, part: str = "run") -> subprocess.Popen:
    """Start a process that builds the kernel cache for a run of ``scheme`` on
    ``family``: ``part="run"`` the whole run (:func:`prime_run_kernels`),
    ``"siblings"`` the kernels beside the chain (:func:`prime_sibling_kernels`), to
    run alongside a process that builds the chain.  Its output is discarded (a kernel
    it fails to build is built by the run, which reports any error); the caller waits
    for it or terminates it (the app does at close)."""
    from .specialize import family_code

    env = dict(os.environ)
    root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    code = (f"from engine.priming import {PARTS[part]} as prime, alone; "
            "from engine.specialize import marker_of_code; "
            f"alone('{part}', {int(scheme)}, {family_code(family)}) and "
            f"prime({int(scheme)}, marker_of_code({family_code(family)}))")
    return subprocess.Popen([sys.executable, "-c", code], env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


_HELD: list[int] = []


def alone(part: str, scheme: int, code: int) -> bool:
    """Whether this process is the only one priming ``part`` of ``scheme`` on the
    family ``code`` into this kernel cache (an exclusive lock beside the cache, held
    until the process ends): ``rrp run`` leaves its priming processes to finish the
    cache after a short run (issue #45), and a second cold run meanwhile must not start
    two more that compile the same kernels (each would take a core)."""
    import fcntl

    from numba.core import config

    root = Path(config.CACHE_DIR or os.environ.get("TMPDIR", "/tmp"))
    try:
        root.mkdir(parents=True, exist_ok=True)
        fd = os.open(root / f"priming-{part}-{scheme}-{code}.lock", os.O_RDWR | os.O_CREAT,
                     0o644)
    except OSError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return False
    _HELD.append(fd)
    return True


def start_siblings(model, integrator: str) -> subprocess.Popen | None:
    """When the cache lacks the stepping loop of ``integrator`` on ``model`` (a cold
    start), start a process that builds the kernels beside its chain
    (:func:`prime_sibling_kernels`) while the caller builds the run; ``None`` when
    there is nothing to gain (the loop is cached, the model has generalized
    coordinates, the scheme is unknown: the run reports that, or event-driven: it has
    no stepping loop)."""
    from .integrators.registry import get_integrator

    if getattr(model, "coordinates", "bodies") != "bodies":
        return None
    try:
        info = get_integrator(integrator)
    except KeyError:
        return None
    if info.event_driven:
        return None
    scheme = info.scheme_id
    family = model.forcefield.arrays[-1]
    if run_kernels_cached(scheme, family):
        return None
    return spawn_priming(scheme, family, "siblings")


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
