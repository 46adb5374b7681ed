"""The spring pendulum with a wall in generalized coordinates and the Moreau-type
schemes (physics.md §3.9, §4.4; docs/physics.md §3.9, generalized): model consistency,
the contact solve, the identities between the schemes, energy bookkeeping, the
penetration bound and the driver/CLI interface.  No timed tests."""

from __future__ import annotations

import math
from pathlib import Path

import h5py
import numpy as np
import pytest
from helpers import rrp

from engine.drivers import simulation_for
from engine.generalized import schemes as S
from engine.generalized import spring_pendulum as sp_mod
from engine.generalized.simulation import GeneralizedSimulation
from engine.layout import E_DISSIPATED
from engine.models import get_model_spec
from engine.scenarios import load_scenario
from engine.simulation import Simulation, SimulationError

ROOT = Path(__file__).resolve().parent.parent
E0 = 10.5
TOL, MAX_IT = 1e-14, 50


def system(coords: str, e_n: float = 1.0) -> np.ndarray:
    return sp_mod.system_array(1.0, 100.0, 1.0, 10.0, -0.5, e_n, coords)


def start(scheme: int, sp: np.ndarray, dt: float) -> np.ndarray:
    q0, q1, _, _ = sp_mod.generalized(sp, 1.0, 0.0, 0.0, 0.0)
    u0, u1, _, ok = S.to_internal(scheme, sp, q0, q1, 0.0, 0.0, dt, TOL, MAX_IT)
    assert ok
    return np.array([q0, q1, u0, u1, 0.0])


def trajectory(scheme: int, coords: str, dt: float, t_end: float, e_n: float = 1.0):
    """Step by step: node (x, y), node energy E + D, D and the step outputs."""
    sp = system(coords, e_n)
    s = start(scheme, sp, dt)
    s1, o = s.copy(), np.zeros(S.N_OUT)
    e, pl, fr = np.zeros(11), np.zeros(6), np.zeros(10)
    rows, outs, states = [], [], []
    for k in range(int(round(t_end / dt))):
        states.append(s.copy())
        S.step(scheme, sp, s, dt, TOL, MAX_IT, s1, o)
        assert o[S.O_STATUS] == 0
        s[:] = s1
        S.node_values(scheme, sp, s, dt, e, pl, fr)
        v = math.hypot(*S.node_velocity(scheme, sp, s, dt)[:2])
        rows.append((dt * (k + 1), fr[0], fr[1], e.sum(), e[E_DISSIPATED], v,
                     math.hypot(pl[0], pl[1])))
        outs.append(o.copy())
    return np.array(rows), np.array(outs), np.array(states), sp


# ------------------------------------------------------------------ the model
def cart_map(coords, q):
    if coords == "polar":
        return np.array([q[0] * math.sin(q[1]), -q[0] * math.cos(q[1])])
    return np.array(q, dtype=float)


def lagrangian_T(coords, q, u, eps=1e-6):
    """T = ½ m |dx/dt|² with dx/dt = J(q) u by central differences of the map."""
    J = np.column_stack([(cart_map(coords, q + eps * d) - cart_map(coords, q - eps * d))
                         / (2 * eps) for d in np.eye(2)])
    v = J @ u
    return 0.5 * v @ v


@pytest.mark.parametrize("coords", ["polar", "cartesian"])
def test_forces_and_mass_agree_with_a_finite_difference_lagrangian(coords):
    sp = system(coords)
    rng = np.random.default_rng(1)
    for _ in range(5):
        q = np.array([0.8 + 0.6 * rng.random(), rng.uniform(-2, 2)])
        if coords == "cartesian":
            q = cart_map("polar", q)
        u = rng.normal(size=2)
        eps = 1e-6
        # h(q, 0) = −∂V/∂q
        grad = np.array([(sp_mod.potential(sp, q + eps * d) - sp_mod.potential(sp, q - eps * d))
                         / (2 * eps) for d in np.eye(2)])
        np.testing.assert_allclose(sp_mod.force_vector(sp, q, np.zeros(2)), -grad, rtol=1e-7,
                                   atol=1e-6)
        # M(q) = ∂²T/∂u²
        e = 1e-4
        M = np.array([[(lagrangian_T(coords, q, u + e * a + e * b)
                        - lagrangian_T(coords, q, u + e * a - e * b)
                        - lagrangian_T(coords, q, u - e * a + e * b)
                        + lagrangian_T(coords, q, u - e * a - e * b)) / (4 * e * e)
                       for b in np.eye(2)] for a in np.eye(2)])
        np.testing.assert_allclose(sp_mod.mass_matrix(sp, q), M, rtol=1e-5, atol=1e-6)
        # h(q, u) − h(q, 0) = −Ṁu + (∂T/∂q)ᵀ, Ṁu = Σ_j ∂(M u)/∂q_j u_j
        dTdq = np.array([(lagrangian_T(coords, q + e * d, u) - lagrangian_T(coords, q - e * d,
                                                                              u)) / (2 * e)
                         for d in np.eye(2)])
        Mdot_u = sum(((sp_mod.mass_matrix(sp, q + e * d) - sp_mod.mass_matrix(sp, q - e * d))
                      / (2 * e)) @ u * u[j] for j, d in enumerate(np.eye(2)))
        np.testing.assert_allclose(
            sp_mod.force_vector(sp, q, u) - sp_mod.force_vector(sp, q, np.zeros(2)),
            -Mdot_u + dTdq, rtol=1e-5, atol=1e-5)


def test_energy_zero_at_the_static_equilibrium_and_e0():
    for coords in ("polar", "cartesian"):
        sp = system(coords)
        q_eq = np.array(sp_mod.generalized(sp, 0.0, -1.1, 0.0, 0.0)[:2])
        assert abs(sp_mod.potential(sp, q_eq)) < 1e-12
        assert np.allclose(sp_mod.force_vector(sp, q_eq, np.zeros(2)), 0.0, atol=1e-12)
        q0 = np.array(sp_mod.generalized(sp, 1.0, 0.0, 0.0, 0.0)[:2])
        assert sp_mod.potential(sp, q0) == pytest.approx(E0)


@pytest.mark.parametrize("scheme", [S.S_SYMMETRIC, S.S_VARIATIONAL])
def test_polar_and_cartesian_give_the_same_motion_before_the_first_impact(scheme):
    dt = 1e-4
    a, oa, _, _ = trajectory(scheme, "polar", dt, 0.85)
    b, ob, _, _ = trajectory(scheme, "cartesian", dt, 0.85)
    pre = a[:, 0] < 0.8
    assert np.max(np.abs(a[pre, 1:3] - b[pre, 1:3])) < 1e-6
    for o, r in ((oa, a), (ob, b)):
        first = r[np.argmax(o[:, S.O_P] > 0), 0]
        assert 0.80 < first < 0.812, first


# ------------------------------------------------------------------ the contact solve
def prox_percussion(sp, scheme, s, dt, o):
    """Projected (prox) iteration P ← max(0, P − r ξ(P)) on the same one-contact
    problem; ξ(P) solves the smooth equation with w_N P by Newton for the implicit
    schemes (independent of the kernel's closed form and (u, P) Newton)."""
    e = sp[sp_mod.SP_EN]
    if scheme == S.S_MOREAU:
        qm = s[:2] + 0.5 * dt * s[2:4]
        m = np.array(sp_mod.mass_diag(sp, *qm))
        h = np.array(sp_mod.forces(sp, *qm, *s[2:4]))
        w = np.array(sp_mod.gap_gradient(sp, *qm))

        def xi(P):
            u = s[2:4] + (dt * h + w * P) / m
            return w @ (u + e * s[2:4])
    else:
        q, up = s[:2], s[2:4]
        p = np.array(S.node_momentum(scheme, sp, *q, *up, dt))
        m = np.array(sp_mod.mass_diag(sp, *q))
        w = np.array(sp_mod.gap_gradient(sp, *q))

        def xi(P):
            u = up.copy()
            for _ in range(60):
                A0, A1, j00, j01, j10, j11 = S._residual(scheme, sp, *q, *u, dt)
                d = np.linalg.solve([[j00, j01], [j10, j11]], p + w * P - [A0, A1])
                u = u + d
                if np.max(np.abs(d)) < 1e-15 * (1 + np.max(np.abs(u))):
                    break
            return w @ (u + e * up)
    r = 0.5 / (w @ (w / m))
    P = 0.0
    for _ in range(10_000):
        Pn = max(0.0, P - r * xi(P))
        if abs(Pn - P) <= 1e-14 * max(1.0, abs(Pn)):
            return Pn
        P = Pn
    raise AssertionError("prox iteration did not converge")


@pytest.mark.parametrize("coords", ["polar", "cartesian"])
@pytest.mark.parametrize("scheme", [S.S_MOREAU, S.S_SYMMETRIC, S.S_VARIATIONAL])
def test_percussion_equals_a_prox_iteration_on_real_steps(coords, scheme):
    dt = 1e-3
    _, outs, states, sp = trajectory(scheme, coords, dt, 3.0)
    hits = np.flatnonzero(outs[:, S.O_P] > 0)
    assert len(hits) >= 2
    for k in hits:
        P_ref = prox_percussion(sp, scheme, states[k], dt, outs[k])
        assert outs[k, S.O_P] == pytest.approx(P_ref, rel=1e-11, abs=1e-12)


@pytest.mark.parametrize("coords", ["polar", "cartesian"])
@pytest.mark.parametrize("scheme", [S.S_MOREAU, S.S_SYMMETRIC, S.S_VARIATIONAL])
@pytest.mark.parametrize("e_n", [1.0, 0.5])
def test_complementarity_on_every_contact_step(coords, scheme, e_n):
    _, o, _, _ = trajectory(scheme, coords, 1e-3, 6.0, e_n)
    act = o[:, S.O_ACTIVE] > 0
    assert act.sum() > 0
    P, xi = o[act, S.O_P], o[act, S.O_XI]
    scale = np.max(P)
    assert np.all(P >= 0.0)
    assert np.all(xi >= -1e-10)
    assert np.all(np.abs(P * xi) <= 1e-10 * scale)
    assert np.all(o[~act, S.O_P] == 0.0)


# ------------------------------------------------------------------ identities between schemes
def test_moreau_midpoints_are_the_symmetric_nodes_in_cartesian_coordinates():
    """Constant M and h = f(q): Moreau's q_M sequence is the symmetric scheme's node
    sequence (the symmetric scheme started at Q₀ = q_M⁰ with U₋₁ = u₀)."""
    dt = 1e-3
    sp = system("cartesian")
    s = start(S.S_MOREAU, sp, dt)
    z = np.array([s[0] + 0.5 * dt * s[2], s[1] + 0.5 * dt * s[3], s[2], s[3], 0.0])
    s1, z1, o, oz = s.copy(), z.copy(), np.zeros(S.N_OUT), np.zeros(S.N_OUT)
    worst, impacts = 0.0, 0
    for _ in range(3000):
        S.step(S.S_MOREAU, sp, s, dt, TOL, MAX_IT, s1, o)
        S.step(S.S_SYMMETRIC, sp, z, dt, TOL, MAX_IT, z1, oz)
        worst = max(worst, abs(o[S.O_QM0] - z[0]), abs(o[S.O_QM1] - z[1]))
        assert (o[S.O_P] > 0) == (oz[S.O_P] > 0)
        impacts += o[S.O_P] > 0
        s[:], z[:] = s1, z1
    assert impacts >= 2
    assert worst < 1e-12, worst


def test_variational_equals_symmetric_in_cartesian_coordinates():
    a, oa, _, _ = trajectory(S.S_SYMMETRIC, "cartesian", 1e-3, 3.0)
    b, ob, _, _ = trajectory(S.S_VARIATIONAL, "cartesian", 1e-3, 3.0)
    assert (oa[:, S.O_P] > 0).sum() >= 2
    np.testing.assert_allclose(a[:, 1:4], b[:, 1:4], rtol=0, atol=1e-11)
    np.testing.assert_allclose(oa[:, S.O_P], ob[:, S.O_P], rtol=1e-10, atol=1e-11)


def test_variational_differs_from_symmetric_in_polar_coordinates():
    a, _, _, _ = trajectory(S.S_SYMMETRIC, "polar", 1e-3, 0.5)
    b, _, _, _ = trajectory(S.S_VARIATIONAL, "polar", 1e-3, 0.5)
    assert np.max(np.abs(a[:, 1:3] - b[:, 1:3])) > 1e-9


# ------------------------------------------------------------------ energy bookkeeping
@pytest.mark.parametrize("coords", ["polar", "cartesian"])
@pytest.mark.parametrize("scheme", [S.S_MOREAU, S.S_SYMMETRIC, S.S_VARIATIONAL])
def test_dissipation_zero_for_elastic_impacts(coords, scheme):
    r, o, _, _ = trajectory(scheme, coords, 1e-3, 6.0, 1.0)
    assert (o[:, S.O_P] > 0).sum() >= 3
    assert np.max(np.abs(r[:, 4])) <= 1e-12 * E0


@pytest.mark.parametrize("coords", ["polar", "cartesian"])
@pytest.mark.parametrize("scheme", [S.S_SYMMETRIC, S.S_VARIATIONAL])
def test_dissipation_with_restitution_half_balances_the_energy(coords, scheme):
    r, o, _, _ = trajectory(scheme, coords, 1e-3, 6.0, 0.5)
    D = r[:, 4]
    assert D[-1] > 0.1 * E0
    assert np.all(np.diff(D) >= -1e-14)
    # E + D = E0 within the scheme's bounded error (docs/physics.md §3.9, generalized §4:
    # exact at impacts in Cartesian coordinates, O(Δt) per impact in polar ones)
    bound = 1e-4 if coords == "cartesian" else 2e-2
    assert np.max(np.abs(r[:, 3] - E0)) / E0 < bound


def test_moreau_dissipation_non_decreasing_with_restitution_half():
    r, _, _, _ = trajectory(S.S_MOREAU, "cartesian", 1e-3, 6.0, 0.5)
    assert r[-1, 4] > 0.1 * E0 and np.all(np.diff(r[:, 4]) >= -1e-14)
    assert np.max(np.abs(r[:, 3] - E0)) / E0 < 1e-3


@pytest.mark.parametrize("coords", ["polar", "cartesian"])
@pytest.mark.parametrize("scheme", [S.S_MOREAU, S.S_SYMMETRIC, S.S_VARIATIONAL])
@pytest.mark.parametrize("dt", [1e-3, 5e-3])
def test_penetration_bound(coords, scheme, dt):
    """−g_N ≤ C Δt max|v| with C = 1.25 (docs/physics.md §3.9, generalized §6)."""
    r, o, _, _ = trajectory(scheme, coords, dt, 10.0)
    pen = np.max(o[:, S.O_PEN])
    assert pen > 0.0
    assert pen <= 1.25 * dt * np.max(r[:, 5]), (pen, dt * np.max(r[:, 5]))


# ------------------------------------------------------------------ driver and CLI
def model(**kw):
    return get_model_spec("spring-pendulum").make(kw)


def test_the_factory_picks_the_driver_and_the_constructors_refuse_the_other_kind():
    """Issue #34 §1: the driver is chosen by ``engine.simulation_for`` (no constructor
    returns another class); each driver refuses the other kind of model in one line."""
    import engine
    from engine.drivers import driver_for

    assert driver_for(model()) is GeneralizedSimulation
    torus = load_scenario("torus").build_model()
    assert driver_for(torus) is Simulation
    assert type(engine.simulation_for(torus, "rrp-newmark", 1e-3)) is Simulation
    with pytest.raises(SimulationError, match=r"engine\.simulation_for") as e:
        Simulation(model(), "moreau-symmetric", 1e-3)
    assert "\n" not in str(e.value)
    with pytest.raises(SimulationError, match="not in generalized coordinates"):
        GeneralizedSimulation(torus, "moreau-symmetric", 1e-3)


def test_simulation_dispatches_and_switches():
    sim = simulation_for(model(), "moreau-symmetric", 1e-3, record_every=10)
    assert isinstance(sim, GeneralizedSimulation)
    assert sim.e_ref == pytest.approx(E0)
    assert sim.advance(1500).ok and sim.contact_stats["impacts"] >= 1
    q, v = sim.node
    sim.set_integrator("moreau-variational")
    q2, v2 = sim.node
    np.testing.assert_allclose(q2, q, atol=0)
    np.testing.assert_allclose(v2, v, rtol=1e-13, atol=1e-13)
    sim.set_h(5e-4)
    np.testing.assert_allclose(sim.node[1], v, rtol=1e-13, atol=1e-13)
    sim.set_integrator("moreau")
    assert sim.advance(1000).ok
    assert [e.kind for e in sim.events] == ["integrator", "h", "integrator"]
    assert sim.t == pytest.approx(2.0)
    a = sim.series.arrays()
    assert a["x"].shape == (len(a["t"]), 1, 3) and np.all(np.isfinite(a["energy"]))
    assert abs(sim.relative_energy_error) < 1e-2
    assert sim.iteration_stats["solves"] > 0
    snap = sim.snapshot()
    assert snap.L[2] == pytest.approx(snap.x[0, 0] * snap.P[1] - snap.x[0, 1] * snap.P[0])
    cp = sim.checkpoint()
    sim.advance(10)
    sim.restore(cp)
    assert sim.t == pytest.approx(2.0)
    with pytest.raises(SimulationError, match="moreau"):
        sim.set_integrator("rrp-newmark")


def test_newton_failure_keeps_the_last_good_state():
    sim = simulation_for(model(), "moreau-variational", 1e-3)
    sim.max_iterations = 1
    rep = sim.advance(10)
    assert not rep.ok and rep.failure.kind == "no-convergence"
    assert "lower h" in rep.failure.message and "\n" not in rep.failure.message
    assert sim.step_index == rep.steps and np.all(np.isfinite(sim.energy))


def test_a_refused_step_change_keeps_step_and_state():
    sim = simulation_for(model(), "moreau-variational", 1e-3)
    assert sim.advance(700).ok
    before = sim._s.copy()
    sim.max_iterations = 1  # the velocity variable cannot be re-derived at the new h
    with pytest.raises(SimulationError, match="lower h"):
        sim.set_h(0.3)
    assert sim.h == 1e-3 and not sim.events
    np.testing.assert_array_equal(sim._s, before)


def test_cli_run_writes_a_readable_file(tmp_path):
    res = rrp(tmp_path, "run", "spring-pendulum", "--t-end", "2", "--out",
              str(tmp_path / "r.h5"))
    assert res.returncode == 0, res.stderr
    with h5py.File(tmp_path / "r.h5", "r") as f:
        assert f.attrs["status"] == "complete"
        assert f.attrs["model"] == "spring-pendulum"
        assert set(f["energy"]) >= {"translational", "spring", "gravity", "dissipated"}
        assert abs(f["energy/relative_error"][-1]) < 1e-2
        assert f["bodies/position"].shape[1:] == (1, 3)


def test_cli_refuses_a_body_scheme_with_one_line(tmp_path):
    res = rrp(tmp_path, "run", "spring-pendulum", "-i", "rrp-newmark", "--t-end", "0.1")
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert res.returncode == 2 and len(lines) == 1, res.stderr
    assert "moreau-symmetric" in lines[0] and "moreau-variational" in lines[0]
    assert "Traceback" not in res.stderr
