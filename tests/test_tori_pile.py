"""The `tori-pile` model (issue #9, first increment): several planar walls, uniform
gravity on spheres, the placement of the rings, and the conservation properties of the
frictionless pile and of a colliding cloud of tori."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial import cKDTree

from engine.forcefield import ForceField, evaluate
from engine.layout import (
    E_GRAVITY,
    E_WALL,
    P_K_WALL,
    T_HARD_WALL,
    T_WALL,
)
from engine.models import MODELS
from engine.models.tori_pile import box_walls
from engine.simulation import Simulation

PILE = MODELS["tori-pile"]


def momentum_drift(sim):
    a = sim.series.arrays()
    dP = np.abs(a["P"] - a["P"][0]).max() / sim.p_scale
    dL = np.abs(a["L"] - a["L"][0]).max() / sim.l_scale
    return dP, dL, a


# ------------------------------------------------------------------ forces


def gravity_walls_field(rng, n=9, k=4):
    D = rng.uniform(0.5, 1.5, n)
    ff = ForceField(rng.uniform(0.5, 2.0, n), np.ones(n), D)
    normals = rng.standard_normal((k, 3))
    walls = [(normals[w], rng.uniform(-0.5, 0.5)) for w in range(k)]
    ff.set_walls(walls)
    ff.flags[T_WALL] = 1
    ff.fp[P_K_WALL] = 1500.0
    ff.set_gravity(2.5, rng.standard_normal(3))
    # spheres near the walls: some in contact with one or two of them
    x = rng.uniform(-1.0, 1.0, (n, 3))
    for i in range(n):
        w = ff.walls[i % k]
        gap = w[:3] @ x[i] - w[3]
        x[i] += (rng.uniform(0.2, 0.45) * D[i] - gap) * w[:3]
    return ff, x


def reference_energy(ff, x):
    """NumPy ``U_gravity``, ``U_wall`` (docs/physics.md §4.2 and the model docstring)."""
    g, e = ff.fp[24], ff.fp[25:28]
    u_g = -g * float(ff.m @ (x @ e))
    u_w = 0.0
    rad = 0.5 * ff.D
    for n0, n1, n2, c in ff.walls:
        gap = x @ np.array([n0, n1, n2]) - c
        d = np.clip(1.0 - gap / rad, 0.0, None)
        u_w += float((0.4 * ff.fp[P_K_WALL] * d ** 2.5).sum())
    return u_g, u_w


@pytest.mark.parametrize("seed", range(3))
def test_gravity_and_multi_wall_forces_are_minus_the_gradient(seed):
    rng = np.random.default_rng(seed)
    ff, x = gravity_walls_field(rng)
    q = np.tile([1.0, 0.0, 0.0, 0.0], (x.shape[0], 1))
    F, RM, energy = evaluate(ff, x, q)
    u_g, u_w = reference_energy(ff, x)
    assert energy[E_GRAVITY] == pytest.approx(u_g, rel=1e-13, abs=1e-13)
    assert energy[E_WALL] == pytest.approx(u_w, rel=1e-13)
    assert energy[E_WALL] > 0.0
    np.testing.assert_array_equal(RM, 0.0)
    eps = 1e-6
    fd = np.zeros_like(x)
    for i in range(x.shape[0]):
        for k in range(3):
            xp, xm = x.copy(), x.copy()
            xp[i, k] += eps
            xm[i, k] -= eps
            fd[i, k] = -(sum(reference_energy(ff, xp)) - sum(reference_energy(ff, xm))) / (2 * eps)
    np.testing.assert_allclose(F, fd, rtol=1e-6, atol=1e-6 * np.abs(F).max())


def test_walls_that_touch_nothing_change_no_bit():
    """The torus with its one wall, and with four more walls far away: the same bits
    (penalty and hard contacts), so k walls generalise the single wall exactly."""
    params = {"velocity_noise": 0.2, "spin_noise": 1.0, "seed": 3, "tilt": 20.0}
    for contact, integrator in (("penalty", "rrp-newmark"), ("hard", "moreau-symmetric")):
        p = {**params, "contact": contact, "mu": 0.5 if contact == "hard" else 0.0}
        runs = []
        for extra in (False, True):
            model = MODELS["torus"].make(p)
            ff = model.forcefield
            assert ff.n_walls == 1
            if extra:
                far = [(np.array([0.0, 0.0, 1.0]), -50.0), (np.array([0.0, -1.0, 0.0]), -50.0),
                       (np.array([-1.0, 0.0, 0.0]), -50.0), (np.array([0.0, 1.0, 0.0]), -50.0)]
                ff.set_walls([model.walls[0], *far])
            sim = Simulation(model, integrator, 2e-3, record_every=100)
            rep = sim.advance(1500)
            assert rep.ok, rep.failure
            runs.append(sim.state)
        for k in ("x", "v", "q", "omega"):
            np.testing.assert_array_equal(getattr(runs[0], k), getattr(runs[1], k))


# ------------------------------------------------------------------ placement


@pytest.mark.parametrize("params", [
    {"n_tori": 1}, {"n_tori": 7, "n_particles": 3, "seed": 1},
    {"n_tori": 50, "seed": 2}, {"n_tori": 120, "n_particles": 12, "box": 4.0, "seed": 3},
    {"n_tori": 60, "n_particles": 40, "ring_diameter": 2.0, "box": 5.0, "seed": 4},
    {"n_tori": 200, "seed": 5, "walls": False},
])
def test_the_rings_start_without_overlap(params):
    model = PILE.make(params)
    p = model.params
    x, D = model.initial_state.x, model.bodies.D
    n_p = p["n_particles"]
    assert x.shape == (p["n_tori"] * n_p, 3)
    np.testing.assert_allclose(D, p["ring_diameter"] * np.sin(np.pi / n_p))
    pairs = np.array(sorted(cKDTree(x).query_pairs(D[0] * (1 + 1e-12))), dtype=int)
    pairs = pairs.reshape(-1, 2)
    assert not np.any(pairs[:, 0] // n_p != pairs[:, 1] // n_p)
    # within a ring only the bonded neighbours touch
    d = pairs[:, 1] - pairs[:, 0]
    assert np.all((d == 1) | (d == n_p - 1))
    for normal, c in box_walls(p["box"]):
        assert (x @ normal - c - 0.5 * D).min() > 0.2 * D[0]
    # the rings are spread over orientations (uniform on SO(3)): their normals
    ring = x.reshape(p["n_tori"], n_p, 3)
    if p["n_tori"] >= 50:
        c = ring.mean(axis=1)
        normal = np.cross(ring[:, 0] - c, ring[:, n_p // 4] - c)
        normal /= np.linalg.norm(normal, axis=1)[:, None]
        assert np.abs(normal[:, 2]).mean() == pytest.approx(0.5, abs=0.12)
    assert model.forcefield.bonds.shape == (p["n_tori"] * n_p, 2)
    assert model.forcefield.n_walls == (5 if p["walls"] else 0)


def test_a_large_pile_builds():
    """10⁵ spheres build (how fast: benchmarks/bench_pile_build.py)."""
    model = PILE.make({"n_tori": 5000})
    assert model.n_bodies == 100_000
    assert np.isfinite(model.initial_state.x).all()


# ------------------------------------------------------------------ dynamics


def test_the_pile_falls_and_settles_on_the_floor():
    model = PILE.make({})
    assert model.n_bodies == 1000
    assert model.conserved == ()
    sim = Simulation(model, "rrp-newmark", 2e-3, record_every=25, record_frames=False)
    z0 = model.initial_state.x[:, 2].mean()
    rep = sim.advance(2500)  # t = 5
    assert rep.ok, rep.failure
    x, D = sim.state.x, model.bodies.D
    bottom = x[:, 2] - 0.5 * D
    assert bottom.min() > -0.1 * D[0]  # a small penetration of the floor at most
    assert x[:, 2].mean() < z0 - 0.2
    assert (bottom < 0.05 * D[0]).sum() > 20  # many spheres rest on the floor
    for normal, c in model.walls:
        assert (x @ normal - c - 0.5 * D).min() > -0.1 * D[0]
    e = sim.series.arrays()["energy"]
    total = e.sum(axis=1)
    # energy bounded: frictionless and undamped, the pile keeps E (rrp-newmark)
    assert np.abs(total - total[0]).max() / abs(total[0]) < 5e-3
    names = model.energy_components
    from engine.layout import ENERGY_NAMES
    for name in ("contact", "wall", "axial"):
        assert name in names
        assert e[:, ENERGY_NAMES.index(name)].max() > 0.0, name


@pytest.mark.parametrize("contact,integrator,mu,damping", [
    ("penalty", "rrp-newmark", 0.0, 0.0),
    ("penalty", "rrp-newmark", 0.5, 0.0),  # friction springs: moments r × f_T
    ("penalty", "rrp-newmark", 0.5, 0.3),  # ... and normal damping
    ("penalty", "pfc-verlet", 0.5, 0.3),
    ("hard", "moreau-symmetric", 0.0, 0.0),
    ("hard", "moreau-symmetric", 0.5, 0.0),
])
def test_a_colliding_cloud_of_tori_conserves_p_and_l(contact, integrator, mu, damping):
    model = PILE.make({"n_tori": 8, "walls": False, "g": 0.0, "box": 2.7,
                       "velocity_noise": 1.0, "spin_noise": 1.0, "seed": 2,
                       "contact": contact, "mu": mu, "damping": damping})
    assert model.conserved == ("P_x", "P_y", "P_z", "L_x", "L_y", "L_z")
    sim = Simulation(model, integrator, 1e-3, record_every=20, record_frames=False)
    rep = sim.advance(2000)
    assert rep.ok, rep.failure
    dP, dL, a = momentum_drift(sim)
    assert dP <= 1e-12 and dL <= 1e-12, (dP, dL)
    from engine.layout import ENERGY_NAMES
    if contact == "penalty":
        assert a["energy"][:, ENERGY_NAMES.index("contact")].max() > 1e-3  # they collide
        D = a["energy"][:, ENERGY_NAMES.index("dissipated")]
        if mu > 0.0 or damping > 0.0:  # friction and damping did work
            assert D[-1] > 1e-3 * abs(a["energy"][0].sum()) and (np.diff(D) >= 0.0).all()
        else:
            assert not D.any()
    else:
        assert sim.contact_stats["impacts"] > 0


def test_the_hard_pile_falls_onto_the_floor():
    model = PILE.make({"n_tori": 9, "contact": "hard", "mu": 0.3, "e_n": 0.5, "box": 4.0})
    assert model.forcefield.flags[T_HARD_WALL] == 1
    assert model.forcefield.flags[T_WALL] == 0
    sim = Simulation(model, "moreau-symmetric", 2e-3, record_every=50, record_frames=False)
    rep = sim.advance(1500)
    assert rep.ok, rep.failure
    x, D = sim.state.x, model.bodies.D
    assert (x[:, 2] - 0.5 * D).min() > -0.05 * D[0]
    assert sim.contact_stats["impacts"] > 0
    e = sim.series.arrays()["energy"]
    total = e.sum(axis=1)  # E + D (dissipated is a component)
    assert np.abs(total - total[0]).max() / abs(total[0]) < 2e-2
