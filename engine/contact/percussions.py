"""The percussion solver: projected Gauss–Seidel with proximal maps (Studer 2009, §4.4;
the paper's ref. [5]), over all active contacts at once.

Given the velocities ``U_free`` the step would reach without contact forces and the
velocities ``U⁻`` before the step, find percussions ``P_c`` such that
``U⁺ = U_free + M⁻¹ Σ_c W_c P_c`` satisfies the contact law of every contact
(:mod:`.laws`) with ``ξ_c = W_cᵀ(U⁺ + e U⁻)`` (``e_N`` normal, ``e_T`` tangential).
Each sweep visits the contacts in order and solves each one's local problem exactly
(the Delassus block of a sphere contact is diagonal, :mod:`.detect`) with the others'
percussions frozen: ``P_N ← prox_{ℝ₊}(P_N − ξ_N/G_N)``, then
``P_T ← prox_{C_T(P_N)}(P_T − ξ_T/G_T)``, updating ``U⁺`` at once.  It stops when a
sweep changes no percussion by more than ``tol · max_c |P_c|`` (a single contact, or
contacts that share no body, converge in one sweep and are confirmed by the second),
and reports non-convergence after ``max_it`` sweeps — never a silent wrong answer.
The scale of ``|P|`` has a floor, ``max_c (|u_i| + |u_j| + a_i|w_i| + a_j|w_j|)/G_N``
(the percussion that would stop the bodies): contacts that are active only by round-off
(touching neighbours, ``γ ≈ 1e-16``) then converge at once instead of chasing noise.
Warm start: a contact that was active in the previous step starts from its last
percussion (re-projected on the new normal and cone), applied to ``U⁺`` before the
first sweep — persistent contacts (the ring pressed on the wall) then need a few sweeps
instead of hundreds.  The result is the same solution to the tolerance, but its last
bits depend on that history (a resumed run must restore ``warm`` to be bit-identical).
Allocation free; status codes only.
"""

from __future__ import annotations

import math

from numba import njit

from ..layout import (
    ERR_CONTACT,
    IS_CONTACT_ITERATIONS,
    IS_CONTACT_MAX,
    IS_CONTACT_SOLVES,
    IS_CONTACTS,
    IS_IMPACTS,
    IS_PENETRATION,
    IS_PERCUSSIONS,
    OK,
)
from ..solver_counts import count_solve
from .detect import apply_percussion, contact_velocity
from .laws import prox_disc, prox_normal


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def solve_percussions_ws(cw, m, J, u0, w0, u1, w1, e_n, mu, e_t, tol, max_it, stats, info):
    """Solve the percussions of the active contacts in ``cw`` and apply them to
    ``(u1, w1)`` (in: ``U_free``, out: ``U⁺``); ``(u0, w0)`` is ``U⁻``.

    Returns ``(status, ΔD)``: ``OK`` or ``ERR_CONTACT`` (``info = (contacts, sweeps,
    residual)``), and the energy the percussions dissipated in this step,
    ``ΔD = −Σ_c P_cᵀ W_cᵀ (U⁺ + U⁻)/2`` (the issue's bookkeeping; 0 to the solver
    tolerance for frictionless ``e_N = 1`` contacts).  Updates ``stats[IS_*]``."""
    idx, geo, P, gam, count, warm = cw
    nc = count[0]
    stats[IS_CONTACTS] = nc
    stats[IS_PERCUSSIONS] = 0.0
    stamp = float(count[2])
    count[2] += 1
    if nc == 0:
        return OK, 0.0
    pen = stats[IS_PENETRATION]
    for c in range(nc):
        gn, t0, t1, t2 = contact_velocity(c, idx, geo, u0, w0)
        gam[c, 0] = gn
        gam[c, 1] = t0
        gam[c, 2] = t1
        gam[c, 3] = t2
        P[c, 0] = 0.0
        P[c, 1] = 0.0
        P[c, 2] = 0.0
        P[c, 3] = 0.0
        if -geo[c, 3] > pen:
            pen = -geo[c, 3]
        s = idx[c, 2]
        if s >= 0 and warm[s, 4] == stamp and warm[s, 0] > 0.0:
            n0 = geo[c, 0]
            n1 = geo[c, 1]
            n2 = geo[c, 2]
            pn = warm[s, 0]
            q0 = warm[s, 1]
            q1 = warm[s, 2]
            q2 = warm[s, 3]
            d = q0 * n0 + q1 * n1 + q2 * n2
            q0, q1, q2 = prox_disc(q0 - d * n0, q1 - d * n1, q2 - d * n2, mu * pn)
            P[c, 0] = pn
            P[c, 1] = q0
            P[c, 2] = q1
            P[c, 3] = q2
            apply_percussion(c, idx, geo, m, J, pn * n0 + q0, pn * n1 + q1, pn * n2 + q2,
                             u1, w1)
    stats[IS_PENETRATION] = pen
    floor = 0.0
    for c in range(nc):
        i = idx[c, 0]
        j = idx[c, 1]
        s = (math.sqrt(u1[i, 0] ** 2 + u1[i, 1] ** 2 + u1[i, 2] ** 2)
             + geo[c, 4] * math.sqrt(w1[i, 0] ** 2 + w1[i, 1] ** 2 + w1[i, 2] ** 2))
        if j >= 0:
            s += (math.sqrt(u1[j, 0] ** 2 + u1[j, 1] ** 2 + u1[j, 2] ** 2)
                  + geo[c, 5] * math.sqrt(w1[j, 0] ** 2 + w1[j, 1] ** 2 + w1[j, 2] ** 2))
        s /= geo[c, 6]
        if s > floor:
            floor = s
    floor *= floor
    sweeps = 0
    converged = False
    resid = 0.0
    while sweeps < max_it:
        sweeps += 1
        dmax = 0.0
        pmax = 0.0
        for c in range(nc):
            n0 = geo[c, 0]
            n1 = geo[c, 1]
            n2 = geo[c, 2]
            gn, t0, t1, t2 = contact_velocity(c, idx, geo, u1, w1)
            pn_old = P[c, 0]
            pn = prox_normal(pn_old, gn + e_n * gam[c, 0], 1.0 / geo[c, 6])
            dp0 = (pn - pn_old) * n0
            dp1 = (pn - pn_old) * n1
            dp2 = (pn - pn_old) * n2
            P[c, 0] = pn
            if mu > 0.0:
                rt = 1.0 / geo[c, 7]
                q0, q1, q2 = prox_disc(P[c, 1] - rt * (t0 + e_t * gam[c, 1]),
                                       P[c, 2] - rt * (t1 + e_t * gam[c, 2]),
                                       P[c, 3] - rt * (t2 + e_t * gam[c, 3]), mu * pn)
                dp0 += q0 - P[c, 1]
                dp1 += q1 - P[c, 2]
                dp2 += q2 - P[c, 3]
                P[c, 1] = q0
                P[c, 2] = q1
                P[c, 3] = q2
            d = dp0 * dp0 + dp1 * dp1 + dp2 * dp2
            if d > 0.0:
                apply_percussion(c, idx, geo, m, J, dp0, dp1, dp2, u1, w1)
                if d > dmax:
                    dmax = d
            pc = pn * pn + P[c, 1] * P[c, 1] + P[c, 2] * P[c, 2] + P[c, 3] * P[c, 3]
            if pc > pmax:
                pmax = pc
        scale = pmax if pmax > floor else floor
        resid = math.sqrt(dmax / scale) if scale > 0.0 else 0.0
        if dmax <= tol * tol * scale:
            converged = True
            break
    count_solve(stats, sweeps, IS_CONTACT_SOLVES, IS_CONTACT_ITERATIONS, IS_CONTACT_MAX)
    if not converged:
        info[0] = nc
        info[1] = sweeps
        info[2] = resid
        return ERR_CONTACT, 0.0
    dd = 0.0
    npc = 0
    for c in range(nc):
        s = idx[c, 2]
        if s >= 0:
            warm[s, 0] = P[c, 0]
            warm[s, 1] = P[c, 1]
            warm[s, 2] = P[c, 2]
            warm[s, 3] = P[c, 3]
            warm[s, 4] = stamp + 1.0
        gn, t0, t1, t2 = contact_velocity(c, idx, geo, u1, w1)
        dd -= 0.5 * (P[c, 0] * (gn + gam[c, 0]) + P[c, 1] * (t0 + gam[c, 1])
                     + P[c, 2] * (t1 + gam[c, 2]) + P[c, 3] * (t2 + gam[c, 3]))
        if P[c, 0] > 0.0:
            npc += 1
    stats[IS_PERCUSSIONS] = npc
    stats[IS_IMPACTS] += npc
    return OK, dd
