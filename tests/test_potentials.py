"""Every potential term against finite differences of its own energy, and against
independent NumPy implementations of docs/physics.md §4.1, §4.2.

Definitions checked (docs/physics.md §1): ``F_i = -∂U/∂x_i``; the spatial moment ``RM_i``
is such that for ``q_i → exp(ε ξ) ⊗ q_i`` (``R_i → exp(ε S(ξ)) R_i``),
``dU/dε = -ξ · RM_i``.  Each term is tested alone (one term active per force field), one
body perturbed at a time, by Richardson-extrapolated central differences.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import fd_loads
from scipy.spatial.transform import Rotation

from engine import layout as L  # (parameter slots and term flags)
from engine.forcefield import ForceField, evaluate
from engine.layout import (
    E_AXIAL,
    E_BENDING,
    E_CONTACT,
    E_GRAVITY,
    E_SHEAR,
    E_WALL,
    N_ENERGY,
    NL_COUNT,
    NL_REBUILDS,
)
from engine.models import MODELS
from engine.rotations import quat_from_rotvec, quat_mul, quat_to_matrix

RTOL_FD = 1e-6
SLOTS = (E_GRAVITY, E_BENDING, E_AXIAL, E_SHEAR, E_CONTACT, E_WALL)
THETA_SWITCH = 2.0 * np.arctan(0.1)  # rotvec_from_quat_t: Taylor series below, atan2 above

# --------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------


def random_rotvecs(rng, n, max_angle):
    """Uniform directions, angles uniform in ``[0, max_angle]``."""
    u = rng.standard_normal((n, 3))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    return u * rng.uniform(0.0, max_angle, (n, 1))


def random_unit_quat(rng):
    q = rng.standard_normal(4)
    return q / np.linalg.norm(q)


def random_attitudes(rng, n, max_angle):
    """``q_i = exp(θ_i) ⊗ q_G``: arbitrary global attitude ``q_G``, relative attitudes of
    at most ``2 max_angle``."""
    qg = np.tile(random_unit_quat(rng), (n, 1))
    return quat_mul(quat_from_rotvec(random_rotvecs(rng, n, max_angle)), qg)


def check_term(ff, x, q, slot, hx, hr, *, force=True, moment=True):
    """Analytic loads of the (only active) term against finite differences."""
    F, RM, energy = evaluate(ff, x, q)
    assert energy[slot] != 0.0, "the state does not exercise the term"
    for s in SLOTS:
        if s != slot:
            assert energy[s] == 0.0
    f_fd, rm_fd = fd_loads(ff, x, q, slot, hx, hr)
    for analytic, fd, active, what in ((F, f_fd, force, "force"), (RM, rm_fd, moment, "moment")):
        if not active:  # U does not depend on that variable at all: both exactly zero
            assert np.array_equal(analytic, np.zeros_like(analytic)), what
            assert np.array_equal(fd, np.zeros_like(fd)), what
            continue
        scale = np.abs(analytic).max()
        assert scale > 0.0, what
        err = np.abs(fd - analytic).max() / scale
        assert err <= RTOL_FD, f"{what}: relative error {err:.3g}"


def torus(n=12, terms=(L.T_BONDS,), **params):
    """A torus model with only ``terms`` active (stiffnesses from ``params``/defaults)."""
    model = MODELS["torus"].make({"n_particles": n, "wall": False, **params})
    ff = model.forcefield
    ff.flags[:] = 0
    for t in terms:
        ff.flags[t] = 1
    return model, ff


def deformed_torus_state(model, rng, pos_noise=0.1, max_angle=0.5, squeeze=1.0):
    """Positions perturbed by ``pos_noise·D_p`` (ring radius scaled by ``squeeze``),
    attitudes ``exp(θ_i) ⊗ q_G``."""
    s = model.initial_state
    dp = float(model.bodies.D[0])
    c = s.x.mean(axis=0)
    x = c + squeeze * (s.x - c) + pos_noise * dp * rng.standard_normal(s.x.shape)
    q = random_attitudes(rng, model.n_bodies, max_angle)
    return x, q


def relative_bond_angles(ff, q):
    r = quat_to_matrix(q)
    i, j = ff.bonds[:, 0], ff.bonds[:, 1]
    rel = Rotation.from_matrix(r[i] @ np.swapaxes(r[j], 1, 2))
    return np.linalg.norm(rel.as_rotvec(), axis=1)


def sphere_forcefield(D, k_contact=0.0, skin=0.25, wall=None):
    """A bare force field of spheres (``m = J = 1``): contacts and/or a wall."""
    n = len(D)
    ff = ForceField(np.ones(n), np.ones(n), np.asarray(D, dtype=float))
    if k_contact:
        ff.flags[L.T_CONTACT] = 1
        ff.fp[L.P_K_CONTACT] = k_contact
        ff.fp[L.P_SKIN] = skin
    if wall is not None:
        normal, x_wall, k_wall = wall
        ff.flags[L.T_WALL] = 1
        ff.set_walls([(normal, x_wall)])
        ff.fp[L.P_K_WALL] = k_wall
    return ff


def contact_reference(x, D, k):
    """All-pairs NumPy implementation of U^pp and its forces (docs/physics.md §4.2)."""
    i, j = np.triu_indices(len(x), 1)
    d = x[i] - x[j]
    r = np.linalg.norm(d, axis=1)
    sigma = 0.5 * (D[i] + D[j])
    delta = np.maximum(1.0 - r / sigma, 0.0)
    energy = 0.4 * k * np.sum(delta**2.5)
    f = ((k / sigma) * delta**1.5 / r)[:, None] * d
    F = np.zeros_like(x)
    np.add.at(F, i, f)
    np.add.at(F, j, -f)
    return energy, F, int(np.count_nonzero(delta > 0.0))


def well_separated_overlaps(x, D, margin=0.02):
    """Every pair is either overlapping by ``≥ margin σ`` or apart by ``≥ margin σ``: the
    finite-difference steps never cross first touch (where U is only C²)."""
    i, j = np.triu_indices(len(x), 1)
    g = np.linalg.norm(x[i] - x[j], axis=1) / (0.5 * (D[i] + D[j])) - 1.0
    return np.abs(g).min() >= margin


# --------------------------------------------------------------------------------------
# pendulum gravity (§4.1)
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(4))
def test_pendulum_gravity_fd(seed):
    rng = np.random.default_rng(seed)
    model = MODELS["pendulum"].make({"mass": 1.7, "g": 9.81})
    x = np.zeros((1, 3))
    q = random_unit_quat(rng)[None]
    check_term(model.forcefield, x, q, E_GRAVITY, 1e-3, 1e-3, force=False)


def test_pendulum_gravity_reference():
    """``U = -m g e₃·Rρ₀``, ``RM = m g (Rρ₀) × e₃`` (docs/physics.md §4.1)."""
    rng = np.random.default_rng(11)
    m, g = 1.7, 9.81
    model = MODELS["pendulum"].make({"mass": m, "g": g})
    e3 = np.array([0.0, 0.0, 1.0])
    for _ in range(10):
        q = random_unit_quat(rng)
        r = Rotation.from_quat(np.roll(q, -1)).as_matrix()  # SciPy: scalar last
        F, RM, energy = evaluate(model.forcefield, np.zeros((1, 3)), q[None])
        assert energy[E_GRAVITY] == pytest.approx(-m * g * (r @ e3)[2], rel=1e-13, abs=1e-13)
        assert np.allclose(RM[0], m * g * np.cross(r @ e3, e3), rtol=0, atol=1e-13)
        assert np.array_equal(F, np.zeros((1, 3)))


# --------------------------------------------------------------------------------------
# binder: bending, axial, shear (§4.2)
# --------------------------------------------------------------------------------------

BINDER_TERMS = {
    "bending": (E_BENDING, {"k_axial": 0.0, "k_shear": 0.0}, False, True),
    "axial": (E_AXIAL, {"k_bend": 0.0, "k_shear": 0.0}, True, False),
    "shear": (E_SHEAR, {"k_bend": 0.0, "k_axial": 0.0}, True, True),
}


@pytest.mark.parametrize("max_angle", [0.04, 0.8], ids=["small-rotations", "large-rotations"])
@pytest.mark.parametrize("term", list(BINDER_TERMS))
def test_binder_term_fd(term, max_angle):
    slot, params, force, moment = BINDER_TERMS[term]
    model, ff = torus(12, (L.T_BONDS,), **params)
    rng = np.random.default_rng(100 + len(term))
    x, q = deformed_torus_state(model, rng, pos_noise=0.1, max_angle=max_angle)
    ang = relative_bond_angles(ff, q)
    if max_angle < 0.1:  # the Taylor branch of the logarithm
        assert ang.max() < THETA_SWITCH
    else:  # mostly the atan2 branch
        assert np.mean(ang > THETA_SWITCH) > 0.5 and ang.max() < 2.0
    dp = float(model.bodies.D[0])
    check_term(ff, x, q, slot, 1e-3 * dp, 1e-3, force=force, moment=moment)


def test_binder_matches_reference():
    """Energies and loads of the three binder terms against a NumPy transcription of
    docs/physics.md §4.2 (rotation vectors from SciPy, not from the engine)."""
    kb, ka, ks = 7.0, 150.0, 230.0
    model, ff = torus(15, (L.T_BONDS,), k_bend=kb, k_axial=ka, k_shear=ks)
    rng = np.random.default_rng(5)
    x, q = deformed_torus_state(model, rng, pos_noise=0.15, max_angle=0.7)
    F, RM, energy = evaluate(ff, x, q)

    r = Rotation.from_quat(np.roll(q, -1, axis=1)).as_matrix()
    i, j = ff.bonds[:, 0], ff.bonds[:, 1]
    x0 = model.initial_state.x
    d0 = x0[i] - x0[j]
    r0 = np.linalg.norm(d0, axis=1)
    d0hat = d0 / r0[:, None]
    theta = Rotation.from_matrix(r[i] @ np.swapaxes(r[j], 1, 2)).as_rotvec()
    d = x[i] - x[j]
    rr = np.linalg.norm(d, axis=1)
    dhat = d / rr[:, None]
    ai = np.einsum("nab,nb->na", r[i], d0hat)
    aj = np.einsum("nab,nb->na", r[j], d0hat)
    ci = np.einsum("na,na->n", ai, dhat)
    cj = np.einsum("na,na->n", aj, dhat)
    proj = np.eye(3) - dhat[:, :, None] * dhat[:, None, :]

    e_bend = 0.5 * kb * np.sum(theta**2)
    e_axial = 0.5 * ka * np.sum((rr / r0 - 1.0) ** 2)
    e_shear = 0.25 * ks * np.sum((1 - ci) ** 2 + (1 - cj) ** 2)
    f_axial = -(ka / r0 * (rr / r0 - 1.0))[:, None] * dhat
    f_shear = 0.5 * ks * (np.einsum("nab,nb->na", proj, (1 - ci)[:, None] * ai)
                          + np.einsum("nab,nb->na", proj, (1 - cj)[:, None] * aj)) / rr[:, None]
    f_ref = np.zeros_like(x)
    np.add.at(f_ref, i, f_axial + f_shear)
    np.add.at(f_ref, j, -(f_axial + f_shear))
    rm_ref = np.zeros_like(x)
    np.add.at(rm_ref, i, -kb * theta + 0.5 * ks * (1 - ci)[:, None] * np.cross(ai, dhat))
    np.add.at(rm_ref, j, kb * theta + 0.5 * ks * (1 - cj)[:, None] * np.cross(aj, dhat))

    assert energy[E_BENDING] == pytest.approx(e_bend, rel=1e-12)
    assert energy[E_AXIAL] == pytest.approx(e_axial, rel=1e-12)
    assert energy[E_SHEAR] == pytest.approx(e_shear, rel=1e-12)
    assert np.abs(F - f_ref).max() <= 1e-12 * np.abs(f_ref).max()
    assert np.abs(RM - rm_ref).max() <= 1e-12 * np.abs(rm_ref).max()


def test_binder_at_rest_in_the_reference_state():
    """Undeformed ring, any common attitude: no binder energy, forces or moments."""
    model, ff = torus(10, (L.T_BONDS,))
    rng = np.random.default_rng(2)
    s = model.initial_state
    # a common attitude is *not* a zero-energy state for the shear term (a_i = R d̂₀ turns
    # away from d̂), so only the identity attitude is checked here
    F, RM, energy = evaluate(ff, s.x, s.q)
    assert np.abs(energy[[E_BENDING, E_AXIAL, E_SHEAR]]).max() <= 1e-28
    assert np.abs(F).max() <= 1e-12 and np.abs(RM).max() <= 1e-12
    # bending alone vanishes for any common attitude
    q = np.tile(random_unit_quat(rng), (model.n_bodies, 1))
    assert evaluate(ff, s.x, q)[2][E_BENDING] <= 1e-28


# --------------------------------------------------------------------------------------
# particle contacts (§4.2)
# --------------------------------------------------------------------------------------


def overlapping_cloud(rng, n, box, d_range, margin=0.02, min_contacts=3):
    for _ in range(10_000):
        D = rng.uniform(*d_range, n)
        x = rng.uniform(0.0, 1.0, (n, 3)) * box
        if not well_separated_overlaps(x, D, margin):
            continue
        if contact_reference(x, D, 1.0)[2] >= min_contacts:
            return x, D
    raise AssertionError("no suitable cloud found")


@pytest.mark.parametrize("seed", range(3))
def test_particle_contact_fd_random_spheres(seed):
    rng = np.random.default_rng(seed)
    n = 3 + seed  # 3, 4, 5 spheres
    x, D = overlapping_cloud(rng, n, np.array([1.4, 1.2, 1.0]), (0.8, 1.3),
                             min_contacts=min(3, n))
    ff = sphere_forcefield(D, k_contact=2100.0)
    q = random_attitudes(rng, n, np.pi)
    check_term(ff, x, q, E_CONTACT, 1e-4, 1e-3, moment=False)


def test_particle_contact_fd_compressed_torus():
    model, ff = torus(12, (L.T_CONTACT,))
    rng = np.random.default_rng(21)
    for _ in range(1000):
        x, q = deformed_torus_state(model, rng, pos_noise=0.02, squeeze=0.93)
        if well_separated_overlaps(x, model.bodies.D):
            break
    assert contact_reference(x, model.bodies.D, 1.0)[2] >= 10
    check_term(ff, x, q, E_CONTACT, 1e-4 * model.bodies.D[0], 1e-3, moment=False)


def flattened_torus(n, seed):
    """A torus flattened to an ellipse (axes 1 and 0.2 ring diameters), so that bonded
    neighbours and spheres across the ring overlap, each pair well inside or outside
    contact; attitudes random."""
    model, ff = torus(n, (L.T_BONDS, L.T_CONTACT))
    rng = np.random.default_rng(seed)
    dp = float(model.bodies.D[0])
    phi = 2.0 * np.pi * np.arange(n) / n
    ring = np.stack([0.5 * np.cos(phi), 0.1 * np.sin(phi), np.zeros(n)], axis=1)
    for _ in range(1000):
        x = ring + 0.02 * dp * rng.standard_normal((n, 3))
        if well_separated_overlaps(x, model.bodies.D):
            break
    return model, ff, x, random_attitudes(rng, n, 0.3)


def test_bonded_spheres_touch_through_the_binder_not_the_list():
    """With bonds and contacts, the list leaves the bonded pairs out and the binder adds
    their Hertz contact: the loads and every energy are those of the binder alone plus
    the all-pairs contacts (bonded pairs included), to round-off."""
    model, ff, x, q = flattened_torus(16, 31)
    D = model.bodies.D
    e_ref, f_ref, n_contacts = contact_reference(x, D, ff.fp[L.P_K_CONTACT])
    bonded = {tuple(sorted(b)) for b in ff.bonds.tolist()}
    i, j = ff.bonds[:, 0], ff.bonds[:, 1]
    bonded_touching = np.count_nonzero(
        np.linalg.norm(x[i] - x[j], axis=1) < 0.5 * (D[i] + D[j]))
    assert bonded_touching >= 8 and n_contacts - bonded_touching >= 4
    F, RM, energy = evaluate(ff, x, q)
    listed = {tuple(p) for p in ff.nl_pairs[:ff.nl_state[NL_COUNT]].tolist()}
    assert listed and not listed & bonded
    ff.flags[L.T_CONTACT] = 0  # the binder alone
    ff.invalidate_neighbours()
    F_b, RM_b, energy_b = evaluate(ff, x, q)
    assert energy_b[E_CONTACT] == 0.0
    assert energy[E_CONTACT] == pytest.approx(e_ref, rel=1e-12)
    for slot in (E_BENDING, E_AXIAL, E_SHEAR):
        assert energy[slot] == pytest.approx(energy_b[slot], rel=1e-12)
    assert np.abs(F - (F_b + f_ref)).max() <= 1e-12 * np.abs(f_ref).max()
    assert np.abs(RM - RM_b).max() <= 1e-12 * np.abs(RM_b).max()


def test_bonded_contact_fd():
    """The contact energy, the bonded pairs' share computed by the binder: its forces
    against finite differences (the binder's own stiffnesses set to zero)."""
    model, ff, x, q = flattened_torus(16, 21)
    ff.fp[[L.P_K_BEND, L.P_K_AXIAL, L.P_K_SHEAR]] = 0.0
    check_term(ff, x, q, E_CONTACT, 1e-4 * model.bodies.D[0], 1e-3, moment=False)


def test_a_pair_bonded_twice_is_refused():
    """Its contact would be counted twice: a clear error naming the bodies."""
    ff = ForceField(np.ones(3), np.ones(3), np.ones(3), bonds=np.array([[0, 1], [2, 1], [1, 0]]))
    with pytest.raises(ValueError, match="bodies 0 and 1 are bonded twice"):
        ff.arrays  # noqa: B018
    ff.bonds = np.array([[0, 1], [2, 2]])
    with pytest.raises(ValueError, match="joins body 2 with itself"):
        ff.arrays  # noqa: B018


# --------------------------------------------------------------------------------------
# wall (§4.2)
# --------------------------------------------------------------------------------------


def wall_reference(x, D, normal, x_wall, k):
    g = x @ normal - x_wall
    delta = np.maximum(1.0 - g / (0.5 * D), 0.0)
    return 0.4 * k * np.sum(delta**2.5), ((k / (0.5 * D)) * delta**1.5)[:, None] * normal


def test_wall_fd_torus():
    model, ff = torus(12, (L.T_WALL,), wall=True)  # the wall n = e₁ at x = 0, K^pw = 2100
    rng = np.random.default_rng(8)
    dp = float(model.bodies.D[0])
    for _ in range(1000):
        x, q = deformed_torus_state(model, rng, pos_noise=0.1, max_angle=1.0)
        x[:, 0] -= x[:, 0].min() - 0.1 * dp  # the lowest spheres overlap the wall x = 0
        g = x[:, 0] / (0.5 * dp) - 1.0
        if np.abs(g).min() > 0.02 and np.count_nonzero(g < 0) >= 2:
            break
    check_term(ff, x, q, E_WALL, 1e-4 * dp, 1e-3, moment=False)


@pytest.mark.parametrize("seed", range(3))
def test_wall_fd_any_normal(seed):
    rng = np.random.default_rng(40 + seed)
    normal = rng.standard_normal(3)
    normal /= np.linalg.norm(normal)
    x_wall = rng.uniform(-1.0, 1.0)
    n = 6
    D = rng.uniform(0.5, 1.5, n)
    # gaps g_i/(D_i/2) in [0.3, 0.98] (in contact) or [1.02, 1.5] (free)
    ratio = np.concatenate([rng.uniform(0.3, 0.98, 4), rng.uniform(1.02, 1.5, 2)])
    tangential = rng.standard_normal((n, 3))
    tangential -= (tangential @ normal)[:, None] * normal
    x = (x_wall + ratio * 0.5 * D)[:, None] * normal + 3.0 * tangential
    ff = sphere_forcefield(D, wall=(normal, x_wall, 1500.0))
    q = random_attitudes(rng, n, np.pi)
    check_term(ff, x, q, E_WALL, 1e-4, 1e-3, moment=False)
    F, RM, energy = evaluate(ff, x, q)
    e_ref, f_ref = wall_reference(x, D, normal, x_wall, 1500.0)
    assert energy[E_WALL] == pytest.approx(e_ref, rel=1e-13)
    assert np.abs(F - f_ref).max() <= 1e-13 * np.abs(f_ref).max()
    assert np.array_equal(F[4:], np.zeros((2, 3)))  # the free spheres feel nothing


# --------------------------------------------------------------------------------------
# contacts against an all-pairs brute force (the neighbour list finds every pair)
# --------------------------------------------------------------------------------------

CLOUDS = {
    # name: (box, diameter range)
    "compact": ((4.0, 4.0, 4.0), (0.5, 1.5)),
    "polydisperse": ((5.0, 5.0, 5.0), (0.1, 3.0)),
    "rod": ((30.0, 1.0, 1.0), (0.6, 1.4)),
    "sheet": ((8.0, 8.0, 0.0), (0.6, 1.4)),  # all z equal: a flat cell grid
    "dense": ((0.6, 0.6, 0.6), (0.8, 1.2)),  # every pair overlaps: the list must grow
}


def assert_matches_brute_force(ff, x, q, k):
    F, RM, energy = evaluate(ff, x, q)
    e_ref, f_ref, n_contacts = contact_reference(x, ff.D, k)
    assert n_contacts > 0
    assert energy[E_CONTACT] == pytest.approx(e_ref, rel=1e-12)
    assert np.abs(F - f_ref).max() <= 1e-12 * np.abs(f_ref).max()
    assert np.array_equal(RM, np.zeros_like(RM))
    assert np.count_nonzero(energy) == 1
    return n_contacts


@pytest.mark.parametrize("cloud", list(CLOUDS))
def test_contacts_match_brute_force(cloud):
    box, d_range = CLOUDS[cloud]
    rng = np.random.default_rng(sum(map(ord, cloud)))
    n, k, skin = 50, 2100.0, 0.25
    x = rng.uniform(0.0, 1.0, (n, 3)) * np.array(box)
    D = rng.uniform(*d_range, n)
    q = random_attitudes(rng, n, np.pi)
    ff = sphere_forcefield(D, k_contact=k, skin=skin)
    n_contacts = assert_matches_brute_force(ff, x, q, k)
    if cloud == "dense":
        assert n_contacts == n * (n - 1) // 2
        assert ff.nl_pairs.shape[0] >= n_contacts
    rebuilds = ff.nl_state[NL_REBUILDS]
    # jumps larger than the skin: the list must be rebuilt each time
    flat = np.array([1.0, 1.0, 1.0 if box[2] > 0 else 0.0])  # the sheet stays flat
    for _ in range(5):
        step = random_rotvecs(rng, n, 1.0) * flat
        x = x + 1.5 * skin * step / np.linalg.norm(step, axis=1, keepdims=True)
        assert_matches_brute_force(ff, x, q, k)
    assert ff.nl_state[NL_REBUILDS] > rebuilds
    # a random walk of small steps (≤ 0.3 skin each): the list is kept for a while and
    # rebuilt when some body has moved more than skin/2 since the last build
    rebuilds = ff.nl_state[NL_REBUILDS]
    for _ in range(40):
        x = x + 0.3 * skin * random_rotvecs(rng, n, 1.0) * flat
        assert_matches_brute_force(ff, x, q, k)
    assert rebuilds < ff.nl_state[NL_REBUILDS] < rebuilds + 40


def test_contact_after_a_jump_into_overlap():
    """Two spheres far apart (empty list), then moved into overlap in one jump."""
    D = np.array([1.0, 1.2])
    ff = sphere_forcefield(D, k_contact=1000.0, skin=0.1)
    q = np.tile([1.0, 0.0, 0.0, 0.0], (2, 1))
    x = np.array([[0.0, 0.0, 0.0], [3.0, 0.0, 0.0]])
    F, _, energy = evaluate(ff, x, q)
    assert energy[E_CONTACT] == 0.0 and ff.nl_state[NL_COUNT] == 0
    x = np.array([[0.2, 0.0, 0.0], [1.1, 0.0, 0.0]])  # r = 0.9 < σ = 1.1
    F, _, energy = evaluate(ff, x, q)
    e_ref, f_ref, _ = contact_reference(x, D, 1000.0)
    assert energy[E_CONTACT] == pytest.approx(e_ref, rel=1e-14) and e_ref > 0.0
    assert np.allclose(F, f_ref, rtol=1e-14, atol=0.0)
    assert F[0, 0] < 0.0 < F[1, 0]  # repulsive


def test_energy_vector_layout():
    """``evaluate`` fills only the potential slots (kinetic slots stay zero)."""
    model = MODELS["torus"].make({"n_particles": 12})
    s = model.initial_state
    _, _, energy = evaluate(model.forcefield, s.x, s.q)
    assert energy.shape == (N_ENERGY,)
    assert energy[0] == 0.0 and energy[1] == 0.0
