"""Particle-binder bonds of the torus (B&G §4, docs/physics.md §4.2): bending/torsion,
axial and shear springs between bonded neighbours, and, when the model has penalty
contacts, the Hertz contact of the two bonded spheres (B&G eqs. (56), (57): the same law
as ``engine.potentials.contact``), which the neighbour list then leaves out
(``engine.neighbours``): a ring's bonded neighbours sit at the contact distance, so
they are nearly all of a ring pile's listed pairs, and here their positions are already
gathered.

The kernel works on blocks of ``BLOCK`` bonds in three passes, so that the arithmetic,
which is most of the cost, runs in SIMD registers:

1. gather (scalar): the attitudes of both ends and the bond vector into a scratch block;
2. evaluate (vectorised: no branch, no call, no zero-division check): forces, moments,
   ``θ_ij`` and energies of every bond of the block;
3. scatter (scalar): ``+f``/``-f`` and the moments into ``F``/``RM``, energies summed in
   bond order.  A bond whose relative rotation is beyond the polynomial's range
   (``|θ_ij| ≥ 53°``; the B&G impact run stays below 37°) gets its ``θ_ij`` from
   atan2 here, as ``rotvec_from_quat_t`` does.

Every value is computed with the same operations, in the same order, as by a plain loop
over the bonds, and ``θ_ij`` exactly as by ``rotvec_from_quat_t``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, types
from numba.extending import overload

from ..layout import E_AXIAL, E_BENDING, E_CONTACT, E_SHEAR, ERR_SHAPE, OK
from ..rotations import (
    ATAN_RATIO_MAX_Z,
    atan_ratio_t,
    quat_mul_t,
    quat_rotate_t,
)

BLOCK = 32  # bonds per block: the scratch block (34 rows of BLOCK doubles) stays in L1
# rows of the scratch block: inputs (gather) ...
_QI = 0 * BLOCK  # q_i, 4 rows
_QJ = 4 * BLOCK  # q_j, 4 rows
_D = 8 * BLOCK  # d = x_i - x_j, 3 rows
_REF = 11 * BLOCK  # bond_ref = (d̂₀, r₀), 4 rows
_SIGMA = 15 * BLOCK  # σ = (D_i + D_j)/2, the contact distance
# ... and outputs (evaluate)
_F = 16 * BLOCK  # force on i, 3 rows
_MI = 19 * BLOCK  # shear moment on i, 3 rows
_MJ = 22 * BLOCK  # shear moment on j, 3 rows
_TH = 25 * BLOCK  # θ_ij, 3 rows (NaN: beyond the polynomial, see scatter)
_EA = 28 * BLOCK  # axial energy
_ES = 29 * BLOCK  # shear energy
_EC = 30 * BLOCK  # contact energy
# ... and, for bonds with their own coefficients (issue #35 item 1), (K^m, K^a, K^s)
_KB = 31 * BLOCK
_KA = 32 * BLOCK
_KS = 33 * BLOCK
_ROWS = 34
SCRATCH_SIZE = _ROWS * BLOCK


# Bond types of different coefficients (issue #35 item 1).  The kernels below take
# ``k_bend`` either as the global coefficient (a float: every bond alike, the code and the
# bits of before) or as the per-bond table ``(nb, 3) = (K^m, K^a, K^s)``
# (``engine.specialize.binder_k``); then ``k_axial`` and ``k_shear`` are ignored and each
# bond's coefficients are gathered into the rows ``_KB``, ``_KA``, ``_KS`` of the block.
# The three helpers are resolved while typing, by the type of ``k_bend``.
_HELPER_OPTIONS = {"forceinline": True, "_nrt": False, "nogil": True, "error_model": "numpy"}


def gather_coefficients(w, b, k_bend, bb):
    """Per-bond table: its row ``bb`` into column ``b`` of the block; global: nothing."""
    raise NotImplementedError("resolved by Numba inside jitted kernels")


def axial_shear_of(w, b, k_bend, k_axial, k_shear):
    """``(K^a, K^s)`` of column ``b``: the gathered ones, or the global ones."""
    raise NotImplementedError("resolved by Numba inside jitted kernels")


def bend_of(w, b, k_bend):
    """``K^m`` of column ``b``: the gathered one, or the global one."""
    raise NotImplementedError("resolved by Numba inside jitted kernels")


def coefficients_fit(k_bend, nb):
    """Whether ``k_bend`` is a float, or a table of at least ``nb`` rows of 3."""
    raise NotImplementedError("resolved by Numba inside jitted kernels")


@overload(coefficients_fit, jit_options=_HELPER_OPTIONS)
def _coefficients_fit(k_bend, nb):
    if isinstance(k_bend, types.Array):
        def table(k_bend, nb):
            return k_bend.ndim == 2 and k_bend.shape[0] >= nb and k_bend.shape[1] == 3
        return table

    def one(k_bend, nb):
        return True
    return one


def bond_coefficients(k_bend, bb, k_axial, k_shear, k_global):
    """``(K^a, K^s, K^m)`` of bond ``bb``: row ``bb`` of the per-bond table ``k_bend``,
    or, when ``k_bend`` is the global float, ``(k_axial, k_shear, k_global)``."""
    raise NotImplementedError("resolved by Numba inside jitted kernels")


@overload(bond_coefficients, jit_options=_HELPER_OPTIONS)
def _bond_coefficients(k_bend, bb, k_axial, k_shear, k_global):
    if isinstance(k_bend, types.Array):
        def table(k_bend, bb, k_axial, k_shear, k_global):
            return k_bend[bb, 1], k_bend[bb, 2], k_bend[bb, 0]
        return table

    def one(k_bend, bb, k_axial, k_shear, k_global):
        return k_axial, k_shear, k_global
    return one


@overload(gather_coefficients, jit_options=_HELPER_OPTIONS)
def _gather_coefficients(w, b, k_bend, bb):
    if isinstance(k_bend, types.Array):
        def table(w, b, k_bend, bb):
            w[_KB + b] = k_bend[bb, 0]
            w[_KA + b] = k_bend[bb, 1]
            w[_KS + b] = k_bend[bb, 2]
        return table

    def one(w, b, k_bend, bb):
        pass
    return one


@overload(axial_shear_of, jit_options=_HELPER_OPTIONS)
def _axial_shear_of(w, b, k_bend, k_axial, k_shear):
    if isinstance(k_bend, types.Array):
        def table(w, b, k_bend, k_axial, k_shear):
            return w[_KA + b], w[_KS + b]
        return table

    def one(w, b, k_bend, k_axial, k_shear):
        return k_axial, k_shear
    return one


@overload(bend_of, jit_options=_HELPER_OPTIONS)
def _bend_of(w, b, k_bend):
    if isinstance(k_bend, types.Array):
        def table(w, b, k_bend):
            return w[_KB + b]
        return table

    def one(w, b, k_bend):
        return k_bend
    return one


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def _evaluate_block(w, count, k_bend, k_axial, k_shear, k_contact):
    """Pass 2 over the first ``count`` bonds of the block ``w`` (``k_contact = 0``: no
    contact between bonded spheres).

    ``error_model="numpy"``: no zero-division branch, so the loop vectorises.  The only
    divisors are ``r0 > 0``, ``q₀`` of ``q_i ⊗ q_j*`` (its result is used only where
    ``|q_v| < q₀/2``) and ``r``: coincident bonded spheres give non-finite forces, which
    the integrators report as a blow-up.  ``k_bend`` a per-bond table: the
    coefficients are the block's rows ``_KA``, ``_KS`` (:func:`gather_coefficients`).
    """
    for b in range(count):
        ka, ks = axial_shear_of(w, b, k_bend, k_axial, k_shear)
        hs = 0.5 * ks
        qi0, qi1, qi2, qi3 = w[_QI + b], w[_QI + BLOCK + b], w[_QI + 2 * BLOCK + b], \
            w[_QI + 3 * BLOCK + b]
        qj0, qj1, qj2, qj3 = w[_QJ + b], w[_QJ + BLOCK + b], w[_QJ + 2 * BLOCK + b], \
            w[_QJ + 3 * BLOCK + b]
        d0 = w[_D + b]
        d1 = w[_D + BLOCK + b]
        d2 = w[_D + 2 * BLOCK + b]
        e0 = w[_REF + b]
        e1 = w[_REF + BLOCK + b]
        e2 = w[_REF + 2 * BLOCK + b]
        r0 = w[_REF + 3 * BLOCK + b]
        sigma = w[_SIGMA + b]
        # --- bending / torsion: rotation vector of R_i R_jᵀ = q_i ⊗ q_j*
        # (rotvec_from_quat_t's polynomial branch, branch-free: NaN where it does not apply)
        qr0, qr1, qr2, qr3 = quat_mul_t(qi0, qi1, qi2, qi3, qj0, -qj1, -qj2, -qj3)
        flip = qr0 < 0.0
        c = -qr0 if flip else qr0
        s2 = qr1 * qr1 + qr2 * qr2 + qr3 * qr3
        iq = 1.0 / c
        f = 2.0 * iq * atan_ratio_t(s2 * iq * iq)
        if flip:
            f = -f
        if not s2 < ATAN_RATIO_MAX_Z * c * c:
            f = math.nan
        w[_TH + b] = f * qr1
        w[_TH + BLOCK + b] = f * qr2
        w[_TH + 2 * BLOCK + b] = f * qr3
        # --- geometry of the bond
        r = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
        inv_r = 1.0 / r
        n0 = d0 * inv_r
        n1 = d1 * inv_r
        n2 = d2 * inv_r
        # --- axial
        s = r / r0 - 1.0
        w[_EA + b] = 0.5 * ka * s * s
        fa = -(ka / r0) * s
        # --- contact: U^pp = (2/5) K^pp [1 - r/σ]₊^{5/2}, F_i = (K^pp/σ) [·]₊^{3/2} d̂
        # (B&G eqs. (56), (57); the bracket clamped, not branched on: it vectorises)
        delta = 1.0 - r / sigma
        delta = delta if delta > 0.0 else 0.0
        sq = math.sqrt(delta)
        w[_EC + b] = 0.4 * k_contact * delta * delta * sq
        fa += (k_contact / sigma) * delta * sq
        # --- shear
        ai0, ai1, ai2 = quat_rotate_t(qi0, qi1, qi2, qi3, e0, e1, e2)
        aj0, aj1, aj2 = quat_rotate_t(qj0, qj1, qj2, qj3, e0, e1, e2)
        ci = ai0 * n0 + ai1 * n1 + ai2 * n2
        cj = aj0 * n0 + aj1 * n1 + aj2 * n2
        ui = 1.0 - ci
        uj = 1.0 - cj
        w[_ES + b] = 0.25 * ks * (ui * ui + uj * uj)
        gi = hs * ui * inv_r
        gj = hs * uj * inv_r
        w[_F + b] = fa * n0 + gi * (ai0 - ci * n0) + gj * (aj0 - cj * n0)
        w[_F + BLOCK + b] = fa * n1 + gi * (ai1 - ci * n1) + gj * (aj1 - cj * n1)
        w[_F + 2 * BLOCK + b] = fa * n2 + gi * (ai2 - ci * n2) + gj * (aj2 - cj * n2)
        mi = hs * ui
        mj = hs * uj
        w[_MI + b] = mi * (ai1 * n2 - ai2 * n1)
        w[_MI + BLOCK + b] = mi * (ai2 * n0 - ai0 * n2)
        w[_MI + 2 * BLOCK + b] = mi * (ai0 * n1 - ai1 * n0)
        w[_MJ + b] = mj * (aj1 * n2 - aj2 * n1)
        w[_MJ + BLOCK + b] = mj * (aj2 * n0 - aj0 * n2)
        w[_MJ + 2 * BLOCK + b] = mj * (aj0 * n1 - aj1 * n0)


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def _rotvec_wide_t(q0, q1, q2, q3):
    """``rotvec_from_quat_t`` beyond its polynomial range: ``2 atan2(|q_v|, |q₀|)``.
    (No zero-division check: ``q = 0`` gives NaN, reported as a blow-up.)"""
    if q0 < 0.0:
        q0, q1, q2, q3 = -q0, -q1, -q2, -q3
    nv = math.sqrt(q1 * q1 + q2 * q2 + q3 * q3)
    f = 2.0 * math.atan2(nv, q0) / nv
    return f * q1, f * q2, f * q3


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def gather_bond(w, b, x, q, D, bond_ref, i, j, bb):
    """Pass 1 for one bond: ``q_i``, ``q_j``, ``bond_ref[bb]``, ``x_i − x_j`` and
    ``σ = (D_i + D_j)/2`` into column ``b`` of the block ``w``."""
    for k in range(4):
        w[_QI + k * BLOCK + b] = q[i, k]
        w[_QJ + k * BLOCK + b] = q[j, k]
        w[_REF + k * BLOCK + b] = bond_ref[bb, k]
    for k in range(3):
        w[_D + k * BLOCK + b] = x[i, k] - x[j, k]
    w[_SIGMA + b] = 0.5 * (D[i] + D[j])


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def bond_theta(w, b):
    """``θ_ij`` of column ``b`` of the evaluated block ``w``: the polynomial's, or, beyond
    its range (or for a non-finite state), ``2 atan2(|q_v|, |q₀|)`` of ``q_i ⊗ q_j*``."""
    t0 = w[_TH + b]
    t1 = w[_TH + BLOCK + b]
    t2 = w[_TH + 2 * BLOCK + b]
    if math.isnan(t0):
        t0, t1, t2 = _rotvec_wide_t(*quat_mul_t(
            w[_QI + b], w[_QI + BLOCK + b], w[_QI + 2 * BLOCK + b],
            w[_QI + 3 * BLOCK + b], w[_QJ + b], -w[_QJ + BLOCK + b],
            -w[_QJ + 2 * BLOCK + b], -w[_QJ + 3 * BLOCK + b]))
    return t0, t1, t2


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def add_to_first_end(w, b, t0, t1, t2, k_bend, F, RM, i):
    """Pass 3, end ``i`` of the bond of column ``b``: ``F_i += f``,
    ``RM_i += M_i − K^m θ_ij``."""
    F[i, 0] += w[_F + b]
    F[i, 1] += w[_F + BLOCK + b]
    F[i, 2] += w[_F + 2 * BLOCK + b]
    RM[i, 0] += w[_MI + b] - k_bend * t0
    RM[i, 1] += w[_MI + BLOCK + b] - k_bend * t1
    RM[i, 2] += w[_MI + 2 * BLOCK + b] - k_bend * t2


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def add_to_second_end(w, b, t0, t1, t2, k_bend, F, RM, j):
    """Pass 3, end ``j`` of the bond of column ``b``: ``F_j −= f``,
    ``RM_j += M_j + K^m θ_ij``."""
    F[j, 0] -= w[_F + b]
    F[j, 1] -= w[_F + BLOCK + b]
    F[j, 2] -= w[_F + 2 * BLOCK + b]
    RM[j, 0] += w[_MJ + b] + k_bend * t0
    RM[j, 1] += w[_MJ + BLOCK + b] + k_bend * t1
    RM[j, 2] += w[_MJ + 2 * BLOCK + b] + k_bend * t2


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def bond_run(i0, i1, x, q, D, bonds, bond_ref, k_bend, k_axial, k_shear, k_contact, lo, hi,
             w, F, RM):
    """The bonds ``lo ≤ b < hi`` block by block (gather, evaluate, scatter), added to
    their ends among the bodies ``i0 ≤ · < i1`` — all of them for the serial kernel, a
    chunk's for ``engine.parallel`` (the bonds' first ends are in it); returns their
    bending, axial, shear and contact energies, summed in bond order.  ``k_bend``: the
    global ``K^m`` or the per-bond table (see :func:`gather_coefficients`)."""
    e_bend = 0.0
    e_axial = 0.0
    e_shear = 0.0
    e_contact = 0.0
    if not (x.shape[1] == 3 and q.shape[1] == 4 and F.shape[1] == 3 and RM.shape[1] == 3
            and bonds.shape[1] == 2 and bond_ref.shape[1] == 4):
        return e_bend, e_axial, e_shear, e_contact  # (checked by the callers: this tells
        #                                              the compiler the row lengths)
    for start in range(lo, hi, BLOCK):
        count = min(BLOCK, hi - start)
        # --- 1. gather
        for b in range(count):
            gather_bond(w, b, x, q, D, bond_ref, bonds[start + b, 0], bonds[start + b, 1],
                        start + b)
            gather_coefficients(w, b, k_bend, start + b)
        # --- 2. evaluate
        _evaluate_block(w, count, k_bend, k_axial, k_shear, k_contact)
        # --- 3. scatter
        for b in range(count):
            t0, t1, t2 = bond_theta(w, b)
            kb = bend_of(w, b, k_bend)
            e_bend += 0.5 * kb * (t0 * t0 + t1 * t1 + t2 * t2)
            e_axial += w[_EA + b]
            e_shear += w[_ES + b]
            e_contact += w[_EC + b]
            i = bonds[start + b, 0]
            j = bonds[start + b, 1]
            if i0 <= i < i1:
                add_to_first_end(w, b, t0, t1, t2, kb, F, RM, i)
            if i0 <= j < i1:
                add_to_second_end(w, b, t0, t1, t2, kb, F, RM, j)
    return e_bend, e_axial, e_shear, e_contact


@njit(nogil=True, cache=True)
def binder_bonds(x, q, D, bonds, bond_ref, k_bend, k_axial, k_shear, k_contact, F, RM,
                 energy):
    """Add the three binder terms of every bond ``(i, j)`` (``bond_ref = (d̂₀, r₀)``),
    and the Hertz contact of its spheres (``k_contact = K^pp``; 0: none).

    * bending/torsion ``U^m = ½ K^m |θ_ij|²``, ``θ_ij = log(R_i R_jᵀ)``;
      ``RM_i = -K^m θ_ij = -RM_j`` (B&G eqs. (44)–(47), docs/physics.md §4.2);
    * axial ``U^a = ½ K^a (r/r₀ - 1)²``, ``F_i = -(K^a/r₀)(r/r₀ - 1) d̂ = -F_j``
      (B&G eqs. (48)–(50));
    * shear ``U^s = ¼ K^s [(1 - c_i)² + (1 - c_j)²]``, ``c_b = (R_b d̂₀)·d̂``,
      ``F_i = ½ K^s Σ_b (1 - c_b)(I - d̂d̂ᵀ) a_b / r = -F_j``,
      ``RM_b = ½ K^s (1 - c_b) a_b × d̂`` — the rotation-invariant form of B&G
      eqs. (53)–(55) (docs/physics.md §8);
    * contact ``U^pp = (2/5) K^pp [1 - r/σ]₊^{5/2}``, ``σ = (D_i + D_j)/2``,
      ``F_i = (K^pp/σ) [1 - r/σ]₊^{3/2} d̂ = -F_j`` (B&G eqs. (56), (57)), as
      ``engine.potentials.contact.particle_contacts`` for a listed pair.
    """
    st = binder_bonds_ws(x, q, D, bonds, bond_ref, k_bend, k_axial, k_shear, k_contact, F,
                         RM, energy, np.empty(SCRATCH_SIZE))
    if st != OK:
        raise ValueError("binder_bonds: arrays of the wrong shape")


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def binder_bonds_ws(x, q, D, bonds, bond_ref, k_bend, k_axial, k_shear, k_contact, F, RM,
                    energy, w):
    """:func:`binder_bonds` with the scratch block ``w`` (``SCRATCH_SIZE`` doubles)
    supplied: allocates nothing, cannot raise.  Returns ``OK``, or ``ERR_SHAPE`` (and
    does nothing) unless ``x``, ``F``, ``RM`` are ``(n, 3)``, ``q`` is ``(n, 4)``,
    ``bonds`` is ``(nb, 2)``, ``bond_ref`` ``(nb, 4)`` and ``w`` large enough — which
    also tells the compiler these row lengths (and ``k_bend``, when it is the per-bond
    table, has a row of 3 for every bond)."""
    if not (x.shape[1] == 3 and q.shape[1] == 4 and F.shape[1] == 3 and RM.shape[1] == 3
            and bonds.shape[1] == 2 and bond_ref.shape[1] == 4 and w.shape[0] >= SCRATCH_SIZE
            and coefficients_fit(k_bend, bonds.shape[0])):
        return ERR_SHAPE
    e_bend, e_axial, e_shear, e_contact = bond_run(0, x.shape[0], x, q, D, bonds, bond_ref,
                                                   k_bend, k_axial, k_shear, k_contact, 0,
                                                   bonds.shape[0], w, F, RM)
    energy[E_BENDING] += e_bend
    energy[E_AXIAL] += e_axial
    energy[E_SHEAR] += e_shear
    energy[E_CONTACT] += e_contact
    return OK
