"""Campello's schemes: the explicit first-order one (B&G eq. (27)), symplectic Euler on
SE(3), and the general implicit form with the blend ``φ`` (B&G eq. (26))."""

from __future__ import annotations

import math

from numba import njit

from ..forcefield import compute_forces_ws, new_scratch
from ..layout import (
    ERR_NO_CONVERGENCE,
    ERR_SHAPE,
    IP_MAX_IT,
    IP_PHI,
    IP_TOL,
    IS_ITERATIONS,
    IS_MAX,
    IS_SOLVES,
    OK,
)
from ..rotations import quat_from_rrp_t, quat_mul_t
from ..solver_counts import count_solve
from .pieces import drift, rotate_rrp
from .verlet import renormalise_quats, states_ok


@njit(nogil=True, cache=True)
def campello_step(h, s0, s1, ff, info):
    """``v₁ = v₀ + (h/m) F₀``, ``Ω₁ = Ω₀ + (h/J) RM₀``, ``x₁ = x₀ + h v₁``,
    ``q₁ = q(h Ω₁) ⊗ q₀`` (RRP increment ``Δα = h Ω₁``), B&G eq. (27)."""
    return campello_step_ws(h, s0, s1, ff, info, new_scratch(s0[0].shape[0], ff))


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def campello_step_ws(h, s0, s1, ff, info, ws):
    """:func:`campello_step` with the force field's scratch ``ws`` supplied (the loops
    of ``engine.integrators.pieces``, each of which vectorises)."""
    if not states_ok(s0, s1):
        return ERR_SHAPE
    x0, v0, q0, o0, F0, RM0, e0 = s0[:7]
    x1, v1, q1, o1, F1, RM1, e1 = s1[:7]
    m, J = ff[0], ff[1]
    # (v and Ω in two loops, not pieces.kick's one, on purpose: with kick the torus read 2.8-3.0
    # against 2.7-2.9 µs/step, bench_kernels.py, benchmarks/results/dedup_kernels_2026-11-28.txt)
    for i in range(x0.shape[0]):
        c = h / m[i]
        for k in range(3):
            v1[i, k] = v0[i, k] + c * F0[i, k]
    for i in range(x0.shape[0]):
        c = h / J[i]
        for k in range(3):
            o1[i, k] = o0[i, k] + c * RM0[i, k]
    drift(h, x0, v1, x1)
    rotate_rrp(h, o1, q0, q1)
    return compute_forces_ws(x1, q1, ff, F1, RM1, e1, ws)


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def campello_implicit_step_ws(h, s0, s1, ff, work, info, ws):
    """Campello's general scheme, B&G eq. (26), with ``φ = work[5][IP_PHI] ∈ [0, 1]``:

    ``v₁ = v₀ + (h/m)(φ F₀ + (1-φ) F₁)``, ``Ω₁ = Ω₀ + (h/J)(φ RM₀ + (1-φ) RM₁)``,
    ``x₁ = x₀ + h v₁``, ``q₁ = q(h Ω₁) ⊗ q₀``.

    Implicit for ``φ < 1``: fixed-point iteration from the explicit step (``φ = 1``,
    eq. (27)), stopped when the largest change of ``x₁`` and ``q₁`` is
    ``≤ tol (1 + max|x₁|)``; one force evaluation per iteration.  Non-convergence
    returns ``ERR_NO_CONVERGENCE`` with ``info = (-1, iterations, last change)``."""
    if not states_ok(s0, s1):
        return ERR_SHAPE
    x0, v0, q0, o0, F0, RM0, e0 = s0[:7]
    x1, v1, q1, o1, F1, RM1, e1 = s1[:7]
    m, J = ff[0], ff[1]
    ip = work[5]
    stats = work[6]
    phi = ip[IP_PHI]
    tol = ip[IP_TOL]
    max_it = int(ip[IP_MAX_IT])
    n = x0.shape[0]
    for i in range(n):
        for k in range(3):
            F1[i, k] = F0[i, k]
            RM1[i, k] = RM0[i, k]
    it = 0
    change = math.inf
    converged = False
    while it < max_it:
        it += 1
        change = 0.0
        xmax = 0.0
        for i in range(n):
            c = h / m[i]
            cj = h / J[i]
            for k in range(3):
                v1[i, k] = v0[i, k] + c * (phi * F0[i, k] + (1.0 - phi) * F1[i, k])
                o1[i, k] = o0[i, k] + cj * (phi * RM0[i, k] + (1.0 - phi) * RM1[i, k])
                xn = x0[i, k] + h * v1[i, k]
                change = max(change, abs(xn - x1[i, k]))
                xmax = max(xmax, abs(xn))
                x1[i, k] = xn
            d = quat_from_rrp_t(h * o1[i, 0], h * o1[i, 1], h * o1[i, 2])
            qn = quat_mul_t(d[0], d[1], d[2], d[3], q0[i, 0], q0[i, 1], q0[i, 2], q0[i, 3])
            for k in range(4):
                change = max(change, abs(qn[k] - q1[i, k]))
                q1[i, k] = qn[k]
        renormalise_quats(q1)
        st = compute_forces_ws(x1, q1, ff, F1, RM1, e1, ws)
        if st != OK:
            return st
        if not math.isfinite(change):
            break
        if it > 1 and change <= tol * (1.0 + xmax):
            converged = True
            break
    count_solve(stats, it, IS_SOLVES, IS_ITERATIONS, IS_MAX)
    if not converged:
        info[0] = -1.0
        info[1] = it
        info[2] = change
        return ERR_NO_CONVERGENCE
    return OK
