"""The active set and the contact kinematics of spheres (docs/physics.md §3.9).

A contact ``c`` joins sphere ``i`` to sphere ``j`` (or to a wall, ``j = -1``).  Its
normal ``n`` points from ``j`` to ``i`` (the wall normal for a wall), its gap is
``g_N = |x_i − x_j| − (D_i + D_j)/2`` (``n·x_i − c − D_i/2`` for the wall ``n·x ≥ c``,
one row of the force field's ``walls``; one contact per sphere and wall) and it is
*active* when ``g_N ≤ 0`` (the paper's active set; Moreau's scheme evaluates it at the
midpoint, the symmetric scheme at the node).

Both bodies act through one contact point ``C`` in the middle of the overlap, at the
lever arms ``r_i = −a_i n``, ``r_j = +a_j n`` with ``a = D/2 + g_N/2`` (so
``x_i + r_i = x_j + r_j`` exactly: a tangential percussion then has no net moment about
any point, and ``L`` is conserved by sphere–sphere friction).  The contact velocity of
``i`` relative to ``j`` is

``γ = (u_i + w_i × r_i) − (u_j + w_j × r_j) = u_i − u_j − (a_i w_i + a_j w_j) × n``

(``W_cᵀ U`` in the paper's notation), split into ``γ_N = n·γ`` and ``γ_T = γ − γ_N n``.
A percussion ``P = P_N n + P_T`` acts as ``+P`` on ``i`` at ``C`` and ``−P`` on ``j``:
``Δu_i = P/m_i``, ``Δw_i = r_i × P / J_i``, ``Δu_j = −P/m_j``, ``Δw_j = −r_j × P / J_j``.
For spheres the local Delassus block ``W_cᵀ M⁻¹ W_c`` is diagonal in the (normal,
tangent-plane) split: ``G_N = 1/m_i + 1/m_j``, ``G_T = G_N + a_i²/J_i + a_j²/J_j``
(the wall contributes nothing), which makes each contact's local problem solvable in
closed form inside the Gauss–Seidel sweep.

Work arrays ``cw = (idx (cap, 3), geo (cap, 8), P (cap, 4), gam (cap, 4), count (4,),
warm (slots, 5))``: ``idx[c] = (i, j, slot)``, ``geo[c] = (n₀, n₁, n₂, g_N, a_i, a_j, G_N,
G_T)``, ``P[c] = (P_N, P_T)`` the percussion, ``gam[c] = (γ_N⁻, γ_T⁻)`` the contact
velocity before the step, ``count = (active contacts, capacity, solve stamp, neighbour-list
build seen)``.  ``warm[slot]`` keeps the last percussion of each contact (slot: its
neighbour-list pair index, or ``pairs + w n + i`` for sphere ``i`` on wall ``w``, with
``pairs = capacity − k n`` for ``k`` walls) with the stamp
of the solve that wrote it: the solver starts from it when the same contact was active in
the previous step (warm start).  When the list has been rebuilt, the pair slots name other
pairs: the warm starts of the last solve's pair contacts are moved to their pairs' new
places (:func:`carry_warm_starts`), and the other pair slots are cleared.  So whether a
contact starts warm depends on the contacts of the previous step alone, never on when the
list was rebuilt, nor on whether a rebuild was a full build or a partial update (which
depends on the cell list of the last full build, kept in a scratch that a new chunk of
steps, a restore or a resumed run starts without): the trajectory is the same for any
chunking of the steps and after a resume (issue #26).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..layout import (
    ERR_NEIGHBOUR_OVERFLOW,
    NL_COUNT,
    NL_REBUILDS,
    OK,
    P_SKIN,
    T_HARD_CONTACT,
    T_HARD_WALL,
)
from ..neighbours import _lower_bound, ensure_neighbours_ws, excluded_partners

N_GEO = 8


def contact_capacity(n_bodies: int, n_pairs_capacity: int, n_walls: int = 1) -> int:
    """Contacts that can be active at once: every neighbour-list pair, and every sphere
    on every wall."""
    return int(n_pairs_capacity) + int(n_walls) * int(n_bodies)


def new_contact_work(n_bodies: int, n_pairs_capacity: int, n_walls: int = 1) -> tuple:
    """The contact work arrays ``cw`` for ``n_bodies`` spheres and ``n_walls`` walls (see
    module docstring)."""
    cap = max(1, contact_capacity(n_bodies, n_pairs_capacity, n_walls))
    count = np.zeros(4, dtype=np.int64)
    count[1] = cap
    count[3] = -1
    warm = np.zeros((cap, 5))
    warm[:, 4] = -1.0
    return (np.zeros((cap, 3), dtype=np.int64), np.zeros((cap, N_GEO)), np.zeros((cap, 4)),
            np.zeros((cap, 4)), count, warm)


def grown_contact_work(cw: tuple, n_bodies: int, n_pairs_capacity: int,
                       n_walls: int = 1) -> tuple:
    """New contact work arrays for a grown neighbour list of ``n_pairs_capacity`` pairs,
    keeping the warm starts of ``cw``: the last solve's contacts and stamp, the pair
    slots at their places (indices into the list they were written for; the next
    detection moves them to the new list, :func:`carry_warm_starts`) and the wall slots
    at theirs.  So a run that grows its list takes the same steps as one that did not
    need to."""
    new = new_contact_work(n_bodies, n_pairs_capacity, n_walls)
    idx, warm, count = cw[0], cw[5], cw[4]
    nidx, nwarm, ncount = new[0], new[5], new[4]
    old_pairs = idx.shape[0] - n_walls * n_bodies
    new_pairs = nidx.shape[0] - n_walls * n_bodies
    if old_pairs < 0 or new_pairs < old_pairs or warm.shape[1] != nwarm.shape[1]:
        return new  # (not the layout of new_contact_work: start cold)
    nc = int(count[0])
    nidx[:nc] = idx[:nc]
    nwarm[:old_pairs] = warm[:old_pairs]
    nwarm[new_pairs:new_pairs + n_walls * n_bodies] = warm[old_pairs:]
    walls = nidx[:nc, 1] < 0
    nidx[:nc, 2][walls & (nidx[:nc, 2] >= 0)] += new_pairs - old_pairs
    ncount[0] = nc
    ncount[2] = count[2]
    ncount[3] = -1  # (the new list's first build differs from any build seen)
    return new


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def carry_warm_starts(cw, pairs, n_pairs, n_slots_pairs):
    """After a rebuild of the neighbour list (``pairs[:n_pairs]``, sorted by ``(i, j)``):
    move the warm start of each pair contact of the last solve (``cw``'s contacts as
    that solve left them, their slots naming the list they were found in) to the slot
    of its pair in the new list, and clear every other pair slot.  A pair that is not
    in the new list is not in contact now (the list holds every pair that is).  ``geo``
    is the scratch (the detection fills it next)."""
    idx, geo, P, gam, count, warm = cw
    n_slots = max(0, min(n_slots_pairs, warm.shape[0]))
    k = 0
    for c in range(count[0]):  # the last solve's pair contacts, with their warm starts
        s = idx[c, 2]
        if idx[c, 1] < 0 or s < 0 or s >= n_slots:
            continue
        i = idx[c, 0]
        j = idx[c, 1]
        idx[k, 0] = i  # (k ≤ c: compacted in place)
        idx[k, 1] = j
        for t in range(5):
            geo[k, t] = warm[s, t]
        k += 1
    for s in range(n_slots):
        warm[s, 4] = -1.0
    for c in range(k):
        i = idx[c, 0]
        j = idx[c, 1]
        p = _lower_bound(pairs, 0, n_pairs, i, j)
        if p < n_pairs and p < n_slots and pairs[p, 0] == i and pairs[p, 1] == j:
            for t in range(5):
                warm[p, t] = geo[c, t]
    count[0] = 0


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def find_contacts_ws(x, ff, cw, iw):
    """Fill ``cw`` with the active contacts (``g_N ≤ 0``) at the positions ``x``, from
    the neighbour list (kept current here, with the integer scratch ``iw``) and the wall.

    Returns ``OK`` or ``ERR_NEIGHBOUR_OVERFLOW`` (the list, or ``cw``, is too small: the
    driver grows both and calls again)."""
    m, J, D, flags, fp, bonds, bond_ref, nl_pairs, nl_state, nl_xref = ff[:10]
    walls = ff[12]
    idx, geo, P, gam, count, warm = cw
    cap = idx.shape[0]
    n = x.shape[0]
    n_slots_pairs = cap - walls.shape[0] * n
    nc = 0
    if flags[T_HARD_CONTACT]:
        bptr, bpart = excluded_partners(ff)  # (none unless penalty contacts too)
        st = ensure_neighbours_ws(x, D, fp[P_SKIN], nl_pairs, nl_state, nl_xref, iw, bptr,
                                  bpart)
        if st != OK:
            return st
    if count[3] != nl_state[NL_REBUILDS]:  # pair slots now name other pairs
        count[3] = nl_state[NL_REBUILDS]
        carry_warm_starts(cw, nl_pairs, nl_state[NL_COUNT], n_slots_pairs)
    if flags[T_HARD_CONTACT]:
        for p in range(nl_state[0]):
            i = nl_pairs[p, 0]
            j = nl_pairs[p, 1]
            d0 = x[i, 0] - x[j, 0]
            d1 = x[i, 1] - x[j, 1]
            d2 = x[i, 2] - x[j, 2]
            r2 = d0 * d0 + d1 * d1 + d2 * d2
            sigma = 0.5 * (D[i] + D[j])
            if r2 > sigma * sigma or r2 <= 0.0:
                continue
            if nc >= cap:
                return ERR_NEIGHBOUR_OVERFLOW
            r = math.sqrt(r2)
            g = r - sigma
            idx[nc, 0] = i
            idx[nc, 1] = j
            idx[nc, 2] = p if p < n_slots_pairs else -1
            geo[nc, 0] = d0 / r
            geo[nc, 1] = d1 / r
            geo[nc, 2] = d2 / r
            geo[nc, 3] = g
            ai = 0.5 * D[i] + 0.5 * g
            aj = 0.5 * D[j] + 0.5 * g
            geo[nc, 4] = ai
            geo[nc, 5] = aj
            gn = 1.0 / m[i] + 1.0 / m[j]
            geo[nc, 6] = gn
            geo[nc, 7] = gn + ai * ai / J[i] + aj * aj / J[j]
            nc += 1
    if flags[T_HARD_WALL]:
        for w in range(walls.shape[0]):
            w0 = walls[w, 0]
            w1 = walls[w, 1]
            w2 = walls[w, 2]
            xw = walls[w, 3]
            base = n_slots_pairs + w * n
            for i in range(n):
                g = w0 * x[i, 0] + w1 * x[i, 1] + w2 * x[i, 2] - xw - 0.5 * D[i]
                if not g <= 0.0:
                    continue
                if nc >= cap:
                    return ERR_NEIGHBOUR_OVERFLOW
                slot = base + i
                idx[nc, 0] = i
                idx[nc, 1] = -1
                idx[nc, 2] = slot if 0 <= slot < cap else -1
                geo[nc, 0] = w0
                geo[nc, 1] = w1
                geo[nc, 2] = w2
                geo[nc, 3] = g
                ai = 0.5 * D[i] + 0.5 * g
                geo[nc, 4] = ai
                geo[nc, 5] = 0.0
                geo[nc, 6] = 1.0 / m[i]
                geo[nc, 7] = 1.0 / m[i] + ai * ai / J[i]
                nc += 1
    count[0] = nc
    return OK


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def contact_velocity(c, idx, geo, u, w):
    """``γ = W_cᵀ U`` of contact ``c`` for the velocities ``u`` and spins ``w``
    (module docstring): returns ``(γ_N, γ_T)`` with ``γ_T`` as a 3-vector."""
    i = idx[c, 0]
    j = idx[c, 1]
    n0 = geo[c, 0]
    n1 = geo[c, 1]
    n2 = geo[c, 2]
    ai = geo[c, 4]
    s0 = ai * w[i, 0]
    s1 = ai * w[i, 1]
    s2 = ai * w[i, 2]
    g0 = u[i, 0]
    g1 = u[i, 1]
    g2 = u[i, 2]
    if j >= 0:
        aj = geo[c, 5]
        s0 += aj * w[j, 0]
        s1 += aj * w[j, 1]
        s2 += aj * w[j, 2]
        g0 -= u[j, 0]
        g1 -= u[j, 1]
        g2 -= u[j, 2]
    # γ = u_i − u_j − s × n
    g0 -= s1 * n2 - s2 * n1
    g1 -= s2 * n0 - s0 * n2
    g2 -= s0 * n1 - s1 * n0
    gn = g0 * n0 + g1 * n1 + g2 * n2
    return gn, g0 - gn * n0, g1 - gn * n1, g2 - gn * n2


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def apply_percussion(c, idx, geo, m, J, p0, p1, p2, u, w):
    """Add the percussion ``P = (p0, p1, p2)`` of contact ``c`` to the velocities:
    ``+P`` on ``i`` at ``r_i = −a_i n``, ``−P`` on ``j`` at ``r_j = +a_j n``."""
    i = idx[c, 0]
    j = idx[c, 1]
    n0 = geo[c, 0]
    n1 = geo[c, 1]
    n2 = geo[c, 2]
    # n × P (the moment of P at r = −a n is −a n × P)
    c0 = n1 * p2 - n2 * p1
    c1 = n2 * p0 - n0 * p2
    c2 = n0 * p1 - n1 * p0
    mi = 1.0 / m[i]
    ki = geo[c, 4] / J[i]
    u[i, 0] += mi * p0
    u[i, 1] += mi * p1
    u[i, 2] += mi * p2
    w[i, 0] -= ki * c0
    w[i, 1] -= ki * c1
    w[i, 2] -= ki * c2
    if j >= 0:
        mj = 1.0 / m[j]
        kj = geo[c, 5] / J[j]
        u[j, 0] -= mj * p0
        u[j, 1] -= mj * p1
        u[j, 2] -= mj * p2
        # moment of −P at r_j = +a_j n: a_j n × (−P) = −a_j n × P
        w[j, 0] -= kj * c0
        w[j, 1] -= kj * c1
        w[j, 2] -= kj * c2
