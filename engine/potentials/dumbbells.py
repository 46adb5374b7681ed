"""Mutual gravity of two dumbbells (Lee, Leok & McClamroch §5, docs/physics.md §4.3).

Dumbbell ``i`` is two point masses ``m_i/2`` at ``x_i ± R_i ρ_i``, ``ρ_i = [l_i/2, 0, 0]``
(body frame).  With ``a_i = R_i ρ_i`` and ``d_pq = x₁ + p a₁ − x₂ − q a₂`` (``p, q = ±1``):

``U = −Σ_pq G (m₁/2)(m₂/2) / |d_pq|``,
``F₁ = −Σ_pq G m₁m₂/4 d_pq/|d_pq|³ = −F₂``,
``RM₁ = Σ_pq (p a₁) × f_pq``, ``RM₂ = −Σ_pq (q a₂) × f_pq`` with ``f_pq`` the force of
the pair on the point of body 1 (moment = lever arm × force, physics.md §1).
"""

from __future__ import annotations

import math

from numba import njit

from ..layout import E_MUTUAL_GRAVITY
from ..rotations import quat_rotate_t


@njit(nogil=True, cache=True, _nrt=False, forceinline=True, error_model="numpy")
def dumbbell_gravity(x, q, G, m1, m2, l1, l2, F, RM, energy):
    """Add the forces, spatial moments and the energy ``U`` of LLM eq. (97) (bodies 0, 1)."""
    a10, a11, a12 = quat_rotate_t(q[0, 0], q[0, 1], q[0, 2], q[0, 3], 0.5 * l1, 0.0, 0.0)
    a20, a21, a22 = quat_rotate_t(q[1, 0], q[1, 1], q[1, 2], q[1, 3], 0.5 * l2, 0.0, 0.0)
    k = 0.25 * G * m1 * m2
    u = 0.0
    for p in (-1.0, 1.0):
        for s in (-1.0, 1.0):
            d0 = x[0, 0] + p * a10 - x[1, 0] - s * a20
            d1 = x[0, 1] + p * a11 - x[1, 1] - s * a21
            d2 = x[0, 2] + p * a12 - x[1, 2] - s * a22
            r = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
            u -= k / r
            c = -k / (r * r * r)
            f0, f1, f2 = c * d0, c * d1, c * d2  # force on the point of body 1
            F[0, 0] += f0
            F[0, 1] += f1
            F[0, 2] += f2
            F[1, 0] -= f0
            F[1, 1] -= f1
            F[1, 2] -= f2
            # (p a₁) × f and −(s a₂) × f
            RM[0, 0] += p * (a11 * f2 - a12 * f1)
            RM[0, 1] += p * (a12 * f0 - a10 * f2)
            RM[0, 2] += p * (a10 * f1 - a11 * f0)
            RM[1, 0] -= s * (a21 * f2 - a22 * f1)
            RM[1, 1] -= s * (a22 * f0 - a20 * f2)
            RM[1, 2] -= s * (a20 * f1 - a21 * f0)
    energy[E_MUTUAL_GRAVITY] += u
