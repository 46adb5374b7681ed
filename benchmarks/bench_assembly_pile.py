"""An assembly against the pile it copies (issue #35, "Speed and scale"): the tori-pile's
spheres, bonds, walls and gravity given to the ``assembly`` model through the Python API
(``engine.models.assembly.model_of``), both stepped with the same scheme and ``h``,
interleaved in alternating order, best of ``--repeat``: the cost per particle-step of
each.  Goal: within 10 % (the kernels are the same).

    python benchmarks/bench_assembly_pile.py [--n-tori 500] [--steps 200] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np


def models(n_tori: int, box: float):
    from engine.models import MODELS
    from engine.models.assembly import model_of
    from engine.models.builders import Part

    pile = MODELS["tori-pile"].make({"n_tori": n_tori, "box": box, "velocity_noise": 0.3})
    s, b = pile.initial_state, pile.bodies
    bonds = np.asarray(pile.forcefield.bonds)
    part = Part(s.x.copy(), b.D.copy(), b.m.copy(), b.J.copy(), s.v.copy(), s.omega.copy(),
                np.arange(b.n) // 20, bonds.copy(), np.full(bonds.shape[0], "1", dtype=object))
    walls = [(c * n, n) for n, c in pile.walls]  # (point, normal) with n·point = c
    asm = model_of([part], walls=walls, gravity=[0.0, 0.0, -1.0])
    return pile, asm


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n-tori", type=int, default=500)
    ap.add_argument("--box", type=float, default=None)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--scheme", default="rrp-newmark")
    args = ap.parse_args()
    from engine.drivers import simulation_for

    box = args.box or max(8.0, 1.4 * (args.n_tori ** 0.5))
    pile, asm = models(args.n_tori, box)
    best = {"tori-pile": np.inf, "assembly": np.inf}
    for r in range(args.repeat):  # (interleaved, the order alternating: the load drifts)
        pair = (("tori-pile", pile), ("assembly", asm))
        for name, m in (pair[::-1] if r % 2 else pair):
            sim = simulation_for(m, args.scheme, 1e-3, record_every=10**9,
                                 record_frames=False, energy_tolerance=None)
            sim.advance(5)  # (compiled, neighbour list built)
            t = time.perf_counter()
            sim.advance(args.steps)
            dt = time.perf_counter() - t
            best[name] = min(best[name], dt / (args.steps * m.n_bodies))
    out = {"spheres": pile.n_bodies, "scheme": args.scheme,
           **{f"{k}_ns_per_particle_step": 1e9 * v for k, v in best.items()},
           "ratio": best["assembly"] / best["tori-pile"]}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
