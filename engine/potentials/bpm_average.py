"""LAMMPS's ``bpm/rotational`` as LAMMPS computes it since 2026: the *average-frame*
force law (issue #44 item 8a; docs/physics.md §4.6 "Against LAMMPS's metamaterial"),
``frame = "average"`` in a scenario, law id ``LAW_ROTATIONAL_AVERAGE`` of the BPM table
(``engine.potentials.bpm``: same columns as ``bpm/rotational``).

LAMMPS's current ``bond_style bpm/rotational`` (``doc/src/bond_bpm_rotational.rst``;
Alkuino et al. 2026; ``src/BPM/bond_bpm_rotational.cpp`` read to settle the details)
measures the bond in the frame ``C`` of the two spheres' mean attitude (the normalised
sum of their quaternions, the shortest-path SLERP midpoint ``q_c``), not in one
sphere's frame (Wang 2009, the law of ``engine.potentials.bpm``, which LAMMPS keeps as
``frame particle``).  With ``1`` the lower index of the bond, ``2`` the higher, the
reference bond ``r_i`` (from 1 to 2, at creation, the spheres unrotated as
``read_data`` leaves them) and the current ``r_f = x_2 − x_1``:

* ``r_c = R(q_c)ᵀ r_f``; radial ``F_r = k_r (|r_c| − r₀)`` along ``r̂_c``;
* shear ``γ = ∠(r_i, r_c)``, ``F_s = k_s |r_c| γ`` along ``ŝ = t̂ × r̂_c``,
  ``t̂ = (r_i × r_c)/|r_i × r_c|``, and the torque ``½ |r_c| F_s t̂`` on each sphere;
* the attitude of 2 in ``C``, ``u = q_m* ⊗ (q_c* ⊗ q_2) ⊗ q_m`` (``q_m`` turns ``z``
  onto ``r̂_c``), split into swing and twist about ``z`` (Wang's formula) for ``u``
  and ``u*``; twist ``ψ`` and bending ``θ`` are the angles of ``twist(u) ⊗ twist(u*)*``
  and ``swing(u) ⊗ swing(u*)*``, torques ``k_t ψ`` and ``k_b θ`` about their axes
  (turned back by ``q_m``), ``+`` on 1, ``−`` on 2;
* everything turned back to space by ``q_c``; the force on 1 is ``F_r + F_s`` (of the
  frame ``C``), on 2 its opposite;
* LAMMPS's reported (``ebond``) "approximate bond energy" ``½ (k_r (|r_c| − r₀)² +
  k_s |r_c|² γ² + k_t ψ² + k_b θ²)``: components ``axial``, ``shear`` and ``bending``
  (``ψ`` and ``θ``).

These loads are not the gradient of that energy (nor of any), so the law is not
conservative (``E`` drifts with it undamped: docs/physics.md §4.6); the total force and
the total moment of a bond are zero, so ``P`` and ``L`` are kept.  ``smooth yes``: every
load times ``1 − B⁴``, ``B = |F_r|/f_rc + F_s/f_sc + k_b θ/τ_bc + k_t ψ/τ_tc``.
LAMMPS's default damping of this law (``damping derivative``: rates of ``γ, θ, ψ`` by
finite differences of the last step) is not carried: the bonds' damping here is the
exact flow of ``engine.potentials.bond_damping`` (LAMMPS's ``damping dem``), with the
same coefficients; an equilibrium does not depend on it.
"""

from __future__ import annotations

import math

from numba import njit

from ..rotations import quat_mul_t, quat_rotate_t

EPS = 1e-10
HALF_SQRT2 = 0.5 * math.sqrt(2.0)


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _unit4(a0, a1, a2, a3):
    s = 1.0 / math.sqrt(a0 * a0 + a1 * a1 + a2 * a2 + a3 * a3)
    return a0 * s, a1 * s, a2 * s, a3 * s


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _acos(c):
    return math.acos(1.0 if c > 1.0 else -1.0 if c < -1.0 else c)


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _twist_of(w, z):
    """The twist about ``z`` of a unit quaternion ``(w, ·, ·, z)``: ``(cos ψ/2, sin ψ/2)``
    with ``ψ = ±2 acos(w/√(w² + z²))`` (Wang's formula; no twist where ``w = z = 0``),
    written without the angle: ``cos(acos(w/s)) = w/s`` and ``sin ψ/2 = ±√(1 − w²/s²)
    = z/s`` (``s = √(w² + z²)``, the sign of ``ψ`` that of ``z``), equal to round-off
    and without the four libm calls (issue #44 item 9)."""
    s = math.sqrt(w * w + z * z)
    if s < EPS:
        return 1.0, 0.0
    s = 1.0 / s
    return w * s, z * s


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _swing_of(u0, u1, u2, u3, tc, ts):
    """``swing = twist* ⊗ u`` (normalised) for the twist ``(tc, 0, 0, ts)`` of ``u``."""
    a0, a1, a2, a3 = quat_mul_t(tc, 0.0, 0.0, -ts, u0, u1, u2, u3)
    return _unit4(a0, a1, a2, a3)


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _axis_angle(a0, a1, a2, a3):
    """``(angle 2 acos a₀, unit axis of (a₁, a₂, a₃))``, axis ``z`` for no angle."""
    ang = 2.0 * _acos(a0)
    s = math.sqrt(a1 * a1 + a2 * a2 + a3 * a3)
    if abs(ang) > EPS and s > 0.0:
        return ang, a1 / s, a2 / s, a3 / s
    return ang, 0.0, 0.0, 1.0


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def rotational_average(kr, ks, kt, kb, r0, ri0, ri1, ri2, f0, f1, f2, p0, p1, p2, p3,
                       q0, q1, q2, q3):
    """The average-frame loads of one bond (module docstring): ``r_i = (ri0, ri1, ri2)``
    (length ``r0``) and ``r_f = (f0, f1, f2)`` from sphere 1 to sphere 2, attitudes
    ``p`` (sphere 1) and ``q`` (sphere 2).  Returns ``F_1 (3), τ_1 (3), τ_2 (3)`` (``F_2
    = −F_1``), the energies ``U_r, U_s, U_tb`` and the smoothing's loads ``|F_r|, F_s,
    k_b θ, k_t ψ``."""
    # the mean attitude q_c (shortest path)
    dot = p0 * q0 + p1 * q1 + p2 * q2 + p3 * q3
    sg = -1.0 if dot < 0.0 else 1.0
    c0, c1, c2, c3 = _unit4(p0 + sg * q0, p1 + sg * q1, p2 + sg * q2, p3 + sg * q3)
    rc0, rc1, rc2 = quat_rotate_t(c0, -c1, -c2, -c3, f0, f1, f2)
    rn = math.sqrt(rc0 * rc0 + rc1 * rc1 + rc2 * rc2)
    h0 = rc0 / rn
    h1 = rc1 / rn
    h2 = rc2 / rn
    fr = kr * (rn - r0)
    # shear
    gamma = _acos((ri0 * rc0 + ri1 * rc1 + ri2 * rc2) / (r0 * rn))
    x0 = ri1 * rc2 - ri2 * rc1
    x1 = ri2 * rc0 - ri0 * rc2
    x2 = ri0 * rc1 - ri1 * rc0
    xn = math.sqrt(x0 * x0 + x1 * x1 + x2 * x2)
    fs = 0.0
    s0 = s1 = s2 = t0 = t1 = t2 = 0.0
    if xn > EPS:
        t0 = x0 / xn
        t1 = x1 / xn
        t2 = x2 / xn
        s0 = t1 * h2 - t2 * h1
        s1 = t2 * h0 - t0 * h2
        s2 = t0 * h1 - t1 * h0
        sn = math.sqrt(s0 * s0 + s1 * s1 + s2 * s2)
        s0 /= sn
        s1 /= sn
        s2 /= sn
        fs = ks * rn * gamma
    # the attitude of 2 in C, seen with z along the bond
    u0, u1, u2, u3 = quat_mul_t(c0, -c1, -c2, -c3, q0, q1, q2, q3)
    u0, u1, u2, u3 = _unit4(u0, u1, u2, u3)
    m0 = HALF_SQRT2 * math.sqrt(max(rn + rc2, 0.0) / rn)
    m1 = 0.0
    m2 = 0.0
    tmp = math.sqrt(rc0 * rc0 + rc1 * rc1)
    if tmp > EPS:
        fac = -HALF_SQRT2 * math.sqrt(max(rn - rc2, 0.0) / rn) / tmp
        m1 = fac * rc1
        m2 = -fac * rc0
    if m0 == 0.0 and m1 == 0.0 and m2 == 0.0:
        m2 = 1.0
    m0, m1, m2, m3 = _unit4(m0, m1, m2, 0.0)
    a0, a1, a2, a3 = quat_mul_t(m0, -m1, -m2, -m3, u0, u1, u2, u3)
    u0, u1, u2, u3 = quat_mul_t(a0, a1, a2, a3, m0, m1, m2, m3)
    u0, u1, u2, u3 = _unit4(u0, u1, u2, u3)
    # swing and twist of u and of u*
    # (twist(u*) = twist(u)*: one twist, and twist(u) ⊗ twist(u*)* = twist(u)² =
    # (c² − s², 0, 0, 2cs), the product written out)
    tc, ts = _twist_of(u0, u3)
    w20, w21, w22, w23 = _swing_of(u0, u1, u2, u3, tc, ts)
    w10, w11, w12, w13 = _swing_of(u0, -u1, -u2, -u3, tc, -ts)
    psi, ta0, ta1, ta2 = _axis_angle(tc * tc - ts * ts, 0.0, 0.0, 2.0 * tc * ts)
    a0, a1, a2, a3 = quat_mul_t(w20, w21, w22, w23, w10, -w11, -w12, -w13)
    theta, ba0, ba1, ba2 = _axis_angle(a0, a1, a2, a3)
    tb0, tb1, tb2 = quat_rotate_t(m0, m1, m2, m3, kt * psi * ta0 + kb * theta * ba0,
                                  kt * psi * ta1 + kb * theta * ba1,
                                  kt * psi * ta2 + kb * theta * ba2)
    # back to space
    hst = 0.5 * rn * fs
    F0, F1, F2 = quat_rotate_t(c0, c1, c2, c3, fr * h0 + fs * s0, fr * h1 + fs * s1,
                               fr * h2 + fs * s2)
    A0, A1, A2 = quat_rotate_t(c0, c1, c2, c3, hst * t0 + tb0, hst * t1 + tb1,
                               hst * t2 + tb2)
    B0, B1, B2 = quat_rotate_t(c0, c1, c2, c3, hst * t0 - tb0, hst * t1 - tb1,
                               hst * t2 - tb2)
    return (F0, F1, F2, A0, A1, A2, B0, B1, B2,
            0.5 * kr * (rn - r0) ** 2, 0.5 * ks * rn * rn * gamma * gamma,
            0.5 * (kt * psi * psi + kb * theta * theta),
            abs(fr), fs, kb * theta, kt * abs(psi))
