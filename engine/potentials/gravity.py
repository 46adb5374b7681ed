"""Uniform gravity: on a body hinged at a fixed pivot (the 3D pendulum, B&G §3), and on
free bodies (a gravity field acting at the centres of mass)."""

from __future__ import annotations

from numba import njit

from ..layout import E_GRAVITY
from ..rotations import quat_rotate_t


@njit(nogil=True, cache=True, _nrt=False, forceinline=True)
def pivot_gravity(q, mg, r0, r1, r2, RM, energy):
    """``U = -m g e₃ · R ρ₀`` and ``RM = m g (R ρ₀) × e₃`` (B&G eqs. (39), (40) as
    corrected in docs/physics.md §8) for every body; no force (the pivot is fixed)."""
    for i in range(q.shape[0]):
        p0, p1, p2 = quat_rotate_t(q[i, 0], q[i, 1], q[i, 2], q[i, 3], r0, r1, r2)
        energy[E_GRAVITY] -= mg * p2
        # (Rρ₀) × e₃ = (p1, -p0, 0)
        RM[i, 0] += mg * p1
        RM[i, 1] -= mg * p0


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def gravity_sum(x, m, g, e0, e1, e2, F):
    """``F_i += m_i g ê`` on every body of the views ``x, m, F`` (all bodies, or a chunk's
    for ``engine.parallel``); returns their ``Σ m_i (ê·x_i)``."""
    e = 0.0
    for i in range(x.shape[0]):
        e += m[i] * (e0 * x[i, 0] + e1 * x[i, 1] + e2 * x[i, 2])
        f = m[i] * g
        F[i, 0] += f * e0
        F[i, 1] += f * e1
        F[i, 2] += f * e2
    return e


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def uniform_gravity(x, m, g, e0, e1, e2, F, energy):
    """``U = -Σ m_i g (ê·x_i)`` (zero on the plane ``ê·x = 0``), ``F_i = m_i g ê``, no
    moment (the field acts at the centres of mass); ``ê`` is the unit direction in which
    gravity pulls (``ê = -e₃``: ``U = Σ m_i g z_i``)."""
    energy[E_GRAVITY] -= g * gravity_sum(x, m, g, e0, e1, e2, F)
