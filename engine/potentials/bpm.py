"""The bonded-particle-model (BPM) bond laws of LAMMPS, as energies (issue #44 item 1;
docs/physics.md §4.6): ``bpm/rotational`` and ``bpm/spring``, one row of the per-bond
table ``ff[BPM_TABLE]`` (:data:`N_COLS` columns: the law, its coefficients and the
bond's reference frame taken at its creation) a bond.

Formulas from LAMMPS's documentation (``doc/src/bond_bpm_rotational.rst``,
``bond_bpm_spring.rst``, ``Howto_bpm.rst``), written here as potentials so that their
forces and torques are exact gradients (a variational scheme then conserves their
energy; docs/physics.md §4.6 has the measurement).  ``d = x_i − x_j`` (pointing to ``i``
from ``j``, as LAMMPS's reference vector), ``r = |d|``, ``n = d/r``, ``s = r − r₀``.

``bpm/rotational`` (LAMMPS: "f_r = k_r (r − r₀)", a shear force "proportional to the
tangential shear displacement" with ``k_s``, bending and twisting torques "proportional
to angular bending and twisting displacements" with ``k_b``, ``k_t``):

* normal ``U_n = ½ k_r s²``, ``F_i = −k_r s n`` (energy component ``axial``);
* shear: the reference direction carried by each sphere ``e_b = R_b a_b`` (``a_b =
  R_b⁰ᵀ n₀``, body frame, at creation), their mean ``m = ½ (e_i + e_j)``, its part
  across the bond ``p = (I − nnᵀ) m`` and the shear angle ``α = atan2(|p|, m·n)``
  between bond and mean direction: ``U_s = ½ k_s r₀² α²`` — the tangential displacement
  against the spheres' *mean* rotation, as LAMMPS's (Wang 2009: the bond's shear angle
  in one sphere's frame less half the spheres' relative rotation; a rotation ``θ`` of
  one sphere alone loads both with ``−¼ k_s r₀² θ``), ``≈ ½ k_s |δ − r₀ θ̄ × n|²`` for a
  tangential displacement ``δ`` and small rotations of mean ``θ̄``; ``F_i = k_s r₀²
  (α/|p|) p / r = −F_j``, torque ``τ_b = h × e_b``, ``h = ∂U/∂e_b = ½ k_s r₀² (α/|p|)
  ((m·n) p − |p|² n)/|m|²`` (component ``shear``);
* twist and bending: the rotation of ``j`` relative to ``i`` since creation,
  ``Δq = q_j ⊗ c ⊗ q_i*`` (``c = q_j⁰* ⊗ q_i⁰``), ``Δq = (w, v)`` with ``w ≥ 0``, split
  about the bond (swing-twist, as LAMMPS's Wang–Mora angles): twist ``ψ = 2 atan2(v·n,
  w)``, bending ``θ = 2 asin |(I − nnᵀ) v|``; ``U_t = ½ k_t ψ²``, ``U_b = ½ k_b θ²``
  (component ``bending``, both), so that ``|τ_t| = k_t ψ`` and ``|τ_b| = k_b θ`` are
  LAMMPS's torques at any angle.  With ``g = ∂U/∂v = A n + B p_v`` (``A = 2 k_t ψ
  w/(w² + (v·n)²)``, ``B = 2 k_b θ/(|p_v| √(1 − |p_v|²))``, ``p_v = (I − nnᵀ) v``) and
  ``g_w = ∂U/∂w = −2 k_t ψ (v·n)/(w² + (v·n)²)``: ``τ_i = ½ (w g − v × g − g_w v)``,
  ``τ_j = −½ (w g + v × g − g_w v)``, and, ``n`` turning with the bond, ``F_i = −(A −
  B v·n) p_v / r = −F_j``.  tests/test_bond_laws_lammps.py: these loads equal real
  LAMMPS's to 1e-10 up to 0.3 rad; the shear's to ``O(ε)`` relative (LAMMPS's shear,
  ``k_s r γ`` with the current ``r`` and measured in one sphere's frame, is not a
  gradient);
* ``smooth yes``: every force and torque above times ``w = 1 − B⁴``, ``B = max{0,
  f_r/f_rc + |f_s|/f_sc + |τ_b|/τ_bc + |τ_t|/τ_tc}`` (LAMMPS's breaking criterion; ``|τ_b|
  = k_b |b|``, ``|τ_t| = k_t |t|``): not a gradient (the energies stay unsmoothed, as
  LAMMPS's), so not conservative.

``bpm/spring``: ``F = k s w`` along ``n``, ``w = 1 − (s/(r₀ ε_c))⁸`` with ``smooth yes``
(else 1): central, so the potential ``U = ½ k s² − k s¹⁰/(10 (r₀ ε_c)⁸)`` (``smooth no``:
``½ k s²``) exists and is reported (component ``spring``; LAMMPS reports ``½ k s²``).

The three angles ``α``, ``ψ``, ``θ`` are ``engine.potentials.packed_atan.atan2_packed``
(``θ/2 = atan2(|p_v|, √((1 − |p_v|)(1 + |p_v|)))``), within 2 ulp of libm's ``atan2`` and
``asin``, in plain arithmetic so that :func:`bpm_bonds_ws` runs them packed (issue #44
item 9: the loads' last bits changed then, the law did not).

Damping (``γ``: LAMMPS's ``F_D = −γ w (n·Δv)`` and the rolling and twisting torques)
needs the velocities, which the force kernels do not take: the coefficients are stored
and the model refuses ``γ ≠ 0`` for now (``engine.models.bond_laws``).  Breaking
(``f_rc``, …, ``ε_c`` as limits, issue #44 item 2) is ``engine.potentials.bpm_break``:
the criterion on the state at the end of a step, the bond then taken out of the model
between two steps (``engine.simulation.breaking``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..layout import E_AXIAL, E_BENDING, E_SHEAR, E_SPRING, ERR_SHAPE, OK
from ..rotations import quat_mul_t, quat_rotate_t
from .bpm_average import rotational_average
from .bpm_block import (
    _AI,
    _AJ,
    _D,
    _KR,
    _LIM,
    _OUT,
    _QI,
    _QJ,
    _R0,
    _REL,
    _SM,
    BLOCK,
    _asin,
    _geometry,
    _loads,
    _smooth,
)
from .packed_atan import atan2_packed

LAW_BINDER = 0
LAW_ROTATIONAL = 1
LAW_SPRING = 2
LAW_ROTATIONAL_AVERAGE = 3
"""``bpm/rotational`` with ``frame = "average"``: LAMMPS's force law since 2026, not a
potential (``engine.potentials.bpm_average``); the columns of ``bpm/rotational``."""
LAW_NAMES = {"binder": LAW_BINDER, "bpm/rotational": LAW_ROTATIONAL,
             "bpm/spring": LAW_SPRING}

# columns of a row of the table
C_LAW = 0
C_SMOOTH = 1
C_COEF = 2  # the law's coefficients, in LAMMPS's bond_coeff order (12 columns)
ROTATIONAL_COEFFS = ("k_r", "k_s", "k_t", "k_b", "f_rc", "f_sc", "tau_bc", "tau_tc",
                     "gamma_n", "gamma_s", "gamma_r", "gamma_t")
SPRING_COEFFS = ("k", "eps_c", "gamma")
C_R0 = 14  # r₀
C_AI = 15  # a_i = R_i⁰ᵀ n₀ (3)
C_AJ = 18  # a_j = R_j⁰ᵀ n₀ (3)
C_REL = 21  # c = q_j⁰* ⊗ q_i⁰ (4)
C_BREAK = 25  # 1: the bond breaks past its limits (``break yes``: engine.potentials.bpm_break)
N_COLS = 26


def law_row(law: str, coeffs: dict[str, float], smooth: bool,
            breaks: bool = False) -> np.ndarray:
    """The law's columns of a table row (the reference columns zero: :func:`reference`);
    ``breaks``: ``break yes`` (issue #44 item 2)."""
    row = np.zeros(N_COLS)
    row[C_LAW] = LAW_NAMES[law]
    row[C_SMOOTH] = 1.0 if smooth else 0.0
    row[C_BREAK] = 1.0 if breaks else 0.0
    names = ROTATIONAL_COEFFS if law == "bpm/rotational" else \
        SPRING_COEFFS if law == "bpm/spring" else ()
    for k, name in enumerate(names):
        row[C_COEF + k] = float(coeffs.get(name, 0.0))
    return row


def reference(table: np.ndarray, x: np.ndarray, q: np.ndarray, bonds: np.ndarray) -> None:
    """Fill the reference columns of ``table`` from the state ``(x, q)`` at the bonds'
    creation (LAMMPS: "the reference state is stored by each bond when it is first
    computed"): ``r₀``, each end's body-frame bond direction and their relative
    attitude."""
    from ..rotations import quat_conj, quat_mul, quat_to_matrix

    i, j = bonds[:, 0], bonds[:, 1]
    d = x[i] - x[j]
    r0 = np.linalg.norm(d, axis=1)
    n0 = d / r0[:, None]
    table[:, C_R0] = r0
    table[:, C_AI:C_AI + 3] = np.einsum("bkl,bk->bl", quat_to_matrix(q[i]), n0)
    table[:, C_AJ:C_AJ + 3] = np.einsum("bkl,bk->bl", quat_to_matrix(q[j]), n0)
    table[:, C_REL:C_REL + 4] = quat_mul(quat_conj(q[j]), q[i])


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _rotational(t, b, d0, d1, d2, q, i, j):
    """Loads of one ``bpm/rotational`` bond (row ``b`` of ``t``, spheres ``i``, ``j``):
    ``F_i (3), τ_i (3), τ_j (3), U_n, U_s, U_b + U_t`` (module docstring)."""
    kr = t[b, C_COEF]
    ks = t[b, C_COEF + 1]
    kt = t[b, C_COEF + 2]
    kb = t[b, C_COEF + 3]
    r0 = t[b, C_R0]
    r = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
    n0 = d0 / r
    n1 = d1 / r
    n2 = d2 / r
    s = r - r0
    fr = kr * s
    # shear
    ei0, ei1, ei2 = quat_rotate_t(q[i, 0], q[i, 1], q[i, 2], q[i, 3],
                                  t[b, C_AI], t[b, C_AI + 1], t[b, C_AI + 2])
    ej0, ej1, ej2 = quat_rotate_t(q[j, 0], q[j, 1], q[j, 2], q[j, 3],
                                  t[b, C_AJ], t[b, C_AJ + 1], t[b, C_AJ + 2])
    # shear: the angle α between the bond and the mean carried direction m = ½(e_i + e_j)
    m0 = 0.5 * (ei0 + ej0)
    m1 = 0.5 * (ei1 + ej1)
    m2 = 0.5 * (ei2 + ej2)
    mn = m0 * n0 + m1 * n1 + m2 * n2
    p0s = m0 - mn * n0
    p1s = m1 - mn * n1
    p2s = m2 - mn * n2
    ps = math.sqrt(p0s * p0s + p1s * p1s + p2s * p2s)
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
    # twist and bending: Δq = q_j ⊗ c ⊗ q_i* = (w, v), w ≥ 0
    a0, a1, a2, a3 = quat_mul_t(q[j, 0], q[j, 1], q[j, 2], q[j, 3], t[b, C_REL], t[b, C_REL + 1],
                                t[b, C_REL + 2], t[b, C_REL + 3])
    w, v0, v1, v2 = quat_mul_t(a0, a1, a2, a3, q[i, 0], -q[i, 1], -q[i, 2], -q[i, 3])
    if w < 0.0:
        w, v0, v1, v2 = -w, -v0, -v1, -v2
    vn = v0 * n0 + v1 * n1 + v2 * n2
    p0 = v0 - vn * n0
    p1 = v1 - vn * n1
    p2 = v2 - vn * n2
    pb = math.sqrt(p0 * p0 + p1 * p1 + p2 * p2)
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
    scale = 1.0
    if t[b, C_SMOOTH] != 0.0:  # LAMMPS's w = 1 − B⁴ (not a gradient)
        fsm = math.sqrt(fs0 * fs0 + fs1 * fs1 + fs2 * fs2)
        tb = kb * theta
        tt = kt * abs(psi)
        B = (fr / t[b, C_COEF + 4] + fsm / t[b, C_COEF + 5] + tb / t[b, C_COEF + 6]
             + tt / t[b, C_COEF + 7])
        B = B if B > 0.0 else 0.0
        scale = 1.0 - B * B * B * B
    return (scale * (-fr * n0 + fs0 - c * p0),
            scale * (-fr * n1 + fs1 - c * p1),
            scale * (-fr * n2 + fs2 - c * p2),
            scale * (h1 * ei2 - h2 * ei1 + 0.5 * (w * g0 - vg0 - gw * v0)),
            scale * (h2 * ei0 - h0 * ei2 + 0.5 * (w * g1 - vg1 - gw * v1)),
            scale * (h0 * ei1 - h1 * ei0 + 0.5 * (w * g2 - vg2 - gw * v2)),
            scale * (h1 * ej2 - h2 * ej1 - 0.5 * (w * g0 + vg0 - gw * v0)),
            scale * (h2 * ej0 - h0 * ej2 - 0.5 * (w * g1 + vg1 - gw * v1)),
            scale * (h0 * ej1 - h1 * ej0 - 0.5 * (w * g2 + vg2 - gw * v2)),
            0.5 * kr * s * s,
            hs * alpha * alpha,
            0.5 * kt * psi * psi + 0.5 * kb * theta * theta)


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _spring(t, b, d0, d1, d2):
    """Loads of one ``bpm/spring`` bond: ``F_i`` (3) and ``U`` (module docstring)."""
    k = t[b, C_COEF]
    r0 = t[b, C_R0]
    r = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
    s = r - r0
    f = k * s
    u = 0.5 * k * s * s
    if t[b, C_SMOOTH] != 0.0:  # w = 1 − (s/(r₀ ε_c))⁸, U = ½ k s² − k s¹⁰/(10 (r₀ε_c)⁸)
        z = s / (r0 * t[b, C_COEF + 1])
        z8 = z * z * z * z
        z8 = z8 * z8
        f = f * (1.0 - z8)
        u = u - 0.2 * u * z8
    return -f * d0 / r, -f * d1 / r, -f * d2 / r, u


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _average_raw(t, b, x, q, i, j):
    """``engine.potentials.bpm_average.rotational_average`` of bond ``b`` (spheres ``i``,
    ``j``) with sphere 1 the lower index (LAMMPS's ordering); the reference bond from 1
    to 2 is ``∓ r₀ a_i`` (``n₀ = a_i`` points from ``j`` to ``i`` for spheres unrotated
    at creation, as the import and the builders make them)."""
    lo = i if i < j else j
    hi = j if i < j else i
    r0 = t[b, C_R0]
    sg = -r0 if lo == i else r0
    return rotational_average(t[b, C_COEF], t[b, C_COEF + 1], t[b, C_COEF + 2],
                              t[b, C_COEF + 3], r0, sg * t[b, C_AI], sg * t[b, C_AI + 1],
                              sg * t[b, C_AI + 2], x[hi, 0] - x[lo, 0], x[hi, 1] - x[lo, 1],
                              x[hi, 2] - x[lo, 2], q[lo, 0], q[lo, 1], q[lo, 2], q[lo, 3],
                              q[hi, 0], q[hi, 1], q[hi, 2], q[hi, 3])


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _average_scale(t, b, far, fsm, tbm, ttm):
    """LAMMPS's smoothing ``1 − B⁴`` (1 with ``smooth no``) of the average-frame law."""
    if t[b, C_SMOOTH] == 0.0:
        return 1.0
    B = (far / t[b, C_COEF + 4] + fsm / t[b, C_COEF + 5] + tbm / t[b, C_COEF + 6]
         + ttm / t[b, C_COEF + 7])
    return 1.0 - B * B * B * B


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def average_w(t, b, x, q, i, j):
    """The smoothing factor of a ``LAW_ROTATIONAL_AVERAGE`` bond at ``(x, q)``."""
    out = _average_raw(t, b, x, q, i, j)
    return _average_scale(t, b, out[12], out[13], out[14], out[15])


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _average(t, b, x, q, i, j):
    """Loads of one ``LAW_ROTATIONAL_AVERAGE`` bond, as :func:`_rotational` returns
    them (``F_i, τ_i, τ_j, U_n, U_s, U_b + U_t``)."""
    (F0, F1, F2, A0, A1, A2, B0, B1, B2, ur, us, ut, far, fsm, tbm, ttm) = \
        _average_raw(t, b, x, q, i, j)
    c = _average_scale(t, b, far, fsm, tbm, ttm)
    if i < j:
        return c * F0, c * F1, c * F2, c * A0, c * A1, c * A2, c * B0, c * B1, c * B2, ur, us, ut
    return -c * F0, -c * F1, -c * F2, c * B0, c * B1, c * B2, c * A0, c * A1, c * A2, ur, us, ut


# the ``LAW_ROTATIONAL_AVERAGE`` bonds of the block, in their own columns (gathered, as
# :func:`_average_raw` passes them to ``rotational_average``): r_f = x_hi − x_lo, p =
# q_lo, q = q_hi, k_r, k_s, k_t, k_b, r₀, r_i = ∓ r₀ a_i, smooth (its limits only in
# blocks with a smooth bond), and 1 where i < j (sphere i is sphere 1)
_AF = 67 * BLOCK  # r_f (3)
_AP = 70 * BLOCK  # p (4)
_AQ = 74 * BLOCK  # q (4)
_AK = 78 * BLOCK  # k_r, k_s, k_t, k_b (4)
_AR0 = 82 * BLOCK
_ARI = 83 * BLOCK  # r_i (3)
_ASM = 86 * BLOCK  # smooth
_ALIM = 87 * BLOCK  # f_rc, f_sc, τ_bc, τ_tc (4)
_AIJ = 91 * BLOCK  # 1 where i < j, else 0
# their loads, as :func:`_average` returns them: F_i (3), τ_i (3), τ_j (3), U_n, U_s,
# U_b + U_t (unsmoothed until :func:`_average_smooth`), and the smoothing's |F_r|, F_s,
# k_b θ, k_t ψ (4)
_AOUT = 92 * BLOCK
_ABL = 104 * BLOCK
N_ROWS = 108
SCRATCH_SIZE = N_ROWS * BLOCK
"""Doubles of the scratch of :func:`bpm_bonds_ws` (:func:`new_bonds_scratch`)."""


def new_bonds_scratch() -> np.ndarray:
    """The scratch of :func:`bpm_bonds_ws` (its size does not depend on the model)."""
    return np.empty(SCRATCH_SIZE)


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _gather_average(x, q, bonds, table, b, k, ws):
    """Phase 1 of the ``LAW_ROTATIONAL_AVERAGE`` bond ``b`` into column ``k`` of the
    average bonds' rows: the arguments :func:`_average_raw` gives ``rotational_average``
    (the same products), its smoothing's and its order's; returns whether it is
    smooth."""
    i = bonds[b, 0]
    j = bonds[b, 1]
    lo = i if i < j else j
    hi = j if i < j else i
    r0 = table[b, C_R0]
    sg = -r0 if lo == i else r0
    for c in range(3):
        ws[_AF + c * BLOCK + k] = x[hi, c] - x[lo, c]
        ws[_ARI + c * BLOCK + k] = sg * table[b, C_AI + c]
    for c in range(4):
        ws[_AP + c * BLOCK + k] = q[lo, c]
        ws[_AQ + c * BLOCK + k] = q[hi, c]
        ws[_AK + c * BLOCK + k] = table[b, C_COEF + c]
    ws[_AR0 + k] = r0
    sm = table[b, C_SMOOTH]
    ws[_ASM + k] = sm
    ws[_AIJ + k] = 1.0 if i < j else 0.0
    if sm == 0.0:  # (the limits of smooth no bonds: :func:`_average_smooth`)
        return False
    for c in range(4):
        ws[_ALIM + c * BLOCK + k] = table[b, C_COEF + 4 + c]
    return True


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _gather_rotational_bond(x, q, bonds, table, b, k, ws):
    """Phase 1 of the ``LAW_ROTATIONAL`` bond ``b`` into column ``k``: ``d = x_i − x_j``,
    ``q_i``, ``q_j`` and its row of the table but its limits (:func:`_gather_limits`);
    returns whether it is ``smooth yes``."""
    i = bonds[b, 0]
    j = bonds[b, 1]
    ws[_D + k] = x[i, 0] - x[j, 0]
    ws[_D + BLOCK + k] = x[i, 1] - x[j, 1]
    ws[_D + 2 * BLOCK + k] = x[i, 2] - x[j, 2]
    for c in range(4):
        ws[_QI + c * BLOCK + k] = q[i, c]
        ws[_QJ + c * BLOCK + k] = q[j, c]
    for c in range(3):
        ws[_AI + c * BLOCK + k] = table[b, C_AI + c]
        ws[_AJ + c * BLOCK + k] = table[b, C_AJ + c]
    for c in range(4):
        ws[_KR + c * BLOCK + k] = table[b, C_COEF + c]
        ws[_REL + c * BLOCK + k] = table[b, C_REL + c]
    ws[_R0 + k] = table[b, C_R0]
    sm = table[b, C_SMOOTH]
    ws[_SM + k] = sm
    return sm != 0.0


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _gather_limits(table, b, k, ws):
    """The limits ``f_rc, f_sc, τ_bc, τ_tc`` of the bond ``b`` into column ``k`` (``smooth
    no``: limits of 1, whose B is not taken, so no division by zero)."""
    sm = ws[_SM + k] != 0.0
    for c in range(4):
        ws[_LIM + c * BLOCK + k] = table[b, C_COEF + 4 + c] if sm else 1.0


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _gather(x, q, bonds, table, b0, b1, ws):
    """Phase 1: the ``LAW_ROTATIONAL`` bonds of ``b0..b1-1``, in order, into the columns
    of ``ws``, and the ``LAW_ROTATIONAL_AVERAGE`` ones into theirs
    (:func:`_gather_average`); returns their numbers ``nr, na`` and whether an average
    bond, a ``LAW_ROTATIONAL`` one, is smooth."""
    nr = 0
    na = 0
    smooth = False
    smooth_r = False
    for b in range(b0, b1):
        law = table[b, C_LAW]
        if law == LAW_ROTATIONAL_AVERAGE:
            if _gather_average(x, q, bonds, table, b, na, ws):
                smooth = True
            na += 1
            continue
        if law != LAW_ROTATIONAL:
            continue
        if _gather_rotational_bond(x, q, bonds, table, b, nr, ws):
            smooth_r = True
        _gather_limits(table, b, nr, ws)
        nr += 1
    return nr, na, smooth, smooth_r


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _gather_rotational(x, q, bonds, table, b0, b1, ws):
    """Phase 1 of a block of ``LAW_ROTATIONAL`` bonds only (the metamaterial's with
    ``frame = "potential"``): :func:`_gather` without asking each bond its law, the
    limits only where a bond is ``smooth yes`` (returned; else :func:`_smooth` is not
    run and they are not read)."""
    smooth = False
    for k in range(b1 - b0):
        if _gather_rotational_bond(x, q, bonds, table, b0 + k, k, ws):
            smooth = True
    if smooth:
        for k in range(b1 - b0):
            _gather_limits(table, b0 + k, k, ws)
    return smooth


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _average_loads(ws, na):
    """Phases 2 and 3 of the average bonds (packed): ``rotational_average`` (plain
    arithmetic, its angles ``atan2_packed``) on each column, the ends put in the bond's
    order (as :func:`_average`), the smoothing's loads kept for
    :func:`_average_smooth`."""
    for k in range(na):
        (F0, F1, F2, A0, A1, A2, B0, B1, B2, ur, us, ut, far, fsm, tbm, ttm) = \
            rotational_average(
                ws[_AK + k], ws[_AK + BLOCK + k], ws[_AK + 2 * BLOCK + k],
                ws[_AK + 3 * BLOCK + k], ws[_AR0 + k], ws[_ARI + k], ws[_ARI + BLOCK + k],
                ws[_ARI + 2 * BLOCK + k], ws[_AF + k], ws[_AF + BLOCK + k],
                ws[_AF + 2 * BLOCK + k], ws[_AP + k], ws[_AP + BLOCK + k],
                ws[_AP + 2 * BLOCK + k], ws[_AP + 3 * BLOCK + k], ws[_AQ + k],
                ws[_AQ + BLOCK + k], ws[_AQ + 2 * BLOCK + k], ws[_AQ + 3 * BLOCK + k])
        ij = ws[_AIJ + k] != 0.0  # (i < j: sphere i is sphere 1)
        ws[_AOUT + k] = F0 if ij else -F0
        ws[_AOUT + BLOCK + k] = F1 if ij else -F1
        ws[_AOUT + 2 * BLOCK + k] = F2 if ij else -F2
        ws[_AOUT + 3 * BLOCK + k] = A0 if ij else B0
        ws[_AOUT + 4 * BLOCK + k] = A1 if ij else B1
        ws[_AOUT + 5 * BLOCK + k] = A2 if ij else B2
        ws[_AOUT + 6 * BLOCK + k] = B0 if ij else A0
        ws[_AOUT + 7 * BLOCK + k] = B1 if ij else A1
        ws[_AOUT + 8 * BLOCK + k] = B2 if ij else A2
        ws[_AOUT + 9 * BLOCK + k] = ur
        ws[_AOUT + 10 * BLOCK + k] = us
        ws[_AOUT + 11 * BLOCK + k] = ut
        ws[_ABL + k] = far
        ws[_ABL + BLOCK + k] = fsm
        ws[_ABL + 2 * BLOCK + k] = tbm
        ws[_ABL + 3 * BLOCK + k] = ttm


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _average_smooth(ws, na):
    """LAMMPS's smoothing ``1 − B⁴`` of the average bonds (as :func:`_average_scale`),
    for a block with a ``smooth yes`` one: its loads (not its energies) times it where
    ``smooth yes`` (packed; ``c (−F) = −(c F)``, so the bits of :func:`_average`).
    Blocks without one skip it: their factor is 1."""
    for k in range(na):  # (the limits of smooth no bonds: 1, whose B is not taken)
        if ws[_ASM + k] == 0.0:
            for c in range(4):
                ws[_ALIM + c * BLOCK + k] = 1.0
    for k in range(na):
        B = (ws[_ABL + k] / ws[_ALIM + k] + ws[_ABL + BLOCK + k] / ws[_ALIM + BLOCK + k]
             + ws[_ABL + 2 * BLOCK + k] / ws[_ALIM + 2 * BLOCK + k]
             + ws[_ABL + 3 * BLOCK + k] / ws[_ALIM + 3 * BLOCK + k])
        c = 1.0 - B * B * B * B if ws[_ASM + k] != 0.0 else 1.0
        for r in range(9):
            ws[_AOUT + r * BLOCK + k] = c * ws[_AOUT + r * BLOCK + k]


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _block_law(table, b0, b1):
    """The law of every bond of ``b0..b1-1`` if they have one (the metamaterial's
    blocks: :func:`_add_block`), else −1."""
    law = table[b0, C_LAW]
    for b in range(b0 + 1, b1):
        if table[b, C_LAW] != law:
            return -1.0
    return law


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _add_pair_force(F, i, j, f0, f1, f2):
    """A bond's force ``f`` on sphere ``i``, and ``−f`` on ``j`` (Newton's third law)."""
    F[i, 0] += f0
    F[i, 1] += f1
    F[i, 2] += f2
    F[j, 0] -= f0
    F[j, 1] -= f1
    F[j, 2] -= f2


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _add_loads(i, j, F, RM, ws, o):
    """A bond's loads from column ``o`` of the loads' rows (phase 3: ``F_i``, ``τ_i``,
    ``τ_j``, ``U_n``, ``U_s``, ``U_b + U_t``) added to spheres ``i``, ``j``: ``F_i += f``,
    ``F_j −= f``, ``RM += τ``; returns its energies ``(U_n, U_s, U_b + U_t)``."""
    _add_pair_force(F, i, j, ws[o], ws[o + BLOCK], ws[o + 2 * BLOCK])
    RM[i, 0] += ws[o + 3 * BLOCK]
    RM[i, 1] += ws[o + 4 * BLOCK]
    RM[i, 2] += ws[o + 5 * BLOCK]
    RM[j, 0] += ws[o + 6 * BLOCK]
    RM[j, 1] += ws[o + 7 * BLOCK]
    RM[j, 2] += ws[o + 8 * BLOCK]
    return ws[o + 9 * BLOCK], ws[o + 10 * BLOCK], ws[o + 11 * BLOCK]


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _add_block(bonds, F, RM, ws, out, b0, b1, e_n, e_s, e_r):
    """The loads of a block of one law (rows ``out`` of ``ws``, column ``k`` bond ``b0 +
    k``) added to ``F``, ``RM`` and its energies to ``e_n, e_s, e_r`` (returned): what
    :func:`bpm_bonds_ws` does with any block, in the same order (so the same bits),
    without asking each bond its law (average form: 46 → 36 µs a call, with its gather)."""
    for k in range(b1 - b0):
        un, us, ur = _add_loads(bonds[b0 + k, 0], bonds[b0 + k, 1], F, RM, ws, out + k)
        e_n += un
        e_s += us
        e_r += ur
    return e_n, e_s, e_r


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def bpm_bonds_ws(x, q, bonds, table, F, RM, energy, ws):
    """Add the loads and energies of every bond whose row of ``table`` (``(nb,
    N_COLS)``) names a BPM law (bonds of the binder's law, ``LAW_BINDER``, are left to
    ``engine.potentials.binder``): ``F_i += f``, ``F_j −= f``, ``RM += τ``; energies
    into ``axial``, ``shear``, ``bending`` (``bpm/rotational``) and ``spring``
    (``bpm/spring``), summed in bond order.  ``ws``: the scratch
    (:func:`new_bonds_scratch`).  Returns ``OK``, or ``ERR_SHAPE`` (nothing done) for
    arrays of the wrong shape.  Allocates nothing, cannot raise.

    Blocks of :data:`BLOCK` bonds: the ``bpm/rotational`` ones (:func:`_rotational`,
    module docstring) in three phases over the block's columns of ``ws`` (gather, the
    geometry, the angles and loads: :func:`_gather`, :func:`_geometry`,
    :func:`_loads`), the ``LAW_ROTATIONAL_AVERAGE`` ones in their own columns
    (:func:`_gather_average`, then ``rotational_average`` packed:
    :func:`_average_loads`, :func:`_average_smooth`), then every bond of the block
    added in bond order, the other laws computed there one by one: the same operations
    in the same order as :func:`_rotational` and :func:`_average` bond by bond, so the
    same bits (tests/test_bpm_block.py).  A block of one law (the metamaterial's) goes
    without asking each bond its law (:func:`_block_law`, :func:`_add_block`).
    On the metamaterial (1440 bonds): potential form 130 → 52 µs a call, average form
    95 → 35-39 µs (it was a scalar ``rotational_average`` a bond, its ``atan`` libm's)."""
    nb = bonds.shape[0]
    if not (x.shape[1] == 3 and q.shape[1] == 4 and F.shape[1] == 3 and RM.shape[1] == 3
            and bonds.shape[1] == 2 and table.shape[0] >= nb and table.shape[1] == N_COLS
            and ws.shape[0] >= SCRATCH_SIZE):
        return ERR_SHAPE
    e_n = 0.0
    e_s = 0.0
    e_r = 0.0
    e_k = 0.0
    for b0 in range(0, nb, BLOCK):
        b1 = b0 + BLOCK if b0 + BLOCK < nb else nb
        law0 = _block_law(table, b0, b1)
        if law0 == LAW_ROTATIONAL_AVERAGE:  # (its gather without asking the law)
            smooth = False
            for k in range(b1 - b0):
                if _gather_average(x, q, bonds, table, b0 + k, k, ws):
                    smooth = True
            _average_loads(ws, b1 - b0)
            if smooth:
                _average_smooth(ws, b1 - b0)
            e_n, e_s, e_r = _add_block(bonds, F, RM, ws, _AOUT, b0, b1, e_n, e_s, e_r)
            continue
        if law0 == LAW_ROTATIONAL:  # (its gather without asking the law)
            smooth = _gather_rotational(x, q, bonds, table, b0, b1, ws)
            _geometry(ws, b1 - b0)
            _loads(ws, b1 - b0)
            if smooth:
                _smooth(ws, b1 - b0)
            e_n, e_s, e_r = _add_block(bonds, F, RM, ws, _OUT, b0, b1, e_n, e_s, e_r)
            continue
        nr, na, smooth, smooth_r = _gather(x, q, bonds, table, b0, b1, ws)
        if nr:
            _geometry(ws, nr)
            _loads(ws, nr)
            if smooth_r:
                _smooth(ws, nr)
        if na:
            _average_loads(ws, na)
            if smooth:
                _average_smooth(ws, na)
        k = 0
        ka = 0
        for b in range(b0, b1):
            law = table[b, C_LAW]
            if law == LAW_BINDER:
                continue
            i = bonds[b, 0]
            j = bonds[b, 1]
            if law == LAW_SPRING:
                f0, f1, f2, u = _spring(table, b, x[i, 0] - x[j, 0], x[i, 1] - x[j, 1],
                                        x[i, 2] - x[j, 2])
                e_k += u
                _add_pair_force(F, i, j, f0, f1, f2)
                continue
            if law == LAW_ROTATIONAL_AVERAGE:  # (the loads' rows: phase 3 of each law)
                un, us, ur = _add_loads(i, j, F, RM, ws, _AOUT + ka)
                ka += 1
            else:
                un, us, ur = _add_loads(i, j, F, RM, ws, _OUT + k)
                k += 1
            e_n += un
            e_s += us
            e_r += ur
    energy[E_AXIAL] += e_n
    energy[E_SHEAR] += e_s
    energy[E_BENDING] += e_r
    energy[E_SPRING] += e_k
    return OK
