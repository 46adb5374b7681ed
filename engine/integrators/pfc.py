"""PFC's clump schemes for any inertia ``𝕁`` (Itasca PFC, Law of Motion, eqs. 18–33;
docs/physics.md §3.5): ``pfc-buss2`` and ``pfc-rk4``.

Translation and the spatial angular momentum ``L = R 𝕁 Rᵀ Ω`` advance by velocity-Verlet
half kicks (``L_{½} = L₀ + h/2 RM₀``); the attitude by

* ``pfc-buss2`` (Buss' augmented second-order method): ``ω = I⁻¹ L₀`` with
  ``I = R₀ 𝕁 R₀ᵀ``, ``ω̇ = I⁻¹(RM₀ − ω × L₀)`` (both at the start of the step: with
  ``L_{½}`` the augmentation would count the half kick twice and the scheme would be
  first order — measured),
  ``ω̄ = ω + ω̇ h/2 + (ω̇ × ω) h²/12``, ``q₁ = exp(h ω̄) ⊗ q₀``;
* ``pfc-rk4``: classical RK4 on ``q̇ = ½ (0, ω(q)) ⊗ q``, ``ω(q) = R(q) 𝕁⁻¹ R(q)ᵀ L_{½}``
  (``L`` frozen over the step), then ``q`` renormalised.

Neither is variational: they are the baselines a DEM user knows.
"""

from __future__ import annotations

from numba import njit

from ..layout import ERR_SHAPE, OK
from ..rotations import quat_from_rotvec_t, quat_mul_t, quat_rotate_t
from .lgvi import mat_vec, to_body
from .pieces import forces_and_kick
from .verlet import (
    drift_positions,
    states_ok,
)

ATT_BUSS2 = 0
ATT_RK4 = 1


@njit(nogil=True, cache=True, _nrt=False, forceinline=True)
def inv_inertia_apply(Ji, i, q0, q1, q2, q3, L0, L1, L2):
    """``ω = R 𝕁⁻¹ Rᵀ L`` for the attitude ``(q0, q1, q2, q3)`` of body ``i``."""
    b0, b1, b2 = quat_rotate_t(q0, -q1, -q2, -q3, L0, L1, L2)
    w0, w1, w2 = mat_vec(Ji, i, b0, b1, b2)
    return quat_rotate_t(q0, q1, q2, q3, w0, w1, w2)


@njit(nogil=True, cache=True, _nrt=False, forceinline=True)
def _qdot(Ji, i, p0, p1, p2, p3, L0, L1, L2):
    """``q̇ = ½ (0, ω) ⊗ q`` with ``ω = R(q) 𝕁⁻¹ R(q)ᵀ L`` (PFC eq. (31))."""
    w0, w1, w2 = inv_inertia_apply(Ji, i, p0, p1, p2, p3, L0, L1, L2)
    return (0.5 * (-w0 * p1 - w1 * p2 - w2 * p3),
            0.5 * (w0 * p0 + w1 * p3 - w2 * p2),
            0.5 * (-w0 * p3 + w1 * p0 + w2 * p1),
            0.5 * (w0 * p2 - w1 * p1 + w2 * p0))


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def pfc_clump_step_ws(h, att, s0, s1, ff, info, ws):
    """One step ``s0 → s1`` of ``pfc-buss2`` (``att = ATT_BUSS2``) or ``pfc-rk4``
    (``ATT_RK4``), docs/physics.md §3.5; ``o1`` holds ``L_{½}`` until the end."""
    if not states_ok(s0, s1):
        return ERR_SHAPE
    x0, v0, q0, o0, F0, RM0, e0 = s0[:7]
    x1, v1, q1, o1, F1, RM1, e1 = s1[:7]
    m = ff[0]
    Jt = ff[10]
    Ji = ff[11]
    n = x0.shape[0]
    hh = 0.5 * h
    drift_positions(h, m, x0, v0, F0, x1)
    for i in range(n):
        a0, a1, a2, a3 = q0[i, 0], q0[i, 1], q0[i, 2], q0[i, 3]
        b0, b1, b2 = to_body(q0, i, o0[i, 0], o0[i, 1], o0[i, 2])
        p0, p1, p2 = mat_vec(Jt, i, b0, b1, b2)
        L0, L1, L2 = quat_rotate_t(a0, a1, a2, a3, p0, p1, p2)
        o1[i, 0] = L0 + hh * RM0[i, 0]
        o1[i, 1] = L1 + hh * RM0[i, 1]
        o1[i, 2] = L2 + hh * RM0[i, 2]
        if att == ATT_BUSS2:
            # Buss: ω, ω̇ at the start of the step, ω̄ ≈ ω(t + h/2) to second order
            w0, w1, w2 = inv_inertia_apply(Ji, i, a0, a1, a2, a3, L0, L1, L2)
            t0 = RM0[i, 0] - (w1 * L2 - w2 * L1)
            t1 = RM0[i, 1] - (w2 * L0 - w0 * L2)
            t2 = RM0[i, 2] - (w0 * L1 - w1 * L0)
            d0, d1, d2 = inv_inertia_apply(Ji, i, a0, a1, a2, a3, t0, t1, t2)  # ω̇
            c = h * h / 12.0
            u0 = w0 + hh * d0 + c * (d1 * w2 - d2 * w1)
            u1 = w1 + hh * d1 + c * (d2 * w0 - d0 * w2)
            u2 = w2 + hh * d2 + c * (d0 * w1 - d1 * w0)
            e = quat_from_rotvec_t(h * u0, h * u1, h * u2)
            q1[i, 0], q1[i, 1], q1[i, 2], q1[i, 3] = quat_mul_t(
                e[0], e[1], e[2], e[3], a0, a1, a2, a3)
        else:
            L0, L1, L2 = o1[i, 0], o1[i, 1], o1[i, 2]  # L_{½}, frozen over the step
            k1 = _qdot(Ji, i, a0, a1, a2, a3, L0, L1, L2)
            k2 = _qdot(Ji, i, a0 + hh * k1[0], a1 + hh * k1[1], a2 + hh * k1[2],
                       a3 + hh * k1[3], L0, L1, L2)
            k3 = _qdot(Ji, i, a0 + hh * k2[0], a1 + hh * k2[1], a2 + hh * k2[2],
                       a3 + hh * k2[3], L0, L1, L2)
            k4 = _qdot(Ji, i, a0 + h * k3[0], a1 + h * k3[1], a2 + h * k3[2],
                       a3 + h * k3[3], L0, L1, L2)
            c = h / 6.0
            q1[i, 0] = a0 + c * (k1[0] + 2.0 * k2[0] + 2.0 * k3[0] + k4[0])
            q1[i, 1] = a1 + c * (k1[1] + 2.0 * k2[1] + 2.0 * k3[1] + k4[1])
            q1[i, 2] = a2 + c * (k1[2] + 2.0 * k2[2] + 2.0 * k3[2] + k4[2])
            q1[i, 3] = a3 + c * (k1[3] + 2.0 * k2[3] + 2.0 * k3[3] + k4[3])
            nrm = (q1[i, 0] ** 2 + q1[i, 1] ** 2 + q1[i, 2] ** 2 + q1[i, 3] ** 2) ** -0.5
            for k in range(4):
                q1[i, k] *= nrm
    st = forces_and_kick(h, s0, s1, ff, ws)
    if st != OK:
        return st
    for i in range(n):
        L0 = o1[i, 0] + hh * RM1[i, 0]
        L1 = o1[i, 1] + hh * RM1[i, 1]
        L2 = o1[i, 2] + hh * RM1[i, 2]
        o1[i, 0], o1[i, 1], o1[i, 2] = inv_inertia_apply(
            Ji, i, q1[i, 0], q1[i, 1], q1[i, 2], q1[i, 3], L0, L1, L2)
    return OK
