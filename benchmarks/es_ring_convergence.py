"""Convergence of energy-stepping on a ring of 6 as ε → 0 (issue #33 item 5; docs/physics.md
§3.10 "Measured, many bodies"): the trajectory error against rrp-newmark at h = 1e-5,
at ε spaced by ``--per-decade`` points a decade, with the pairwise slopes and the
least-squares fit.  The setting of ``tests/test_energy_stepping_spheres.py``'s
convergence test (torus, no wall, 6 spheres, ``velocity_noise`` 0.3, ``spin_noise`` 0.5).

    python benchmarks/es_ring_convergence.py [--t-end 0.5] [--per-decade 2]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from engine.energy_stepping import EnergyStepper  # noqa: E402
from engine.models import MODELS  # noqa: E402
from engine.simulation import Simulation  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--t-end", type=float, default=0.5)
    p.add_argument("--per-decade", type=int, default=2)
    p.add_argument("--lo", type=float, default=1e-6)
    p.add_argument("--hi", type=float, default=1e-3)
    a = p.parse_args(argv)
    model = MODELS["torus"].make({"wall": False, "velocity_noise": 0.3, "spin_noise": 0.5,
                                  "n_particles": 6})
    ref = Simulation(model, "rrp-newmark", 1e-5, record_every=10**9)
    ref.run_until(a.t_end)
    xr, vr = ref.state.x.copy(), ref.state.v.copy()
    n = int(round(np.log10(a.hi / a.lo) * a.per_decade))
    rels = a.hi * 10.0 ** (-np.arange(n + 1) / a.per_decade)
    errs = []
    print(f"ring of 6 (no wall, perturbed), t = {a.t_end:g}, against rrp-newmark h = 1e-5")
    for rel in rels:
        w = time.perf_counter()
        s = EnergyStepper(model, rel * ref.e_scale, model.initial_state)
        s.advance_to(a.t_end)
        x, v, _, _ = s.state_arrays()
        errs.append(max(np.abs(x - xr).max(), np.abs(v - vr).max()))
        print(f"  REL {rel:8.3g}: max error {errs[-1]:.3g}  ({s.n_events:,} events, "
              f"{time.perf_counter() - w:.1f} s)", flush=True)
    le, lr = np.log(errs), np.log(rels)
    pair = np.diff(le) / np.diff(lr)
    print("  pairwise slopes: " + ", ".join(f"{s_:.2f}" for s_ in pair))
    print(f"  least-squares fit over all {len(rels)} points: {np.polyfit(lr, le, 1)[0]:.2f}")
    dec = np.isclose(np.log10(rels) % 1.0, 0.0) | np.isclose(np.log10(rels) % 1.0, 1.0)
    if dec.sum() >= 2:
        print(f"  fit over the decades only ({int(dec.sum())} points): "
              f"{np.polyfit(lr[dec], le[dec], 1)[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
