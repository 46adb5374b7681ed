"""Hard, frictional contacts on the sphere models (docs/physics.md §3.9): the percussion
solver's complementarity and Coulomb conditions, the closed form of a single contact,
conservation, dissipation bookkeeping, the refusals, and non-convergence as a failure."""

from __future__ import annotations

import numpy as np
import pytest

from engine.contact.detect import contact_velocity, find_contacts_ws, new_contact_work
from engine.contact.percussions import solve_percussions_ws
from engine.forcefield import new_scratch
from engine.layout import (
    E_DISSIPATED,
    IS_CONTACTS,
    N_IS,
    P_E_N,
    P_E_T,
    P_MU,
    P_SKIN,
    T_HARD_CONTACT,
    T_HARD_WALL,
)
from engine.models import MODELS, ParameterError
from engine.scenarios import load_scenario
from engine.simulation import (
    Simulation,
    SimulationError,
    default_integrator,
    integrator_for,
    usable_integrators,
)

TOL = 1e-13


def cluster(n=12, seed=3, mu=0.4, e_n=0.7, e_t=0.2, wall=True):
    """A random cluster of overlapping spheres near a wall at x = 0, with random
    velocities and spins: a force field with hard contacts only, and ``U⁻``, ``U_free``."""
    rng = np.random.default_rng(seed)
    model = MODELS["torus"].make({"n_particles": n, "contact": "hard", "wall": wall})
    ff = model.forcefield.copy()
    D = ff.D
    x = rng.uniform(0.0, 1.2 * D[0] * n ** (1 / 3), (n, 3))
    x[:, 0] -= 0.3 * D[0]  # some spheres cut the wall
    ff.m[:] = rng.uniform(0.5, 2.0, n)
    ff.J[:] = rng.uniform(0.2, 1.0, n) * ff.m * D ** 2 / 10
    ff.fp[P_E_N], ff.fp[P_MU], ff.fp[P_E_T] = e_n, mu, e_t
    ff.flags[:] = 0
    ff.flags[T_HARD_CONTACT] = 1
    ff.flags[T_HARD_WALL] = 1 if wall else 0
    ff.fp[P_SKIN] = 0.5 * D[0]
    ff.set_walls([((1.0, 0.0, 0.0), 0.0)])
    u0 = rng.standard_normal((n, 3))
    w0 = 3.0 * rng.standard_normal((n, 3))
    u1 = u0 + 0.2 * rng.standard_normal((n, 3))
    w1 = w0 + 0.5 * rng.standard_normal((n, 3))
    return ff, x, u0, w0, u1, w1


def solve(ff, x, u0, w0, u1, w1, tol=TOL, max_it=100_000):
    cw = new_contact_work(ff.n_bodies, ff.nl_pairs.shape[0], ff.n_walls)
    st = find_contacts_ws(x, ff.arrays, cw, new_scratch(ff.n_bodies)[1])
    assert st == 0
    stats = np.zeros(N_IS)
    info = np.zeros(4)
    u1, w1 = u1.copy(), w1.copy()
    status, dd = solve_percussions_ws(cw, ff.m, ff.J, u0, w0, u1, w1, ff.fp[P_E_N],
                                      ff.fp[P_MU], ff.fp[P_E_T], tol, max_it, stats, info)
    return status, dd, cw, u1, w1, stats


def contact_residuals(ff, cw, u0, w0, u1, w1):
    """Per contact: ``P_N``, ``ξ_N``, ``|P_T|``, ``ξ_T`` (3-vector) of the result."""
    idx, geo, P, gam, count, _ = cw
    out = []
    for c in range(count[0]):
        gn1, *gt1 = contact_velocity(c, idx, geo, u1, w1)
        gn0, *gt0 = contact_velocity(c, idx, geo, u0, w0)
        xi_n = gn1 + ff.fp[P_E_N] * gn0
        xi_t = np.array(gt1) + ff.fp[P_E_T] * np.array(gt0)
        out.append((P[c, 0], xi_n, float(np.linalg.norm(P[c, 1:])), xi_t, P[c, 1:].copy()))
    return out


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
@pytest.mark.parametrize("mu", [0.0, 0.4])
def test_solver_result_satisfies_the_contact_law(seed, mu):
    """P_N ≥ 0, ξ_N ≥ 0, P_N ξ_N = 0; |P_T| ≤ μ P_N; sticking contacts have ξ_T = 0 and
    sliding ones P_T = −μ P_N ξ_T/|ξ_T| (Coulomb's law (1) of the paper)."""
    ff, x, u0, w0, u1, w1 = cluster(seed=seed, mu=mu)
    status, dd, cw, uu, ww, stats = solve(ff, x, u0, w0, u1, w1)
    assert status == 0
    res = contact_residuals(ff, cw, u0, w0, uu, ww)
    assert len(res) >= 5 and stats[IS_CONTACTS] == len(res)
    vscale = float(np.abs(u1).max() + np.abs(w1).max())
    pscale = max(max(r[0] for r in res), 1.0)
    assert any(r[0] > 0 for r in res)
    for pn, xi_n, pt, xi_t, ptv in res:
        assert pn >= 0.0
        assert xi_n >= -1e-9 * vscale
        assert abs(pn * xi_n) <= 1e-9 * vscale * pscale
        assert pt <= mu * pn * (1 + 1e-12) + 1e-15
        if pt < mu * pn * (1 - 1e-6):  # sticking
            assert np.linalg.norm(xi_t) <= 1e-8 * vscale
        elif pn > 0 and np.linalg.norm(xi_t) > 1e-8 * vscale:  # sliding
            assert np.allclose(ptv, -mu * pn * xi_t / np.linalg.norm(xi_t),
                               atol=1e-8 * pscale)


def test_single_contact_takes_the_closed_form():
    """One sphere against the wall: ``P_N = max(0, −ξ_N,free/G_N)`` and
    ``P_T = proj_{μP_N}(−ξ_T,free/G_T)``, which the iteration must reproduce."""
    ff, x, u0, w0, u1, w1 = cluster(n=3, mu=0.3, e_n=0.6, e_t=0.1)
    x = np.array([[-0.01, 0.0, 0.0], [5.0, 0.0, 0.0], [10.0, 0.0, 0.0]])
    u0[0] = (-1.0, 0.7, 0.2)
    w0[0] = (0.5, -2.0, 4.0)
    u1[0] = (-0.9, 0.75, 0.1)
    w1[0] = (0.4, -2.1, 4.2)
    status, dd, cw, uu, ww, stats = solve(ff, x, u0, w0, u1, w1)
    assert status == 0 and cw[4][0] == 1
    idx, geo, P = cw[0], cw[1], cw[2]
    gn1, *gt1 = contact_velocity(0, idx, geo, u1, w1)
    gn0, *gt0 = contact_velocity(0, idx, geo, u0, w0)
    pn = max(0.0, -(gn1 + 0.6 * gn0) / geo[0, 6])
    pt = -(np.array(gt1) + 0.1 * np.array(gt0)) / geo[0, 7]
    if np.linalg.norm(pt) > 0.3 * pn:
        pt *= 0.3 * pn / np.linalg.norm(pt)
    assert pn > 0
    assert P[0, 0] == pytest.approx(pn, rel=1e-14)
    np.testing.assert_allclose(P[0, 1:], pt, rtol=1e-13, atol=1e-15)
    assert stats[4] <= 2  # one sweep solves it, the second confirms


def test_percussions_conserve_momentum_of_the_pairs():
    """Without a wall, percussions are internal: Σ m u and Σ (x × m u + J w) unchanged
    (the common contact point makes friction moment-free), whatever μ."""
    ff, x, u0, w0, u1, w1 = cluster(n=14, seed=7, mu=0.8, wall=False)
    status, dd, cw, uu, ww, stats = solve(ff, x, u0, w0, u1, w1)
    assert status == 0 and cw[4][0] >= 3
    m, J = ff.m[:, None], ff.J[:, None]
    np.testing.assert_allclose((m * uu).sum(0), (m * u1).sum(0), atol=1e-13)
    L = lambda u, w: (np.cross(x, m * u) + J * w).sum(0)  # noqa: E731
    np.testing.assert_allclose(L(uu, ww), L(u1, w1), atol=1e-12)
    assert dd >= -1e-12  # e_N < 1 and friction: they dissipate


def test_nonconvergence_is_reported_not_hidden():
    ff, x, u0, w0, u1, w1 = cluster(n=14, seed=7, mu=0.8)
    status, *_ = solve(ff, x, u0, w0, u1, w1, max_it=1)
    assert status != 0


# ------------------------------------------------------------------ the torus
def hard_torus(**kw):
    return load_scenario("torus", {"contact": "hard", **kw}).build_model()


@pytest.fixture(scope="module")
def frictionless_run():
    sim = Simulation(hard_torus(), "moreau-symmetric", 1e-3, record_every=10,
                     record_frames=False)
    rep = sim.run_until(4.0)
    assert rep.ok, rep.failure
    return sim


def test_frictionless_impact_conserves_what_the_wall_allows(frictionless_run):
    """μ = 0, e_N = 1: the ring hits the wall and rebounds; P_y, P_z, L_x at round-off,
    D = 0 to the solver tolerance, energy bounded like the smooth scheme."""
    sim = frictionless_run
    a = sim.series.arrays()
    assert a["P"][-1, 0] > 5.0  # rebounded (P_x was −80)
    assert np.abs(a["P"][:, 1:] - a["P"][0, 1:]).max() < 1e-12 * sim.p_scale
    assert np.abs(a["L"][:, 0] - a["L"][0, 0]).max() < 1e-12 * sim.l_scale
    D = a["energy"][:, E_DISSIPATED]
    assert np.abs(D).max() < 1e-8 * sim.e_scale
    rel = (a["energy"].sum(1) - sim.e_ref) / sim.e_scale
    assert np.abs(rel).max() < 2e-3
    cs = sim.contact_stats
    assert cs["impacts"] > 0 and cs["max_iterations"] >= 2
    assert 0 < cs["penetration"] < 0.05 * float(sim.model.bodies.D[0])


def test_friction_spins_the_spheres_and_dissipates():
    sim = Simulation(hard_torus(mu=0.5), "moreau-symmetric", 1e-3,
                     record_every=10)
    rep = sim.run_until(1.0)
    assert rep.ok, rep.failure
    a = sim.series.arrays()
    spin = np.linalg.norm(a["omega"][-1], axis=1)
    assert spin.max() > 1.0  # the wall set them spinning (Ω₀ = 0)
    D = a["energy"][:, E_DISSIPATED]
    assert D[-1] > 1e-3 * sim.e_scale
    assert np.all(np.diff(D) >= -1e-9 * sim.e_scale)
    rel = (a["energy"].sum(1) - sim.e_ref) / sim.e_scale  # E + D against E₀
    assert np.abs(rel).max() < 5e-3


@pytest.mark.parametrize("mu", [0.0, 0.6])
def test_free_cloud_conserves_all_momenta(mu):
    """No wall, colliding spheres (velocity noise), friction on or off: all of P and L
    to round-off."""
    model = load_scenario("torus-free", {"contact": "hard", "mu": mu, "e_n": 0.9}
                          ).build_model()
    sim = Simulation(model, "moreau-symmetric", 1e-3, record_every=50, record_frames=False)
    rep = sim.run_until(1.0)
    assert rep.ok, rep.failure
    assert sim.contact_stats["impacts"] > 0
    a = sim.series.arrays()
    assert np.abs(a["P"] - a["P"][0]).max() < 1e-12 * sim.p_scale
    assert np.abs(a["L"] - a["L"][0]).max() < 1e-12 * sim.l_scale


def test_without_active_contacts_moreau_symmetric_is_rrp_newmark():
    """Shrink the spheres so that none touches: the symmetric scheme is the RRP map."""
    runs = []
    for contact, scheme in (("hard", "moreau-symmetric"), ("penalty", "rrp-newmark")):
        model = load_scenario("torus-free", {"contact": contact, "n_particles": 12}
                              ).build_model()
        model.forcefield.D[:] *= 0.5
        sim = Simulation(model, scheme, 1e-3, record_every=100)
        assert sim.advance(1000).ok
        runs.append(sim.snapshot())
        assert sim.contact_stats["solves"] == 0
    a, b = runs
    np.testing.assert_allclose(a.x, b.x, rtol=0, atol=1e-11)
    np.testing.assert_allclose(a.q, b.q, rtol=0, atol=1e-11)
    np.testing.assert_allclose(a.omega, b.omega, rtol=0, atol=1e-9)


def test_moreau_midpoint_runs_the_impact_and_keeps_symmetries():
    sim = Simulation(hard_torus(), "moreau", 1e-3, record_every=20, record_frames=False)
    rep = sim.run_until(1.0)
    assert rep.ok, rep.failure
    a = sim.series.arrays()
    assert np.abs(a["P"][:, 1:] - a["P"][0, 1:]).max() < 1e-12 * sim.p_scale
    assert sim.contact_stats["impacts"] > 0


def test_solver_failure_ends_the_run_with_the_state_kept():
    sim = Simulation(hard_torus(mu=0.5), "moreau-symmetric", 1e-3, record_every=10)
    sim.contact_max_iterations = 1
    rep = sim.run_until(1.0)
    assert not rep.ok and rep.failure.kind == "no-convergence"
    msg = rep.failure.message
    assert "\n" not in msg and "percussion solver" in msg and "kept" in msg
    assert sim.state.is_finite() and sim.t == pytest.approx(rep.failure.t)
    sim.contact_max_iterations = 5000
    assert sim.advance(50).ok  # goes on from the kept state


def test_stability_limit_is_the_binders_with_hard_contacts():
    """At the impact the penalty model's limit comes from the wall contact; with hard
    contacts it is the binder's (the constraints add no stiffness)."""
    for contact, kind in (("penalty", "wall contact"), ("hard", "axial binder")):
        sim = Simulation(hard_torus(contact=contact), default_integrator(
            hard_torus(contact=contact)), 1e-3, record_every=100)
        assert sim.run_until(0.08).ok
        est = sim.stability()
        assert est.kind == kind, (contact, est)
    assert est.h_stable > 5e-3


def test_schemes_are_refused_where_they_cannot_drive_the_model():
    hard, penalty = hard_torus(), hard_torus(contact="penalty")
    assert set(usable_integrators(hard)) == {"moreau", "moreau-symmetric"}
    assert "moreau" not in usable_integrators(penalty)
    with pytest.raises(SimulationError) as err:
        integrator_for(hard, "rrp-newmark")
    assert "\n" not in str(err.value) and "moreau-symmetric" in str(err.value)
    with pytest.raises(SimulationError, match="penalty contacts"):
        integrator_for(penalty, "moreau")
    with pytest.raises(SimulationError, match="no contacts"):
        integrator_for(MODELS["pendulum"].make({}), "moreau-symmetric")
    with pytest.raises(SimulationError, match="generalized"):
        integrator_for(hard, "moreau-variational")
    assert default_integrator(hard, "rrp-newmark") == "moreau-symmetric"
    assert default_integrator(penalty, "rrp-newmark") == "rrp-newmark"


def test_contact_parameter_is_checked():
    with pytest.raises(ParameterError, match='contact must be one of "penalty", "hard"'):
        MODELS["torus"].make({"contact": "soft"})
    with pytest.raises(ParameterError, match="e_n"):
        MODELS["torus"].make({"e_n": 1.5})


def test_penetration_is_first_order_in_h():
    """An active contact is pushed apart in the step that finds it (ξ_N ≥ 0 with e_N = 1
    makes the normal velocity separating), so the penetration is one step's approach,
    ``−g_N ≲ h max|γ_N|`` (docs/physics.md §3.9): dividing h by 4 divides it by ≈ 4
    (the maximum over the impact depends on where the steps fall: a margin)."""
    pens = []
    for h in (1e-3, 2.5e-4):
        sim = Simulation(hard_torus(), "moreau-symmetric", h, record_every=100,
                         record_frames=False)
        assert sim.run_until(1.0).ok
        pens.append(sim.contact_stats["penetration"])
    assert 2.8 < pens[0] / pens[1] < 5.7, pens
    assert pens[0] < 3.0 * 1e-3 * 1.0  # h · (relative approach speed ≲ 3 v₀)
