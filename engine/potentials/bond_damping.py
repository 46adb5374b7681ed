"""The bonds' own damping of LAMMPS's BPM laws (issue #44 item 1; docs/physics.md §4.6
"Bond damping"): ``γ_n, γ_s, γ_r, γ_t`` of ``bpm/rotational`` and ``γ`` of
``bpm/spring``, as a dissipative flow split off the step.

LAMMPS (``doc/src/bond_bpm_rotational.rst``, after Wang, Alonso-Marroquin & Guo 2015;
``src/BPM/bond_bpm_rotational.cpp`` read to settle the factors) adds to each bond, with
``d = x_i − x_j``, ``r = |d|``, ``n = d/r``, ``Δv = v_i − v_j``, ``Δω = ω_i − ω_j``:

* normal:  ``F_i = −γ_n (n·Δv) n`` (``bpm/spring``'s ``γ``: the same, its only one);
* sliding: ``F_i = −γ_s u``, ``τ_i = τ_j = ½ γ_s d × u``, ``u = (I − nnᵀ) Δv +
  ½ d × (ω_i + ω_j)`` (the relative tangential velocity at the bond's middle);
* rolling: ``τ_i = −½ γ_r r (I − nnᵀ) Δω``;
* twisting: ``τ_i = −½ γ_t (n·Δω) n``;

``F_j = −F_i`` and ``τ_j = −τ_i`` but for sliding; everything times LAMMPS's ``w`` with
``smooth yes`` (``engine.potentials.bpm``).  Each mode ``k`` is ``−∂R_k/∂(v, ω)`` of a
Rayleigh function ``R_k = ½ c_k |u_k|²`` of one relative velocity ``u_k = A_k y``
(``y = (v_i, v_j, ω_i, ω_j)``; ``c_k = γ_n, γ_s, ½ γ_r r, ½ γ_t``, times ``w``), and
``A_k M⁻¹ A_kᵀ = κ_k P_k`` with ``P_k`` the projector onto the mode's directions
(spheres, ``M = diag(m, m, J, J)``): ``κ = 1/m_i + 1/m_j`` (normal), ``+ r²/4 (1/J_i +
1/J_j)`` (sliding), ``1/J_i + 1/J_j`` (rolling, twisting).  With the positions frozen
(a flow of the velocities only), ``M ẏ = −c A_kᵀ A_k y`` is then solved exactly:
``u_k(τ) = e^{−c κ τ} u_k(0)``, ``y ← y + M⁻¹ A_kᵀ (u_k(τ) − u_k(0))/κ``, removing
``½ (1 − e^{−2cκτ}) |u_k(0)|²/κ`` of kinetic energy.  Each mode moves the two spheres
by equal and opposite impulses (and, for sliding, the moments ``d × F``): the momentum
``P`` and the angular momentum ``L`` are conserved exactly.

The flow over ``τ`` of all bonds, :func:`bond_damp_half`, is the composition of the
modes' exact flows in the order of the plan (``engine.potentials.bond_damping_plan``,
the force-field slot ``BOND_DAMP``): the bonds colour by colour, each bond's modes in
order (``forward``), or all of it reversed (the adjoint).  The bonds of one colour share
no sphere, so their flows commute exactly and a chunk of them is done at once: gathered
(both spheres' ``v``, ``ω``, the bond vector) into the plan's scratch rows, the modes'
arithmetic in loops over the chunk's lanes that LLVM vectorizes (AVX-512 where the CPU
has it), then scattered back.  The stepping loop applies ``D_{h/2}`` forward before the
step and backward after it, ``D*_{h/2} ∘ Φ_h ∘ D_{h/2}``, a symmetric composition
(second order with a second-order symmetric ``Φ_h``), like the viscous damping of
``engine.potentials.damping``; the kinetic energy removed is booked in ``dissipated``,
so ``E + dissipated`` is constant to the scheme's accuracy (docs/physics.md §4.6).

Bits (issue #44 item 9): the order by colours replaced the bond order (before: bond
after bond), and ``e^z − 1`` is a Taylor sum to ``z¹¹/11!`` for ``|z| < 2⁻³`` (libm's
``expm1`` beyond, and before for ``|z| ≥ 2⁻¹⁰``: the metamaterial's rolling and
twisting have ``z`` ≈ 0.005–0.1), so a damped model's bits changed once; the law and
its exactness did not (``tests/test_bond_damping_plan.py``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..rotations import quat_rotate_t
from .bpm import (
    C_COEF,
    C_LAW,
    C_R0,
    C_SMOOTH,
    LAW_ROTATIONAL,
    LAW_ROTATIONAL_AVERAGE,
    LAW_SPRING,
    average_w,
)
from .bpm_break import rotational_b

# (the plan's layout lives here, beside the kernels that read it: an edit of it
# recompiles them, engine.kernel_cache; engine.potentials.bond_damping_plan builds it)
C_GAMMA_ROT = C_COEF + 8  # γ_n, γ_s, γ_r, γ_t of bpm/rotational (4)
C_GAMMA_SPRING = C_COEF + 2  # γ of bpm/spring

LANES = 64
"""Bonds a chunk at most (its scratch rows: 64 doubles, a cache line's multiple)."""

CHUNK_SPRING = 0
"""Chunk kind: ``bpm/spring`` bonds, one at a time (the normal mode alone)."""
CHUNK_ROTATIONAL = 1
"""Chunk kind: ``bpm/rotational`` bonds with ``smooth no`` (``w = 1``)."""
CHUNK_SMOOTH = 2
"""Chunk kind: ``bpm/rotational`` bonds with ``smooth yes`` (``w`` a bond)."""

# the rows of a chunk's constants (``cst``): 1/m_i, 1/m_j, 1/J_i, 1/J_j, the normal
# mode's κ and 1/κ, the spinning modes' κ and 1/κ, γ_n, γ_s, ½γ_r, ½γ_t; then, for a
# chunk with ``smooth no`` and the ``τ`` in ``ctau``, the normal mode's decay over κ,
# ``(e^z − 1)/κ``, and its energy factor ``−½ (e^z − 1)(e^z + 1)/κ`` (the kinetic energy
# removed is that times |u|²), and the twisting's two (they depend on nothing else)
(K_MI, K_MJ, K_JI, K_JJ, K_KN, K_IKN, K_KJ, K_IKJ, K_GN, K_GS, K_GR, K_GT, K_PN, K_FN,
 K_ET, K_FT) = range(16)
N_CONST = 16
# the rows of the chunk's scratch (``buf``): the spheres' velocities and the energy each
# bond's modes removed
(B_VI0, B_VI1, B_VI2, B_VJ0, B_VJ1, B_VJ2, B_OI0, B_OI1, B_OI2, B_OJ0, B_OJ1, B_OJ2,
 B_OUT) = range(13)
N_BUF = 13
# the rows of a chunk's geometry (``geo``, kept with the positions ``xkey`` and the
# ``τ`` ``gkey`` it was computed at): the bond vector d = x_i − x_j, the smoothing w,
# the unit vector n, 1/κ of the sliding, the modes' z = −cκτ and decays e^z − 1
# (sliding, rolling; normal and twisting as K_PN … K_FT for a chunk with ``smooth yes``)
(G_D0, G_D1, G_D2, G_W, G_N0, G_N1, G_N2, G_IKS, G_ZN, G_ZS, G_ZR, G_ZT, G_ES, G_ER,
 G_PN, G_FN, G_ET, G_FT) = range(18)
N_GEO = 18

def damped_bonds(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(rotational, spring)``: masks of the bonds of the BPM table ``(nb, N_COLS)``
    whose flow does something (some ``γ ≠ 0``)."""
    if not table.shape[0]:
        z = np.zeros(0, dtype=bool)
        return z, z
    law = table[:, C_LAW]
    rot = (law == LAW_ROTATIONAL) | (law == LAW_ROTATIONAL_AVERAGE)
    rot &= np.any(table[:, C_GAMMA_ROT:C_GAMMA_ROT + 4] != 0.0, axis=1)
    spr = (law == LAW_SPRING) & (table[:, C_GAMMA_SPRING] != 0.0)
    return rot, spr


def has_bond_damping(table: np.ndarray) -> bool:
    """Whether some bond of the BPM table ``(nb, bpm.N_COLS)`` has a damping ``γ ≠ 0``."""
    rot, spr = damped_bonds(table)
    return bool(rot.any() or spr.any())

C = LANES
# the rows of the plan (engine.potentials.bond_damping_plan), as constants of the kernels
D0, D1, D2 = G_D0 * C, G_D1 * C, G_D2 * C
VI0, VI1, VI2 = B_VI0 * C, B_VI1 * C, B_VI2 * C
VJ0, VJ1, VJ2 = B_VJ0 * C, B_VJ1 * C, B_VJ2 * C
OI0, OI1, OI2 = B_OI0 * C, B_OI1 * C, B_OI2 * C
OJ0, OJ1, OJ2 = B_OJ0 * C, B_OJ1 * C, B_OJ2 * C
W, N0, N1, N2, IKS = G_W * C, G_N0 * C, G_N1 * C, G_N2 * C, G_IKS * C
ZN, ZS, ZR, ZT = G_ZN * C, G_ZS * C, G_ZR * C, G_ZT * C
ES, ER, OUT = G_ES * C, G_ER * C, B_OUT * C
PN, FN, ET, FT = G_PN * C, G_FN * C, G_ET * C, G_FT * C
MI, MJ, JI, JJ = K_MI * C, K_MJ * C, K_JI * C, K_JJ * C
KN, IKN, KJ, IKJ = K_KN * C, K_IKN * C, K_KJ * C, K_IKJ * C
GN, GS, GR, GT = K_GN * C, K_GS * C, K_GR * C, K_GT * C
KPN, KFN, KET, KFT = K_PN * C, K_FN * C, K_ET * C, K_FT * C
BLOCK = N_CONST * C
GBLOCK = N_GEO * C
SPRING, SMOOTH = CHUNK_SPRING, CHUNK_SMOOTH

Z5 = 0.0009765625
"""``|z|`` below which ``e^z − 1`` is its Taylor sum to ``z⁵/5!`` (2⁻¹⁰) …"""
Z7 = 0.015625
"""… to ``z⁷/7!`` (2⁻⁶) …"""
Z11 = 0.125
"""… to ``z¹¹/11!`` (2⁻³); libm's ``expm1`` beyond (:func:`_expm1`)."""
# 1/k! (k = 2 … 11): the Taylor coefficients of (e^z − 1 − z)/z²
F2 = 0.5
F3 = 1.0 / 6.0
F4 = 1.0 / 24.0
F5 = 1.0 / 120.0
F6 = 1.0 / 720.0
F7 = 1.0 / 5040.0
F8 = 1.0 / 40320.0
F9 = 1.0 / 362880.0
F10 = 1.0 / 3628800.0
F11 = 1.0 / 39916800.0


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _smooth_w(t, b, d0, d1, d2, x, q, i, j):
    """LAMMPS's ``w`` of bond ``b`` (1 with ``smooth no``): ``1 − B⁴`` of the breaking
    measure ``B`` of ``engine.potentials.bpm`` (``bpm/rotational``: ``f_r/f_rc + |f_s|/f_sc
    + k_b θ/τ_bc + k_t |ψ|/τ_tc``, ``|f_s| = k_s r₀² α/r``; ``bpm/spring``: ``w = 1 −
    (s/(r₀ ε_c))⁸``)."""
    if t[b, C_SMOOTH] == 0.0:
        return 1.0
    r0 = t[b, C_R0]
    r = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
    if t[b, C_LAW] == LAW_SPRING:
        z = (r - r0) / (r0 * t[b, C_COEF + 1])
        z4 = z * z * z * z
        return 1.0 - z4 * z4
    if t[b, C_LAW] == LAW_ROTATIONAL_AVERAGE:
        return average_w(t, b, x, q, i, j)
    big = rotational_b(t, b, x, q, i, j)  # (the breaking measure, bit for bit)
    big = big if big > 0.0 else 0.0
    return 1.0 - big * big * big * big


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _taylor5(z):
    """``e^z − 1 = z + z²(1/2! + z(1/3! + z(1/4! + z/5!)))`` for ``|z| < 2⁻¹⁰``: the
    terms left off are below ``|z|⁵/6! < 10⁻¹⁸`` of the value."""
    return z + z * z * (F2 + z * (F3 + z * (F4 + z * F5)))


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _taylor7(z):
    """``e^z − 1`` to ``z⁷/7!`` for ``|z| < 2⁻⁶`` (left off: ``< |z|⁷/8! < 10⁻¹⁷``)."""
    return z + z * z * (F2 + z * (F3 + z * (F4 + z * (F5 + z * (F6 + z * F7)))))


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _taylor11(z):
    """``e^z − 1`` to ``z¹¹/11!`` for ``|z| < 2⁻³`` (left off: ``< |z|¹¹/12! < 10⁻¹⁸``)."""
    s = F10 + z * F11
    s = F9 + z * s
    s = F8 + z * s
    s = F7 + z * s
    s = F6 + z * s
    s = F5 + z * s
    s = F4 + z * s
    s = F3 + z * s
    return z + z * z * (F2 + z * s)


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _expm1(z):
    """``e^z − 1``: the Taylor sum of the fewest terms that leave off less than 10⁻¹⁷ of
    it (:func:`_taylor5`, :func:`_taylor7`, :func:`_taylor11`; each within 0.6 ulp of
    the exact value, as libm's ``expm1``: tests/test_bond_damping_plan.py), libm's
    ``expm1`` for ``|z| ≥ 2⁻³``.  A mode's ``z = −cκτ`` at a bond's step is ≈ 10⁻⁴–10⁻¹
    (the metamaterial's twisting: 0.05–0.1); the sums are a few multiplications that
    vectorize, libm's call does not (issue #44 item 9)."""
    a = abs(z)
    if a < Z5:
        return _taylor5(z)
    if a < Z7:
        return _taylor7(z)
    if a < Z11:
        return _taylor11(z)
    return math.expm1(z)


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _terms(z):
    """Which sum :func:`_expm1` takes for ``z``: 0 (to ``z⁵``), 1 (``z⁷``), 2 (``z¹¹``),
    3 (libm); NaN: 0."""
    a = abs(z)  # (ints: numpy's bools would add as "or" in the twin)
    return int(a >= Z5) + int(a >= Z7) + int(a >= Z11)


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _spring_bond(x, v, q, m, t, i, j, b, tau):
    """The normal mode's exact flow of the ``bpm/spring`` bond ``b`` (its one mode);
    returns the kinetic energy it removed."""
    d0 = x[i, 0] - x[j, 0]
    d1 = x[i, 1] - x[j, 1]
    d2 = x[i, 2] - x[j, 2]
    ir = 1.0 / math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
    n0 = d0 * ir
    n1 = d1 * ir
    n2 = d2 * ir
    mi = 1.0 / m[i]
    mj = 1.0 / m[j]
    kappa = mi + mj
    c = t[b, C_GAMMA_SPRING] * _smooth_w(t, b, d0, d1, d2, x, q, i, j)
    u = n0 * (v[i, 0] - v[j, 0]) + n1 * (v[i, 1] - v[j, 1]) + n2 * (v[i, 2] - v[j, 2])
    e = _expm1(-c * kappa * tau)
    p = u * e / kappa  # the impulse on i along n
    v[i, 0] += p * n0 * mi
    v[i, 1] += p * n1 * mi
    v[i, 2] += p * n2 * mi
    v[j, 0] -= p * n0 * mj
    v[j, 1] -= p * n1 * mj
    v[j, 2] -= p * n2 * mj
    return -0.5 * u * p * (2.0 + e)


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _decays(z, e, cnt, terms):
    """``e[k] = e^z − 1`` of ``z[k]`` (two rows of the scratch) for the chunk's lanes, by
    the sum of ``terms`` (:func:`_terms`: the most any lane needs, so one loop that
    vectorizes), libm's ``expm1`` lane by lane where some lane needs it."""
    if terms == 0:
        for k in range(cnt):
            e[k] = _taylor5(z[k])
    elif terms == 1:
        for k in range(cnt):
            e[k] = _taylor7(z[k])
    elif terms == 2:
        for k in range(cnt):
            e[k] = _taylor11(z[k])
    else:
        for k in range(cnt):
            e[k] = _expm1(z[k])


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _factors(e, p, f, ik, cnt):
    """From the decays ``e[k] = e^z − 1``: ``p[k] = e/κ`` (the impulse per unit of
    relative velocity) and ``f[k] = −½ e (e + 2)/κ`` (the kinetic energy removed per
    ``|u|²``: ``½ (1 − e^{2z}) |u|²/κ``); ``p`` may be ``e``'s row."""
    for k in range(cnt):
        ek = e[k]
        pk = ek * ik[k]
        p[k] = pk
        f[k] = -0.5 * pk * (2.0 + ek)


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def _cache_decays(cc, cnt, tau):
    """The normal and twisting modes' factors of a chunk with ``smooth no`` at ``tau``
    (``K_PN``, ``K_FN``, ``K_ET``, ``K_FT``: :func:`_factors`), constants of the bond
    while ``τ`` is."""
    tn = 0
    tt = 0
    for k in range(cnt):  # (z into rows the factors then take: scratch until then)
        zn = -cc[GN + k] * cc[KN + k] * tau
        zt = -cc[GT + k] * cc[KJ + k] * tau
        cc[KPN + k] = zn
        cc[KET + k] = zt
        tn = max(tn, _terms(zn))
        tt = max(tt, _terms(zt))
    _decays(cc[KPN:KPN + C], cc[KFN:KFN + C], cnt, tn)
    _decays(cc[KET:KET + C], cc[KFT:KFT + C], cnt, tt)
    _factors(cc[KFN:KFN + C], cc[KPN:KPN + C], cc[KFN:KFN + C], cc[IKN:IKN + C], cnt)
    _factors(cc[KFT:KFT + C], cc[KET:KET + C], cc[KFT:KFT + C], cc[IKJ:IKJ + C], cnt)


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _gather(vf, of, pairs, cnt, buf):
    """The velocities of the chunk's bonds' spheres (``pairs``: its rows) into the
    scratch rows (``vf``, ``of``: the flat views of ``v``, ``ω``)."""
    for k in range(cnt):
        i = 3 * pairs[k, 0]
        j = 3 * pairs[k, 1]
        buf[VI0 + k] = vf[i]
        buf[VI1 + k] = vf[i + 1]
        buf[VI2 + k] = vf[i + 2]
        buf[VJ0 + k] = vf[j]
        buf[VJ1 + k] = vf[j + 1]
        buf[VJ2 + k] = vf[j + 2]
        buf[OI0 + k] = of[i]
        buf[OI1 + k] = of[i + 1]
        buf[OI2 + k] = of[i + 2]
        buf[OJ0 + k] = of[j]
        buf[OJ1 + k] = of[j + 1]
        buf[OJ2 + k] = of[j + 2]


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _bond_vectors(xf, x, q, t, pairs, order, smooth, cnt, g):
    """``d = x_i − x_j`` of the chunk's bonds into its geometry rows, and ``w``
    (``smooth``)."""
    for k in range(cnt):
        i = 3 * pairs[k, 0]
        j = 3 * pairs[k, 1]
        d0 = xf[i] - xf[j]
        d1 = xf[i + 1] - xf[j + 1]
        d2 = xf[i + 2] - xf[j + 2]
        g[D0 + k] = d0
        g[D1 + k] = d1
        g[D2 + k] = d2
        if smooth:
            g[W + k] = _smooth_w(t, order[k], d0, d1, d2, x, q, pairs[k, 0], pairs[k, 1])


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _scatter(vf, of, pairs, cnt, buf):
    """The chunk's new velocities back to its spheres; returns the energy its bonds
    removed (summed in the chunk's order)."""
    d = 0.0
    for k in range(cnt):
        i = 3 * pairs[k, 0]
        j = 3 * pairs[k, 1]
        vf[i] = buf[VI0 + k]
        vf[i + 1] = buf[VI1 + k]
        vf[i + 2] = buf[VI2 + k]
        vf[j] = buf[VJ0 + k]
        vf[j + 1] = buf[VJ1 + k]
        vf[j + 2] = buf[VJ2 + k]
        of[i] = buf[OI0 + k]
        of[i + 1] = buf[OI1 + k]
        of[i + 2] = buf[OI2 + k]
        of[j] = buf[OJ0 + k]
        of[j + 1] = buf[OJ1 + k]
        of[j + 2] = buf[OJ2 + k]
        d += buf[OUT + k]
    return d


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _geometry(g, cc, cnt, smooth, tau):
    """Each lane's ``n = d/r``, ``1/κ`` of the sliding (``κ = 1/m_i + 1/m_j + r²/4 (1/J_i
    + 1/J_j)``; one division for both: ``1/(r κ)``) and the modes' ``z = −c κ τ`` (``c =
    w γ_s``, ``w ½γ_r r``; with ``smooth``, ``w γ_n`` and ``w ½γ_t`` too: else cached,
    :func:`_cache_decays`); the positions' part, vectorized.  Returns the sums
    (:func:`_terms`) the decays need."""
    ts = 0
    tr = 0
    tn = 0
    tt = 0
    for k in range(cnt):
        d0 = g[D0 + k]
        d1 = g[D1 + k]
        d2 = g[D2 + k]
        r2 = d0 * d0 + d1 * d1 + d2 * d2
        r = math.sqrt(r2)
        kj = cc[KJ + k]
        ks = cc[KN + k] + 0.25 * r2 * kj
        irk = 1.0 / (r * ks)
        ir = ks * irk
        g[N0 + k] = d0 * ir
        g[N1 + k] = d1 * ir
        g[N2 + k] = d2 * ir
        g[IKS + k] = r * irk
        w = g[W + k] if smooth else 1.0
        zs = -(w * cc[GS + k]) * ks * tau
        zr = -(w * (cc[GR + k] * r)) * kj * tau
        g[ZS + k] = zs
        g[ZR + k] = zr
        ts = max(ts, _terms(zs))
        tr = max(tr, _terms(zr))
        if smooth:
            zn = -(w * cc[GN + k]) * cc[KN + k] * tau
            zt = -(w * cc[GT + k]) * kj * tau
            g[ZN + k] = zn
            g[ZT + k] = zt
            tn = max(tn, _terms(zn))
            tt = max(tt, _terms(zt))
    return ts, tr, tn, tt


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _translation(vi, vj, oi, oj, n, d, mi, mj, Ji, Jj, pn, fn, ps, fs):
    """The normal and the sliding modes' exact flows on one lane, together: their
    relative velocities ``n·Δv`` and ``u = (I − nnᵀ)Δv + ½ d × (ω_i + ω_j)`` are
    ``M⁻¹``-orthogonal (``A_s M⁻¹ A_nᵀ = (I − nnᵀ) n κ_n = 0``), so each flow leaves the
    other's velocity as it was and they commute exactly.  ``pn``, ``ps``: ``(e^z − 1)/κ``
    (the impulse per unit of relative velocity); ``fn``, ``fs``: the energy removed per
    unit of its square.  Returns the new velocities and the energy removed."""
    vi0, vi1, vi2 = vi
    vj0, vj1, vj2 = vj
    oi0, oi1, oi2 = oi
    oj0, oj1, oj2 = oj
    n0, n1, n2 = n
    d0, d1, d2 = d
    dv0 = vi0 - vj0
    dv1 = vi1 - vj1
    dv2 = vi2 - vj2
    dn = dv0 * n0 + dv1 * n1 + dv2 * n2
    w0 = 0.5 * (oi0 + oj0)
    w1 = 0.5 * (oi1 + oj1)
    w2 = 0.5 * (oi2 + oj2)
    u0 = dv0 - dn * n0 + (d1 * w2 - d2 * w1)
    u1 = dv1 - dn * n1 + (d2 * w0 - d0 * w2)
    u2 = dv2 - dn * n2 + (d0 * w1 - d1 * w0)
    p0 = u0 * ps  # the sliding's impulse on i (Δu/κ) …
    p1 = u1 * ps
    p2 = u2 * ps
    a = dn * pn  # … and the normal one's, along n
    f0 = a * n0 + p0
    f1 = a * n1 + p1
    f2 = a * n2 + p2
    s0 = 0.5 * (p1 * d2 - p2 * d1)  # ½ Δu/κ × d, the angular impulse on each
    s1 = 0.5 * (p2 * d0 - p0 * d2)
    s2 = 0.5 * (p0 * d1 - p1 * d0)
    e = fn * (dn * dn) + fs * (u0 * u0 + u1 * u1 + u2 * u2)
    return ((vi0 + f0 * mi, vi1 + f1 * mi, vi2 + f2 * mi),
            (vj0 - f0 * mj, vj1 - f1 * mj, vj2 - f2 * mj),
            (oi0 + s0 * Ji, oi1 + s1 * Ji, oi2 + s2 * Ji),
            (oj0 + s0 * Jj, oj1 + s1 * Jj, oj2 + s2 * Jj), e)


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _spin(oi, oj, n, Ji, Jj, pr, fr, pt, ft):
    """The rolling (``(I − nnᵀ)Δω``) and twisting (``(n·Δω) n``) modes' exact flows on
    one lane (orthogonal directions of one ``κ``: they commute; ``p``, ``f`` as in
    :func:`_translation`)."""
    oi0, oi1, oi2 = oi
    oj0, oj1, oj2 = oj
    n0, n1, n2 = n
    dw0 = oi0 - oj0
    dw1 = oi1 - oj1
    dw2 = oi2 - oj2
    dn = dw0 * n0 + dw1 * n1 + dw2 * n2
    b = (pt - pr) * dn
    a0 = pr * dw0 + b * n0  # the angular impulse on i
    a1 = pr * dw1 + b * n1
    a2 = pr * dw2 + b * n2
    dn2 = dn * dn
    e = fr * (dw0 * dw0 + dw1 * dw1 + dw2 * dw2 - dn2) + ft * dn2
    return ((oi0 + a0 * Ji, oi1 + a1 * Ji, oi2 + a2 * Ji),
            (oj0 - a0 * Jj, oj1 - a1 * Jj, oj2 - a2 * Jj), e)


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _lane(buf, g, cc, k, nt, forward):
    """The flows of lane ``k``: translation (normal and sliding), then spinning
    (``forward``), or reversed; ``nt``: the rows of its normal and twisting factors
    (``K_PN``, ``K_FN``, ``K_ET``, ``K_FT``)."""
    pn, fn, pt, ft = nt
    vi = (buf[VI0 + k], buf[VI1 + k], buf[VI2 + k])
    vj = (buf[VJ0 + k], buf[VJ1 + k], buf[VJ2 + k])
    oi = (buf[OI0 + k], buf[OI1 + k], buf[OI2 + k])
    oj = (buf[OJ0 + k], buf[OJ1 + k], buf[OJ2 + k])
    n = (g[N0 + k], g[N1 + k], g[N2 + k])
    d = (g[D0 + k], g[D1 + k], g[D2 + k])
    mi = cc[MI + k]
    mj = cc[MJ + k]
    Ji = cc[JI + k]
    Jj = cc[JJ + k]
    es = g[ES + k]
    ps = es * g[IKS + k]
    fs = -0.5 * ps * (2.0 + es)
    er = g[ER + k]
    pr = er * cc[IKJ + k]
    fr = -0.5 * pr * (2.0 + er)
    if forward:
        vi, vj, oi, oj, e1 = _translation(vi, vj, oi, oj, n, d, mi, mj, Ji, Jj, pn[k],
                                          fn[k], ps, fs)
        oi, oj, e2 = _spin(oi, oj, n, Ji, Jj, pr, fr, pt[k], ft[k])
    else:
        oi, oj, e1 = _spin(oi, oj, n, Ji, Jj, pr, fr, pt[k], ft[k])
        vi, vj, oi, oj, e2 = _translation(vi, vj, oi, oj, n, d, mi, mj, Ji, Jj, pn[k],
                                          fn[k], ps, fs)
    buf[VI0 + k], buf[VI1 + k], buf[VI2 + k] = vi
    buf[VJ0 + k], buf[VJ1 + k], buf[VJ2 + k] = vj
    buf[OI0 + k], buf[OI1 + k], buf[OI2 + k] = oi
    buf[OJ0 + k], buf[OJ1 + k], buf[OJ2 + k] = oj
    buf[OUT + k] = e1 + e2


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _modes(buf, g, cc, cnt, nt, forward):
    """:func:`_lane` over the chunk's lanes, a loop for each direction (each vectorizes)."""
    if forward:
        for k in range(cnt):
            _lane(buf, g, cc, k, nt, True)
    else:
        for k in range(cnt):
            _lane(buf, g, cc, k, nt, False)


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _chunk_geometry(xf, x, q, t, pairs, order, smooth, cnt, cc, g, tau):
    """The chunk's geometry at ``x`` (its rows of ``geo``): the bond vectors, ``n``,
    ``1/κ`` of the sliding, the decays."""
    _bond_vectors(xf, x, q, t, pairs, order, smooth, cnt, g)
    ts, tr, tn, tt = _geometry(g, cc, cnt, smooth, tau)
    _decays(g[ZS:ZS + C], g[ES:ES + C], cnt, ts)
    _decays(g[ZR:ZR + C], g[ER:ER + C], cnt, tr)
    if smooth:  # (the normal and twisting factors of this w)
        _decays(g[ZN:ZN + C], g[FN:FN + C], cnt, tn)
        _decays(g[ZT:ZT + C], g[FT:FT + C], cnt, tt)
        _factors(g[FN:FN + C], g[PN:PN + C], g[FN:FN + C], cc[IKN:IKN + C], cnt)
        _factors(g[FT:FT + C], g[ET:ET + C], g[FT:FT + C], cc[IKJ:IKJ + C], cnt)


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _chunk(xf, vf, of, x, q, t, plan, c, tau, forward, fresh):
    """The flows of the rotational bonds of chunk ``c`` (module docstring), its
    geometry computed anew where ``fresh`` (or ``smooth yes``: ``w`` depends on the
    attitudes too); returns the energy they removed."""
    pairs, order, chunks, cst, ctau, buf, _, geo, _, _ = plan
    p0 = chunks[c, 0]
    p1 = chunks[c, 1]
    cnt = p1 - p0
    smooth = chunks[c, 2] == SMOOTH
    cc = cst[c * BLOCK:(c + 1) * BLOCK]  # (its constants and geometry: fixed offsets)
    g = geo[c * GBLOCK:(c + 1) * GBLOCK]
    if fresh or smooth:
        _chunk_geometry(xf, x, q, t, pairs[p0:p1], order[p0:p1], smooth, cnt, cc, g, tau)
    _gather(vf, of, pairs[p0:p1], cnt, buf)
    if smooth:
        _modes(buf, g, cc, cnt, (g[PN:PN + C], g[FN:FN + C], g[ET:ET + C], g[FT:FT + C]),
               forward)
    else:
        if ctau[c] != tau:
            _cache_decays(cc, cnt, tau)
            ctau[c] = tau
        _modes(buf, g, cc, cnt, (cc[KPN:KPN + C], cc[KFN:KFN + C], cc[KET:KET + C],
                                 cc[KFT:KFT + C]), forward)
    return _scatter(vf, of, pairs[p0:p1], cnt, buf)


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _same_geometry(xf, xkey, gkey, tau):
    """Whether the plan's geometry was computed at these positions (bit for bit) and
    this ``τ``: the backward sweep after a step and the forward one before the next are
    at the same ``x``, so every other sweep takes the geometry as it is."""
    if gkey[0] != tau or xkey.shape[0] != xf.shape[0]:
        return False
    a = xf.view(np.int64)
    b = xkey.view(np.int64)
    differ = 0
    for k in range(a.shape[0]):  # (the bits that differ, or-ed: a loop of integer ors
        differ |= a[k] ^ b[k]  # that vectorizes, rather than a count of booleans)
    return differ == 0


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _pi_follows(q, o, pi, J, o0):
    """``Π_i += J_i R_iᵀ (ω_i − ω0_i)`` (the body angular momentum following ``ω``), on
    flat views so that the loop vectorizes."""
    qf = q.reshape(-1)
    of = o.reshape(-1)
    o0f = o0.reshape(-1)
    pf = pi.reshape(-1)
    for i in range(J.shape[0]):
        a0, a1, a2 = quat_rotate_t(qf[4 * i], -qf[4 * i + 1], -qf[4 * i + 2], -qf[4 * i + 3],
                                   of[3 * i] - o0f[3 * i], of[3 * i + 1] - o0f[3 * i + 1],
                                   of[3 * i + 2] - o0f[3 * i + 2])
        pf[3 * i] += J[i] * a0
        pf[3 * i + 1] += J[i] * a1
        pf[3 * i + 2] += J[i] * a2


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def bond_damp_half(x, v, q, o, pi, m, J, table, tau, forward, keep_pi, plan):
    """The bonds' damping flow over ``tau`` (module docstring) in place, in the order of
    ``plan`` (the force-field slot ``BOND_DAMP``: ``engine.potentials.
    bond_damping_plan``), ``forward`` or reversed; with ``keep_pi`` the body angular
    momentum ``Π_i = J_i R_iᵀ Ω_i`` follows ``Ω`` (the schemes that keep it).  The
    positions and attitudes are not changed.  Returns the kinetic energy removed
    (``≥ 0``)."""
    pairs, order, chunks, _, _, _, o0, _, xkey, gkey = plan
    nc = chunks.shape[0]
    xf = x.reshape(-1)  # (flat views: the gathers' addresses without the strides)
    vf = v.reshape(-1)
    of = o.reshape(-1)
    o0f = o0.reshape(-1)
    d = 0.0
    if keep_pi:  # (Π changes with Ω: the change of Ω, rotated once, at the end)
        for k in range(of.shape[0]):
            o0f[k] = of[k]
    fresh = not _same_geometry(xf, xkey, gkey, tau)
    for kk in range(nc):
        c = kk if forward else nc - 1 - kk
        if chunks[c, 2] != SPRING:
            d += _chunk(xf, vf, of, x, q, table, plan, c, tau, forward, fresh)
            continue
        for p in range(chunks[c, 0], chunks[c, 1]):
            d += _spring_bond(x, v, q, m, table, pairs[p, 0], pairs[p, 1], order[p], tau)
    if fresh and xkey.shape[0] == xf.shape[0]:  # (the geometry now is that of x, τ)
        for k in range(xf.shape[0]):
            xkey[k] = xf[k]
        gkey[0] = tau
    if keep_pi:
        _pi_follows(q, o, pi, J, o0)
    return d
