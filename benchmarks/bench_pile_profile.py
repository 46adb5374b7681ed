"""Where a step of the tori-pile goes (issue #9: the cost per particle-step against N).

For each size ``N`` and thread count, from the state after ``--warmup`` steps of the pile
of ``bench_pile_scale.py`` (``rrp-newmark``, ``h = 1e-3``), best of ``--repeat`` timings
of ``--particle-steps`` particle-steps each:

* **step**: ``advance_ws`` over that many steps (what ``Simulation.advance`` runs);
* **integrator alone**: the same loop with an empty force field (the per-body updates,
  the kinetic energy, the force arrays zeroed);
* **forces**: one ``compute_forces_ws`` at a fixed state, the neighbour list valid (bonds,
  contacts, walls, gravity: no rebuild);
* **rest** = step − integrator − forces: mostly the neighbour-list rebuilds (one every
  ``steps/rebuilds`` steps, also given) and the displacement check.

All in µs per particle-step.

    python benchmarks/bench_pile_profile.py [--sizes 1000 10000 100000 1000000] [--threads 1 2]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _results import md_header, md_row  # noqa: E402


def best(fn, calls: int, repeat: int) -> float:
    """The best of ``repeat`` timings of ``calls`` calls of ``fn``, per call (s)."""
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - t0) / calls)
    return min(times)


def profile(n_spheres: int, threads: int, warmup: int, particle_steps: float,
            repeat: int) -> dict[str, float]:
    from bench_pile_scale import INTEGRATOR, H, build_pile

    import engine
    from engine.forcefield import ForceField, compute_forces_ws, new_scratch
    from engine.integrators.advance import advance_ws
    from engine.layout import N_ENERGY, NL_REBUILDS
    from engine.simulation import Simulation

    engine.set_threads(threads)
    sim = Simulation(build_pile(n_spheres, 1.0), INTEGRATOR, H, record_every=10**9,
                     record_frames=False)
    sim.warm_up()
    sim.advance(warmup)
    n = sim.state.x.shape[0]
    steps = max(10, int(particle_steps // n))
    rec = (np.empty(0), np.empty((0, N_ENERGY)), np.empty((0, 3)), np.empty((0, 3)),
           np.empty((0, n, 3)), np.empty((0, n, 4)), np.empty((0, n, 3)), np.empty((0, n, 3)),
           np.empty((0, n, 3)))
    info, e_ctrl = np.zeros(4), np.zeros(3)
    sid = sim._integrator.scheme_id

    def loop(ff):
        s0 = tuple(a.copy() for a in sim._s0)
        s1 = tuple(a.copy() for a in sim._s1)
        ws = new_scratch(n, ff)
        return lambda: advance_ws(sid, steps, H, 0.0, 1, 10**9, s0, s1, ff, sim._work,
                                  e_ctrl, rec, False, info, ws)

    ff = sim.ff.arrays
    r0 = int(sim.ff.nl_state[NL_REBUILDS])
    step = best(loop(ff), 1, repeat) / steps
    rebuilds = (int(sim.ff.nl_state[NL_REBUILDS]) - r0) / ((repeat + 1) * steps)
    empty = ForceField(sim.ff.m, sim.ff.J, sim.ff.D).arrays
    integ = best(loop(empty), 1, repeat) / steps
    x, q = sim._s0[0].copy(), sim._s0[2].copy()
    F, RM, e = np.zeros((n, 3)), np.zeros((n, 3)), np.zeros(N_ENERGY)
    ws = new_scratch(n, ff)
    forces = best(lambda: compute_forces_ws(x, q, ff, F, RM, e, ws), max(3, steps // 4),
                  repeat)
    us = 1e6 / n
    return {"n": n, "threads": threads, "step": step * us, "integrator": integ * us,
            "forces": forces * us, "rest": (step - integ - forces) * us,
            "steps_per_rebuild": 1.0 / rebuilds if rebuilds > 0 else float("inf")}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000, 1000000])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--particle-steps", type=float, default=2e7)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    md_header("N", "threads", "step", "integrator alone", "forces (no rebuild)",
              "rest (rebuilds)", "steps per rebuild")
    for t in args.threads:
        for n in args.sizes:
            r = profile(n, t, args.warmup, args.particle_steps, args.repeat)
            md_row(r["n"], t, r["step"], r["integrator"], r["forces"], r["rest"],
                   f"{r['steps_per_rebuild']:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
