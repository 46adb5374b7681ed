"""How fast a round-off-sized change grows under energy-stepping and under rrp-newmark
(issue #33 item 5; docs/physics.md §3.10 "Sensitivity of many-body runs").

Two runs of the same scenario, the second with one coordinate moved by ``--delta``
(default 1e-14: ``x`` of body 0); prints ``max |Δx|`` over the bodies at each sample time
for energy-stepping (``EnergyStepper`` at ``REL × |E₀|``, sampled at the same times in
both runs) and for ``rrp-newmark`` at the scenario's ``h``.

    python benchmarks/es_sensitivity.py [--scenario torus] [--rels 1e-4] [--delta 1e-14]
        [--times 0.05 0.1 0.2 0.3 0.5 1]
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


def perturbed(state: State, delta: float) -> State:
    x = state.x.copy()
    x[0, 0] += delta
    return State(x, state.v.copy(), state.q.copy(), state.omega.copy())


def es_positions(model, state: State, eps: float, times) -> tuple[list[np.ndarray], int]:
    s = EnergyStepper(model, eps, state)
    out = []
    for t in times:
        s.advance_to(t)
        out.append(s.state_arrays()[0].copy())
    return out, s.n_events


def newmark_positions(model, state: State, h: float, times) -> list[np.ndarray]:
    sim = Simulation(model, "rrp-newmark", h, record_every=10**9, record_frames=False,
                     state=state)
    out = []
    for t in times:
        sim.run_until(t)
        out.append(sim.state.x.copy())
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scenario", default="torus")
    p.add_argument("--rels", type=float, nargs="+", default=[1e-4])
    p.add_argument("--delta", type=float, default=1e-14)
    p.add_argument("--times", type=float, nargs="+", default=[0.05, 0.1, 0.2, 0.3, 0.5, 1.0])
    a = p.parse_args(argv)
    sc = load_scenario(a.scenario)
    model = sc.build_model()
    st = model.initial_state
    moved = perturbed(st, a.delta)
    scale = Simulation(model, "rrp-newmark", sc.run.h, record_every=10**9).e_scale
    head = "  ".join(f"t={t:<7g}" for t in a.times)
    print(f"{a.scenario} ({model.n_bodies} bodies): x[0, 0] moved by {a.delta:g}; "
          f"max |Δx| over the bodies at each t")
    print(f"{'scheme':32s}{head}")
    for rel in a.rels:
        w = time.perf_counter()
        xa, ev = es_positions(model, st, rel * scale, a.times)
        xb, _ = es_positions(model, moved, rel * scale, a.times)
        d = [float(np.abs(u - v).max()) for u, v in zip(xa, xb, strict=True)]
        print(f"{f'energy-stepping:{rel:g}':32s}" + "  ".join(f"{x:9.2e}" for x in d)
              + f"   ({ev:,} events, {time.perf_counter() - w:.1f} s)", flush=True)
    w = time.perf_counter()
    xa = newmark_positions(model, st, sc.run.h, a.times)
    xb = newmark_positions(model, moved, sc.run.h, a.times)
    d = [float(np.abs(u - v).max()) for u, v in zip(xa, xb, strict=True)]
    print(f"{f'rrp-newmark, h = {sc.run.h:g}':32s}" + "  ".join(f"{x:9.2e}" for x in d)
          + f"   ({time.perf_counter() - w:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
