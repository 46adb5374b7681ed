"""Moreau-type schemes for spheres with hard, frictional contacts (docs/physics.md §3.9;
Capobianco, Eugster & Leine, "CEL" below).

The generalized velocity of sphere ``i`` is ``U_i = (u_i, w_i)`` (translational and
spatial angular velocity), ``M = diag(m I, J I)``, and ``h(q, U) = (F, RM)``: for
spheres there are no gyroscopic terms, so both schemes are explicit in the velocities
and the only implicit part is the percussion problem, solved by
``engine.contact.percussions`` (projected Gauss–Seidel).  The attitude is advanced by the
RRP map ``R(Δα)``, ``Δα = Δt w`` (B&G eq. (25)).

``moreau`` (Moreau's midpoint rule, CEL §3, "rectangle rule")::

    x_M = x_k + Δt/2 v_k,               R_M = R(Δt/2 Ω_k) R_k
    active set g_N(x_M) ≤ 0,             forces F_M, RM_M at the midpoint
    m (v_k+1 − v_k) = Δt F_M + Σ W P,    J (Ω_k+1 − Ω_k) = Δt RM_M + Σ r × P_T
    contact law on ξ = Wᵀ(U_k+1 + e U_k)
    x_k+1 = x_M + Δt/2 v_k+1,            R_k+1 = R(Δt/2 Ω_k+1) R_M

``moreau-symmetric`` (CEL eq. (12), the trapezoidal rule): with the half-step
velocities ``U_k = (x_k+1 − x_k)/Δt``,
``M (U_k − U_k−1) − Δt/2 (h(q_k) + h(q_k)) = W(q_k) P_k`` and the contact law on
``ξ = Wᵀ(U_k + e U_k−1)`` for ``g_N(q_k) ≤ 0``.  Written with node velocities (the
discrete Legendre transform ``v_k = U_k − Δt/(2m) F_k``, ``Ω_k = w_k − Δt/(2J) RM_k``,
after the percussion) this is the ``rrp-newmark`` step (B&G eq. (25)) plus the
percussions at the new node::

    u = v_k + Δt/(2m) F_k,  w = Ω_k + Δt/(2J) RM_k           (U_k; B&G (23a, b))
    x_k+1 = x_k + Δt u,     R_k+1 = R(Δt w) R_k               (B&G (23a, c), (25))
    U_free = (u + Δt/m F_k+1, w + Δt/J RM_k+1)               (CEL (12) with P = 0)
    U_k+1 = U_free + M⁻¹ Σ_c W_c P_c,  P from the contact law on ξ = Wᵀ(U_k+1 + e U_k)
    v_k+1 = u_k+1 − Δt/(2m) F_k+1,  Ω_k+1 = w_k+1 − Δt/(2J) RM_k+1

so without active contacts it is ``rrp-newmark`` (to round-off: the sums are grouped
differently).  Friction percussions
act at the contact point and give the impulsive moments ``r × P_T`` that the next
attitude update ``R(Δt w_k+1)`` sees.

Energy bookkeeping: both schemes add ``ΔD = −Σ_c P_cᵀ W_cᵀ(U_k+1 + U_k)/2`` to the
``dissipated`` slot.  For the node energies sampled here (``½ m|v|² + ½ J|Ω|² + U``)
this is exactly the change of kinetic energy the percussions cause: with node
velocities ``V⁻`` before and ``V⁺`` after them, ``V⁺ + V⁻ = U_k+1 + U_k`` (the force
terms cancel), so ``½ V⁺ᵀMV⁺ − ½ V⁻ᵀMV⁻ = ½ Pᵀ Wᵀ(U_k+1 + U_k) = −ΔD``; for
frictionless ``e_N = 1`` contacts it is ``½ Σ P_N ξ_N = 0`` by complementarity.
"""

from __future__ import annotations

from numba import njit

from ..contact.detect import find_contacts_ws
from ..contact.percussions import solve_percussions_ws
from ..forcefield import compute_forces_ws
from ..layout import (
    E_DISSIPATED,
    ERR_SHAPE,
    IP_CONTACT_MAX_IT,
    IP_CONTACT_TOL,
    OK,
    P_E_N,
    P_E_T,
    P_MU,
)
from .pieces import drift, kick, rotate_rrp
from .verlet import states_ok


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def _percussions(x, ff, work, u0, w0, u1, w1, info, ws):
    """Active set at ``x``, then the percussions applied to ``(u1, w1)``.  Returns
    ``(status, ΔD)``."""
    fp = ff[4]
    ip = work[5]
    st = find_contacts_ws(x, ff, work[7], ws[1])
    if st != OK:
        return st, 0.0
    return solve_percussions_ws(work[7], ff[0], ff[1], u0, w0, u1, w1, fp[P_E_N], fp[P_MU],
                                fp[P_E_T], ip[IP_CONTACT_TOL], int(ip[IP_CONTACT_MAX_IT]),
                                work[6], info)


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _kick_with_impacts(h, xa, qa, ua, wa, s1, ff, work, info, ws):
    """The kick of both Moreau schemes (CEL §3 and eq. (12)): the forces at ``(xa, qa)``
    into ``s1``'s ``F₁, RM₁, e₁``, ``v₁ = u + (h/m) F₁``, ``Ω₁ = w + (h/J) RM₁``, then
    the percussions at ``xa`` from ``(u, w)`` applied to ``(v₁, Ω₁)``.  Returns
    ``(status, ΔD)``."""
    v1, o1, F1, RM1, e1 = s1[1], s1[3], s1[4], s1[5], s1[6]
    st = compute_forces_ws(xa, qa, ff, F1, RM1, e1, ws)
    if st != OK:
        return st, 0.0
    kick(h, ff[0], ff[1], ua, wa, F1, RM1, v1, o1)
    return _percussions(xa, ff, work, ua, wa, v1, o1, info, ws)


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def moreau_symmetric_step_ws(h, s0, s1, ff, work, info, ws):
    """One step of ``moreau-symmetric`` on spheres, ``s0 → s1`` (module docstring;
    CEL eq. (12) with the RRP attitude map of B&G eq. (25))."""
    if not states_ok(s0, s1):
        return ERR_SHAPE
    x0, v0, q0, o0, F0, RM0, e0 = s0[:7]
    x1, v1, q1, o1, F1, RM1, e1 = s1[:7]
    m, J = ff[0], ff[1]
    u, w = work[0], work[3]
    n = x0.shape[0]
    hh = 0.5 * h
    kick(hh, m, J, v0, o0, F0, RM0, u, w)
    drift(h, x0, u, x1)
    rotate_rrp(h, w, q0, q1)
    st, dd = _kick_with_impacts(h, x1, q1, u, w, s1, ff, work, info, ws)
    if st != OK:
        return st
    for i in range(n):
        a = hh / m[i]
        b = hh / J[i]
        for k in range(3):
            v1[i, k] -= a * F1[i, k]
            o1[i, k] -= b * RM1[i, k]
    e1[E_DISSIPATED] = e0[E_DISSIPATED] + dd
    return OK


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def moreau_step_ws(h, s0, s1, ff, work, info, ws):
    """One step of Moreau's midpoint scheme on spheres, ``s0 → s1`` (module docstring;
    CEL §3).  Two force evaluations: at the midpoint (the dynamics) and at the new node
    (its energy components and the state's forces)."""
    if not states_ok(s0, s1):
        return ERR_SHAPE
    x0, v0, q0, o0, F0, RM0, e0 = s0[:7]
    x1, v1, q1, o1, F1, RM1, e1 = s1[:7]
    xm, qm = work[1], work[2]
    hh = 0.5 * h
    drift(hh, x0, v0, xm)
    rotate_rrp(hh, o0, q0, qm)
    st, dd = _kick_with_impacts(h, xm, qm, v0, o0, s1, ff, work, info, ws)
    if st != OK:
        return st
    drift(hh, xm, v1, x1)
    rotate_rrp(hh, o1, qm, q1)
    st = compute_forces_ws(x1, q1, ff, F1, RM1, e1, ws)
    if st != OK:
        return st
    e1[E_DISSIPATED] = e0[E_DISSIPATED] + dd
    return OK
