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

The arithmetic (issue #44 item 9: ~60 ns a bond scalar, was ~200; ~25 ns packed). The
loads above, computed in space, not in ``C``, equal to the formula of LAMMPS's source to
its round-off (tests/test_bpm_average_form.py: within 1e-12 of that formula evaluated
exactly, over random and degenerate states); the bits are not those of before:

* ``q_c`` unnormalised, ``c = p ± q``: every use below is homogeneous in it; the
  reference bond is turned out, ``g = R(c) r_i = |c|² R(q_c) r_i``, instead of ``r_f``
  turned in and the three loads turned back (``γ = ∠(g, r_f)``, ``t̂``, ``ŝ`` the same
  vectors, in space);
* the attitude of 2 in ``C``, in space: ``U = q ⊗ c* ∝ q_c ⊗ u ⊗ q_c*``, ``(w, v)``;
  its swing and twist about ``r̂ = r_f/|r_f|`` with ``z = v·r̂`` and ``n = v − z r̂``
  (what ``q_m* ⊗ u ⊗ q_m`` measures on ``z`` and across it: any ``q_m`` taking ``z``
  onto the bond's line gives the same loads, so none is needed);
* Wang's products written out: ``twist(u)² = (w² − z², 0, 0, 2wz)/(w² + z²)``, so
  ``ψ = 4 atan(z/w)`` (``|z| ≤ |w|``: ``q_c`` is the shortest-path midpoint), signed
  about ``r̂``; ``swing(u) ⊗ swing(u*)* ∝ ((w² + z²)² − (w² − z²)|n|², 2w (w² + z²) n +
  2wz |n|² r̂)``, ``θ = 2 atan(|a|/a₀)`` (``a₀ ≥ 0``) about ``a/|a|``;
* the angles by ``atan`` of a ratio, not ``acos`` of a cosine (each ``atan(y/x)`` as
  ``engine.potentials.packed_atan.atan2_packed(y, x)``, ``x > 0`` or ``atan2``'s
  continuation past a right angle and π — what the ``+ π`` corrections did — within 2
  ulp of libm, in plain arithmetic, so that ``engine.potentials.bpm.bpm_bonds_ws`` runs
  the law packed, a block of bonds at a time: issue #44 item 9, the last bits changed
  again, the law not): ``acos(1 − δ)`` turns
  the cosine's last bit into ~1.5e-8 rad at small angles (and ``r₀ ≠ |r_i|`` by an ulp
  into 1e-16/γ), ``atan`` keeps small angles to their round-off — more accurate than
  LAMMPS's formula in floats, not less; the normalisations that only restored
  round-off (``ŝ``, ``u``, the swings, ``q_m``) are gone.  The old form's thresholds
  went with ``q_m``: below 1e-10 rad its twist and bending axes defaulted to ``+r̂``
  (a load of at most 2e-10 ``k``), here they keep their sign and direction.
"""

from __future__ import annotations

import math

from numba import njit

from ..rotations import quat_mul_t, quat_rotate_t
from .packed_atan import atan2_packed

EPS = 1e-10


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def rotational_average(kr, ks, kt, kb, r0, ri0, ri1, ri2, f0, f1, f2, p0, p1, p2, p3,
                       q0, q1, q2, q3):
    """The average-frame loads of one bond (module docstring): ``r_i = (ri0, ri1, ri2)``
    (length ``r0``) and ``r_f = (f0, f1, f2)`` from sphere 1 to sphere 2, attitudes
    ``p`` (sphere 1) and ``q`` (sphere 2).  Returns ``F_1 (3), τ_1 (3), τ_2 (3)`` (``F_2
    = −F_1``), the energies ``U_r, U_s, U_tb`` and the smoothing's loads ``|F_r|, F_s,
    k_b θ, k_t ψ``.

    Computed in space, not in ``C`` ("The arithmetic" in the module docstring): the
    reference bond turned out by ``c = p ± q`` instead of ``r_f`` turned in (and three
    loads back), the twist and swing of ``u`` about ``r̂`` instead of about ``z`` after
    ``q_m``, the angles by ``atan``; equal to the formula of LAMMPS's source to
    its round-off (tests/test_bpm_average_form.py)."""
    # the mean attitude, unnormalised (every use below is homogeneous in it)
    dot = p0 * q0 + p1 * q1 + p2 * q2 + p3 * q3
    sg = -1.0 if dot < 0.0 else 1.0
    c0 = p0 + sg * q0
    c1 = p1 + sg * q1
    c2 = p2 + sg * q2
    c3 = p3 + sg * q3
    cc = c0 * c0 + c1 * c1 + c2 * c2 + c3 * c3
    # the bond: r̂ = r_f/|r_f|, the reference g = |c|² R(q_c) r_i
    rn = math.sqrt(f0 * f0 + f1 * f1 + f2 * f2)
    irn = 1.0 / rn
    h0 = f0 * irn
    h1 = f1 * irn
    h2 = f2 * irn
    fr = kr * (rn - r0)
    g0, g1, g2 = quat_rotate_t(c0, c1, c2, c3, ri0, ri1, ri2)
    # shear: γ = ∠(g, r_f), t̂ = (g × r_f)/|g × r_f|, ŝ = t̂ × r̂
    x0 = g1 * f2 - g2 * f1
    x1 = g2 * f0 - g0 * f2
    x2 = g0 * f1 - g1 * f0
    xn = math.sqrt(x0 * x0 + x1 * x1 + x2 * x2)
    gd = g0 * f0 + g1 * f1 + g2 * f2
    gamma = atan2_packed(xn, gd)  # (xn ≥ 0: in [0, π])
    fs = 0.0
    s0 = s1 = s2 = t0 = t1 = t2 = 0.0
    if xn > EPS * cc:
        ixn = 1.0 / xn
        t0 = x0 * ixn
        t1 = x1 * ixn
        t2 = x2 * ixn
        s0 = t1 * h2 - t2 * h1
        s1 = t2 * h0 - t0 * h2
        s2 = t0 * h1 - t1 * h0
        fs = ks * rn * gamma
    # the attitude of 2 in C, turned to space and times |c|: U = (w, v) = q ⊗ c*;
    # z = v·r̂ (twist), n = v − z r̂ (swing)
    w, v0, v1, v2 = quat_mul_t(q0, q1, q2, q3, c0, -c1, -c2, -c3)
    z = v0 * h0 + v1 * h1 + v2 * h2
    n0 = v0 - z * h0
    n1 = v1 - z * h1
    n2 = v2 - z * h2
    nn = n0 * n0 + n1 * n1 + n2 * n2
    ww = w * w
    zz = z * z
    ss = ww + zz
    # twist: ψ = the angle of twist(u)², signed about r̂, = 4 atan(z/w) (|z| ≤ |w|;
    # w = q·c = sg (1 + |p·q|) has the sign sg: atan2 of (sg z, sg w), its x > 0)
    psi = 4.0 * atan2_packed(sg * z, sg * w)
    # bending: θ and axis of swing(u) ⊗ swing(u*)*, times |U|² (w² + z²)
    wss = 2.0 * w * ss
    wzn = 2.0 * w * z * nn
    a1 = wss * n0 + wzn * h0
    a2 = wss * n1 + wzn * h1
    a3 = wss * n2 + wzn * h2
    an = math.sqrt(a1 * a1 + a2 * a2 + a3 * a3)
    # (the scalar part a₀ ≥ 0; below 0 by round-off past π, where atan2 carries θ on
    # past π, as atan + 2π did)
    theta = 2.0 * atan2_packed(an, ss * ss - (ww - zz) * nn)
    kbt = 0.0
    if an > 0.0:
        kbt = kb * theta / an
    ktp = kt * psi
    tb0 = ktp * h0 + kbt * a1
    tb1 = ktp * h1 + kbt * a2
    tb2 = ktp * h2 + kbt * a3
    hst = 0.5 * rn * fs
    return (fr * h0 + fs * s0, fr * h1 + fs * s1, fr * h2 + fs * s2,
            hst * t0 + tb0, hst * t1 + tb1, hst * t2 + tb2,
            hst * t0 - tb0, hst * t1 - tb1, hst * t2 - tb2,
            0.5 * kr * (rn - r0) ** 2, 0.5 * ks * rn * rn * gamma * gamma,
            0.5 * (kt * psi * psi + kb * theta * theta),
            abs(fr), fs, kb * theta, kt * abs(psi))
