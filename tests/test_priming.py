"""The kernels a run calls are compiled by ``engine.priming`` for the types the run
passes them: priming in a process of its own leaves the run's process nothing to
compile (its memory stays that of the model; BENCHMARKS.md)."""

from __future__ import annotations

import numpy as np

from engine.forcefield import compute_forces_ws
from engine.integrators.advance import S_RRP_NEWMARK, loop_kernel
from engine.neighbours import build_neighbours, forget_grid
from engine.priming import prime_run_kernels
from engine.rotations import _quat_to_matrix_n
from engine.scenarios import load_scenario
from engine.simulation import Simulation
from engine.stability import _peak_overlap, stiffness_rows

KERNELS = (loop_kernel(S_RRP_NEWMARK), compute_forces_ws, build_neighbours, forget_grid,
           _quat_to_matrix_n, stiffness_rows, _peak_overlap)


def test_a_primed_process_compiles_nothing_more_for_a_frictional_pile():
    sc = load_scenario("tori-pile", {"n_tori": 6, "mu": 0.5, "damping": 0.1})
    model = sc.build_model()
    prime_run_kernels(S_RRP_NEWMARK, model.forcefield.arrays[-1])
    before = {k.__name__: set(k.signatures) for k in KERNELS}
    sim = Simulation(model, "rrp-newmark", 1e-3, record_every=5, record_state=True)
    sim.warm_up()
    sim.advance(20)
    sim.stability()
    from engine.rotations import quat_to_matrix

    assert np.isfinite(quat_to_matrix(sim.state.q)).all()
    after = {k.__name__: set(k.signatures) for k in KERNELS}
    assert after == before
