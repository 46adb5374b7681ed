"""The accuracy guide (issue #10 §7): the h for a ≈ 1 % energy error, from h·ω_max and a
per-model calibration (engine.stability.accuracy_guide) — checked against runs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.scenarios import load_scenario
from engine.simulation import Simulation
from engine.stability import accuracy_guide


def max_energy_error(scenario: str, h: float, t_end: float) -> float:
    sc = load_scenario(scenario)
    sim = Simulation(sc.build_model(), sc.run.integrator, h, record_every=10,
                     record_frames=False, energy_tolerance=None)
    assert sim.run_until(t_end, chunk=20_000).ok
    total = sim.series.arrays()["energy"].sum(axis=1)
    return float(np.abs((total - sim.e_ref) / sim.e_scale).max())


@pytest.mark.parametrize("scenario, t_end", [("pendulum", 100.0), *(  # (the torus: slow)
    pytest.param(s, t, marks=pytest.mark.slow)
    for s, t in (("torus", 25.0), ("torus-hard", 25.0)))])
def test_the_guide_step_gives_about_the_chosen_error(scenario, t_end):
    sc = load_scenario(scenario)
    sim = Simulation(sc.build_model(), sc.run.integrator, sc.run.h)
    h1 = sim.accuracy_guide(0.01)
    assert math.isfinite(h1) and h1 > sc.run.h * 0.5
    err = max_energy_error(scenario, h1, t_end)
    assert 1e-3 < err < 1.5e-2, (scenario, h1, err)  # "about 1 %", never far beyond
    assert max_energy_error(scenario, 2 * h1, t_end) > err  # and it is the limiting scale
    # a stricter level gives a smaller step, as sqrt(level), unless capped by stability
    est, c = sim.stability(), sim.model.accuracy_c
    assert accuracy_guide(est.omega_max, c, 1e-4) == pytest.approx(
        accuracy_guide(est.omega_max, c, 1e-2) / 10, rel=1e-12)
    assert h1 <= 0.5 * est.h_stable

def test_no_guide_where_no_calibration_or_no_stiffness():
    assert accuracy_guide(100.0, None) == math.inf
    assert accuracy_guide(0.0, 3.0) == math.inf
    assert accuracy_guide(100.0, 3.0, 0.01, h_stable=0.002) == 0.001  # capped
    sc = load_scenario("dumbbells")
    assert Simulation(sc.build_model(), "lgvi", 1e-3).accuracy_guide() == math.inf
