"""The potential-form ``bpm/rotational`` bonds' block phases (issue #44 item 9):
``engine.potentials.bpm._rotational`` (docs/physics.md §4.6, ``engine.potentials.bpm``'s
docstring) split into packed loops over the columns of a block of the scratch —
:func:`_geometry` (phase 2: up to the angles' arguments), :func:`_loads` (phase 3: the
angles, loads and energies) and :func:`_smooth` (LAMMPS's ``1 − B⁴``, only in blocks
with a ``smooth yes`` bond).  The gathers (phase 1) and the sums in bond order are
``engine.potentials.bpm.bpm_bonds_ws``'s; together the same operations in the same
order as ``_rotational`` bond by bond, so its bits (tests/test_bpm_block.py)."""

from __future__ import annotations

import math

from numba import njit

from ..rotations import quat_mul_t, quat_rotate_t
from .packed_atan import atan2_packed

# The potential-form ``bpm/rotational`` bonds a block at a time (issue #44 item 9): the
# scratch ``ws`` (``engine.potentials.bpm.new_bonds_scratch``) holds rows of BLOCK values, one row a
# quantity, each bond of the block a column; the arithmetic loops over a row then run
# with packed AVX operations (the angles too: ``packed_atan``, no libm call), and the
# loads are added in bond order, so the bits are those of
# ``engine.potentials.bpm._rotational`` bond by bond (tests/test_bpm_block.py).
BLOCK = 64
"""Bonds a block (the scratch, :data:`N_ROWS` × BLOCK doubles, stays in L1/L2)."""
# gathered (phase 1): d = x_i − x_j, q_i, q_j and the bond's row of the table
_D = 0 * BLOCK  # d (3)
_QI = 3 * BLOCK  # q_i (4)
_QJ = 7 * BLOCK  # q_j (4)
_KR = 11 * BLOCK  # k_r, k_s, k_t, k_b (4)
_R0 = 15 * BLOCK
_AI = 16 * BLOCK  # a_i (3)
_AJ = 19 * BLOCK  # a_j (3)
_REL = 22 * BLOCK  # c (4)
_SM = 26 * BLOCK  # smooth
_LIM = 27 * BLOCK  # f_rc, f_sc, τ_bc, τ_tc (4)
# the geometry up to the angles (phase 2)
_R = 31 * BLOCK
_N = 32 * BLOCK  # n (3)
_EI = 35 * BLOCK  # e_i (3)
_EJ = 38 * BLOCK  # e_j (3)
_MN = 41 * BLOCK  # m·n
_PS = 42 * BLOCK  # p = (I − nnᵀ) m (3)
_PSN = 45 * BLOCK  # |p|
_W = 46 * BLOCK  # Δq = (w, v) (4), w ≥ 0
_VN = 50 * BLOCK  # v·n
_PV = 51 * BLOCK  # p_v = (I − nnᵀ) v (3)
_PB = 54 * BLOCK  # |p_v|
# the loads (phase 3): F_i (3), τ_i (3), τ_j (3), U_n, U_s, U_b + U_t
_OUT = 55 * BLOCK
# the smoothing's f_r, f_s (3), k_b θ, k_t |ψ| (phase 3, for :func:`_smooth`), over d
# and q_i (read by phase 2 only)
_BL = 0 * BLOCK


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _asin(p):
    """``asin(min(p, 1))`` for ``p ≥ 0`` as ``atan2(p, √((1 − p)(1 + p)))`` (within 2 ulp
    of libm's ``asin``, packed in a loop: ``engine.potentials.packed_atan``)."""
    p = p if p < 1.0 else 1.0
    return atan2_packed(p, math.sqrt((1.0 - p) * (1.0 + p)))



@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _geometry(ws, nr):
    """Phase 2 (packed): ``engine.potentials.bpm._rotational`` up to the arguments of its angles."""
    for k in range(nr):
        d0 = ws[_D + k]
        d1 = ws[_D + BLOCK + k]
        d2 = ws[_D + 2 * BLOCK + k]
        r = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
        n0 = d0 / r
        n1 = d1 / r
        n2 = d2 / r
        qi0 = ws[_QI + k]
        qi1 = ws[_QI + BLOCK + k]
        qi2 = ws[_QI + 2 * BLOCK + k]
        qi3 = ws[_QI + 3 * BLOCK + k]
        qj0 = ws[_QJ + k]
        qj1 = ws[_QJ + BLOCK + k]
        qj2 = ws[_QJ + 2 * BLOCK + k]
        qj3 = ws[_QJ + 3 * BLOCK + k]
        ei0, ei1, ei2 = quat_rotate_t(qi0, qi1, qi2, qi3, ws[_AI + k], ws[_AI + BLOCK + k],
                                      ws[_AI + 2 * BLOCK + k])
        ej0, ej1, ej2 = quat_rotate_t(qj0, qj1, qj2, qj3, ws[_AJ + k], ws[_AJ + BLOCK + k],
                                      ws[_AJ + 2 * BLOCK + k])
        m0 = 0.5 * (ei0 + ej0)
        m1 = 0.5 * (ei1 + ej1)
        m2 = 0.5 * (ei2 + ej2)
        mn = m0 * n0 + m1 * n1 + m2 * n2
        p0s = m0 - mn * n0
        p1s = m1 - mn * n1
        p2s = m2 - mn * n2
        a0, a1, a2, a3 = quat_mul_t(qj0, qj1, qj2, qj3, ws[_REL + k], ws[_REL + BLOCK + k],
                                    ws[_REL + 2 * BLOCK + k], ws[_REL + 3 * BLOCK + k])
        w, v0, v1, v2 = quat_mul_t(a0, a1, a2, a3, qi0, -qi1, -qi2, -qi3)
        sg = -1.0 if w < 0.0 else 1.0  # (an exact sign flip: w ≥ 0)
        w = sg * w
        v0 = sg * v0
        v1 = sg * v1
        v2 = sg * v2
        vn = v0 * n0 + v1 * n1 + v2 * n2
        p0 = v0 - vn * n0
        p1 = v1 - vn * n1
        p2 = v2 - vn * n2
        ws[_R + k] = r
        ws[_N + k] = n0
        ws[_N + BLOCK + k] = n1
        ws[_N + 2 * BLOCK + k] = n2
        ws[_EI + k] = ei0
        ws[_EI + BLOCK + k] = ei1
        ws[_EI + 2 * BLOCK + k] = ei2
        ws[_EJ + k] = ej0
        ws[_EJ + BLOCK + k] = ej1
        ws[_EJ + 2 * BLOCK + k] = ej2
        ws[_MN + k] = mn
        ws[_PS + k] = p0s
        ws[_PS + BLOCK + k] = p1s
        ws[_PS + 2 * BLOCK + k] = p2s
        ws[_PSN + k] = math.sqrt(p0s * p0s + p1s * p1s + p2s * p2s)
        ws[_W + k] = w
        ws[_W + BLOCK + k] = v0
        ws[_W + 2 * BLOCK + k] = v1
        ws[_W + 3 * BLOCK + k] = v2
        ws[_VN + k] = vn
        ws[_PV + k] = p0
        ws[_PV + BLOCK + k] = p1
        ws[_PV + 2 * BLOCK + k] = p2
        ws[_PB + k] = math.sqrt(p0 * p0 + p1 * p1 + p2 * p2)


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _loads(ws, nr):
    """Phase 3 (packed): ``_rotational`` from its angles to its loads (unsmoothed) and
    energies, and the smoothing's inputs for :func:`_smooth`."""
    for k in range(nr):
        kr = ws[_KR + k]
        ks = ws[_KR + BLOCK + k]
        kt = ws[_KR + 2 * BLOCK + k]
        kb = ws[_KR + 3 * BLOCK + k]
        r0 = ws[_R0 + k]
        r = ws[_R + k]
        n0 = ws[_N + k]
        n1 = ws[_N + BLOCK + k]
        n2 = ws[_N + 2 * BLOCK + k]
        s = r - r0
        fr = kr * s
        ei0 = ws[_EI + k]
        ei1 = ws[_EI + BLOCK + k]
        ei2 = ws[_EI + 2 * BLOCK + k]
        ej0 = ws[_EJ + k]
        ej1 = ws[_EJ + BLOCK + k]
        ej2 = ws[_EJ + 2 * BLOCK + k]
        m0 = 0.5 * (ei0 + ej0)
        m1 = 0.5 * (ei1 + ej1)
        m2 = 0.5 * (ei2 + ej2)
        mn = ws[_MN + k]
        p0s = ws[_PS + k]
        p1s = ws[_PS + BLOCK + k]
        p2s = ws[_PS + 2 * BLOCK + k]
        ps = ws[_PSN + k]
        alpha = atan2_packed(ps, mn)
        ra = alpha / ps if ps > 1e-12 else 1.0 / mn  # α/|p|
        hs = 0.5 * ks * r0 * r0
        fsc = 2.0 * hs * ra / r  # F_i = k_s r₀² (α/|p|) p / r
        fs0 = fsc * p0s
        fs1 = fsc * p1s
        fs2 = fsc * p2s
        hsc = hs * ra / (m0 * m0 + m1 * m1 + m2 * m2)  # ∂U/∂e_b = hsc (m·n p − |p|² n)
        h0 = hsc * (mn * p0s - ps * ps * n0)
        h1 = hsc * (mn * p1s - ps * ps * n1)
        h2 = hsc * (mn * p2s - ps * ps * n2)
        w = ws[_W + k]
        v0 = ws[_W + BLOCK + k]
        v1 = ws[_W + 2 * BLOCK + k]
        v2 = ws[_W + 3 * BLOCK + k]
        vn = ws[_VN + k]
        p0 = ws[_PV + k]
        p1 = ws[_PV + BLOCK + k]
        p2 = ws[_PV + 2 * BLOCK + k]
        pb = ws[_PB + k]
        psi = 2.0 * atan2_packed(vn, w)  # twist angle
        theta = 2.0 * _asin(pb)  # bending angle
        wv = w * w + vn * vn
        wv = wv if wv > 1e-300 else 1e-300
        ga = 2.0 * kt * psi * w / wv  # ∂U/∂(v·n)
        gw = -2.0 * kt * psi * vn / wv  # ∂U/∂w
        cb = 1.0 - pb * pb
        cb = cb if cb > 1e-300 else 1e-300
        gb = 2.0 * kb * (theta / pb if pb > 1e-12 else 2.0) / math.sqrt(cb)  # ∂U/∂|p|/|p|
        g0 = ga * n0 + gb * p0
        g1 = ga * n1 + gb * p1
        g2 = ga * n2 + gb * p2
        vg0 = v1 * g2 - v2 * g1
        vg1 = v2 * g0 - v0 * g2
        vg2 = v0 * g1 - v1 * g0
        c = (ga - gb * vn) / r
        ws[_OUT + k] = -fr * n0 + fs0 - c * p0
        ws[_OUT + BLOCK + k] = -fr * n1 + fs1 - c * p1
        ws[_OUT + 2 * BLOCK + k] = -fr * n2 + fs2 - c * p2
        ws[_OUT + 3 * BLOCK + k] = h1 * ei2 - h2 * ei1 + 0.5 * (w * g0 - vg0 - gw * v0)
        ws[_OUT + 4 * BLOCK + k] = h2 * ei0 - h0 * ei2 + 0.5 * (w * g1 - vg1 - gw * v1)
        ws[_OUT + 5 * BLOCK + k] = h0 * ei1 - h1 * ei0 + 0.5 * (w * g2 - vg2 - gw * v2)
        ws[_OUT + 6 * BLOCK + k] = h1 * ej2 - h2 * ej1 - 0.5 * (w * g0 + vg0 - gw * v0)
        ws[_OUT + 7 * BLOCK + k] = h2 * ej0 - h0 * ej2 - 0.5 * (w * g1 + vg1 - gw * v1)
        ws[_OUT + 8 * BLOCK + k] = h0 * ej1 - h1 * ej0 - 0.5 * (w * g2 + vg2 - gw * v2)
        ws[_OUT + 9 * BLOCK + k] = 0.5 * kr * s * s
        ws[_OUT + 10 * BLOCK + k] = hs * alpha * alpha
        ws[_OUT + 11 * BLOCK + k] = 0.5 * kt * psi * psi + 0.5 * kb * theta * theta
        ws[_BL + k] = fr
        ws[_BL + BLOCK + k] = fs0
        ws[_BL + 2 * BLOCK + k] = fs1
        ws[_BL + 3 * BLOCK + k] = fs2
        ws[_BL + 4 * BLOCK + k] = kb * theta
        ws[_BL + 5 * BLOCK + k] = kt * abs(psi)


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _smooth(ws, nr):
    """LAMMPS's smoothing ``w = 1 − B⁴`` (not a gradient) of the loads of phase 3 where
    ``smooth yes`` (packed; the limits of ``smooth no`` bonds are 1, their ``B`` not
    taken): ``w (…)`` as ``engine.potentials.bpm._rotational`` computes it, so its bits.
    Blocks without a ``smooth yes`` bond skip it (their factor is 1: ``1 · f = f``)."""
    for k in range(nr):
        fs0 = ws[_BL + BLOCK + k]
        fs1 = ws[_BL + 2 * BLOCK + k]
        fs2 = ws[_BL + 3 * BLOCK + k]
        fsm = math.sqrt(fs0 * fs0 + fs1 * fs1 + fs2 * fs2)
        B = (ws[_BL + k] / ws[_LIM + k] + fsm / ws[_LIM + BLOCK + k]
             + ws[_BL + 4 * BLOCK + k] / ws[_LIM + 2 * BLOCK + k]
             + ws[_BL + 5 * BLOCK + k] / ws[_LIM + 3 * BLOCK + k])
        B = B if B > 0.0 else 0.0
        scale = 1.0 - B * B * B * B if ws[_SM + k] != 0.0 else 1.0
        for r in range(9):
            ws[_OUT + r * BLOCK + k] = scale * ws[_OUT + r * BLOCK + k]
