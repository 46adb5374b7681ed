"""Particle-binder bonds of the torus (B&G §4, docs/physics.md §4.2): bending/torsion,
axial and shear springs between bonded neighbours."""

from __future__ import annotations

import math

from numba import njit

from ..layout import E_AXIAL, E_BENDING, E_SHEAR
from ..rotations import quat_mul_t, quat_rotate_t, rotvec_from_quat_t


@njit(nogil=True, cache=True)
def binder_bonds(x, q, bonds, bond_ref, k_bend, k_axial, k_shear, F, RM, energy):
    """Add the three binder terms of every bond ``(i, j)`` (``bond_ref = (d̂₀, r₀)``).

    * bending/torsion ``U^m = ½ K^m |θ_ij|²``, ``θ_ij = log(R_i R_jᵀ)``;
      ``RM_i = -K^m θ_ij = -RM_j`` (B&G eqs. (44)–(47), docs/physics.md §4.2);
    * axial ``U^a = ½ K^a (r/r₀ - 1)²``, ``F_i = -(K^a/r₀)(r/r₀ - 1) d̂ = -F_j``
      (B&G eqs. (48)–(50));
    * shear ``U^s = ¼ K^s [(1 - c_i)² + (1 - c_j)²]``, ``c_b = (R_b d̂₀)·d̂``,
      ``F_i = ½ K^s Σ_b (1 - c_b)(I - d̂d̂ᵀ) a_b / r = -F_j``,
      ``RM_b = ½ K^s (1 - c_b) a_b × d̂`` — the rotation-invariant form of B&G
      eqs. (53)–(55) (docs/physics.md §8).
    """
    e_bend = 0.0
    e_axial = 0.0
    e_shear = 0.0
    hs = 0.5 * k_shear
    for b in range(bonds.shape[0]):
        i = bonds[b, 0]
        j = bonds[b, 1]
        # all loads first: stores into F/RM cannot then force reloads
        qi0, qi1, qi2, qi3 = q[i, 0], q[i, 1], q[i, 2], q[i, 3]
        qj0, qj1, qj2, qj3 = q[j, 0], q[j, 1], q[j, 2], q[j, 3]
        d0 = x[i, 0] - x[j, 0]
        d1 = x[i, 1] - x[j, 1]
        d2 = x[i, 2] - x[j, 2]
        e0 = bond_ref[b, 0]
        e1 = bond_ref[b, 1]
        e2 = bond_ref[b, 2]
        r0 = bond_ref[b, 3]
        # --- bending / torsion: rotation vector of R_i R_jᵀ = q_i ⊗ q_j*
        qr0, qr1, qr2, qr3 = quat_mul_t(qi0, qi1, qi2, qi3, qj0, -qj1, -qj2, -qj3)
        t0, t1, t2 = rotvec_from_quat_t(qr0, qr1, qr2, qr3)
        e_bend += 0.5 * k_bend * (t0 * t0 + t1 * t1 + t2 * t2)
        # --- geometry of the bond
        r = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
        inv_r = 1.0 / r
        n0 = d0 * inv_r
        n1 = d1 * inv_r
        n2 = d2 * inv_r
        # --- axial
        s = r / r0 - 1.0
        e_axial += 0.5 * k_axial * s * s
        fa = -(k_axial / r0) * s
        # --- shear
        ai0, ai1, ai2 = quat_rotate_t(qi0, qi1, qi2, qi3, e0, e1, e2)
        aj0, aj1, aj2 = quat_rotate_t(qj0, qj1, qj2, qj3, e0, e1, e2)
        ci = ai0 * n0 + ai1 * n1 + ai2 * n2
        cj = aj0 * n0 + aj1 * n1 + aj2 * n2
        ui = 1.0 - ci
        uj = 1.0 - cj
        e_shear += 0.25 * k_shear * (ui * ui + uj * uj)
        gi = hs * ui * inv_r
        gj = hs * uj * inv_r
        f0 = fa * n0 + gi * (ai0 - ci * n0) + gj * (aj0 - cj * n0)
        f1 = fa * n1 + gi * (ai1 - ci * n1) + gj * (aj1 - cj * n1)
        f2 = fa * n2 + gi * (ai2 - ci * n2) + gj * (aj2 - cj * n2)
        mi = hs * ui
        mj = hs * uj
        # --- stores
        F[i, 0] += f0
        F[i, 1] += f1
        F[i, 2] += f2
        F[j, 0] -= f0
        F[j, 1] -= f1
        F[j, 2] -= f2
        RM[i, 0] += mi * (ai1 * n2 - ai2 * n1) - k_bend * t0
        RM[i, 1] += mi * (ai2 * n0 - ai0 * n2) - k_bend * t1
        RM[i, 2] += mi * (ai0 * n1 - ai1 * n0) - k_bend * t2
        RM[j, 0] += mj * (aj1 * n2 - aj2 * n1) + k_bend * t0
        RM[j, 1] += mj * (aj2 * n0 - aj0 * n2) + k_bend * t1
        RM[j, 2] += mj * (aj0 * n1 - aj1 * n0) + k_bend * t2
    energy[E_BENDING] += e_bend
    energy[E_AXIAL] += e_axial
    energy[E_SHEAR] += e_shear
