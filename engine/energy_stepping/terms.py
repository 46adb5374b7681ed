"""The terraced interaction terms of a model of spheres (issue #28; contract
physics.md §3.10 "Many bodies"; derivation docs/physics.md §3.10).

Each interaction term ``V_k`` is terraced on its own, ``V_ε = Σ_k V_ε,k``, with the
levels ``ℓ_L = o_k + Lε`` of term ``k`` (its origin ``o_k``: ``−ε/2`` for the terms that
are 0 at rest, so a sphere out of contact or a bond at its rest length sits in the middle
of its terrace).  Each term is a monotone function of one scalar ``f`` of the motion on
each side of its minimum, so a terrace is an interval ``lo < f < hi`` and a crossing is
``f`` reaching ``lo`` or ``hi``:

======== ==================================== =========================== ==============
kind      V_k                                  f                           crossing time
======== ==================================== =========================== ==============
RADIAL    ½K^a(r/r₀−1)² + ⅖K^pp[1−r/σ]₊^{5/2}  r = |x_i − x_j| (bond)      quadratic
BEND      ½K^m θ², θ = 2 acos|q_i·q_j|         s₀ q_i·q_j                  safe march
SHEAR     ¼K^s (1 − c)², c = (R_e d̂₀)·d̂        c (end e of the bond)       safe march
CONTACT   ⅖K^pp [1 − r/σ]₊^{5/2}               r (a listed pair)           quadratic
WALL      ⅖K^pw [1 − g/(D/2)]₊^{5/2}           g = n·x_i − c               linear
GRAVITY   −m g (ê·x_i)                         ê·x_i                       linear
SKIN      (none: the neighbour list's expiry)  |x_i − x_i^list|            quadratic
======== ==================================== =========================== ==============

(B&G §4 and docs/physics.md §4.2 for the laws; the binder's shear is split into its two
ends, each invariant, so that both are terraced separately.)  Every term is invariant
under translations and rotations except WALL and GRAVITY, so its jump keeps ``P`` and
``L`` exactly; the gradients below are those of ``engine.potentials`` term by term.
"""

from __future__ import annotations

import math

from numba import njit

from ..rotations import quat_mul_t, quat_rotate_t

# kinds
RADIAL = 0
BEND = 1
SHEAR = 2
CONTACT = 3
WALL = 4
GRAVITY = 5
SKIN = 6
KIND_NAMES = ("radial", "bend", "shear", "contact", "wall", "gravity", "skin")

# integer columns of a term
C_KIND = 0
C_I = 1
C_J = 2
C_A = 3  # bond index (RADIAL, BEND, SHEAR), wall index (WALL)
C_LEVEL = 4
C_SIDE = 5  # RADIAL: +1 stretched, −1 compressed, 0 the bottom terrace; SHEAR: the end
C_ON = 6  # ON_LO / ON_HI: the flight starts on that bound (just crossed or reflected,
#          at the time F_TON)
C_SPRED = 7  # the predicted crossing: +1 through hi, −1 through lo, 0 a re-check
C_SLO = 8  # change of level when crossing lo (+1 or −1; 0: no bound)
C_SHI = 9
N_TI = 10
# float columns
F_LO = 0
F_HI = 1
F_ORIGIN = 2
F_SIGN = 3  # BEND: s₀, the sign of q_i·q_j in this terrace
F_TON = 4  # the time of the term's last event: ``C_ON`` holds only then (the flight
#           leaves the level at once)
N_TF = 5

OFF = 0
ON_LO = 1
ON_HI = 2

# parameters
Q_EPS = 0
Q_KB = 1
Q_KA = 2
Q_KS = 3
Q_KC = 4
Q_KW = 5
Q_G = 6
Q_GDIR = 7  # 3 slots
Q_SKIN = 10
N_Q = 11

# columns of a bond's row ``bref[b]``: its rest direction and length ``(d̂₀, r₀)``, then its
# own binder coefficients (bond types of different coefficients, issue #35 item 1: each
# bond's terms are terraced with its own ``K^m``, ``K^a``, ``K^s``; a model of one set
# carries the global constants in every row, the same numbers as before, so its bits are
# those of before)
B_R0 = 3
B_KB = 4
B_KA = 5
B_KS = 6
N_BREF = 7

INF = math.inf


# --------------------------------------------------------------------------------------
# flights
# --------------------------------------------------------------------------------------


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False, inline="always")
def fly_quat(q0, q1, q2, q3, o0, o1, o2, s):
    """``exp(s Ω̂) q`` as ``(cos(θ/2), sin(θ/2) k) ⊗ q``, ``θ = |Ω| s`` (§3.10 flight).
    (``rotations.quat_from_rotvec_t`` of ``sΩ`` is the same map; this form, with ``|Ω|``
    taken once, is the one every recorded energy-stepping run was made with.)"""
    w = math.sqrt(o0 * o0 + o1 * o1 + o2 * o2)
    if w == 0.0 or s == 0.0:
        return q0, q1, q2, q3
    half = 0.5 * w * s
    f = math.sin(half) / w
    return quat_mul_t(math.cos(half), f * o0, f * o1, f * o2, q0, q1, q2, q3)


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False)
def bring(i, t, x, v, q, om, tb):
    """Body ``i`` flown to time ``t`` (exact free flight, then one Newton step towards
    ``|q| = 1``)."""
    s = t - tb[i]
    if s == 0.0:
        return
    for c in range(3):
        x[i, c] += s * v[i, c]
    p0, p1, p2, p3 = fly_quat(q[i, 0], q[i, 1], q[i, 2], q[i, 3], om[i, 0], om[i, 1],
                              om[i, 2], s)
    f = 1.5 - 0.5 * (p0 * p0 + p1 * p1 + p2 * p2 + p3 * p3)
    q[i, 0], q[i, 1], q[i, 2], q[i, 3] = f * p0, f * p1, f * p2, f * p3
    tb[i] = t


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False, inline="always")
def pair_vector(x, i, j):
    """``(d₀, d₁, d₂, r)``: ``d = x_i − x_j`` and ``r = |d|``."""
    d0, d1, d2 = x[i, 0] - x[j, 0], x[i, 1] - x[j, 1], x[i, 2] - x[j, 2]
    return d0, d1, d2, math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False, inline="always")
def hertz_v(delta, k):
    """``⅖ k [δ]₊^{5/2}`` (B&G eqs. (56), (58); ``δ = 1 − r/σ`` or ``1 − g/(D/2)``)."""
    return 0.4 * k * delta * delta * math.sqrt(delta) if delta > 0.0 else 0.0


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False)
def bend_angle(q, i, j):
    """``|θ_ij|`` of ``R_i R_jᵀ``: ``2 atan2(|p_v|, |p₀|)``, ``p = q_i ⊗ q_j*``."""
    p0, p1, p2, p3 = quat_mul_t(q[i, 0], q[i, 1], q[i, 2], q[i, 3], q[j, 0], -q[j, 1],
                                -q[j, 2], -q[j, 3])
    return 2.0 * math.atan2(math.sqrt(p1 * p1 + p2 * p2 + p3 * p3), abs(p0))


# --------------------------------------------------------------------------------------
# the radial bond term: axial spring + the bonded spheres' Hertz contact
# --------------------------------------------------------------------------------------


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False)
def radial_v(r, r0, sigma, ka, kc):
    s = r / r0 - 1.0
    d = 1.0 - r / sigma
    e = 0.5 * ka * s * s
    if d > 0.0:
        e += 0.4 * kc * d * d * math.sqrt(d)
    return e


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False)
def radial_dv(r, r0, sigma, ka, kc):
    """``dV/dr`` (axial ``K^a/r₀ (r/r₀ − 1)``, contact ``−K^pp/σ [1 − r/σ]^{3/2}``)."""
    d = 1.0 - r / sigma
    g = ka / r0 * (r / r0 - 1.0)
    if d > 0.0:
        g -= kc / sigma * d * math.sqrt(d)
    return g


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False)
def radial_minimum(r0, sigma, ka, kc):
    """``(r*, V(r*))``: the minimum of the convex ``V(r)``, ``r* ∈ [r₀, max(r₀, σ)]``
    (bisection on ``V'``; ``r* = r₀`` when the spheres do not overlap at ``r₀``)."""
    if sigma <= r0 or kc == 0.0:
        return r0, radial_v(r0, r0, sigma, ka, kc)
    a, b = r0, sigma
    if ka == 0.0:
        return sigma, 0.0
    for _ in range(200):
        m = 0.5 * (a + b)
        if m <= a or m >= b:
            break
        if radial_dv(m, r0, sigma, ka, kc) < 0.0:
            a = m
        else:
            b = m
    return b, radial_v(b, r0, sigma, ka, kc)


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False)
def radial_level_r(val, side, r0, sigma, ka, kc, rstar):
    """The ``r`` on ``side`` (+1: ``r > r*``, −1: ``r < r*``) where ``V(r) = val``, by
    Newton from the far side (``V`` convex: the iterates approach the root monotonically,
    no overshoot); ``±inf`` when ``V`` never reaches ``val`` on that side."""
    if side > 0:
        if ka == 0.0:
            return INF
        r = r0 * (1.0 + math.sqrt(2.0 * val / ka))  # the axial part alone: V ≥ val here
        if r < rstar:
            r = rstar
    else:
        r = INF
        if kc > 0.0:
            r = sigma * (1.0 - (val / (0.4 * kc)) ** 0.4) if val < 0.4 * kc else 0.0
        if ka > 0.0:
            r = min(r, r0 * (1.0 - math.sqrt(2.0 * val / ka)))
        if r == INF:
            return -INF
        if r < 0.0:
            r = 0.0
            if radial_v(0.0, r0, sigma, ka, kc) < val:
                return -INF
        if r > rstar:
            r = rstar
    for _ in range(60):
        g = radial_v(r, r0, sigma, ka, kc) - val
        dg = radial_dv(r, r0, sigma, ka, kc)
        if dg == 0.0:
            break
        step = g / dg
        rn = r - step
        if side > 0:  # monotone from the right: never cross r*
            if not rn < r:
                break
            rn = max(rn, rstar)
        else:
            if not rn > r:
                break
            rn = min(rn, rstar)
        if rn == r:
            break
        r = rn
    return r


# --------------------------------------------------------------------------------------
# bounds of a terrace
# --------------------------------------------------------------------------------------


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False)
def hertz_level(val, size, k):
    """``g`` with ``⅖ k [1 − g/size]^{5/2} = val`` (``+inf`` for ``val ≤ 0``: the
    potential is 0 beyond contact; ``−inf`` above its largest value)."""
    if val <= 0.0:
        return INF
    if k <= 0.0 or val >= 0.4 * k:
        return -INF
    return size * (1.0 - (val / (0.4 * k)) ** 0.4)


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False)
def set_bounds(k, TI, TF, prm, D, bonds, bref, rstar, vmin, walls, m):
    """``lo``, ``hi`` of term ``k``'s terrace ``C_LEVEL`` (and ``C_SIDE`` for RADIAL) in
    its ``f``, with the level change of each crossing: ``V`` decreasing in ``f`` for
    every kind but the stretched side of RADIAL, so ``lo`` is a step up (``+1``) and
    ``hi`` a step down (``−1``)."""
    eps = prm[Q_EPS]
    kind = TI[k, C_KIND]
    lv = TF[k, F_ORIGIN] + TI[k, C_LEVEL] * eps  # ℓ_L
    lu = lv + eps  # ℓ_{L+1}
    lo, hi = -INF, INF
    slo, shi = 1, -1
    i = TI[k, C_I]
    if kind == RADIAL:
        b = TI[k, C_A]
        r0 = bref[b, B_R0]
        sigma = 0.5 * (D[bonds[b, 0]] + D[bonds[b, 1]])
        ka, kc = bref[b, B_KA], prm[Q_KC]
        side = TI[k, C_SIDE]
        if lv <= vmin[b]:  # the bottom terrace holds the minimum: both sides
            TI[k, C_SIDE] = 0
            lo = radial_level_r(lu, -1, r0, sigma, ka, kc, rstar[b])
            hi = radial_level_r(lu, 1, r0, sigma, ka, kc, rstar[b])
            slo, shi = 1, 1
        elif side > 0:
            lo = radial_level_r(lv, 1, r0, sigma, ka, kc, rstar[b])
            hi = radial_level_r(lu, 1, r0, sigma, ka, kc, rstar[b])
            slo, shi = -1, 1
        else:
            lo = radial_level_r(lu, -1, r0, sigma, ka, kc, rstar[b])
            hi = radial_level_r(lv, -1, r0, sigma, ka, kc, rstar[b])
    elif kind == BEND:
        kb = bref[TI[k, C_A], B_KB]
        if kb > 0.0:
            th = math.sqrt(2.0 * max(lu, 0.0) / kb)
            lo = math.cos(0.5 * th) if th < math.pi else -INF
            if lv > 0.0:
                th = math.sqrt(2.0 * lv / kb)
                hi = math.cos(0.5 * th) if th < math.pi else -INF
    elif kind == SHEAR:
        ks = bref[TI[k, C_A], B_KS]
        if ks > 0.0:
            c = 1.0 - math.sqrt(4.0 * max(lu, 0.0) / ks)
            lo = c if c >= -1.0 else -INF
            if lv > 0.0:
                c = 1.0 - math.sqrt(4.0 * lv / ks)
                hi = c if c >= -1.0 else -INF
    elif kind == CONTACT:
        sigma = 0.5 * (D[i] + D[TI[k, C_J]])
        lo = hertz_level(lu, sigma, prm[Q_KC])
        hi = hertz_level(lv, sigma, prm[Q_KC])
    elif kind == WALL:
        lo = hertz_level(lu, 0.5 * D[i], prm[Q_KW])
        hi = hertz_level(lv, 0.5 * D[i], prm[Q_KW])
    elif kind == GRAVITY:
        mg = m[i] * prm[Q_G]
        lo = -lu / mg
        hi = -lv / mg
    elif kind == SKIN:
        lo = -INF
        hi = 0.5 * prm[Q_SKIN]
        slo, shi = 0, 0
    TF[k, F_LO] = lo
    TF[k, F_HI] = hi
    TI[k, C_SLO] = slo if lo > -INF else 0
    TI[k, C_SHI] = shi if hi < INF else 0


# --------------------------------------------------------------------------------------
# values, gradients
# --------------------------------------------------------------------------------------


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False)
def term_value(k, TI, prm, x, q, D, bonds, bref, walls, m, xref):
    """``V_k`` (SKIN: the displacement since the list was built) with the bodies
    synchronised."""
    kind = TI[k, C_KIND]
    i = TI[k, C_I]
    j = TI[k, C_J]
    if kind == RADIAL or kind == CONTACT:
        _, _, _, r = pair_vector(x, i, j)
        sigma = 0.5 * (D[i] + D[j])
        if kind == RADIAL:
            b = TI[k, C_A]
            return radial_v(r, bref[b, B_R0], sigma, bref[b, B_KA], prm[Q_KC])
        return hertz_v(1.0 - r / sigma, prm[Q_KC])
    if kind == BEND:
        th = bend_angle(q, i, j)
        return 0.5 * bref[TI[k, C_A], B_KB] * th * th
    if kind == SHEAR:
        c, _ = shear_c(TI[k, C_SIDE], i, j, x, q, bref, TI[k, C_A])
        u = 1.0 - c
        return 0.25 * bref[TI[k, C_A], B_KS] * u * u
    if kind == WALL:
        wl = TI[k, C_A]
        g = walls[wl, 0] * x[i, 0] + walls[wl, 1] * x[i, 1] + walls[wl, 2] * x[i, 2] \
            - walls[wl, 3]
        return hertz_v(1.0 - g / (0.5 * D[i]), prm[Q_KW])
    if kind == GRAVITY:
        return -m[i] * prm[Q_G] * (prm[Q_GDIR] * x[i, 0] + prm[Q_GDIR + 1] * x[i, 1]
                                   + prm[Q_GDIR + 2] * x[i, 2])
    d0, d1, d2 = x[i, 0] - xref[i, 0], x[i, 1] - xref[i, 1], x[i, 2] - xref[i, 2]
    return math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False)
def shear_c(end, i, j, x, q, bref, b):
    """``(c, r)``: ``c = (R_e d̂₀)·d̂`` of the bond's end ``e`` (0: ``i``, 1: ``j``)."""
    e = i if end == 0 else j
    a0, a1, a2 = quat_rotate_t(q[e, 0], q[e, 1], q[e, 2], q[e, 3], bref[b, 0], bref[b, 1],
                               bref[b, 2])
    d0, d1, d2, r = pair_vector(x, i, j)
    return (a0 * d0 + a1 * d1 + a2 * d2) / r, r


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False)
def term_gradient(k, TI, prm, x, q, D, bonds, bref, walls, m, g):
    """The forces and spatial moments of term ``k`` (``F = −∂V/∂x``, ``M = −∂V/∂θ``,
    the repository's convention) into ``g``: rows ``F_i, F_j, M_i, M_j``."""
    for r_ in range(4):
        for c in range(3):
            g[r_, c] = 0.0
    kind = TI[k, C_KIND]
    i = TI[k, C_I]
    j = TI[k, C_J]
    if kind == RADIAL or kind == CONTACT:
        d0, d1, d2, r = pair_vector(x, i, j)
        sigma = 0.5 * (D[i] + D[j])
        if kind == RADIAL:
            b = TI[k, C_A]
            dv = radial_dv(r, bref[b, B_R0], sigma, bref[b, B_KA], prm[Q_KC])
        else:
            dl = 1.0 - r / sigma
            dv = -prm[Q_KC] / sigma * dl * math.sqrt(dl) if dl > 0.0 else 0.0
        f = -dv / r
        g[0, 0], g[0, 1], g[0, 2] = f * d0, f * d1, f * d2
        g[1, 0], g[1, 1], g[1, 2] = -f * d0, -f * d1, -f * d2
    elif kind == BEND:
        # θ_ij = rotvec(q_i ⊗ q_j*) in the atan2 form of bend_angle (the form the levels
        # are placed with); M_i = −K^m θ_ij = −M_j (B&G eqs. (44)–(47))
        p0, p1, p2, p3 = quat_mul_t(q[i, 0], q[i, 1], q[i, 2], q[i, 3], q[j, 0], -q[j, 1],
                                    -q[j, 2], -q[j, 3])
        if p0 < 0.0:
            p0, p1, p2, p3 = -p0, -p1, -p2, -p3
        nv = math.sqrt(p1 * p1 + p2 * p2 + p3 * p3)
        f = 2.0 * math.atan2(nv, p0) / nv if nv > 0.0 else 2.0 / p0
        kb = bref[TI[k, C_A], B_KB]
        g[2, 0], g[2, 1], g[2, 2] = -kb * f * p1, -kb * f * p2, -kb * f * p3
        g[3, 0], g[3, 1], g[3, 2] = kb * f * p1, kb * f * p2, kb * f * p3
    elif kind == SHEAR:
        end = TI[k, C_SIDE]
        b = TI[k, C_A]
        e = i if end == 0 else j
        a0, a1, a2 = quat_rotate_t(q[e, 0], q[e, 1], q[e, 2], q[e, 3], bref[b, 0],
                                   bref[b, 1], bref[b, 2])
        d0, d1, d2, r = pair_vector(x, i, j)
        n0, n1, n2 = d0 / r, d1 / r, d2 / r
        c = a0 * n0 + a1 * n1 + a2 * n2
        h = 0.5 * bref[b, B_KS] * (1.0 - c)
        gi = h / r  # F_i = ½K^s(1 − c)(I − d̂d̂ᵀ)a/r = −F_j; M_e = ½K^s(1 − c) a × d̂
        g[0, 0] = gi * (a0 - c * n0)
        g[0, 1] = gi * (a1 - c * n1)
        g[0, 2] = gi * (a2 - c * n2)
        g[1, 0], g[1, 1], g[1, 2] = -g[0, 0], -g[0, 1], -g[0, 2]
        row = 2 if end == 0 else 3
        g[row, 0] = h * (a1 * n2 - a2 * n1)
        g[row, 1] = h * (a2 * n0 - a0 * n2)
        g[row, 2] = h * (a0 * n1 - a1 * n0)
    elif kind == WALL:
        wl = TI[k, C_A]
        rad = 0.5 * D[i]
        gg = walls[wl, 0] * x[i, 0] + walls[wl, 1] * x[i, 1] + walls[wl, 2] * x[i, 2] \
            - walls[wl, 3]
        dl = 1.0 - gg / rad
        if dl > 0.0:
            f = prm[Q_KW] / rad * dl * math.sqrt(dl)
            g[0, 0], g[0, 1], g[0, 2] = f * walls[wl, 0], f * walls[wl, 1], f * walls[wl, 2]
    elif kind == GRAVITY:
        f = m[i] * prm[Q_G]
        g[0, 0], g[0, 1], g[0, 2] = f * prm[Q_GDIR], f * prm[Q_GDIR + 1], \
            f * prm[Q_GDIR + 2]


# --------------------------------------------------------------------------------------
# f along a flight, for the safe march (BEND, SHEAR)
# --------------------------------------------------------------------------------------


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False)
def march_f(k, TI, TF, x, v, q, om, bref, s):
    """``(f, f')`` of the attitude-dependent term ``k`` at the time ``s`` after the
    bodies' (common) synchronised time, by exact flights of copies.

    * BEND: ``f = s₀ w``, ``w = q_i·q_j`` (the scalar part of ``q_i ⊗ q_j*``); with
      ``q(s) = e(s) ⊗ q``, ``w' = ((Ω_j − Ω_i)/2)·p_v``, ``p = q_i ⊗ q_j*``.
    * SHEAR: ``f = c = a·u``, ``a = R_e d̂₀``, ``u = d/r``: ``f' = (Ω_e × a)·u +
      a·(w − (u·w)u)/r``, ``w = v_i − v_j``.
    """
    i = TI[k, C_I]
    j = TI[k, C_J]
    qi0, qi1, qi2, qi3 = fly_quat(q[i, 0], q[i, 1], q[i, 2], q[i, 3], om[i, 0], om[i, 1],
                                  om[i, 2], s)
    qj0, qj1, qj2, qj3 = fly_quat(q[j, 0], q[j, 1], q[j, 2], q[j, 3], om[j, 0], om[j, 1],
                                  om[j, 2], s)
    if TI[k, C_KIND] == BEND:
        sg = TF[k, F_SIGN]
        w = qi0 * qj0 + qi1 * qj1 + qi2 * qj2 + qi3 * qj3
        _, p1, p2, p3 = quat_mul_t(qi0, qi1, qi2, qi3, qj0, -qj1, -qj2, -qj3)
        dw = 0.5 * ((om[j, 0] - om[i, 0]) * p1 + (om[j, 1] - om[i, 1]) * p2
                    + (om[j, 2] - om[i, 2]) * p3)
        return sg * w, sg * dw
    b = TI[k, C_A]
    if TI[k, C_SIDE] == 0:
        e = i
        a0, a1, a2 = quat_rotate_t(qi0, qi1, qi2, qi3, bref[b, 0], bref[b, 1], bref[b, 2])
    else:
        e = j
        a0, a1, a2 = quat_rotate_t(qj0, qj1, qj2, qj3, bref[b, 0], bref[b, 1], bref[b, 2])
    w0, w1, w2 = v[i, 0] - v[j, 0], v[i, 1] - v[j, 1], v[i, 2] - v[j, 2]
    d0 = x[i, 0] - x[j, 0] + s * w0
    d1 = x[i, 1] - x[j, 1] + s * w1
    d2 = x[i, 2] - x[j, 2] + s * w2
    r = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
    u0, u1, u2 = d0 / r, d1 / r, d2 / r
    c = a0 * u0 + a1 * u1 + a2 * u2
    o0, o1, o2 = om[e, 0], om[e, 1], om[e, 2]
    da = (o1 * a2 - o2 * a1) * u0 + (o2 * a0 - o0 * a2) * u1 + (o0 * a1 - o1 * a0) * u2
    uw = u0 * w0 + u1 * w1 + u2 * w2
    du = (a0 * (w0 - uw * u0) + a1 * (w1 - uw * u1) + a2 * (w2 - uw * u2)) / r
    return c, da + du


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False)
def march_bound(k, TI, x, v, om, s_now):
    """``(G, s_max)``: ``|f''| ≤ G`` on ``[s_now, s_now + s_max]`` (docs/physics.md
    §3.10, "safe march").  BEND: ``w`` is the dot product of two unit quaternions each
    moving on a great circle at the angular speed ``α = |Ω|/2``, so ``|w''| ≤ (α_i +
    α_j)²`` for all time.  SHEAR: ``|a'| = |Ω_e × a| ≤ ω``, ``|a''| ≤ ω²``, ``|u'| ≤ |w|/r``,
    ``|u''| ≤ 3|w|²/r²``, so ``|f''| ≤ ω² + 2ω|w|/r + 3|w|²/r²`` with ``r ≥ r(s_now)/2``
    over ``s_max = r(s_now)/(2|w|)``."""
    i = TI[k, C_I]
    j = TI[k, C_J]
    wi = math.sqrt(om[i, 0] ** 2 + om[i, 1] ** 2 + om[i, 2] ** 2)
    wj = math.sqrt(om[j, 0] ** 2 + om[j, 1] ** 2 + om[j, 2] ** 2)
    if TI[k, C_KIND] == BEND:
        a = 0.5 * (wi + wj)
        return a * a, INF
    e_w = wi if TI[k, C_SIDE] == 0 else wj
    w0, w1, w2 = v[i, 0] - v[j, 0], v[i, 1] - v[j, 1], v[i, 2] - v[j, 2]
    wn = math.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
    d0 = x[i, 0] - x[j, 0] + s_now * w0
    d1 = x[i, 1] - x[j, 1] + s_now * w1
    d2 = x[i, 2] - x[j, 2] + s_now * w2
    r = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
    rm = 0.5 * r
    G = e_w * e_w + 2.0 * e_w * wn / rm + 3.0 * wn * wn / (rm * rm)
    s_max = rm / wn if wn > 0.0 else INF
    return G, s_max

