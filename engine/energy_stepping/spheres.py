"""The event loop of energy-stepping for spheres (issue #28; physics.md §3.10 "Many
bodies"; docs/physics.md §3.10).

Each body carries its own clock ``tb[i]``: its ``x``, ``q`` are those of time ``tb[i]``
and it flies freely (``x + s v``, ``exp(s Ω̂) q``) until one of its terms crosses a level.
The queue (``.queue``) holds each term's predicted crossing; an event brings the term's
bodies to the event time, jumps their momenta along the term's gradient (§3.10 second
bullet), moves the term to its new terrace and predicts again every term of the bodies
whose velocities changed.  The candidate contacts are the pairs closer than ``σ +
skin`` when the list was built; each body's SKIN term fires when it has moved ``skin/2``
since then, and the list is rebuilt (no pair off the list can touch before: it is at
least ``σ`` apart).  Deterministic: ties in time are taken in term order.
"""

from __future__ import annotations

import math

from numba import njit

from .queue import heap_clear, heap_set
from .terms import (
    BEND,
    C_A,
    C_I,
    C_J,
    C_KIND,
    C_LEVEL,
    C_ON,
    C_SHI,
    C_SIDE,
    C_SLO,
    C_SPRED,
    CONTACT,
    F_HI,
    F_LO,
    F_ORIGIN,
    F_SIGN,
    F_TON,
    GRAVITY,
    INF,
    N_TF,
    N_TI,
    OFF,
    ON_HI,
    ON_LO,
    Q_EPS,
    Q_SKIN,
    RADIAL,
    SHEAR,
    SKIN,
    WALL,
    bring,
    fly_quat,
    march_bound,
    march_f,
    pair_vector,
    set_bounds,
    term_gradient,
    term_value,
)

OK = 0
ERR_CAPACITY = 1  # the contact list needs more room (``ctr[N_NEED]``): grow, call again
ERR_STUCK = 2  # events without any flight between them
ERR_LOST_CONTACT = 3  # a term off its bottom terrace left the list (cannot happen)
ERR_MAX_EVENTS = 4
ERR_NONFINITE = 5

# counters (int64 array ``ctr``)
N_STATIC = 0  # static terms: bonds, walls, gravity, skin (indices [0, N_STATIC))
N_CONTACTS = 1  # contact terms (indices [N_STATIC, N_STATIC + N_CONTACTS))
N_HEAP = 2
N_EVENTS = 3
N_REFLECT = 4
N_TOUCH = 5
N_REBUILD = 6
N_NEED = 7
N_DTS = 8
N_ZERO = 9
N_RECHECK = 10  # re-checks of a march (not events: nothing jumps)
N_BY_KIND = 11  # events of each kind (terms.KIND_NAMES order, 7 slots)
N_REBUILD_WORK = 18  # the predictions of the contact-list rebuilds (work: issue #46 item 4)
N_CTR = 19

MAX_MARCH = 1
"""Safe steps per prediction of an attitude term before a re-check event is queued
instead (the re-check continues the march), far from a level (``MARCH_NEAR``).  One:
most predictions are undone by a jump of one of the term's bodies before they come due,
and a single step, at the present state, needs no flight (measured on the torus: 1.8 µs
an event, against 3.6 with 4 steps and 13 with 16; BENCHMARKS.md)."""
MARCH_NEAR = 1e-9
"""Within this of a level the march goes on at once (a handful of quadratically
converging steps, up to ``MAX_MARCH_NEAR``) instead of queuing a re-check."""
MAX_MARCH_NEAR = 32
MARCH_TOL = 1e-14
"""A march stops when ``f`` is this close to a level and moving towards it (``f`` is a
cosine, ``|f| ≤ 1``); the crossing is then taken there."""
MAX_ZERO_FLIGHTS = 1000


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False, inline="always")
def work_done(ctr):
    """The work the budget of :func:`run_events` counts: events, re-checks, and the
    predictions each contact-list rebuild makes (one per term: a rebuild moves no clock,
    and spheres fast enough to need one every few ulps of ``t`` once spun in one call
    for ever, deaf to signals: issue #46 item 4)."""
    return ctr[N_EVENTS] + ctr[N_RECHECK] + ctr[N_REBUILD_WORK]


# --------------------------------------------------------------------------------------
# predictions
# --------------------------------------------------------------------------------------


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False, inline="always")
def _exit_lo(A, B, x):
    """First ``s > 0`` with ``|d + s w|² = r_lo²`` going down (``A = |w|²``, ``B = d·w``,
    ``x = |d|² − r_lo²``): the smaller root, cancellation-free; ``inf`` when none."""
    if B >= 0.0:
        return INF
    if x <= 0.0:
        return 0.0
    disc = B * B - A * x
    if disc < 0.0:
        return INF
    return x / (-B + math.sqrt(disc))


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False, inline="always")
def _exit_hi(A, B, x):
    """First ``s > 0`` with ``|d + s w|² = r_hi²`` going up (``x = |d|² − r_hi²``)."""
    if A == 0.0:
        return INF
    disc = B * B - A * x
    if B > 0.0:
        if x >= 0.0:
            return 0.0
        return -x / (B + math.sqrt(disc))
    if disc < 0.0:
        return 0.0  # outside the terrace and never back in: cross now
    return (-B + math.sqrt(disc)) / A


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False, inline="always")
def _safe(d, u, G):
    """The least time in which ``f`` could cover the distance ``d ≥ 0`` towards a level,
    moving towards it at ``u`` with ``|f''| ≤ G``: the positive root of ``½Gs² + us =
    d``."""
    if G == 0.0:
        return d / u if u > 0.0 else INF
    disc = math.sqrt(u * u + 2.0 * G * d)
    if u > 0.0:
        return 2.0 * d / (u + disc)
    return (-u + disc) / G


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False)
def predict(k, t, TI, TF, x, v, q, om, tb, bref, walls, prm, xref):
    """``(time, s)``: term ``k``'s next crossing from time ``t`` (its bodies brought to
    ``t``): ``s = +1`` through ``hi``, ``−1`` through ``lo``, ``0`` a re-check of a march
    (``inf``: none ahead)."""
    kind = TI[k, C_KIND]
    i = TI[k, C_I]
    j = TI[k, C_J]
    bring(i, t, x, v, q, om, tb)
    if j != i:
        bring(j, t, x, v, q, om, tb)
    lo = TF[k, F_LO]
    hi = TF[k, F_HI]
    on = TI[k, C_ON] if TF[k, F_TON] == t else OFF  # (on a level only at its event)
    has_lo = TI[k, C_SLO] != 0
    has_hi = TI[k, C_SHI] != 0
    s_lo = INF
    s_hi = INF
    if kind == RADIAL or kind == CONTACT or kind == SKIN:
        if kind == SKIN:
            d0, d1, d2 = x[i, 0] - xref[i, 0], x[i, 1] - xref[i, 1], x[i, 2] - xref[i, 2]
            w0, w1, w2 = v[i, 0], v[i, 1], v[i, 2]
            has_hi = True
        else:
            d0, d1, d2 = x[i, 0] - x[j, 0], x[i, 1] - x[j, 1], x[i, 2] - x[j, 2]
            w0, w1, w2 = v[i, 0] - v[j, 0], v[i, 1] - v[j, 1], v[i, 2] - v[j, 2]
        A = w0 * w0 + w1 * w1 + w2 * w2
        B = d0 * w0 + d1 * w1 + d2 * w2
        C = d0 * d0 + d1 * d1 + d2 * d2
        if has_lo and on != ON_LO and lo > 0.0:
            s_lo = _exit_lo(A, B, C - lo * lo)
        if has_hi:
            if on == ON_HI:  # on r_hi now: back to it at the other root, or now
                s_hi = -2.0 * B / A if B < 0.0 else 0.0
            else:
                s_hi = _exit_hi(A, B, C - hi * hi)
    elif kind == WALL or kind == GRAVITY:
        if kind == WALL:
            wl = TI[k, C_A]
            n0, n1, n2 = walls[wl, 0], walls[wl, 1], walls[wl, 2]
            f = n0 * x[i, 0] + n1 * x[i, 1] + n2 * x[i, 2] - walls[wl, 3]
        else:
            n0, n1, n2 = prm[7], prm[8], prm[9]
            f = n0 * x[i, 0] + n1 * x[i, 1] + n2 * x[i, 2]
        u = n0 * v[i, 0] + n1 * v[i, 1] + n2 * v[i, 2]
        if has_lo and on != ON_LO and u < 0.0:
            s_lo = max((lo - f) / u, 0.0)
        if has_hi and on != ON_HI and u > 0.0:
            s_hi = max((hi - f) / u, 0.0)
    else:  # BEND, SHEAR: the safe march (docs/physics.md §3.10)
        s = 0.0
        for it in range(MAX_MARCH_NEAR):
            f, fp = march_f(k, TI, TF, x, v, q, om, bref, s)
            if not (math.isfinite(f) and math.isfinite(fp)):
                return INF, 0
            dl = max(f - lo, 0.0)
            dh = max(hi - f, 0.0)
            # (converged: one Newton step onto the level, so that the crossing is the
            # same from either side: time reversal)
            if has_lo and dl <= MARCH_TOL and fp < 0.0:
                return t + s + dl / -fp, -1
            if has_hi and dh <= MARCH_TOL and fp > 0.0:
                return t + s + dh / fp, 1
            G, s_max = march_bound(k, TI, x, v, om, s)
            step_lo = _safe(dl, -fp, G) if has_lo else INF
            step_hi = _safe(dh, fp, G) if has_hi else INF
            step = min(step_lo, step_hi, s_max)
            if step == INF:
                return INF, 0
            if t + (s + step) == t + s:  # below the clock's resolution: the crossing
                if step == step_lo and fp < 0.0:  # is here (to within an ulp of t)
                    return t + s, -1
                if step == step_hi and fp > 0.0:
                    return t + s, 1
                step = max(step, 4e-16 * (1.0 + abs(t)))  # (a tangency: creep)
            s += step
            if it + 1 >= MAX_MARCH and min(dl if has_lo else INF,
                                           dh if has_hi else INF) > MARCH_NEAR:
                break  # (far from a level: a re-check continues later)
        return t + s, 0
    if s_lo <= s_hi:
        if s_lo == INF:
            return INF, 0
        return t + s_lo, -1
    return t + s_hi, 1


# --------------------------------------------------------------------------------------
# the jump
# --------------------------------------------------------------------------------------


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False)
def jump(k, s, TI, x, v, q, om, m, J, D, bonds, bref, walls, prm, g, force):
    """The §3.10 jump of term ``k`` at its crossing through ``lo`` (``s = −1``) or ``hi``
    (``+1``), the bodies synchronised: ``p ← p + μ F``, ``L ← L + μ M`` with ``a = Σ
    |F|²/m + |M|²/J``, ``b = −Σ (F·v + M·Ω) = dV/dt`` and ``ΔV = ±ε`` the step of
    ``V_ε``: crossing up needs ``b > 0`` and ``D = b² − 2aΔV ≥ 0`` (``μ = 2ΔV/(b +
    √D)``, else the reflection ``μ = 2b/a``), crossing down needs ``b < 0`` (``μ =
    2ΔV/(b − √D)``); ``T + V_ε`` is unchanged.  ``b`` of the wrong sign is a touch (a
    tangency: nothing changes), unless ``force`` (a start from rest on a level).
    Returns the level change (``±1``), ``0`` for a reflection, ``2`` for a touch."""
    dl = TI[k, C_SLO] if s < 0 else TI[k, C_SHI]
    term_gradient(k, TI, prm, x, q, D, bonds, bref, walls, m, g)
    i = TI[k, C_I]
    j = TI[k, C_J]
    pair = j != i
    a = (g[0, 0] ** 2 + g[0, 1] ** 2 + g[0, 2] ** 2) / m[i] \
        + (g[2, 0] ** 2 + g[2, 1] ** 2 + g[2, 2] ** 2) / J[i]
    b = -(g[0, 0] * v[i, 0] + g[0, 1] * v[i, 1] + g[0, 2] * v[i, 2]
          + g[2, 0] * om[i, 0] + g[2, 1] * om[i, 1] + g[2, 2] * om[i, 2])
    if pair:
        a += (g[1, 0] ** 2 + g[1, 1] ** 2 + g[1, 2] ** 2) / m[j] \
            + (g[3, 0] ** 2 + g[3, 1] ** 2 + g[3, 2] ** 2) / J[j]
        b -= (g[1, 0] * v[j, 0] + g[1, 1] * v[j, 1] + g[1, 2] * v[j, 2]
              + g[3, 0] * om[j, 0] + g[3, 1] * om[j, 1] + g[3, 2] * om[j, 2])
    if a == 0.0 or dl == 0:
        return 2
    dv = dl * prm[Q_EPS]
    if dv > 0.0:
        if b <= 0.0 and not force:
            return 2
        disc = b * b - 2.0 * a * dv
        if disc >= 0.0:
            mu = 2.0 * dv / (b + math.sqrt(disc))
            res = dl
        else:
            mu = 2.0 * b / a
            res = 0
    else:
        if b >= 0.0 and not force:
            return 2
        mu = 2.0 * dv / (b - math.sqrt(b * b - 2.0 * a * dv))
        res = dl
    for c in range(3):
        v[i, c] += mu * g[0, c] / m[i]
        om[i, c] += mu * g[2, c] / J[i]
    if pair:
        for c in range(3):
            v[j, c] += mu * g[1, c] / m[j]
            om[j, c] += mu * g[3, c] / J[j]
    return res


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False)
def after_jump(k, s, res, t, TI, TF, x, q, prm, D, bonds, bref, rstar, vmin, walls, m):
    """Term ``k`` after its event through ``lo`` (``s = −1``) or ``hi``: on its new
    terrace (a crossing) or on the same (reflection, touch), the flight starting on the
    bound just met (``ON_LO``/``ON_HI``: the crossed ``hi`` is the new ``lo``) at the
    event's time ``t``."""
    TF[k, F_TON] = t
    if res == 0 or res == 2:
        TI[k, C_ON] = ON_LO if s < 0 else ON_HI
        return
    TI[k, C_LEVEL] += res
    TI[k, C_ON] = ON_HI if s < 0 else ON_LO
    _orient(k, TI, TF, x, q, rstar)
    set_bounds(k, TI, TF, prm, D, bonds, bref, rstar, vmin, walls, m)


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False)
def _orient(k, TI, TF, x, q, rstar):
    """Which branch of its ``f`` term ``k`` is on, from the synchronised state: the side of
    ``r*`` (RADIAL; ``set_bounds`` makes it 0 on the bottom terrace), the sign ``s₀`` of
    ``q_i·q_j`` (BEND)."""
    kind = TI[k, C_KIND]
    i = TI[k, C_I]
    j = TI[k, C_J]
    if kind == RADIAL:
        _, _, _, r = pair_vector(x, i, j)
        TI[k, C_SIDE] = 1 if r > rstar[TI[k, C_A]] else -1
    elif kind == BEND:
        w = q[i, 0] * q[j, 0] + q[i, 1] * q[j, 1] + q[i, 2] * q[j, 2] + q[i, 3] * q[j, 3]
        TF[k, F_SIGN] = 1.0 if w >= 0.0 else -1.0


# --------------------------------------------------------------------------------------
# terms: set-up, the contact list
# --------------------------------------------------------------------------------------


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False)
def init_term(k, TI, TF, x, q, prm, D, bonds, bref, rstar, vmin, walls, m, xref, origin):
    """Term ``k``'s terrace from the synchronised state: level ``⌊(V − o)/ε⌋``, the side
    (RADIAL), the sign ``s₀`` (BEND), its bounds; the flight starts off the levels."""
    eps = prm[Q_EPS]
    TF[k, F_ORIGIN] = origin
    TF[k, F_TON] = -INF
    TI[k, C_ON] = OFF
    TI[k, C_SPRED] = 0
    if TI[k, C_KIND] == SKIN:
        TI[k, C_LEVEL] = 0
    else:
        val = term_value(k, TI, prm, x, q, D, bonds, bref, walls, m, xref)
        TI[k, C_LEVEL] = int(math.floor((val - origin) / eps))
    _orient(k, TI, TF, x, q, rstar)
    set_bounds(k, TI, TF, prm, D, bonds, bref, rstar, vmin, walls, m)


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False, inline="always")
def _candidate(i, j, x, D, skin, bptr, bpart):
    """Whether the pair ``i < j`` belongs on the contact list: closer than ``σ + skin``
    and not bonded."""
    reach = 0.5 * (D[i] + D[j]) + skin
    d0, d1, d2 = x[i, 0] - x[j, 0], x[i, 1] - x[j, 1], x[i, 2] - x[j, 2]
    return d0 * d0 + d1 * d1 + d2 * d2 < reach * reach and not _bonded(i, j, bptr, bpart)


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False)
def _bonded(i, j, bptr, bpart):
    for p in range(bptr[i], bptr[i + 1]):
        if bpart[p] == j:
            return True
    return False


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False)
def rebuild(t, TI, TF, tpred, heap, hpos, ctr, cptr, cidx, x, v, q, om, tb, m, D,
            bonds, bref, rstar, vmin, walls, prm, xref, bptr, bpart, old_ti, old_tf, fill):
    """The candidate contacts anew at time ``t``: every pair ``i < j`` closer than ``σ +
    skin`` and not bonded (all pairs tested: ``O(n²)``); a pair already listed keeps its
    terrace and flags, a new one starts on its bottom terrace (it is farther than ``σ``:
    ``V = 0``).  Returns ``ERR_CAPACITY`` (nothing changed, ``ctr[N_NEED]`` set) when the
    arrays are too small.  ``old_ti``, ``old_tf``, ``fill``: scratch (the old contact
    terms, the CSR fill pointers), as large as the contact capacity and ``n``."""
    n = x.shape[0]
    for i in range(n):
        bring(i, t, x, v, q, om, tb)
    skin = prm[Q_SKIN]
    base = ctr[N_STATIC]
    n_old = ctr[N_CONTACTS]
    cap = TI.shape[0] - base
    count = 0
    for i in range(n):
        for j in range(i + 1, n):
            if _candidate(i, j, x, D, skin, bptr, bpart):
                count += 1
    if count > cap or 2 * count > cidx.shape[0] or n_old > old_ti.shape[0]:
        ctr[N_NEED] = count
        return ERR_CAPACITY
    for p in range(n_old):
        for col in range(N_TI):
            old_ti[p, col] = TI[base + p, col]
        for col in range(N_TF):
            old_tf[p, col] = TF[base + p, col]
    for p in range(n_old):
        k = base + p
        if hpos[k] >= 0:
            ctr[N_HEAP] = heap_set(heap, hpos, tpred, ctr[N_HEAP], k, INF)
    p_old = 0
    c = 0
    eps = prm[Q_EPS]
    for i in range(n):
        for j in range(i + 1, n):
            if not _candidate(i, j, x, D, skin, bptr, bpart):
                continue
            # the old pairs before (i, j) are gone: they must have been on their
            # bottom terrace
            while p_old < n_old and (old_ti[p_old, C_I] < i or (
                    old_ti[p_old, C_I] == i and old_ti[p_old, C_J] < j)):
                if old_ti[p_old, C_LEVEL] != 0:
                    return ERR_LOST_CONTACT
                p_old += 1
            k = base + c
            if p_old < n_old and old_ti[p_old, C_I] == i and old_ti[p_old, C_J] == j:
                for col in range(N_TI):
                    TI[k, col] = old_ti[p_old, col]
                for col in range(N_TF):
                    TF[k, col] = old_tf[p_old, col]
                p_old += 1
            else:
                TI[k, C_KIND] = CONTACT
                TI[k, C_I] = i
                TI[k, C_J] = j
                TI[k, C_A] = 0
                TI[k, C_SIDE] = 0
                init_term(k, TI, TF, x, q, prm, D, bonds, bref, rstar, vmin, walls, m,
                          xref, -0.5 * eps)
            hpos[k] = -1
            c += 1
    while p_old < n_old:
        if old_ti[p_old, C_LEVEL] != 0:
            return ERR_LOST_CONTACT
        p_old += 1
    ctr[N_CONTACTS] = c
    # each body's contacts (CSR)
    for i in range(n + 1):
        cptr[i] = 0
    for p in range(c):
        cptr[TI[base + p, C_I] + 1] += 1
        cptr[TI[base + p, C_J] + 1] += 1
    for i in range(n):
        cptr[i + 1] += cptr[i]
    for i in range(n):
        fill[i] = cptr[i]
    for p in range(c):
        i = TI[base + p, C_I]
        j = TI[base + p, C_J]
        cidx[fill[i]] = base + p
        fill[i] += 1
        cidx[fill[j]] = base + p
        fill[j] += 1
    for i in range(n):
        for col in range(3):
            xref[i, col] = x[i, col]
    ctr[N_REBUILD] += 1
    return OK


# --------------------------------------------------------------------------------------
# the loop
# --------------------------------------------------------------------------------------


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False)
def requeue(k, t, TI, TF, tpred, heap, hpos, ctr, x, v, q, om, tb, bref, walls, prm, xref):
    te, s = predict(k, t, TI, TF, x, v, q, om, tb, bref, walls, prm, xref)
    TI[k, C_SPRED] = s
    ctr[N_HEAP] = heap_set(heap, hpos, tpred, ctr[N_HEAP], k, te)


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False)
def requeue_body(i, t, moved, turned, TI, TF, tpred, heap, hpos, ctr, sptr, sidx, cptr,
                 cidx, x, v, q, om, tb, bref, walls, prm, xref):
    """Predict again the terms of body ``i`` whose flight changed at ``t``: those that
    depend on ``v_i`` if it ``moved`` (every kind but BEND), on ``Ω_i`` if it ``turned``
    (BEND, SHEAR); the others' predictions still hold."""
    for p in range(sptr[i], sptr[i + 1]):
        k = sidx[p]
        kind = TI[k, C_KIND]
        if (moved and kind != BEND) or (turned and (kind == BEND or kind == SHEAR)):
            requeue(k, t, TI, TF, tpred, heap, hpos, ctr, x, v, q, om, tb, bref, walls,
                    prm, xref)
    if not moved:
        return
    for p in range(cptr[i], cptr[i + 1]):
        requeue(cidx[p], t, TI, TF, tpred, heap, hpos, ctr, x, v, q, om, tb, bref, walls,
                prm, xref)


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False)
def requeue_all(t, TI, TF, tpred, heap, hpos, ctr, x, v, q, om, tb, bref, walls, prm,
                xref):
    ctr[N_HEAP] = heap_clear(heap, hpos, ctr[N_HEAP])
    for k in range(ctr[N_STATIC] + ctr[N_CONTACTS]):
        requeue(k, t, TI, TF, tpred, heap, hpos, ctr, x, v, q, om, tb, bref, walls, prm,
                xref)


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False)
def run_events(t_end, max_events, TI, TF, tpred, heap, hpos, ctr, sptr, sidx, cptr, cidx,
               x, v, q, om, tb, m, J, D, bonds, bref, rstar, vmin, walls, prm, xref, bptr,
               bpart, dts, clock, g, old_ti, old_tf, fill):
    """Every event with time ``≤ t_end``, at most ``max_events`` units of work (events,
    re-checks and rebuilds, :func:`work_done`: the budget of one call, issue #33 item 4,
    issue #46 item 4).  The bodies are *not* brought to ``t_end``: each stays on its own
    clock ``tb[i]`` (a record reads the flights with :func:`sample`, so that recording
    never changes the run: issue #33 item 1).  ``clock[0]``: the time of the last event
    (for the self-chosen steps ``dts``).  Returns a status (``OK``: every event up to
    ``t_end`` done; ``ERR_MAX_EVENTS``: the budget is spent, call again;
    ``ERR_CAPACITY``: grow and call again, the state is consistent either way; the others
    stop the run)."""
    start = work_done(ctr)
    while ctr[N_HEAP] > 0:
        k = heap[0]
        te = tpred[k]
        if te > t_end:
            break
        if work_done(ctr) - start >= max_events:  # (events, re-checks, rebuilds)
            return ERR_MAX_EVENTS
        if te == clock[0]:
            ctr[N_ZERO] += 1
            if ctr[N_ZERO] > MAX_ZERO_FLIGHTS:
                return ERR_STUCK
        else:
            ctr[N_ZERO] = 0
        kind = TI[k, C_KIND]
        if kind == SKIN:
            st = rebuild(te, TI, TF, tpred, heap, hpos, ctr, cptr, cidx, x, v, q, om, tb,
                         m, D, bonds, bref, rstar, vmin, walls, prm, xref, bptr, bpart,
                         old_ti, old_tf, fill)
            if st != OK:
                return st
            requeue_all(te, TI, TF, tpred, heap, hpos, ctr, x, v, q, om, tb, bref, walls,
                        prm, xref)
            ctr[N_REBUILD_WORK] += ctr[N_STATIC] + ctr[N_CONTACTS]
            continue
        s = TI[k, C_SPRED]
        i = TI[k, C_I]
        j = TI[k, C_J]
        bring(i, te, x, v, q, om, tb)
        bring(j, te, x, v, q, om, tb)
        if s == 0:
            ctr[N_RECHECK] += 1
            requeue(k, te, TI, TF, tpred, heap, hpos, ctr, x, v, q, om, tb, bref, walls,
                    prm, xref)
            continue
        res = jump(k, s, TI, x, v, q, om, m, J, D, bonds, bref, walls, prm, g, False)
        after_jump(k, s, res, te, TI, TF, x, q, prm, D, bonds, bref, rstar, vmin, walls, m)
        n_ev = ctr[N_EVENTS]
        ctr[N_BY_KIND + kind] += 1
        if n_ev < dts.shape[0]:
            dts[n_ev] = te - clock[0]
        clock[0] = te
        ctr[N_EVENTS] += 1
        if res == 2:
            ctr[N_TOUCH] += 1
            requeue(k, te, TI, TF, tpred, heap, hpos, ctr, x, v, q, om, tb, bref, walls,
                    prm, xref)
            continue
        if res == 0:
            ctr[N_REFLECT] += 1
        if not (math.isfinite(v[i, 0]) and math.isfinite(om[i, 0])
                and math.isfinite(v[j, 0]) and math.isfinite(om[j, 0])):
            return ERR_NONFINITE
        # (the kinds' gradients: BEND moves Ω only; RADIAL, CONTACT, WALL, GRAVITY v only)
        moved = kind != BEND
        turned = kind == BEND or kind == SHEAR
        requeue_body(i, te, moved, turned, TI, TF, tpred, heap, hpos, ctr, sptr, sidx,
                     cptr, cidx, x, v, q, om, tb, bref, walls, prm, xref)
        if j != i:
            requeue_body(j, te, moved, turned, TI, TF, tpred, heap, hpos, ctr, sptr, sidx,
                         cptr, cidx, x, v, q, om, tb, bref, walls, prm, xref)
    return OK


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False)
def sample(t, x, v, q, om, tb, xs, vs, qs, oms):
    """The bodies at time ``t`` read on their flights (``t ≥ tb[i]``, no event between):
    ``xs = x + (t − tb) v``, ``qs = exp((t − tb) Ω̂) q`` with the Newton step of
    :func:`~.terms.bring` (the values ``bring`` would give), ``vs = v``, ``oms = Ω``;
    the stepper's own state is left as it is (issue #33 item 1)."""
    for i in range(x.shape[0]):
        s = t - tb[i]
        for c in range(3):
            xs[i, c] = x[i, c] + s * v[i, c] if s != 0.0 else x[i, c]
            vs[i, c] = v[i, c]
            oms[i, c] = om[i, c]
        if s == 0.0:
            for c in range(4):
                qs[i, c] = q[i, c]
            continue
        p0, p1, p2, p3 = fly_quat(q[i, 0], q[i, 1], q[i, 2], q[i, 3], om[i, 0], om[i, 1],
                                  om[i, 2], s)
        f = 1.5 - 0.5 * (p0 * p0 + p1 * p1 + p2 * p2 + p3 * p3)
        qs[i, 0], qs[i, 1], qs[i, 2], qs[i, 3] = f * p0, f * p1, f * p2, f * p3


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False)
def start(t0, TI, TF, tpred, heap, hpos, ctr, sptr, sidx, cptr, cidx, x, v, q, om, tb, m,
          J, D, bonds, bref, rstar, vmin, walls, prm, xref, bptr, bpart, g, origins, rest,
          old_ti, old_tf, fill):
    """Set up at ``t0``: the static terms' terraces (``origins[k]``), the contact list,
    the kicks of the terms that start on a level from rest (``rest[k]``: GRAVITY of a
    body at rest steps down at once by ε/2: ``half_kick``, §3.10 and docs/physics.md),
    the queue."""
    for i in range(x.shape[0]):
        tb[i] = t0
    for k in range(ctr[N_STATIC]):
        init_term(k, TI, TF, x, q, prm, D, bonds, bref, rstar, vmin, walls, m, xref,
                  origins[k])
    skin = False
    for k in range(ctr[N_STATIC]):
        skin = skin or TI[k, C_KIND] == SKIN
    if skin:
        st = rebuild(t0, TI, TF, tpred, heap, hpos, ctr, cptr, cidx, x, v, q, om, tb, m, D,
                     bonds, bref, rstar, vmin, walls, prm, xref, bptr, bpart, old_ti, old_tf,
                     fill)
        if st != OK:
            return st
    for k in range(ctr[N_STATIC]):
        if rest[k]:  # on its level ℓ_0 = V(0), at rest: step down through hi, by ε/2
            TI[k, C_LEVEL] = 0
            set_bounds(k, TI, TF, prm, D, bonds, bref, rstar, vmin, walls, m)
            res = half_kick(k, TI, x, v, q, om, m, J, D, bonds, bref, walls, prm, g)
            after_jump(k, 1, res, t0, TI, TF, x, q, prm, D, bonds, bref, rstar, vmin, walls, m)
            ctr[N_EVENTS] += 1
    requeue_all(t0, TI, TF, tpred, heap, hpos, ctr, x, v, q, om, tb, bref, walls, prm, xref)
    return OK


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False)
def half_kick(k, TI, x, v, q, om, m, J, D, bonds, bref, walls, prm, g):
    """The start from rest of term ``k`` on its level ``ℓ_0 = V(0)`` (issue #33 item 7):
    on the level itself ``V_ε`` is the level's value, the mean of the terraces either
    side, so stepping down to the terrace below (``V_ε = V(0) − ε/2``) gains the kinetic
    energy ``ε/2``, not ``ε``: the §3.10 jump with ``ΔV = −ε/2``.  Then ``T + V_ε =
    V(0) = E₀`` exactly, as for a term started mid-terrace, and ``|E − E₀| ≤ ε/2`` for
    this term from ``t = 0`` on (a whole-``ε`` step made every resting sphere of a pile
    start ``ε`` above ``E₀``)."""
    eps = prm[Q_EPS]
    prm[Q_EPS] = 0.5 * eps
    res = jump(k, 1, TI, x, v, q, om, m, J, D, bonds, bref, walls, prm, g, True)
    prm[Q_EPS] = eps
    return res


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False)
def refill_queue(nt, tpred, heap, hpos):
    """The queue of the terms ``[0, nt)`` from their predicted times (a resumed
    stepper: the pops come in the order of ``(time, term)`` whatever the layout);
    returns its size."""
    size = 0
    for k in range(hpos.shape[0]):
        hpos[k] = -1
    for k in range(nt):
        t = tpred[k]
        tpred[k] = INF
        size = heap_set(heap, hpos, tpred, size, k, t)
    return size


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False)
def energies(TI, TF, ctr, x, v, q, om, m, J, D, bonds, bref, walls, prm, xref):
    """``(T, Σ V_k, Σ V_ε,k)`` at the synchronised state, ``V_ε,k = o_k + (L_k + ½)ε``
    (the middle of the terrace)."""
    T = 0.0
    for i in range(x.shape[0]):
        T += 0.5 * m[i] * (v[i, 0] ** 2 + v[i, 1] ** 2 + v[i, 2] ** 2) \
            + 0.5 * J[i] * (om[i, 0] ** 2 + om[i, 1] ** 2 + om[i, 2] ** 2)
    V = 0.0
    Ve = 0.0
    eps = prm[Q_EPS]
    for k in range(ctr[N_STATIC] + ctr[N_CONTACTS]):
        if TI[k, C_KIND] == SKIN:
            continue
        V += term_value(k, TI, prm, x, q, D, bonds, bref, walls, m, xref)
        Ve += TF[k, F_ORIGIN] + (TI[k, C_LEVEL] + 0.5) * eps
    return T, V, Ve


__all__ = ["BEND", "GRAVITY", "SHEAR", "WALL", "run_events", "sample", "start"]
