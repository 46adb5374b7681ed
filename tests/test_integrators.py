"""Integrators: exact invariants, momentum conservation, convergence order, and the
torus impact (docs/physics.md §3, §4, §6, §7)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.diagnostics import pendulum_invariants
from engine.integrators import INTEGRATORS
from engine.layout import ENERGY_NAMES
from engine.models import MODELS
from engine.simulation import Simulation

VARIATIONAL_OR_SYMPLECTIC = [n for n, i in INTEGRATORS.items() if i.symplectic
                             and i.contact != "hard"  # (hard contact: test_hard_contact.py)
                             and not i.event_driven]  # (energy-stepping: its own tests)


def pendulum_series(integrator: str, h: float, steps: int, every: int = 1, **params):
    sim = Simulation(MODELS["pendulum"].make(params), integrator, h, record_every=every)
    rep = sim.advance(steps)
    assert rep.ok, rep.failure
    return sim, sim.series.arrays()


@pytest.mark.parametrize("integrator", ["rrp-exact", "rrp-newmark"])
def test_pendulum_invariants_exact_over_1e5_steps(integrator):
    """``Rρ₀·Ω`` and ``e₃·Ω`` are conserved to round-off by the RRP schemes (B&G §3)."""
    sim, a = pendulum_series(integrator, 1e-2, 100_000, every=10)
    inv = pendulum_invariants(a["q"][:, 0], a["omega"][:, 0])
    assert abs(inv["R_rho0_dot_omega"][0]) < 1e-15  # the initial state has Rρ₀·Ω = 0
    assert np.abs(inv["R_rho0_dot_omega"] - inv["R_rho0_dot_omega"][0]).max() <= 1e-12
    assert np.abs(inv["e3_dot_omega"] - inv["e3_dot_omega"][0]).max() <= 1e-12
    assert np.abs(inv["norm_R_rho0"] - 1.0).max() <= 1e-12
    assert inv["orthogonality_error"].max() <= 1e-12
    # the pendulum actually moved: this is not a trivial run
    assert np.ptp(a["q"][:, 0, 0]) > 0.1


def test_rk4_does_not_keep_the_pendulum_invariant():
    """The baseline drifts where the RRP schemes are exact (same h, same length)."""
    _, a = pendulum_series("rk4", 1e-1, 20_000, every=10)
    inv = pendulum_invariants(a["q"][:, 0], a["omega"][:, 0])
    drift = np.abs(inv["R_rho0_dot_omega"]).max()
    assert drift > 1e-9
    assert inv["orthogonality_error"].max() > 1e-9  # the quaternion leaves the unit sphere


def energy_error(integrator: str, h: float, t_end: float = 10.0) -> float:
    steps = int(round(t_end / h))
    sim, a = pendulum_series(integrator, h, steps)
    e = a["energy"].sum(axis=1)
    return float(np.abs(e - e[0]).max())


def fitted_slope(integrator: str, hs) -> float:
    errs = [energy_error(integrator, h) for h in hs]
    return float(np.polyfit(np.log(hs), np.log(errs), 1)[0])


@pytest.mark.parametrize(
    ("integrator", "lo", "hi"),
    [("rrp-exact", 1.9, 2.1), ("rrp-newmark", 1.9, 2.1), ("pfc-verlet", 1.9, 2.1),
     ("campello", 0.85, 1.15)],
)
def test_energy_error_convergence_order(integrator, lo, hi):
    """Max energy error over t ∈ [0, 10] on the pendulum ∝ h^order (B&G Fig. 1)."""
    slope = fitted_slope(integrator, [0.04, 0.02, 0.01, 0.005])
    assert lo <= slope <= hi, slope


def test_rk4_is_fourth_order_on_short_smooth_runs():
    # local slopes 4.47, 4.31, 4.18, 4.10 from h = 0.08 down: asymptotically 4
    slope = fitted_slope("rk4", [0.02, 0.01, 0.005])
    assert 3.8 <= slope <= 4.3, slope


# ---------------------------------------------------------------- torus: momentum


def torus_drift(integrator: str, wall: bool, steps: int = 10_000, h: float = 1e-3):
    model = MODELS["torus"].make({"wall": wall, "velocity_noise": 0.3, "spin_noise": 2.0,
                                  "seed": 7})
    sim = Simulation(model, integrator, h, record_every=10, record_frames=False)
    rep = sim.advance(steps)
    assert rep.ok, rep.failure
    a = sim.series.arrays()
    dP = np.abs(a["P"] - a["P"][0]).max(axis=0) / sim.p_scale
    dL = np.abs(a["L"] - a["L"][0]).max(axis=0) / sim.l_scale
    return dict(zip(("P_x", "P_y", "P_z", "L_x", "L_y", "L_z"), [*dP, *dL], strict=True)), a


@pytest.mark.parametrize("integrator", VARIATIONAL_OR_SYMPLECTIC)
def test_free_torus_conserves_all_momenta(integrator):
    drift, a = torus_drift(integrator, wall=False)
    for k, v in drift.items():
        assert v <= 1e-12, (k, v)
    # the ring really deforms and spins: energy reaches the binder and rotation
    e = a["energy"]
    for name in ("rotational", "bending", "axial", "shear"):
        assert e[:, ENERGY_NAMES.index(name)].max() > 1e-3, name


def test_rk4_keeps_linear_but_not_angular_momentum():
    """RK methods keep linear invariants (P) exactly but not quadratic ones (L):
    the point of the comparison with the variational schemes."""
    drift, _ = torus_drift("rk4", wall=False)
    for k in ("P_x", "P_y", "P_z"):
        assert drift[k] <= 1e-12, (k, drift[k])
    assert max(drift["L_x"], drift["L_y"], drift["L_z"]) > 1e-10


@pytest.mark.parametrize("integrator", VARIATIONAL_OR_SYMPLECTIC)
def test_torus_with_wall_conserves_py_pz_lx(integrator):
    drift, _ = torus_drift(integrator, wall=True, steps=3000)
    for k in ("P_y", "P_z", "L_x"):
        assert drift[k] <= 1e-12, (k, drift[k])
    assert drift["P_x"] > 0.1  # the wall acts


# ---------------------------------------------------------------- torus: the paper run

TORUS_ENERGY_BOUND = 1e-2
"""Max relative energy error of rrp-newmark, h = 1e-3, t ∈ [0, 25]: measured 4.8e-3
here (rrp-exact 1.5e-3, pfc-verlet 3.4e-3); an independent implementation measured
2–3e-3.  The impact is chaotic, so the number moves with round-off; the bound leaves
a factor 2."""


@pytest.fixture(scope="module")
def paper_run():
    sim = Simulation(MODELS["torus"].make({}), "rrp-newmark", 1e-3, record_every=10,
                     record_frames=True)
    rep = sim.run_until(25.0)
    assert rep.ok, rep.failure
    return sim, sim.series.arrays()


def test_torus_paper_run_energy_bounded(paper_run):
    sim, a = paper_run
    e = a["energy"].sum(axis=1)
    rel = np.abs(e - sim.e_ref) / sim.e_scale
    assert rel.max() < TORUS_ENERGY_BOUND
    assert abs(a["t"][-1] - 25.0) < 1e-9


def test_torus_paper_run_energy_reaches_every_component(paper_run):
    _, a = paper_run
    e0 = a["energy"][0].sum()
    after = a["t"] > 0.2
    for name in ("rotational", "bending", "axial", "shear", "contact", "wall"):
        peak = a["energy"][after, ENERGY_NAMES.index(name)].max()
        assert peak > 1e-3 * e0, (name, peak)
    # translational energy is converted: at least a third of it leaves translation
    assert a["energy"][after, ENERGY_NAMES.index("translational")].min() < 0.67 * e0


def test_torus_paper_run_rebounds(paper_run):
    _, a = paper_run
    assert a["P"][0, 0] < 0  # towards the wall
    assert a["P"][-1, 0] > 0  # away from it
    x_final = a["x"][-1]
    assert x_final[:, 0].min() > 0.5 * 3.0 * np.sin(np.pi / 80)  # clear of the wall
    assert np.isfinite(a["x"]).all()
