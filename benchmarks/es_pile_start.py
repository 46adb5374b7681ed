"""The energy error of energy-stepping on a pile started from rest (issue #33 item 7;
docs/physics.md §3.10 "Levels").

Each sphere at rest has its gravity term on a level and steps down at ``t = 0``; with the
half step (``ε/2``, ``T + V_ε = E₀``) the pile starts ``n ε/2`` above ``E₀`` (every
resting sphere at the edge of its terrace at once), and the gaps then spread over their
terraces as the spheres fall.  Prints ``(E − E₀)/|E₀|`` at ``t = 0+`` and at each record,
its max, the bound ``n_terms ε/|E₀|``, the events and the wall time.

    python benchmarks/es_pile_start.py [--n-tori 50] [--n-particles 20] [--rel 1e-4]
        [--t-end 1] [--dt 0.1]
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
from engine.forcefield import evaluate  # noqa: E402
from engine.models import MODELS  # noqa: E402
from engine.simulation import Simulation  # noqa: E402


def energy(model, x, v, q, om) -> float:
    """``T + V`` by the model's own force kernel."""
    e = evaluate(model.forcefield.working_copy(), x, q)[2]
    m, J = model.bodies.m, model.bodies.J
    return float(0.5 * np.sum(m * np.sum(v * v, axis=1))
                 + 0.5 * np.sum(J * np.sum(om * om, axis=1)) + e.sum())


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n-tori", type=int, default=50)
    p.add_argument("--n-particles", type=int, default=20)
    p.add_argument("--rel", type=float, default=1e-4)
    p.add_argument("--t-end", type=float, default=1.0)
    p.add_argument("--dt", type=float, default=0.1)
    a = p.parse_args(argv)
    model = MODELS["tori-pile"].make({"n_tori": a.n_tori, "n_particles": a.n_particles})
    sim = Simulation(model, "rrp-newmark", 1e-3, record_every=10**9)
    e0, scale = sim.e_ref, sim.e_scale
    eps = a.rel * scale
    w0 = time.perf_counter()
    s = EnergyStepper(model, eps, model.initial_state)
    e_start = energy(model, *s.state_arrays())
    print(f"tori-pile {a.n_tori}×{a.n_particles} ({model.n_bodies} spheres), REL {a.rel:g}: "
          f"E₀ = {e0:.6g}, |E₀| scale {scale:.6g}, ε = {eps:.3g}, {s.n_terms} terms "
          f"(bound n ε/|E₀| = {s.n_terms * eps / scale:.3g})")
    print(f"  t = 0+ : (E − E₀)/|E₀| = {(e_start - e0) / scale:+.4e}  "
          f"(= {(e_start - e0) / eps:.1f} ε; T + V_ε − E₀ = {s.energy_eps() - e0:+.2e})")
    worst = abs(e_start - e0)
    n = int(round(a.t_end / a.dt))
    for k in range(1, n + 1):
        s.advance_to(k * a.dt)
        e = energy(model, *s.state_arrays())
        worst = max(worst, abs(e - e0))
        print(f"  t = {k * a.dt:4.2f}: (E − E₀)/|E₀| = {(e - e0) / scale:+.4e}  "
              f"({(e - e0) / eps:+.1f} ε), events {s.n_events:,}", flush=True)
    print(f"  max |E − E₀|/|E₀| = {worst / scale:.4e} ({worst / eps:.1f} ε) over t ≤ "
          f"{a.t_end:g}; wall {time.perf_counter() - w0:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
