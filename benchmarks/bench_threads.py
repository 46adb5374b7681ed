"""Cost per particle-step of ``rrp-newmark`` on the tori-pile at several sizes, with 1
and 2 threads, by the serial and the parallel force kernels (issue #9 §2).

The pile (``tori-pile``, 20 spheres per ring, walls and gravity, ``h = 2e-3``) runs from
its initial state through ``engine.integrators.advance.advance_ws`` with the scratch of
the parallel kernels (``new_scratch(n, ff)``) or without it (``new_scratch(n)``: the
serial kernels at any size).  Only the kernel calls are timed, after a first untimed call
(compilation or the Numba cache); the best of ``--repeat`` runs counts.  Also the bytes
per sphere of the state, force field (neighbour list, bonds) and scratch arrays.

    python benchmarks/bench_threads.py [--sizes 1000 10000 100000] [--steps 1000 1000 300]
                                       [--boxes 8 8 60] [--threads 1 2] [--repeat 3]
                                       [--json]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _buffers import prepared  # noqa: E402  (benchmarks/ is this script's directory)

from engine.forcefield import new_scratch  # noqa: E402
from engine.integrators.advance import (  # noqa: E402
    S_RRP_NEWMARK,
    advance_ws,
)
from engine.layout import N_ENERGY, NL_REBUILDS, OK  # noqa: E402
from engine.models import MODELS  # noqa: E402
from engine.parallel import PARALLEL_MIN_BODIES, set_threads  # noqa: E402

H = 2e-3


def _nbytes(obj) -> int:
    if isinstance(obj, np.ndarray):
        return obj.nbytes
    if isinstance(obj, tuple):
        return sum(_nbytes(o) for o in obj)
    return 0


def pile(n_spheres: int, box: float):
    return MODELS["tori-pile"].make({"n_tori": max(1, n_spheres // 20), "box": box})


def run(model, steps: int, parallel: bool, chunk: int = 100):
    """Seconds in the kernel for ``steps`` steps, rebuilds, bytes per sphere."""
    ff = model.forcefield.copy()
    ff.invalidate_neighbours()
    st = model.initial_state.copy()
    n = st.n
    s0, s1, work, info = prepared(ff, st, S_RRP_NEWMARK)
    ws = new_scratch(n, ff.arrays) if parallel else new_scratch(n)
    e_ctrl = np.array([0.0, 1.0, 0.0])
    rec = (np.empty(0), np.empty((0, N_ENERGY)), np.empty((0, 3)), np.empty((0, 3)),
           np.empty((0, n, 3)), np.empty((0, n, 4)), np.empty((0, n, 3)),
           np.empty((0, n, 3)), np.empty((0, n, 3)))
    r0 = int(ff.nl_state[NL_REBUILDS])
    seconds = 0.0
    done_total = 0
    while done_total < steps:
        k = min(chunk, steps - done_total)
        t0 = time.perf_counter()
        done, _, status = advance_ws(S_RRP_NEWMARK, k, H, done_total * H, done_total,
                                     10**9, s0, s1, ff.arrays, work, e_ctrl, rec, False, info,
                                     ws)
        seconds += time.perf_counter() - t0
        done_total += done
        if status != OK:
            raise RuntimeError(f"stopped at step {done_total}: status {status}")
    mem = {"state (x, v, q, Ω, F, RM, Π; 2 buffers)": _nbytes(s0) + _nbytes(s1),
           "force field (m, J, D, bonds, neighbour list, inertia)": _nbytes(ff.arrays),
           "integrator work": _nbytes(work),
           "force scratch (cell list, parallel adjacency, bond outputs)": _nbytes(ws)}
    return seconds, int(ff.nl_state[NL_REBUILDS]) - r0, {k: v / n for k, v in mem.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000])
    ap.add_argument("--steps", type=int, nargs="+", default=[1000, 1000, 300])
    ap.add_argument("--boxes", type=float, nargs="+", default=[8.0, 8.0, 60.0],
                    help="side of the box at each size")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = []
    for size, steps, box in zip(args.sizes, args.steps, args.boxes, strict=False):
        model = pile(size, box)
        n = model.n_bodies
        for par in (False, True):
            if par and n < PARALLEL_MIN_BODIES:
                continue
            for threads in (args.threads if par else [1]):
                set_threads(threads)
                best = math.inf
                for _ in range(args.repeat):
                    s, rb, mem = run(model, steps, par)
                    best = min(best, s)
                row = {"spheres": n, "path": "parallel" if par else "serial",
                       "threads": threads, "steps": steps, "rebuilds": rb,
                       "us_per_particle_step": 1e6 * best / (n * steps),
                       "bytes_per_sphere": mem}
                rows.append(row)
                if not args.json:
                    print(f"{n:>7} spheres  {row['path']:<8} {threads} thread(s)  "
                          f"{row['us_per_particle_step']:.4f} µs/particle-step  "
                          f"({steps} steps, {rb} rebuilds)", flush=True)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        last = rows[-1]
        print(f"bytes per sphere at {last['spheres']} ({last['path']}):")
        for k, v in last["bytes_per_sphere"].items():
            print(f"  {v:8.0f}  {k}")
        print(f"  {sum(last['bytes_per_sphere'].values()):8.0f}  total")


if __name__ == "__main__":
    main()
