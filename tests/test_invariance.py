"""Symmetries of the torus potentials (docs/physics.md §4.2): invariance under global
rotations and translations (the wall: rotations about its normal, translations along
it), and the balance of forces and moments that makes momentum conservation exact."""

from __future__ import annotations

import numpy as np
import pytest

from engine.forcefield import evaluate
from engine.layout import E_AXIAL, E_BENDING, E_CONTACT, E_SHEAR, E_WALL
from engine.models import MODELS
from engine.rotations import matrix_to_quat, quat_from_rotvec, quat_mul, quat_to_matrix

POTENTIAL = slice(2, None)  # the potential-energy slots of the energy vector
SEEDS = range(4)


def random_rotation(rng, about=None):
    """A random rotation matrix ``G`` and its quaternion (about a given axis if any)."""
    if about is None:
        q = rng.standard_normal(4)
        q /= np.linalg.norm(q)
    else:
        q = quat_from_rotvec(rng.uniform(-np.pi, np.pi) * np.asarray(about, dtype=float))
    return quat_to_matrix(q), q


def deformed_torus(seed, n=None, wall=False):
    """A 12–20-particle torus, positions and attitudes perturbed, radially squeezed so
    neighbours overlap (every term of the model is active)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(12, 21)) if n is None else n
    model = MODELS["torus"].make({"n_particles": n, "wall": wall,
                                  "k_bend": 13.0, "k_axial": 170.0, "k_shear": 240.0})
    s = model.initial_state
    dp = float(model.bodies.D[0])
    c = s.x.mean(axis=0)
    x = c + 0.95 * (s.x - c) + 0.05 * dp * rng.standard_normal(s.x.shape)
    theta = rng.standard_normal((n, 3))
    theta *= rng.uniform(0.0, 0.8, (n, 1)) / np.linalg.norm(theta, axis=1, keepdims=True)
    q_common = rng.standard_normal(4)
    q_common /= np.linalg.norm(q_common)
    q = quat_mul(quat_from_rotvec(theta), np.tile(q_common, (n, 1)))
    return model, x, q, rng


def transformed(g, qg, c, x, q):
    """``x → G x + c``, ``q → q_G ⊗ q``."""
    return x @ g.T + c, quat_mul(np.tile(qg, (len(q), 1)), q)


def assert_covariant(model, x, q, g, qg, c, terms):
    ff1 = model.forcefield.copy()
    ff2 = model.forcefield.copy()
    F1, RM1, e1 = evaluate(ff1, x, q)
    x2, q2 = transformed(g, qg, c, x, q)
    F2, RM2, e2 = evaluate(ff2, x2, q2)
    for t in terms:  # the state exercises every term
        assert e1[t] > 1e-6 * e1[POTENTIAL].sum(), t
    total = e1[POTENTIAL].sum()
    assert abs(e2[POTENTIAL].sum() - total) <= 1e-12 * total
    assert np.allclose(e2, e1, rtol=1e-11, atol=1e-12 * total)
    f_scale = np.abs(F1).max()
    m_scale = np.abs(RM1).max()
    assert np.abs(F2 - F1 @ g.T).max() <= 1e-10 * f_scale
    assert np.abs(RM2 - RM1 @ g.T).max() <= 1e-10 * m_scale


ALL_BUT_WALL = (E_BENDING, E_AXIAL, E_SHEAR, E_CONTACT)


@pytest.mark.parametrize("seed", SEEDS)
def test_torus_invariant_under_rigid_motions(seed):
    model, x, q, rng = deformed_torus(seed)
    g, qg = random_rotation(rng)
    c = 10.0 * rng.standard_normal(3)
    assert_covariant(model, x, q, g, qg, c, ALL_BUT_WALL)


@pytest.mark.parametrize("seed", SEEDS)
def test_torus_invariant_under_rotations_about_its_own_centre(seed):
    """The same with a large rotation about the ring's centre (positions far from 0)."""
    model, x, q, rng = deformed_torus(seed)
    x = x + np.array([50.0, -30.0, 20.0])
    g, qg = random_rotation(rng)
    centre = x.mean(axis=0)
    assert_covariant(model, x, q, g, qg, centre - g @ centre, ALL_BUT_WALL)


def ring_against_the_wall(seed):
    model, x, q, rng = deformed_torus(seed, wall=True)
    dp = float(model.bodies.D[0])
    x[:, 0] -= x[:, 0].min() - 0.2 * dp  # a few spheres overlap the wall x = 0
    assert np.count_nonzero(x[:, 0] < 0.5 * dp) >= 1
    return model, x, q, rng


@pytest.mark.parametrize("seed", SEEDS)
def test_wall_invariant_about_its_normal(seed):
    """Rotations about ``e₁`` and translations along ``y``, ``z``: the wall ``x = 0``
    does not see them."""
    model, x, q, rng = ring_against_the_wall(seed)
    g, qg = random_rotation(rng, about=(1.0, 0.0, 0.0))
    c = np.array([0.0, *(10.0 * rng.standard_normal(2))])
    assert_covariant(model, x, q, g, qg, c, (*ALL_BUT_WALL, E_WALL))


def test_wall_breaks_the_other_symmetries():
    """A control: with the wall in contact, a rotation about ``e₂`` or a shift along
    ``e₁`` changes the energy (so the test above is not vacuous)."""
    model, x, q, rng = ring_against_the_wall(0)
    _, _, e1 = evaluate(model.forcefield.copy(), x, q)
    g, qg = random_rotation(np.random.default_rng(1), about=(0.0, 1.0, 0.0))
    x2, q2 = transformed(g, qg, np.zeros(3), x - x.mean(axis=0), q)
    x2 += x.mean(axis=0)
    _, _, e2 = evaluate(model.forcefield.copy(), x2, q2)
    assert abs(e2[E_WALL] - e1[E_WALL]) > 1e-3 * e1[E_WALL]
    _, _, e3 = evaluate(model.forcefield.copy(), x + [0.01, 0.0, 0.0], q)
    assert abs(e3[E_WALL] - e1[E_WALL]) > 1e-3 * e1[E_WALL]


@pytest.mark.parametrize("seed", SEEDS)
def test_forces_and_moments_balance(seed):
    """``Σ F = 0`` and ``Σ (x × F + RM) = 0`` to round-off (no wall): what makes the
    variational schemes conserve ``P`` and ``L`` exactly."""
    model, x, q, rng = deformed_torus(seed)
    x = x + 5.0 * rng.standard_normal(3)  # away from the origin: x × F is not small
    F, RM, energy = evaluate(model.forcefield.copy(), x, q)
    for t in ALL_BUT_WALL:
        assert energy[t] > 0.0
    f_scale = np.abs(F).sum()
    assert np.abs(F.sum(axis=0)).max() <= 1e-14 * f_scale
    torque = np.cross(x, F) + RM
    t_scale = np.abs(np.cross(x, F)).sum() + np.abs(RM).sum()
    assert np.abs(torque.sum(axis=0)).max() <= 1e-14 * t_scale
    # each term separately (the shear term balances x × F with its moments)
    for k_zero in ({"k_axial": 0.0, "k_shear": 0.0, "k_contact": 0.0},
                   {"k_bend": 0.0, "k_shear": 0.0, "k_contact": 0.0},
                   {"k_bend": 0.0, "k_axial": 0.0, "k_contact": 0.0},
                   {"k_bend": 0.0, "k_axial": 0.0, "k_shear": 0.0}):
        m = MODELS["torus"].make({"n_particles": model.n_bodies, "wall": False, **k_zero})
        F, RM, _ = evaluate(m.forcefield, x, q)
        assert np.abs(F.sum(axis=0)).max() <= 1e-14 * max(np.abs(F).sum(), 1e-300)
        s = np.abs(np.cross(x, F)).sum() + np.abs(RM).sum()
        assert np.abs((np.cross(x, F) + RM).sum(axis=0)).max() <= 1e-14 * s


def test_wall_moment_about_its_normal_vanishes():
    """With the wall: ``Σ F`` along ``y, z`` and ``Σ (x × F + RM)`` along ``x`` stay zero
    (``P_y``, ``P_z`` and ``L_x`` are conserved)."""
    model, x, q, _ = ring_against_the_wall(2)
    F, RM, energy = evaluate(model.forcefield.copy(), x, q)
    assert energy[E_WALL] > 0.0
    f_scale = np.abs(F).sum()
    assert np.abs(F.sum(axis=0)[1:]).max() <= 1e-14 * f_scale
    assert F.sum(axis=0)[0] > 0.1 * f_scale / len(F)  # the wall pushes along +x
    torque = (np.cross(x, F) + RM).sum(axis=0)
    assert abs(torque[0]) <= 1e-14 * (np.abs(np.cross(x, F)).sum() + np.abs(RM).sum())


@pytest.mark.parametrize("seed", SEEDS)
def test_quaternion_sign_is_irrelevant(seed):
    """``q`` and ``-q`` are the same attitude: flipping the sign of some bodies'
    quaternions (so bonded neighbours have ``q_i·q_j < 0``) changes nothing."""
    model, x, q, rng = deformed_torus(seed)
    flip = np.where(rng.random(len(q)) < 0.5, -1.0, 1.0)
    flip[:2] = (1.0, -1.0)  # at least one bond with opposite signs
    F1, RM1, e1 = evaluate(model.forcefield.copy(), x, q)
    F2, RM2, e2 = evaluate(model.forcefield.copy(), x, q * flip[:, None])
    assert np.allclose(e2, e1, rtol=1e-13, atol=0.0)
    assert np.abs(F2 - F1).max() <= 1e-13 * np.abs(F1).max()
    assert np.abs(RM2 - RM1).max() <= 1e-13 * np.abs(RM1).max()


def test_quaternion_and_matrix_forms_of_the_global_rotation_agree():
    """Guard on the test's own transformation: ``q_G`` is the quaternion of ``G``."""
    rng = np.random.default_rng(0)
    g, qg = random_rotation(rng)
    qm = matrix_to_quat(g)
    assert np.abs(np.abs(qm @ qg) - 1.0) <= 1e-14
