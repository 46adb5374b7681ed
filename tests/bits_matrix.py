"""The bit-identity matrix: every scheme on every model the registry lets it drive, a
few hundred steps each, the final state kept bit for bit.

``tests/data/bits.json`` holds the SHA-256 digest (with dtype and shape) of each final
array as the engine gave it before the kernels were specialised per scheme and per
force-field family (issue #25, written at 45c2621): ``tests/test_bits.py`` checks that
today's engine gives the same bits.  Except ``torus-hard`` (``moreau``,
``moreau-symmetric``), written again for issue #26: the percussion solver's warm starts
survive a rebuild of the neighbour list now, so the result no longer depends on the
chunking (the old bits were those of chunks of 7, ≈ 1e-10 from an unbroken run's; the new
ones are within 3.3e-10 of them, and the same for any chunking).  Write it again (only
on purpose: a change of the physics, stated in the commit) with

    python -m tests.bits_matrix --write
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

import numpy as np

FIXTURE = Path(__file__).resolve().parent / "data" / "bits.json"

PILE_SMALL = {"n_tori": 4, "velocity_noise": 0.3, "spin_noise": 2.0}
CASES: tuple[tuple[str, str, dict, tuple[str, ...] | None, int], ...] = (
    # (label, scenario, parameters, schemes (None: every registered one), steps)
    ("pendulum", "pendulum", {}, None, 300),
    ("torus", "torus", {"v0": 5.0}, None, 300),
    ("torus-free", "torus-free", {}, ("rrp-newmark", "rk4", "lgvi", "yoshida4:rrp-exact"),
     300),
    ("dumbbells", "dumbbells", {}, None, 300),
    ("torus-hard", "torus-hard", {"v0": 5.0}, None, 300),
    ("spring-pendulum", "spring-pendulum", {}, None, 300),
    ("pile", "tori-pile", PILE_SMALL,
     ("rrp-newmark", "rrp-exact", "pfc-verlet", "rk4", "campello", "yoshida4:rrp-newmark"),
     200),
    ("pile-friction", "tori-pile", {**PILE_SMALL, "mu": 0.5, "damping": 0.2},
     ("rrp-newmark", "yoshida4:rrp-newmark", "lgvi"), 200),
    # (the large models' kernels take a minute or two to compile for each scheme: one
    # scheme each)
    ("pile-parallel", "tori-pile", {"n_tori": 210, "box": 14.0, "velocity_noise": 0.3,
                                    "mu": 0.3},
     ("rrp-newmark",), 40),
    ("pile-in-place", "tori-pile", {"n_tori": 1650, "box": 40.0, "velocity_noise": 0.3},
     ("rrp-exact",), 30),
)


def schemes_for(names: tuple[str, ...] | None) -> list[str]:
    """The schemes of a case (``None``: every registered one, but the event-driven ones:
    energy-stepping has no stepping loop, came after the fixture, and its chunk identity
    and resume are tested in ``tests/test_energy_stepping_wiring.py``)."""
    from engine.integrators.registry import INTEGRATORS

    if names is not None:
        return list(names)
    return [n for n, i in INTEGRATORS.items() if not i.event_driven] + ["campello-implicit:0.3"]


FIXTURE_ENERGY = 11
"""How many energy components the engine had when the fixture was written."""


def run_case(scenario: str, params: dict, scheme: str, steps: int) -> dict | None:
    """The final state after ``steps`` steps in chunks of 7 (None where the registry
    refuses the pair)."""
    from engine.drivers import simulation_for
    from engine.scenarios import load_scenario
    from engine.simulation import SimulationError

    sc = load_scenario(scenario, params)
    try:
        sim = simulation_for(sc.build_model(), scheme, sc.run.h, record_every=10 ** 9,
                         record_frames=False, energy_tolerance=None)
    except SimulationError:
        return None
    done = 0
    while done < steps:
        rep = sim.advance(min(7, steps - done))
        done += 7
        if not rep.ok:  # (a failure is part of the bits: where it stops)
            break
    s = sim.state
    energy = sim.energy
    # (the components the fixture knew; the later ones, issue #44's field and field
    # work, are zero in every model the matrix runs)
    assert not np.any(energy[FIXTURE_ENERGY:]), energy
    out = {"x": s.x, "v": s.v, "q": s.q, "omega": s.omega, "energy": energy[:FIXTURE_ENERGY],
           "t": np.array([sim.t])}
    return {k: np.array(a, copy=True) for k, a in out.items()}


def all_cases():
    for label, scenario, params, names, steps in CASES:
        for scheme in schemes_for(names):
            yield label, scenario, params, scheme, steps


def fingerprint(a: np.ndarray) -> list:
    """``[dtype, shape, SHA-256 of the bytes]``: equal exactly when the arrays are the
    same bits."""
    a = np.ascontiguousarray(a)
    return [str(a.dtype), list(a.shape), hashlib.sha256(a.tobytes()).hexdigest()]


def read_fixture() -> dict[str, list]:
    return json.loads(FIXTURE.read_text())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    data = read_fixture() if args.write and FIXTURE.exists() else {}
    for label, scenario, params, scheme, steps in all_cases():
        r = run_case(scenario, params, scheme, steps)
        if r is None:
            print(f"{label:16s} {scheme:28s} refused")
            continue
        print(f"{label:16s} {scheme:28s} t={r['t'][0]:.4f} E={r['energy'].sum():.6g}",
              flush=True)
        for k, a in r.items():
            data[f"{label}|{scheme}|{k}"] = fingerprint(a)
    if args.write:
        FIXTURE.parent.mkdir(parents=True, exist_ok=True)
        FIXTURE.write_text("{\n" + ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}"
                                                for k, v in sorted(data.items())) + "\n}\n")
        print(f"wrote {FIXTURE} ({len(data)} arrays)")


if __name__ == "__main__":
    main()
