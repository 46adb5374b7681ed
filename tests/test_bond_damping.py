"""The bonds' own damping of LAMMPS's BPM laws (issue #44 item 1:
``engine.potentials.bond_damping``; docs/physics.md §4.6 "Bond damping").

The flow's rate is LAMMPS's damping forces and torques (written here from
``doc/src/bond_bpm_rotational.rst`` and ``bond_bpm_spring.rst``); each mode decays
exactly, the energy it removes is booked to round-off and ``P`` and ``L`` are kept; a
damped chain's ``E + dissipated`` is constant to second order with the momenta kept;
resume is bit-identical; a model without bond damping has no such family slot; the
scenario and the LAMMPS import carry the γs."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import energy_error_slope
from test_bond_laws import ROT, SPR, _chain, _momenta

from engine.drivers import simulation_for
from engine.potentials import bpm
from engine.potentials.bond_damping import bond_damp_half
from engine.potentials.bond_damping_plan import plan_for
from engine.rotations import quat_from_rotvec
from engine.specialize import BPM, BPM_DAMPED

GAMMAS = {"gamma_n": 0.3, "gamma_s": 0.2, "gamma_r": 0.05, "gamma_t": 0.04}
DAMPED = {**ROT, **GAMMAS}


def _pair(law: str, smooth: bool = False, seed: int = 3):
    """Two spheres of one bond (a deformed state, random velocities and spins)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(2, 3))
    q = quat_from_rotvec(0.4 * rng.normal(size=(2, 3)))
    bonds = np.array([[0, 1]])
    coeffs = {**DAMPED, "k_r": 2.0, "k_s": 1.5, "k_t": 0.7, "k_b": 1.3, "f_rc": 10.0,
              "f_sc": 10.0, "tau_bc": 10.0, "tau_tc": 10.0, "k": 3.0, "eps_c": 0.5,
              "gamma": 0.7}
    table = np.array([bpm.law_row(law, coeffs, smooth)])
    bpm.reference(table, x, q, bonds)
    x = x + 0.05 * rng.normal(size=(2, 3))
    m = np.array([1.3, 0.7])
    J = np.array([0.2, 0.11])
    v = rng.normal(size=(2, 3))
    o = rng.normal(size=(2, 3))
    return x, v, q, o, m, J, bonds, table


def _lammps_rates(x, v, o, m, J, law, g):
    """``(v̇, ω̇)`` of LAMMPS's damping alone (``smooth no``), from its documentation."""
    d = x[0] - x[1]
    r = np.linalg.norm(d)
    n = d / r
    dv = v[0] - v[1]
    dw = o[0] - o[1]
    F = -g["gamma_n"] * (n @ dv) * n
    tau_i = np.zeros(3)
    tau_j = np.zeros(3)
    if law == "bpm/rotational":
        u = dv - (n @ dv) * n + 0.5 * np.cross(d, o[0] + o[1])
        F = F - g["gamma_s"] * u
        tau_i += 0.5 * g["gamma_s"] * np.cross(d, u)
        tau_j += 0.5 * g["gamma_s"] * np.cross(d, u)
        roll = 0.5 * g["gamma_r"] * r * (dw - (n @ dw) * n)
        twist = 0.5 * g["gamma_t"] * (n @ dw) * n
        tau_i -= roll + twist
        tau_j += roll + twist
    return np.array([F / m[0], -F / m[1]]), np.array([tau_i / J[0], tau_j / J[1]])


@pytest.mark.parametrize("law", ["bpm/rotational", "bpm/spring"])
def test_the_flows_rate_is_lammps_damping(law):
    x, v, q, o, m, J, bonds, table = _pair(law)
    g = dict(GAMMAS) if law == "bpm/rotational" else {"gamma_n": 0.7}
    acc, alpha = _lammps_rates(x, v, o, m, J, law, g)
    tau = 1e-7
    for forward in (True, False):
        v1, o1 = v.copy(), o.copy()
        bond_damp_half(x, v1, q, o1, np.zeros((2, 3)), m, J, table, tau, forward, False,
                       plan_for(bonds, table, m, J))
        np.testing.assert_allclose((v1 - v) / tau, acc, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose((o1 - o) / tau, alpha, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("smooth", [False, True])
def test_each_sweep_books_what_it_removes_and_keeps_p_and_l(smooth):
    """A long flow (``τ`` past every decay time): the kinetic energy removed is the one
    returned (round-off), ``P = Σ m v`` and ``L = Σ (x × m v + J ω)`` are kept; swept
    again and again (the modes do not commute: each sweep undoes a little of the
    others), only a rigid motion of the pair is left (``smooth no``)."""
    x, v, q, o, m, J, bonds, table = _pair("bpm/rotational", smooth)

    def ke(v, o):
        return 0.5 * (m @ (v * v).sum(1) + J @ (o * o).sum(1))

    P = m @ v
    L = (np.cross(x, v) * m[:, None]).sum(0) + J @ o
    v1, o1 = v.copy(), o.copy()
    plan = plan_for(bonds, table, m, J)
    d = bond_damp_half(x, v1, q, o1, np.zeros((2, 3)), m, J, table, 0.3, True, False, plan)
    assert d > 0.0 and d == pytest.approx(ke(v, o) - ke(v1, o1), rel=1e-13)
    np.testing.assert_allclose(m @ v1, P, rtol=0, atol=1e-14)
    L1 = (np.cross(x, v1) * m[:, None]).sum(0) + J @ o1
    np.testing.assert_allclose(L1, L, rtol=0, atol=1e-14)
    if not smooth:
        v2, o2 = v.copy(), o.copy()
        for k in range(200):
            bond_damp_half(x, v2, q, o2, np.zeros((2, 3)), m, J, table, 3e3, k % 2 == 0,
                           False, plan)
        # rigid motion only is left: the velocities of a body x ↦ V + W × (x − c)
        dv = v2[0] - v2[1]
        assert np.allclose(o2[0], o2[1], atol=1e-12)
        assert np.allclose(dv, np.cross(o2[0], x[0] - x[1]), atol=1e-12)


def test_a_damped_chain_keeps_e_plus_dissipated_to_second_order_and_its_momenta():
    """rrp-newmark with every damping of ``bpm/rotational`` on: ``E + dissipated`` moves
    as h² (the Strang composition with the exact flows is second order), ``P`` and ``L``
    kept to round-off, and the bonds really dissipate."""
    slope, errs = energy_error_slope(lambda: _chain(DAMPED), (4e-3, 2e-3, 1e-3), t_end=2.0)
    assert 1.8 < slope < 2.2, errs
    sim = simulation_for(_chain(DAMPED), "rrp-newmark", 2e-3, record_every=10**9,
                         record_frames=False, energy_tolerance=None)
    p0, l0, (sp, sl) = _momenta(sim)
    e0 = sim.energy.sum()
    assert sim.advance(1000).ok
    p1, l1, _ = _momenta(sim)
    assert np.abs(p1 - p0).max() < 1e-13 * sp and np.abs(l1 - l0).max() < 1e-13 * sl
    from engine.layout import ENERGY_NAMES
    assert sim.energy[ENERGY_NAMES.index("dissipated")] > 0.3 * e0


@pytest.mark.parametrize("scheme", ["lgvi"])
def test_the_schemes_that_keep_pi_keep_it_with_bond_damping(scheme):
    """lgvi keeps ``Π = J Rᵀ Ω``: the bonds' damping moves it with ``Ω`` (the momenta
    kept, ``E + D`` bounded)."""
    sim = simulation_for(_chain(DAMPED), scheme, 2e-3, record_every=10**9,
                         record_frames=False, energy_tolerance=None)
    p0, l0, (sp, sl) = _momenta(sim)
    e0 = sim.energy.sum()
    assert sim.advance(500).ok
    p1, l1, _ = _momenta(sim)
    assert np.abs(p1 - p0).max() < 1e-13 * sp and np.abs(l1 - l0).max() < 1e-13 * sl
    assert abs(sim.energy.sum() - e0) < 1e-3 * e0


def test_resume_with_bond_damping_is_bit_identical():
    from engine.simulation import Simulation

    m = _chain(DAMPED)
    a = simulation_for(m, "rrp-newmark", 2e-3, record_frames=False, energy_tolerance=None)
    a.advance(37)
    b = Simulation.from_resume_state(m, a.resume_state())
    a.advance(50)
    b.advance(50)
    assert np.array_equal(a.state.x, b.state.x) and np.array_equal(a.state.v, b.state.v)
    assert np.array_equal(a.state.omega, b.state.omega)
    assert np.array_equal(a.energy, b.energy)


def test_only_a_damped_model_has_the_damped_family():
    """No bond damping: no ``BPM_DAMPED`` slot and no damping flow at all (the undamped
    model's kernels and bits of before); damped: the slot and ``dissipated``."""
    from engine.layout import T_DAMPING

    ff = _chain(ROT).forcefield
    assert ff.arrays[-1][BPM] == 0 and ff.arrays[-1][BPM_DAMPED] is None
    assert not ff.flags[T_DAMPING]
    m = _chain(DAMPED)
    assert m.forcefield.arrays[-1][BPM_DAMPED] == 0 and m.forcefield.flags[T_DAMPING]
    assert "dissipated" in m.energy_components
    m = _chain({**SPR, "gamma": 0.5}, True)
    assert m.forcefield.arrays[-1][BPM_DAMPED] == 0 and "dissipated" in m.energy_components


def test_a_scenario_carries_the_gammas(tmp_path):
    from test_bond_laws import _toml

    from engine.scenarios import load_scenario

    m = load_scenario(_toml(tmp_path, 'law = "bpm/spring"\nk = 1.0\neps_c = 0.1\n'
                                      'gamma = 0.5')).build_model()
    assert m.forcefield.bpm[0, bpm.C_COEF + 2] == 0.5 and "dissipated" in m.energy_components


def test_bond_damping_keeps_the_groups_dipoles_and_field_of_a_scenario(tmp_path):
    """The damped bonds' arrays do not take the place of the fields' (the LAMMPS
    metamaterial ran with its field on no sphere: every energy 0): the field loads its
    group, the bonds dissipate, and with viscous damping too there is one
    ``dissipated``."""
    from test_fields_damping import CSV

    from engine.layout import E_DISSIPATED, E_FIELD
    from engine.scenarios import load_scenario

    (tmp_path / "s.csv").write_text(CSV)
    (tmp_path / "b.csv").write_text("i,j,type\n0,1,1\n1,2,1\n2,3,1\n")
    law = "\n".join(f"{k} = {v!r}" for k, v in DAMPED.items() if k != "law")
    (tmp_path / "s.toml").write_text(
        'model = "assembly"\nbodies = "s.csv"\nbonds = "b.csv"\n[[fields]]\ngroup = 1\n'
        'B = [0.0, 0.0, 2.0]\n[[damping]]\ngamma = 0.1\n[bond_types.1]\n'
        'law = "bpm/rotational"\n' + law + "\n")
    m = load_scenario(tmp_path / "s.toml").build_model()
    assert m.forcefield.fields[3].tolist() == [0, 1, 1, 1]
    assert m.energy_components.count("dissipated") == 1
    sim = simulation_for(m, "rrp-newmark", 1e-3, record_frames=False,
                         energy_tolerance=None)
    assert sim.energy[E_FIELD] < 0.0
    assert sim.advance(200).ok and sim.energy[E_DISSIPATED] > 0.0
