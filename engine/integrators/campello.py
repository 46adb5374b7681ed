"""Campello's explicit first-order scheme (B&G eq. (27)): symplectic Euler on SE(3)."""

from __future__ import annotations

from numba import njit

from ..forcefield import compute_forces_ws, new_scratch
from ..layout import ERR_SHAPE
from ..rotations import quat_from_rrp_t, quat_mul_t
from .verlet import renormalise_quats, state_shapes_ok


@njit(nogil=True, cache=True)
def campello_step(h, s0, s1, ff, info):
    """``v₁ = v₀ + (h/m) F₀``, ``Ω₁ = Ω₀ + (h/J) RM₀``, ``x₁ = x₀ + h v₁``,
    ``q₁ = q(h Ω₁) ⊗ q₀`` (RRP increment ``Δα = h Ω₁``), B&G eq. (27)."""
    return campello_step_ws(h, s0, s1, ff, info, new_scratch(s0[0].shape[0]))


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def campello_step_ws(h, s0, s1, ff, info, ws):
    """:func:`campello_step` with the force field's scratch ``ws`` supplied (one loop per
    update, so that each vectorises; see ``engine.integrators.verlet``)."""
    if not (state_shapes_ok(s0) and state_shapes_ok(s1)):
        return ERR_SHAPE
    x0, v0, q0, o0, F0, RM0, e0 = s0
    x1, v1, q1, o1, F1, RM1, e1 = s1
    m = ff[0]
    J = ff[1]
    n = x0.shape[0]
    for i in range(n):
        c = h / m[i]
        for k in range(3):
            v1[i, k] = v0[i, k] + c * F0[i, k]
    for i in range(n):
        c = h / J[i]
        for k in range(3):
            o1[i, k] = o0[i, k] + c * RM0[i, k]
    for i in range(n):
        for k in range(3):
            x1[i, k] = x0[i, k] + h * v1[i, k]
    for i in range(n):
        d = quat_from_rrp_t(h * o1[i, 0], h * o1[i, 1], h * o1[i, 2])
        q1[i, 0], q1[i, 1], q1[i, 2], q1[i, 3] = quat_mul_t(
            d[0], d[1], d[2], d[3], q0[i, 0], q0[i, 1], q0[i, 2], q0[i, 3]
        )
    renormalise_quats(q1)
    return compute_forces_ws(x1, q1, ff, F1, RM1, e1, ws)
