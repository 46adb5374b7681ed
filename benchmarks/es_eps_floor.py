"""Energy-stepping's bound near the round-off floor of ε (issue #33 item 3; docs/physics.md
§3.10 "The floor of ε"): ``max |E − E₀| / ε`` over the records of a short run at each
``REL``, with the events and the wall time.  ``EnergyStepper`` is driven directly with
``ε = REL × |E₀|`` (the registry refuses ``REL < 1e-12``; the stepper itself takes any
``ε > 0``, so the script shows what the floor keeps out).  ``E`` is the model's own force
kernel's at each record.

    python benchmarks/es_eps_floor.py [--scenario pendulum] [--t-end 0.02] [--dt 1e-3]
        [--rels 1e-8 1e-10 1e-11 1e-12]

(1e-13 takes ~1.5·10⁹ events, minutes.)
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
from engine.scenarios import load_scenario  # noqa: E402
from engine.simulation import Simulation  # noqa: E402
from engine.state import State  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scenario", default="pendulum")
    p.add_argument("--t-end", type=float, default=0.02)
    p.add_argument("--dt", type=float, default=1e-3)
    p.add_argument("--rels", type=float, nargs="+", default=[1e-8, 1e-10, 1e-11, 1e-12])
    a = p.parse_args(argv)
    model = load_scenario(a.scenario).build_model()
    probe = Simulation(model, "rrp-newmark", a.dt, record_every=10**9)
    e0, scale = probe.e_ref, probe.e_scale
    n = int(round(a.t_end / a.dt))
    print(f"{a.scenario}: E₀ = {e0:.6g}, t ≤ {a.t_end:g}, records every {a.dt:g}")
    for rel in a.rels:
        eps = rel * scale
        w = time.perf_counter()
        s = EnergyStepper(model, eps, model.initial_state)
        worst = 0.0
        for k in range(1, n + 1):
            s.advance_to(k * a.dt)
            x, v, q, om = (c.copy() for c in s.state_arrays())
            sim = Simulation(model, "rrp-newmark", a.dt, record_every=10**9,
                             state=State(x, v, q, om))
            worst = max(worst, abs(float(np.sum(sim.energy)) - e0))
        print(f"  REL {rel:7.0e}: max |E − E₀|/ε = {worst / eps:10.3g} (bound {s.n_terms}), "
              f"{s.n_events:,} events, {time.perf_counter() - w:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
