"""The rest of the metamaterial's step, made cheaper without changing its bits (issue #44
item 9, "rest"): a damped family whose spheres have no viscous damping (every ``γ = 0``,
the metamaterial's first stage) leaves that flow out and only keeps the velocities a
failed step puts back (``engine.potentials.damping.any_viscous``, ``save_velocities``);
the velocity-Verlet attitude update renormalises ``q₁`` in its own loop
(``engine.integrators.verlet.renormalised_t``), to the bits of the pass after it."""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_bond_damping import DAMPED
from test_bond_laws import _chain

from engine.drivers import simulation_for
from engine.integrators.verlet import (
    ROT_EXPONENTIAL,
    ROT_RRP_NEWMARK,
    _before_forces,
    renormalised_t,
)
from engine.potentials.damping import any_viscous, save_velocities, undo_damping
from engine.potentials.fields import FI_GAMMA, FI_GAMMA_ROT, new_fields


def test_any_viscous_says_whether_some_sphere_is_damped():
    f = list(new_fields(5))
    assert not any_viscous(tuple(f))
    f[FI_GAMMA_ROT] = np.array([0.0, 0.0, 0.0, 1e-3, 0.0])
    assert any_viscous(tuple(f))
    f[FI_GAMMA_ROT] = np.zeros(5)
    f[FI_GAMMA] = np.array([0.0, 2.0, 0.0, 0.0, 0.0])
    assert any_viscous(tuple(f))


def test_the_kept_velocities_are_put_back():
    rng = np.random.default_rng(4)
    v, o, pi = (rng.normal(size=(5, 3)) for _ in range(3))
    f = new_fields(5)
    v0, o0, pi0 = v.copy(), o.copy(), pi.copy()
    for with_pi in (False, True):
        save_velocities(v, o, pi, f, with_pi)
        v[:] = o[:] = 7.0
        pi[:] = 7.0 if with_pi else pi0
        undo_damping(v, o, pi, f, with_pi)
        assert np.array_equal(v, v0) and np.array_equal(o, o0)
        assert np.array_equal(pi, pi0)


@pytest.mark.parametrize("scheme", ["rrp-newmark", "lgvi"])
def test_a_failed_step_without_viscous_damping_leaves_the_bond_damped_state(scheme):
    """The bonds damped, the spheres not (``γ = 0``): a step refused by the energy check
    leaves ``v``, ``Ω`` (and ``Π`` of a scheme that keeps it) as they were (the bonds'
    flow had changed them first)."""
    sim = simulation_for(_chain(DAMPED), scheme, 2e-3, record_frames=False,
                         energy_tolerance=None)
    assert not any_viscous(sim.ff.fields) and sim.ff.bond_damped
    assert sim.advance(20).ok
    v0, o0, x0 = sim.state.v.copy(), sim.state.omega.copy(), sim.state.x.copy()
    pi0 = sim._s0[7].copy()
    sim.energy_tolerance = 1e-300
    rep = sim.advance(5)
    assert not rep.ok and rep.steps == 0
    assert np.array_equal(sim.state.v, v0) and np.array_equal(sim.state.omega, o0)
    assert np.array_equal(sim.state.x, x0) and np.array_equal(sim._s0[7], pi0)


def _reference_attitude(h, rot_map, w, q0):
    """``q(Δ(w)) ⊗ q₀`` then a pass of ``renormalise_quats`` (the operations before the
    renormalisation moved into the attitude's loop), one body at a time."""
    out = np.empty_like(q0)
    for i in range(q0.shape[0]):
        a0, a1, a2 = h * w[i, 0], h * w[i, 1], h * w[i, 2]
        if rot_map == ROT_EXPONENTIAL:
            ang = math.sqrt(a0 * a0 + a1 * a1 + a2 * a2)
            s = math.sin(0.5 * ang) / ang
            d = (math.cos(0.5 * ang), s * a0, s * a1, s * a2)
        else:
            s = 1.0 / math.sqrt(4.0 + a0 * a0 + a1 * a1 + a2 * a2)
            d = (2.0 * s, a0 * s, a1 * s, a2 * s)
        p = q0[i]
        r = (d[0] * p[0] - d[1] * p[1] - d[2] * p[2] - d[3] * p[3],
             d[0] * p[1] + d[1] * p[0] + d[2] * p[3] - d[3] * p[2],
             d[0] * p[2] - d[1] * p[3] + d[2] * p[0] + d[3] * p[1],
             d[0] * p[3] + d[1] * p[2] - d[2] * p[1] + d[3] * p[0])
        n2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + r[3] * r[3]
        c = 1.5 - 0.5 * n2
        out[i] = [r[0] * c, r[1] * c, r[2] * c, r[3] * c]
    return out


def test_the_attitude_renormalised_in_its_loop_has_the_bits_of_the_pass_after_it():
    rng = np.random.default_rng(9)
    n, h = 37, 3e-3
    q = rng.normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1)[:, None]
    assert np.array_equal(np.array(renormalised_t(*q[0])), _reference_attitude(
        0.0, ROT_RRP_NEWMARK, np.zeros((1, 3)), q[:1])[0])
    for rot_map in (ROT_RRP_NEWMARK, ROT_EXPONENTIAL):
        s0 = (rng.normal(size=(n, 3)), rng.normal(size=(n, 3)), q.copy(),
              rng.normal(size=(n, 3)) * 50, rng.normal(size=(n, 3)),
              rng.normal(size=(n, 3)), np.zeros(20), np.zeros((n, 3)))
        s1 = tuple(a.copy() for a in s0)
        m, J = rng.uniform(1, 2, n), rng.uniform(0.1, 0.2, n)
        _before_forces(h, rot_map, m, J, s0, s1, 0, n)
        assert np.array_equal(s1[2], _reference_attitude(h, rot_map, s1[3], q))
