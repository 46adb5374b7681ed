"""Penalty contacts with history: Hertz normal force, optional normal damping and a
tangential spring with a Coulomb limit (the linear history model of DEM codes; PFC's
linear contact, LAMMPS's ``tangential linear_history``), docs/physics.md §4.5.

The contact laws (pair ``i < j`` or sphere ``i`` and wall ``w``; ``n`` from ``j`` to
``i``, ``δ = 1 − r/σ`` the Hertz overlap of B&G eqs. (56)–(59), ``ov = σ δ``):

* normal: ``f_N = (K/σ) δ^{3/2} − γ v_N``, clamped at ``f_N ≥ 0`` (no attraction), with
  ``γ = 2 ζ sqrt(m* k_N)``, ``k_N = ∂f/∂ov = 3 K δ^{1/2} / (2 σ²)`` the Hertz contact's
  tangent stiffness, ``m* = m_i m_j/(m_i + m_j)`` (``m_i`` at a wall) and ``ζ`` the
  damping ratio (``fp[P_DAMPING]``);
* tangential: the spring ``ξ`` of the contact point of ``i`` relative to ``j`` (lever
  arms to the middle of the overlap, ``r_i = −(D_i/2 − ov/2) n``,
  ``r_j = +(D_j/2 − ov/2) n``, as the hard contacts of ``engine.contact.detect``),
  ``f_T = −k_t ξ`` with ``|f_T| ≤ μ f_N``; the moments ``r_i × f_T`` and
  ``r_j × (−f_T)`` act on the spheres (and reach the rotation update with the binder's).

**Trial and commit.**  The force kernels are functions of the configuration only; the
history is therefore *anchored* at the last committed configuration ``(x_ref, q_ref)``
(the start of the step) and the committed springs ``ξ_ref``.  An evaluation at
``(x, q)`` computes the trial spring ``ξ_tr = rot(ξ_ref) + Δ_T`` from the relative
displacement ``Δ`` of the contact points since the anchor (translations and the
incremental rotations ``θ = 2 vec(q ⊗ q_ref*)``), its Coulomb projection ``ξ`` and the
damping velocity ``v_N = Δ·n / τ`` (``τ``: the time since the anchor, set by the
stepping kernels); it writes ``ξ`` into the *trial* half of the double-buffered slot
table.  After an accepted step the stepping loop commits: the trial half becomes the
committed one and the anchor moves to the new configuration (:func:`commit_history`).
A rejected step therefore leaves the history of the last good state untouched.

**Energy.**  The committed spring's ``½ k_t |ξ|²`` is counted with the contact energy
(``contact``, ``wall``).  The work removed in the step is returned in
``hist_f[H_DISSIPATED]`` and added to the ``dissipated`` component by the loop, so that
``E + D ≈ E₀`` checks dissipative runs, to the scheme's own accuracy.  It has three
parts:

* slip: the work of the springs' forces over the step as the velocity-Verlet kicks
  apply it, ``½ k_t (ξ_k + ξ)·Δ_T`` (trapezoidal), less the change of ``½ k_t |ξ|²``
  (zero while sticking): ``E + D`` then keeps the scheme's own accuracy;
* damping: likewise ``−½ (f_d,k + f_d)·Δ_N`` (the damping force at the step's start is
  kept in the slot with the spring);
* the springs of contacts that ended in the step, ``½ k_t |ξ|²``, released as the
  spheres part.

Without friction and damping (``μ = 0``, ``ζ = 0``) none of this is active and the
contacts are the conservative Hertz potentials of ``engine.potentials.contact``.
Bonded neighbours (the binder's pairs) touch through the Hertz law only: no friction
and no damping between them (their relative motion is the binder's).

History table (``ff[13]``, :func:`new_history`): ``(hist_f, hist_i, partner, xi,
x_ref, q_ref, count, bptr, bpart)``.  ``partner[b, i, s]`` (``int32``) is the partner of
slot ``s`` of sphere ``i`` in buffer ``b`` (``j > i`` a sphere, ``n + w`` the wall ``w``,
``−1`` the end of the list), ``xi[b, i, s]`` its spring (``0:3``) and damping force
(``3``), kept when not both zero; ``hist_i[HI_CURRENT]`` is the committed buffer;
``bptr``, ``bpart``: the bonded partners (CSR).  A contact's spring lives with its lower
index, so it survives rebuilds of the neighbour list and needs no pair identity from
it; a sphere with more contacts than slots makes the kernel return
``ERR_HISTORY_OVERFLOW`` and the driver doubles the slots.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..layout import E_CONTACT, E_WALL, ERR_HISTORY_OVERFLOW, OK, T_HISTORY

H_TAU = 0  # hist_f: the time since the anchor (the step, or a stage's part of it)
H_DISSIPATED = 1  # hist_f: work removed by slip and damping since the anchor
HI_CURRENT = 0  # hist_i: the committed buffer (0 or 1)
DEFAULT_SLOTS = 6
"""History slots per sphere to start with (the driver doubles them when needed)."""


def new_history(n: int, slots: int = DEFAULT_SLOTS, x: np.ndarray | None = None,
                q: np.ndarray | None = None, bonds: np.ndarray | None = None) -> tuple:
    """An empty history table for ``n`` spheres with ``slots`` contacts each, anchored at
    ``(x, q)``, with the bonded pairs ``bonds (nb, 2)`` excluded (``n = 0``: the empty
    table of a model without history)."""
    hist_f = np.zeros(4)
    hist_i = np.zeros(4, dtype=np.int64)
    partner = np.full((2, n, slots), -1, dtype=np.int32)
    xi = np.zeros((2, n, slots, 4))
    x_ref = np.zeros((n, 3)) if x is None else np.array(x, dtype=np.float64)
    q_ref = np.zeros((n, 4)) if q is None else np.array(q, dtype=np.float64)
    bptr, bpart = bonded_partners(n, np.zeros((0, 2), np.int64) if bonds is None else bonds)
    return (hist_f, hist_i, partner, xi, x_ref, q_ref, np.zeros(n, dtype=np.int32), bptr,
            bpart)


def bonded_partners(n: int, bonds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """CSR of the bonded partners: those of ``i`` are ``bpart[bptr[i]:bptr[i + 1]]``."""
    b = np.asarray(bonds, dtype=np.int64).reshape(-1, 2)
    ends = np.concatenate([b[:, 0], b[:, 1]])
    others = np.concatenate([b[:, 1], b[:, 0]])
    order = np.argsort(ends, kind="stable")
    bptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(ends, minlength=n)[:n], out=bptr[1:])
    return bptr, np.ascontiguousarray(others[order], dtype=np.int32)


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def commit_history(hist, x, q):
    """Accept the trial springs of the last evaluation (at ``(x, q)``): they become the
    committed ones and the anchor moves to ``(x, q)``."""
    hist_f, hist_i, partner, xi, x_ref, q_ref, count, bptr, bpart = hist
    hist_i[HI_CURRENT] = 1 - hist_i[HI_CURRENT]
    for i in range(x_ref.shape[0]):
        for k in range(3):
            x_ref[i, k] = x[i, k]
        for k in range(4):
            q_ref[i, k] = q[i, k]
    hist_f[H_DISSIPATED] = 0.0


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _increment_rotation(q, q_ref, i):
    """``θ = 2 vec(q ⊗ q_ref*)`` (sign of the shorter way): the spatial rotation vector
    of sphere ``i`` since the anchor, to second order in the increment."""
    a0 = q[i, 0]
    a1 = q[i, 1]
    a2 = q[i, 2]
    a3 = q[i, 3]
    b0 = q_ref[i, 0]
    b1 = -q_ref[i, 1]
    b2 = -q_ref[i, 2]
    b3 = -q_ref[i, 3]
    w = a0 * b0 - a1 * b1 - a2 * b2 - a3 * b3
    t0 = a0 * b1 + a1 * b0 + a2 * b3 - a3 * b2
    t1 = a0 * b2 - a1 * b3 + a2 * b0 + a3 * b1
    t2 = a0 * b3 + a1 * b2 - a2 * b1 + a3 * b0
    s = 2.0 if w >= 0.0 else -2.0
    return s * t0, s * t1, s * t2


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _committed_spring(partner, xi, cur, i, key):
    """The committed spring of sphere ``i``'s contact with ``key`` and its damping force
    (zeros if none)."""
    for s in range(partner.shape[2]):
        p = partner[cur, i, s]
        if p == key:
            return xi[cur, i, s, 0], xi[cur, i, s, 1], xi[cur, i, s, 2], xi[cur, i, s, 3]
        if p < 0:
            break
    return 0.0, 0.0, 0.0, 0.0


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def contact_law(n0, n1, n2, fh, kn, m_eff, d0, d1, d2, s0, s1, s2, gd0, k_t, mu, zeta,
                tau):
    """One contact's damping and friction (the module docstring's laws).

    ``n``: unit normal from ``j`` to ``i``; ``fh``: the Hertz force magnitude; ``kn``
    its tangent stiffness; ``d``: the relative displacement of the contact point of ``i``
    with respect to ``j`` since the anchor; ``s``: the committed spring.

    ``gd0``: the damping part of the normal force at the step's start (committed).

    Returns ``(fN, ξ₀, ξ₁, ξ₂, dissipated)``: the normal force magnitude (damped,
    ``≥ 0``), the spring after the Coulomb projection (``f_T = −k_t ξ``) and the work
    removed by damping and slip since the anchor."""
    dn = d0 * n0 + d1 * n1 + d2 * n2
    fn = fh
    diss = 0.0
    if zeta > 0.0 and tau != 0.0:
        gamma = 2.0 * zeta * math.sqrt(m_eff * kn)
        fn = fh - gamma * dn / tau
        if fn < 0.0:
            fn = 0.0
        # the damping forces' work over the step as the kicks apply it (trapezoidal:
        # the step's start, gd0, and end): −½ (f_d,k + f_d) Δ_N, f_d = fn − fh
        diss = -0.5 * (gd0 + (fn - fh)) * dn
    if mu <= 0.0 or k_t <= 0.0:
        return fn, 0.0, 0.0, 0.0, diss
    # the committed spring, turned into the current tangent plane (length kept)
    sn = s0 * n0 + s1 * n1 + s2 * n2
    p0 = s0 - sn * n0
    p1 = s1 - sn * n1
    p2 = s2 - sn * n2
    ls = math.sqrt(s0 * s0 + s1 * s1 + s2 * s2)
    lp = math.sqrt(p0 * p0 + p1 * p1 + p2 * p2)
    if lp > 0.0:
        c = ls / lp
        p0 *= c
        p1 *= c
        p2 *= c
    e0 = d0 - dn * n0  # the tangential displacement of the step
    e1 = d1 - dn * n1
    e2 = d2 - dn * n2
    t0 = p0 + e0
    t1 = p1 + e1
    t2 = p2 + e2
    lt = math.sqrt(t0 * t0 + t1 * t1 + t2 * t2)
    lim = mu * fn / k_t  # the longest spring Coulomb allows
    if lt > lim:  # slip
        c = lim / lt
        t0 *= c
        t1 *= c
        t2 *= c
        # the work the scheme's forces −k_t ξ do over the step, by the trapezoidal rule
        # of the velocity-Verlet kicks (½ (f_k + f_k+1)·Δ), less the spring's energy
        # change: what slip removed (0 when sticking; ≥ 0)
        diss += 0.5 * k_t * ((p0 + t0) * e0 + (p1 + t1) * e1 + (p2 + t2) * e2
                             - (t0 * t0 + t1 * t1 + t2 * t2) + ls * ls)
    return fn, t0, t1, t2, diss


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def sphere_pair(i, j, x, q, D, m, k_contact, k_t, mu, zeta, hist):
    """The contact of spheres ``i < j`` (the same bits whichever side asks).

    Returns ``(hit, f0, f1, f2, ti0, ti1, ti2, tj0, tj1, tj2, e, diss, ξ₀, ξ₁, ξ₂)``:
    whether they touch, the force on ``i`` (``−`` on ``j``), the moments on ``i`` and
    ``j``, the energy (Hertz and committed spring), the work removed, the trial spring."""
    hist_f, hist_i, partner, xi, x_ref, q_ref, count, bptr, bpart = hist
    d0 = x[i, 0] - x[j, 0]
    d1 = x[i, 1] - x[j, 1]
    d2 = x[i, 2] - x[j, 2]
    rr = d0 * d0 + d1 * d1 + d2 * d2
    sigma = 0.5 * (D[i] + D[j])
    if rr >= sigma * sigma or rr == 0.0:
        return (False, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
                0.0, 0.0)
    r = math.sqrt(rr)
    n0 = d0 / r
    n1 = d1 / r
    n2 = d2 / r
    delta = 1.0 - r / sigma
    sq = math.sqrt(delta)
    e = 0.4 * k_contact * delta * delta * sq
    fh = (k_contact / sigma) * delta * sq
    kn = 1.5 * k_contact * sq / (sigma * sigma)
    ov = sigma - r
    a_i = 0.5 * D[i] - 0.5 * ov
    a_j = 0.5 * D[j] - 0.5 * ov
    # the contact points' relative displacement since the anchor: Δx + θ × r
    ai0, ai1, ai2 = _increment_rotation(q, q_ref, i)
    aj0, aj1, aj2 = _increment_rotation(q, q_ref, j)
    # θ_i × r_i with r_i = −a_i n, minus θ_j × r_j with r_j = a_j n
    c0 = -a_i * (ai1 * n2 - ai2 * n1) - a_j * (aj1 * n2 - aj2 * n1)
    c1 = -a_i * (ai2 * n0 - ai0 * n2) - a_j * (aj2 * n0 - aj0 * n2)
    c2 = -a_i * (ai0 * n1 - ai1 * n0) - a_j * (aj0 * n1 - aj1 * n0)
    u0 = (x[i, 0] - x_ref[i, 0]) - (x[j, 0] - x_ref[j, 0]) + c0
    u1 = (x[i, 1] - x_ref[i, 1]) - (x[j, 1] - x_ref[j, 1]) + c1
    u2 = (x[i, 2] - x_ref[i, 2]) - (x[j, 2] - x_ref[j, 2]) + c2
    s0, s1, s2, gd0 = _committed_spring(partner, xi, hist_i[HI_CURRENT], i, j)
    m_eff = m[i] * m[j] / (m[i] + m[j])
    for b in range(bptr[i], bptr[i + 1]):
        if bpart[b] == j:  # bonded neighbours: the Hertz law only (the binder acts)
            mu = 0.0
            zeta = 0.0
    fn, t0, t1, t2, diss = contact_law(n0, n1, n2, fh, kn, m_eff, u0, u1, u2, s0, s1, s2,
                                       gd0, k_t, mu, zeta, hist_f[H_TAU])
    g0 = fn * n0 - k_t * t0
    g1 = fn * n1 - k_t * t1
    g2 = fn * n2 - k_t * t2
    e += 0.5 * k_t * (t0 * t0 + t1 * t1 + t2 * t2)
    # moments: r_i × f_T and r_j × (−f_T), f_T = −k_t ξ (the normal part has no arm)
    c0 = k_t * (n1 * t2 - n2 * t1)
    c1 = k_t * (n2 * t0 - n0 * t2)
    c2 = k_t * (n0 * t1 - n1 * t0)
    return (True, g0, g1, g2, a_i * c0, a_i * c1, a_i * c2, a_j * c0, a_j * c1, a_j * c2, e,
            diss, t0, t1, t2, fn - fh)


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def sphere_wall(i, w, x, q, D, m, walls, k_wall, k_t, mu, zeta, hist):
    """The contact of sphere ``i`` with wall ``w`` (a particle of zero diameter, B&G
    eqs. (58), (59)): as :func:`sphere_pair` without the partner's moment.

    Returns ``(hit, f0, f1, f2, t0, t1, t2, e, diss, ξ₀, ξ₁, ξ₂, f_d)``."""
    hist_f, hist_i, partner, xi, x_ref, q_ref, count, bptr, bpart = hist
    n0 = walls[w, 0]
    n1 = walls[w, 1]
    n2 = walls[w, 2]
    rad = 0.5 * D[i]
    g = n0 * x[i, 0] + n1 * x[i, 1] + n2 * x[i, 2] - walls[w, 3]
    if g >= rad:
        return False, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    delta = 1.0 - g / rad
    sq = math.sqrt(delta)
    e = 0.4 * k_wall * delta * delta * sq
    fh = (k_wall / rad) * delta * sq
    kn = 1.5 * k_wall * sq / (rad * rad)
    a_i = 0.5 * (rad + g)
    ai0, ai1, ai2 = _increment_rotation(q, q_ref, i)
    u0 = x[i, 0] - x_ref[i, 0] - a_i * (ai1 * n2 - ai2 * n1)
    u1 = x[i, 1] - x_ref[i, 1] - a_i * (ai2 * n0 - ai0 * n2)
    u2 = x[i, 2] - x_ref[i, 2] - a_i * (ai0 * n1 - ai1 * n0)
    s0, s1, s2, gd0 = _committed_spring(partner, xi, hist_i[HI_CURRENT], i, x.shape[0] + w)
    fn, t0, t1, t2, diss = contact_law(n0, n1, n2, fh, kn, m[i], u0, u1, u2, s0, s1, s2,
                                       gd0, k_t, mu, zeta, hist_f[H_TAU])
    e += 0.5 * k_t * (t0 * t0 + t1 * t1 + t2 * t2)
    return (True, fn * n0 - k_t * t0, fn * n1 - k_t * t1, fn * n2 - k_t * t2,
            a_i * k_t * (n1 * t2 - n2 * t1), a_i * k_t * (n2 * t0 - n0 * t2),
            a_i * k_t * (n0 * t1 - n1 * t0), e, diss, t0, t1, t2, fn - fh)


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def store_trial(hist, i, key, t0, t1, t2, gd):
    """Write the trial spring and damping force ``gd`` of sphere ``i``'s contact with
    ``key`` (when not both zero) into the next free slot of the trial buffer; ``False``
    when ``i`` has no free slot left."""
    hist_f, hist_i, partner, xi, x_ref, q_ref, count, bptr, bpart = hist
    if t0 == 0.0 and t1 == 0.0 and t2 == 0.0 and gd == 0.0:
        return True  # (no spring: nothing to keep)
    s = count[i]
    if s >= partner.shape[2]:
        return False
    b = 1 - hist_i[HI_CURRENT]
    partner[b, i, s] = key
    xi[b, i, s, 0] = t0
    xi[b, i, s, 1] = t1
    xi[b, i, s, 2] = t2
    xi[b, i, s, 3] = gd
    count[i] = s + 1
    return True


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def close_trial(hist, i, k_t):
    """End sphere ``i``'s list in the trial buffer; return the energy ``½ k_t |ξ|²`` of
    its committed springs whose contacts have ended (no trial spring): released when
    the spheres part, it is work the contact removed, counted as dissipated."""
    hist_f, hist_i, partner, xi, x_ref, q_ref, count, bptr, bpart = hist
    b = 1 - hist_i[HI_CURRENT]
    cur = hist_i[HI_CURRENT]
    c = count[i]
    if c < partner.shape[2]:
        partner[b, i, c] = -1
    released = 0.0
    for s in range(partner.shape[2]):
        key = partner[cur, i, s]
        if key < 0:
            break
        kept = False
        for t in range(c):
            if partner[b, i, t] == key:
                kept = True
                break
        if not kept:
            released += 0.5 * k_t * (xi[cur, i, s, 0] ** 2 + xi[cur, i, s, 1] ** 2
                                     + xi[cur, i, s, 2] ** 2)
    return released


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def add_hit(F, RM, i, f0, f1, f2, t0, t1, t2):
    """Add a contact's force ``f`` and torque ``t`` on body ``i`` to ``F`` and ``RM``:
    the one place for the serial kernel here and ``engine.parallel`` (issue #34; the
    partner's reaction is the call with ``−f``, the same bits as subtracting ``f``)."""
    F[i, 0] += f0
    F[i, 1] += f1
    F[i, 2] += f2
    RM[i, 0] += t0
    RM[i, 1] += t1
    RM[i, 2] += t2


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def history_contacts(x, q, D, m, pairs, n_pairs, walls, n_walls, k_contact, k_wall, k_t,
                     mu, zeta, hist, F, RM, energy):
    """Serial kernel: the sphere contacts of the neighbour list's candidate ``pairs``
    and of the first ``n_walls`` walls with damping and friction (module docstring);
    fills ``F``, ``RM``, the ``contact`` and ``wall`` energies and
    ``hist_f[H_DISSIPATED]``, and the trial springs.  Returns ``OK`` or
    ``ERR_HISTORY_OVERFLOW``."""
    hist_f, hist_i, partner, xi, x_ref, q_ref, count, bptr, bpart = hist
    n = x.shape[0]
    track = (mu > 0.0 and k_t > 0.0) or zeta > 0.0
    for i in range(n):
        count[i] = 0
    e_c = 0.0
    e_w = 0.0
    diss = 0.0
    status = OK
    for p in range(n_pairs):
        i = pairs[p, 0]
        j = pairs[p, 1]
        if i > j:
            i, j = j, i
        (hit, f0, f1, f2, ti0, ti1, ti2, tj0, tj1, tj2, e, dd, t0, t1, t2,
         gd) = sphere_pair(i, j, x, q, D, m, k_contact, k_t, mu, zeta, hist)
        if not hit:
            continue
        add_hit(F, RM, i, f0, f1, f2, ti0, ti1, ti2)
        add_hit(F, RM, j, -f0, -f1, -f2, tj0, tj1, tj2)
        e_c += e
        diss += dd
        if track and not store_trial(hist, i, j, t0, t1, t2, gd):
            status = ERR_HISTORY_OVERFLOW
    # (the wall step of engine.parallel._history_of_chunk, wall by wall here: not merged,
    # the order of these sums fixes the serial runs' bits, tests/test_bits.py; issue #34)
    for w in range(n_walls):
        for i in range(n):
            (hit, f0, f1, f2, ti0, ti1, ti2, e, dd, t0, t1, t2,
             gd) = sphere_wall(i, w, x, q, D, m, walls, k_wall, k_t, mu, zeta, hist)
            if not hit:
                continue
            add_hit(F, RM, i, f0, f1, f2, ti0, ti1, ti2)
            e_w += e
            diss += dd
            if track and not store_trial(hist, i, n + w, t0, t1, t2, gd):
                status = ERR_HISTORY_OVERFLOW
    if track:
        for i in range(n):
            diss += close_trial(hist, i, k_t)
    energy[E_CONTACT] += e_c
    energy[E_WALL] += e_w
    hist_f[H_DISSIPATED] = diss
    return status


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def set_anchor_time(ff, tau):
    """Tell the history contacts of ``ff`` that the configuration about to be evaluated
    lies ``tau`` after the anchor (the damping velocity is ``Δ_N / τ``): the stepping
    loop sets ``h``, multi-stage schemes their stage's part of it."""
    if ff[3][T_HISTORY]:
        ff[13][0][H_TAU] = tau
