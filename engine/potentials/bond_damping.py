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
modes' exact flows, bonds in order and each bond's modes in order (``forward``), or
the reverse (the adjoint): the stepping loop applies ``D_{h/2}`` forward before the step
and backward after it, ``D*_{h/2} ∘ Φ_h ∘ D_{h/2}``, a symmetric composition (second
order with a second-order symmetric ``Φ_h``), like the viscous damping of
``engine.potentials.damping``; the kinetic energy removed is booked in ``dissipated``,
so ``E + dissipated`` is constant to the scheme's accuracy (docs/physics.md §4.6).
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

C_GAMMA_ROT = C_COEF + 8  # γ_n, γ_s, γ_r, γ_t of bpm/rotational (4)
C_GAMMA_SPRING = C_COEF + 2  # γ of bpm/spring


def has_bond_damping(table: np.ndarray) -> bool:
    """Whether some bond of the BPM table ``(nb, bpm.N_COLS)`` has a damping ``γ ≠ 0``."""
    if not table.shape[0]:
        return False
    law = table[:, C_LAW]
    rot = (law == LAW_ROTATIONAL) | (law == LAW_ROTATIONAL_AVERAGE)
    rot &= np.any(table[:, C_GAMMA_ROT:C_GAMMA_ROT + 4] != 0.0, axis=1)
    spr = (law == LAW_SPRING) & (table[:, C_GAMMA_SPRING] != 0.0)
    return bool(rot.any() or spr.any())


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
def _decay(c, kappa, tau):
    """``e^{−c κ τ} − 1`` (the change of a mode's relative velocity, per unit of it).
    For ``|c κ τ| < 2⁻¹⁰`` (a step short beside the mode's time, as a bond's damping
    at its timestep is) the Taylor sum ``z + z²/2! + … + z⁵/5!`` (Horner): the terms left
    off are below ``|z|⁵/720 < 10⁻¹⁸`` of the value, under half an ulp, so it equals
    libm's ``expm1`` to round-off at a fifth of its cost (issue #44 item 9); libm's
    beyond."""
    z = -c * kappa * tau
    if abs(z) < 0.0009765625:
        return z * (1.0 + z * (0.5 + z * (1.0 / 6.0 + z * (1.0 / 24.0 + z * (1.0 / 120.0)))))
    return math.expm1(z)


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _normal(v, mi, mj, i, j, n0, n1, n2, c, tau):
    """The normal mode's exact flow (``mi``, ``mj``: ``1/m_i``, ``1/m_j``); returns the
    kinetic energy it removed."""
    kappa = mi + mj
    u = n0 * (v[i, 0] - v[j, 0]) + n1 * (v[i, 1] - v[j, 1]) + n2 * (v[i, 2] - v[j, 2])
    e = _decay(c, kappa, tau)
    p = u * e / kappa  # the impulse on i along n
    v[i, 0] += p * n0 * mi
    v[i, 1] += p * n1 * mi
    v[i, 2] += p * n2 * mi
    v[j, 0] -= p * n0 * mj
    v[j, 1] -= p * n1 * mj
    v[j, 2] -= p * n2 * mj
    return -0.5 * u * u * e * (2.0 + e) / kappa


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _sliding(v, o, mi, mj, Ji, Jj, i, j, d0, d1, d2, n0, n1, n2, c, tau):
    """The sliding mode's exact flow (``u = (I − nnᵀ)Δv + ½ d × (ω_i + ω_j)``; ``mi``
    … ``Jj``: the inverse masses and moments of inertia)."""
    r2 = d0 * d0 + d1 * d1 + d2 * d2
    kappa = mi + mj + 0.25 * r2 * (Ji + Jj)
    w0 = 0.5 * (o[i, 0] + o[j, 0])
    w1 = 0.5 * (o[i, 1] + o[j, 1])
    w2 = 0.5 * (o[i, 2] + o[j, 2])
    dv0 = v[i, 0] - v[j, 0]
    dv1 = v[i, 1] - v[j, 1]
    dv2 = v[i, 2] - v[j, 2]
    dn = dv0 * n0 + dv1 * n1 + dv2 * n2
    u0 = dv0 - dn * n0 + d1 * w2 - d2 * w1
    u1 = dv1 - dn * n1 + d2 * w0 - d0 * w2
    u2 = dv2 - dn * n2 + d0 * w1 - d1 * w0
    e = _decay(c, kappa, tau) / kappa
    p0 = u0 * e  # the impulse on i (Δu/κ)
    p1 = u1 * e
    p2 = u2 * e
    v[i, 0] += p0 * mi
    v[i, 1] += p1 * mi
    v[i, 2] += p2 * mi
    v[j, 0] -= p0 * mj
    v[j, 1] -= p1 * mj
    v[j, 2] -= p2 * mj
    s0 = 0.5 * (p1 * d2 - p2 * d1)  # ½ Δu/κ × d, the angular impulse on each
    s1 = 0.5 * (p2 * d0 - p0 * d2)
    s2 = 0.5 * (p0 * d1 - p1 * d0)
    o[i, 0] += s0 * Ji
    o[i, 1] += s1 * Ji
    o[i, 2] += s2 * Ji
    o[j, 0] += s0 * Jj
    o[j, 1] += s1 * Jj
    o[j, 2] += s2 * Jj
    uu = u0 * u0 + u1 * u1 + u2 * u2
    return -0.5 * uu * e * (2.0 + e * kappa)


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _spin(o, Ji, Jj, i, j, n0, n1, n2, c_roll, c_twist, tau):
    """The rolling (``(I − nnᵀ)Δω``) and twisting (``(n·Δω) n``) modes' exact flows
    (``Ji``, ``Jj``: ``1/J_i``, ``1/J_j``)."""
    kappa = Ji + Jj
    dw0 = o[i, 0] - o[j, 0]
    dw1 = o[i, 1] - o[j, 1]
    dw2 = o[i, 2] - o[j, 2]
    dn = dw0 * n0 + dw1 * n1 + dw2 * n2
    ik = 1.0 / kappa
    er = _decay(c_roll, kappa, tau) * ik
    et = _decay(c_twist, kappa, tau) * ik
    a0 = er * (dw0 - dn * n0) + et * dn * n0  # the angular impulse on i
    a1 = er * (dw1 - dn * n1) + et * dn * n1
    a2 = er * (dw2 - dn * n2) + et * dn * n2
    o[i, 0] += a0 * Ji
    o[i, 1] += a1 * Ji
    o[i, 2] += a2 * Ji
    o[j, 0] -= a0 * Jj
    o[j, 1] -= a1 * Jj
    o[j, 2] -= a2 * Jj
    ur = dw0 * dw0 + dw1 * dw1 + dw2 * dw2 - dn * dn
    return (-0.5 * ur * er * (2.0 + er * kappa) - 0.5 * dn * dn * et * (2.0 + et * kappa))


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _bond(x, v, q, o, m, J, t, bonds, b, tau, forward):
    """The exact flows of bond ``b``'s modes over ``tau`` (normal, sliding, rolling and
    twisting ``forward``, the reverse otherwise); returns the kinetic energy removed."""
    law = t[b, C_LAW]
    i = bonds[b, 0]
    j = bonds[b, 1]
    d0 = x[i, 0] - x[j, 0]
    d1 = x[i, 1] - x[j, 1]
    d2 = x[i, 2] - x[j, 2]
    r = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
    ir = 1.0 / r
    n0 = d0 * ir
    n1 = d1 * ir
    n2 = d2 * ir
    # (the inverse masses and moments once a bond: products, not ≈ 30 divisions)
    mi = 1.0 / m[i]
    mj = 1.0 / m[j]
    if law == LAW_SPRING:
        g = t[b, C_GAMMA_SPRING]
        if g == 0.0:
            return 0.0
        return _normal(v, mi, mj, i, j, n0, n1, n2,
                       g * _smooth_w(t, b, d0, d1, d2, x, q, i, j), tau)
    if law != LAW_ROTATIONAL and law != LAW_ROTATIONAL_AVERAGE:
        return 0.0
    gn = t[b, C_GAMMA_ROT]
    gs = t[b, C_GAMMA_ROT + 1]
    gr = 0.5 * t[b, C_GAMMA_ROT + 2] * r
    gt = 0.5 * t[b, C_GAMMA_ROT + 3]
    if gn == 0.0 and gs == 0.0 and gr == 0.0 and gt == 0.0:
        return 0.0
    w = _smooth_w(t, b, d0, d1, d2, x, q, i, j)
    Ji = 1.0 / J[i]
    Jj = 1.0 / J[j]
    out = 0.0
    if forward:
        out += _normal(v, mi, mj, i, j, n0, n1, n2, w * gn, tau)
        out += _sliding(v, o, mi, mj, Ji, Jj, i, j, d0, d1, d2, n0, n1, n2, w * gs, tau)
        out += _spin(o, Ji, Jj, i, j, n0, n1, n2, w * gr, w * gt, tau)
    else:
        out += _spin(o, Ji, Jj, i, j, n0, n1, n2, w * gr, w * gt, tau)
        out += _sliding(v, o, mi, mj, Ji, Jj, i, j, d0, d1, d2, n0, n1, n2, w * gs, tau)
        out += _normal(v, mi, mj, i, j, n0, n1, n2, w * gn, tau)
    return out


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def bond_damp_half(x, v, q, o, pi, m, J, bonds, table, tau, forward, keep_pi):
    """The bonds' damping flow over ``tau`` (module docstring) in place, the bonds in
    order (``forward``) or in reverse; with ``keep_pi`` the body angular momentum
    ``Π_i = J_i R_iᵀ Ω_i`` follows ``Ω`` (the schemes that keep it).  The positions and
    attitudes are not changed.  Returns the kinetic energy removed (``≥ 0``)."""
    nb = bonds.shape[0]
    d = 0.0
    if keep_pi:  # (Π changes with Ω: subtract the old J Ω, add the new below)
        for i in range(o.shape[0]):
            a0, a1, a2 = quat_rotate_t(q[i, 0], -q[i, 1], -q[i, 2], -q[i, 3],
                                       o[i, 0], o[i, 1], o[i, 2])
            pi[i, 0] -= J[i] * a0
            pi[i, 1] -= J[i] * a1
            pi[i, 2] -= J[i] * a2
    for k in range(nb):
        b = k if forward else nb - 1 - k
        d += _bond(x, v, q, o, m, J, table, bonds, b, tau, forward)
    if keep_pi:
        for i in range(o.shape[0]):
            a0, a1, a2 = quat_rotate_t(q[i, 0], -q[i, 1], -q[i, 2], -q[i, 3],
                                       o[i, 0], o[i, 1], o[i, 2])
            pi[i, 0] += J[i] * a0
            pi[i, 1] += J[i] * a1
            pi[i, 2] += J[i] * a2
    return d
