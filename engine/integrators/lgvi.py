"""Implicit schemes for bodies with an inertia tensor ``𝕁`` (docs/physics.md §3.6, §3.7).

``lgvi``: the Lie group variational integrator of Lee, Leok & McClamroch, LLM eqs.
(92)–(96), with the body increment ``F = exp(S(f))`` from LLM eq. (128);
``rrp-implicit``: the same discrete equations with ``F = R(f)`` the RRP (Cayley) map,
which for scalar ``J`` has the closed-form root B&G eq. (16) (so it reduces to
``rrp-exact``) and is solved by Newton's method from that spherical guess otherwise.

Both keep the body angular momentum ``Π`` as state (the 8th array of a state buffer):
the spatial ``Ω = R 𝕁⁻¹ Π`` is written for the diagnostics, never read back.
Iteration counts go to ``work[6]`` (``layout.IS_*``); a Newton solve that does not
converge returns ``ERR_NO_CONVERGENCE`` with ``info = (body, iterations, |Δf|)``.
"""

from __future__ import annotations

import math

from numba import njit

from ..layout import (
    ERR_NO_CONVERGENCE,
    ERR_SHAPE,
    IP_MAX_IT,
    IP_TOL,
    IS_ITERATIONS,
    IS_MAX,
    IS_SOLVES,
    OK,
)
from ..rotations import quat_from_rotvec_t, quat_from_rrp_t, quat_mul_t, quat_rotate_t
from ..solver_counts import count_solve
from .pieces import forces_and_kick
from .verlet import (
    drift_positions,
    state_shapes_ok,
)

MAP_EXP = 0  # lgvi
MAP_CAYLEY = 1  # rrp-implicit


@njit(nogil=True, cache=True, _nrt=False, forceinline=True)
def mat_vec(A, i, b0, b1, b2):
    """``A[i] b`` for a stack of 3×3 matrices ``A``."""
    return (A[i, 0, 0] * b0 + A[i, 0, 1] * b1 + A[i, 0, 2] * b2,
            A[i, 1, 0] * b0 + A[i, 1, 1] * b1 + A[i, 1, 2] * b2,
            A[i, 2, 0] * b0 + A[i, 2, 1] * b1 + A[i, 2, 2] * b2)


@njit(nogil=True, cache=True, _nrt=False, forceinline=True)
def to_body(q, i, b0, b1, b2):
    """``R_iᵀ b`` (spatial → body frame) for the attitude quaternion ``q[i]``."""
    return quat_rotate_t(q[i, 0], -q[i, 1], -q[i, 2], -q[i, 3], b0, b1, b2)


@njit(nogil=True, cache=True, _nrt=False, forceinline=True, error_model="numpy")
def solve3(a00, a01, a02, a10, a11, a12, a20, a21, a22, r0, r1, r2):
    """``A⁻¹ r`` by Cramer's rule (a 3×3 Newton system)."""
    c00 = a11 * a22 - a12 * a21
    c01 = a12 * a20 - a10 * a22
    c02 = a10 * a21 - a11 * a20
    det = a00 * c00 + a01 * c01 + a02 * c02
    inv = 1.0 / det
    x0 = (c00 * r0 + (a02 * a21 - a01 * a22) * r1 + (a01 * a12 - a02 * a11) * r2) * inv
    x1 = (c01 * r0 + (a00 * a22 - a02 * a20) * r1 + (a02 * a10 - a00 * a12) * r2) * inv
    x2 = (c02 * r0 + (a01 * a20 - a00 * a21) * r1 + (a00 * a11 - a01 * a10) * r2) * inv
    return x0, x1, x2


@njit(nogil=True, cache=True, _nrt=False, error_model="numpy")
def solve_increment(rot_map, Jt, i, g0, g1, g2, tol, max_it):
    """Solve for the body increment ``f`` of body ``i`` (``𝕁 = Jt[i]``):

    * ``MAP_EXP`` (LLM eq. (128)): ``g = sin|f|/|f| 𝕁f + (1 − cos|f|)/|f|² f × 𝕁f``,
      from ``f = 𝕁⁻¹ g``;
    * ``MAP_CAYLEY`` (physics.md §3.7): ``g (4 + |f|²)/4 = 𝕁f + ½ f × 𝕁f``, from the
      root for the scalar inertia ``J̄ = tr 𝕁/3`` (B&G eq. (16)).

    Newton's method, stopped when ``|Δf| ≤ tol |f|``.  Returns ``(f, iterations, |Δf|,
    converged)``."""
    jbar = (Jt[i, 0, 0] + Jt[i, 1, 1] + Jt[i, 2, 2]) / 3.0
    u0, u1, u2 = g0 / jbar, g1 / jbar, g2 / jbar
    u2n = u0 * u0 + u1 * u1 + u2 * u2
    if rot_map == MAP_CAYLEY and u2n < 1.0:
        c = 2.0 / (1.0 + math.sqrt(1.0 - u2n))
        f0, f1, f2 = c * u0, c * u1, c * u2
    else:
        f0, f1, f2 = solve3(Jt[i, 0, 0], Jt[i, 0, 1], Jt[i, 0, 2], Jt[i, 1, 0], Jt[i, 1, 1],
                            Jt[i, 1, 2], Jt[i, 2, 0], Jt[i, 2, 1], Jt[i, 2, 2], g0, g1, g2)
    step = math.inf
    it = 0
    while it < max_it:
        it += 1
        j0, j1, j2 = mat_vec(Jt, i, f0, f1, f2)
        c0 = f1 * j2 - f2 * j1  # f × 𝕁f
        c1 = f2 * j0 - f0 * j2
        c2 = f0 * j1 - f1 * j0
        # d(f × 𝕁f)/df = S(f) 𝕁 − S(𝕁f)
        s00 = f1 * Jt[i, 2, 0] - f2 * Jt[i, 1, 0]
        s01 = f1 * Jt[i, 2, 1] - f2 * Jt[i, 1, 1] + j2
        s02 = f1 * Jt[i, 2, 2] - f2 * Jt[i, 1, 2] - j1
        s10 = f2 * Jt[i, 0, 0] - f0 * Jt[i, 2, 0] - j2
        s11 = f2 * Jt[i, 0, 1] - f0 * Jt[i, 2, 1]
        s12 = f2 * Jt[i, 0, 2] - f0 * Jt[i, 2, 2] + j0
        s20 = f0 * Jt[i, 1, 0] - f1 * Jt[i, 0, 0] + j1
        s21 = f0 * Jt[i, 1, 1] - f1 * Jt[i, 0, 1] - j0
        s22 = f0 * Jt[i, 1, 2] - f1 * Jt[i, 0, 2]
        ff2 = f0 * f0 + f1 * f1 + f2 * f2
        if rot_map == MAP_CAYLEY:
            s = 0.25 * (4.0 + ff2)
            r0 = j0 + 0.5 * c0 - s * g0
            r1 = j1 + 0.5 * c1 - s * g1
            r2 = j2 + 0.5 * c2 - s * g2
            a00 = Jt[i, 0, 0] + 0.5 * s00 - 0.5 * g0 * f0
            a01 = Jt[i, 0, 1] + 0.5 * s01 - 0.5 * g0 * f1
            a02 = Jt[i, 0, 2] + 0.5 * s02 - 0.5 * g0 * f2
            a10 = Jt[i, 1, 0] + 0.5 * s10 - 0.5 * g1 * f0
            a11 = Jt[i, 1, 1] + 0.5 * s11 - 0.5 * g1 * f1
            a12 = Jt[i, 1, 2] + 0.5 * s12 - 0.5 * g1 * f2
            a20 = Jt[i, 2, 0] + 0.5 * s20 - 0.5 * g2 * f0
            a21 = Jt[i, 2, 1] + 0.5 * s21 - 0.5 * g2 * f1
            a22 = Jt[i, 2, 2] + 0.5 * s22 - 0.5 * g2 * f2
        else:
            phi = math.sqrt(ff2)
            if phi < 1e-3:
                p2 = ff2
                a = 1.0 - p2 / 6.0 + p2 * p2 / 120.0
                b = 0.5 - p2 / 24.0 + p2 * p2 / 720.0
                da = -1.0 / 3.0 + p2 / 30.0  # a'(φ)/φ
                db = -1.0 / 12.0 + p2 / 180.0  # b'(φ)/φ
            else:
                a = math.sin(phi) / phi
                b = (1.0 - math.cos(phi)) / ff2
                da = (math.cos(phi) - a) / ff2
                db = (a - 2.0 * b) / ff2
            r0 = a * j0 + b * c0 - g0
            r1 = a * j1 + b * c1 - g1
            r2 = a * j2 + b * c2 - g2
            # ∂/∂f: a 𝕁 + b (S(f)𝕁 − S(𝕁f)) + 𝕁f (a'/φ) fᵀ + (f × 𝕁f) (b'/φ) fᵀ
            e0, e1, e2 = da * j0 + db * c0, da * j1 + db * c1, da * j2 + db * c2
            a00 = a * Jt[i, 0, 0] + b * s00 + e0 * f0
            a01 = a * Jt[i, 0, 1] + b * s01 + e0 * f1
            a02 = a * Jt[i, 0, 2] + b * s02 + e0 * f2
            a10 = a * Jt[i, 1, 0] + b * s10 + e1 * f0
            a11 = a * Jt[i, 1, 1] + b * s11 + e1 * f1
            a12 = a * Jt[i, 1, 2] + b * s12 + e1 * f2
            a20 = a * Jt[i, 2, 0] + b * s20 + e2 * f0
            a21 = a * Jt[i, 2, 1] + b * s21 + e2 * f1
            a22 = a * Jt[i, 2, 2] + b * s22 + e2 * f2
        d0, d1, d2 = solve3(a00, a01, a02, a10, a11, a12, a20, a21, a22, r0, r1, r2)
        f0 -= d0
        f1 -= d1
        f2 -= d2
        step = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
        if not math.isfinite(step):
            return f0, f1, f2, it, step, False
        if step <= tol * math.sqrt(f0 * f0 + f1 * f1 + f2 * f2):
            return f0, f1, f2, it, step, True
    return f0, f1, f2, it, step, False


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def lgvi_step_ws(h, rot_map, s0, s1, ff, work, info, ws):
    """One step ``s0 → s1`` of LLM eqs. (92)–(96) (``MAP_EXP``) or of ``rrp-implicit``
    (``MAP_CAYLEY``), docs/physics.md §3.6–3.7:

    ``x₁ = x₀ + h v₀ + h²/(2m) F₀``; solve ``g = h(Π₀ + h/2 M₀)`` for ``F = F(f)``;
    ``R₁ = R₀ F``; ``v₁ = v₀ + h/(2m)(F₀ + F₁)``; ``Π₁ = Fᵀ(Π₀ + h/2 M₀) + h/2 M₁``
    (``M = Rᵀ RM``, the body moment), and ``Ω₁ = R₁ 𝕁⁻¹ Π₁``."""
    if not (state_shapes_ok(s0) and state_shapes_ok(s1) and s0[7].shape[1] == 3
            and s1[7].shape[1] == 3):
        return ERR_SHAPE
    x0, v0, q0, o0, F0, RM0, e0, P0 = s0
    x1, v1, q1, o1, F1, RM1, e1, P1 = s1
    m = ff[0]
    Jt = ff[10]
    Ji = ff[11]
    ip = work[5]
    stats = work[6]
    tol = ip[IP_TOL]
    max_it = int(ip[IP_MAX_IT])
    n = x0.shape[0]
    hh = 0.5 * h
    drift_positions(h, m, x0, v0, F0, x1)
    for i in range(n):
        M0, M1, M2 = to_body(q0, i, RM0[i, 0], RM0[i, 1], RM0[i, 2])
        y0 = P0[i, 0] + hh * M0  # Π₀ + h/2 M₀
        y1 = P0[i, 1] + hh * M1
        y2 = P0[i, 2] + hh * M2
        f0, f1, f2, it, step, ok = solve_increment(rot_map, Jt, i, h * y0, h * y1, h * y2,
                                                   tol, max_it)
        count_solve(stats, it, IS_SOLVES, IS_ITERATIONS, IS_MAX)
        if not ok:
            info[0] = i
            info[1] = it
            info[2] = step
            return ERR_NO_CONVERGENCE
        if rot_map == MAP_CAYLEY:
            d = quat_from_rrp_t(f0, f1, f2)
        else:
            d = quat_from_rotvec_t(f0, f1, f2)
        q1[i, 0], q1[i, 1], q1[i, 2], q1[i, 3] = quat_mul_t(
            q0[i, 0], q0[i, 1], q0[i, 2], q0[i, 3], d[0], d[1], d[2], d[3])
        # Fᵀ (Π₀ + h/2 M₀)
        P1[i, 0], P1[i, 1], P1[i, 2] = quat_rotate_t(d[0], -d[1], -d[2], -d[3], y0, y1, y2)
    st = forces_and_kick(h, s0, s1, ff, ws)
    if st != OK:
        return st
    for i in range(n):
        M0, M1, M2 = to_body(q1, i, RM1[i, 0], RM1[i, 1], RM1[i, 2])
        P1[i, 0] += hh * M0
        P1[i, 1] += hh * M1
        P1[i, 2] += hh * M2
        w0, w1, w2 = mat_vec(Ji, i, P1[i, 0], P1[i, 1], P1[i, 2])
        o1[i, 0], o1[i, 1], o1[i, 2] = quat_rotate_t(q1[i, 0], q1[i, 1], q1[i, 2], q1[i, 3],
                                                     w0, w1, w2)
    return OK
