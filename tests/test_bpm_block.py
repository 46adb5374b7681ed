"""The BPM bonds' kernel a block at a time (issue #44 item 9, the metamaterial's speed):
``engine.potentials.bpm.bpm_bonds_ws`` computes the ``bpm/rotational`` bonds, of both
frames (``frame = "average"``: ``LAW_ROTATIONAL_AVERAGE``, the metamaterial's), in
phases over a scratch (gather, geometry, angles, loads) and adds every bond's loads in
bond order (a block of average bonds only without asking each its law). It must give the
bits of the straightforward loop it replaced — each bond's
:func:`engine.potentials.bpm._rotational`, ``_spring`` or ``_average`` added in bond
order — on random states with every law mixed, ``smooth`` yes and no, binder bonds
skipped and blocks left part-full; its interpreted twin the same bits; and its
arithmetic loops must compile to packed vector operations, the angles included: their
``atan2`` in plain arithmetic (``engine.potentials.packed_atan``) within 2 ulp of libm's
``atan2`` and ``asin``."""

from __future__ import annotations

import math
import re

import numba
import numpy as np
import pytest
from numba import njit

from engine.interpreted import interpreted
from engine.layout import E_AXIAL, E_BENDING, E_SHEAR, E_SPRING, ERR_SHAPE, N_ENERGY, OK
from engine.potentials import bpm
from engine.potentials.packed_atan import atan2_packed
from engine.rotations import quat_from_rotvec, quat_mul_t

COEFFS = {"k_r": 400.0, "k_s": 200.0, "k_t": 2.0, "k_b": 4.0, "f_rc": 150.0,
          "f_sc": 150.0, "tau_bc": 6.0, "tau_tc": 6.0, "k": 300.0, "eps_c": 0.3}
LAWS = ("binder", "bpm/rotational", "bpm/spring", "average")


@njit(error_model="numpy", cache=False)
def _per_bond(x, q, bonds, table, F, RM, energy):
    """The kernel before issue #44 item 9: one bond after the other."""
    e_n = e_s = e_r = e_k = 0.0
    for b in range(bonds.shape[0]):
        law = table[b, bpm.C_LAW]
        if law == bpm.LAW_BINDER:
            continue
        i = bonds[b, 0]
        j = bonds[b, 1]
        d0 = x[i, 0] - x[j, 0]
        d1 = x[i, 1] - x[j, 1]
        d2 = x[i, 2] - x[j, 2]
        if law == bpm.LAW_SPRING:
            f0, f1, f2, u = bpm._spring(table, b, d0, d1, d2)
            e_k += u
            F[i, 0] += f0
            F[i, 1] += f1
            F[i, 2] += f2
            F[j, 0] -= f0
            F[j, 1] -= f1
            F[j, 2] -= f2
            continue
        if law == bpm.LAW_ROTATIONAL_AVERAGE:
            out = bpm._average(table, b, x, q, i, j)
        else:
            out = bpm._rotational(table, b, d0, d1, d2, q, i, j)
        e_n += out[9]
        e_s += out[10]
        e_r += out[11]
        for c in range(3):
            F[i, c] += out[c]
            F[j, c] -= out[c]
            RM[i, c] += out[3 + c]
            RM[j, c] += out[6 + c]
    energy[E_AXIAL] += e_n
    energy[E_SHEAR] += e_s
    energy[E_BENDING] += e_r
    energy[E_SPRING] += e_k


def _model(seed: int, nb: int, laws=LAWS, spread: float = 0.3, smooth=None):
    """``nb`` bonds among 40 spheres, each of a random law of ``laws`` and a random
    ``smooth`` (or ``smooth``), their reference at a random state, then a deformed
    state."""
    rng = np.random.default_rng(seed)
    n = 40
    x0 = rng.normal(size=(n, 3)) * 3.0
    q0 = quat_from_rotvec(rng.normal(size=(n, 3)))
    bonds = np.array([rng.choice(n, 2, replace=False) for _ in range(nb)])
    names = rng.choice(len(laws), nb)
    rows = []
    for k in names:
        law = laws[k]
        sm = bool(rng.integers(2))
        row = bpm.law_row("bpm/rotational" if law == "average" else law, COEFFS,
                          sm if smooth is None else smooth)
        if law == "average":
            row[bpm.C_LAW] = bpm.LAW_ROTATIONAL_AVERAGE
        rows.append(row)
    table = np.array(rows)
    bpm.reference(table, x0, q0, bonds)
    x = x0 + spread * rng.normal(size=(n, 3))
    q = quat_from_rotvec(spread * rng.normal(size=(n, 3)))
    q = np.array([np.array(quat_mul_t(*a, *b)) for a, b in zip(q, q0, strict=True)])
    return x, q, bonds, table


def _both(x, q, bonds, table):
    F, RM, e = np.zeros_like(x), np.zeros_like(x), np.zeros(N_ENERGY)
    assert bpm.bpm_bonds_ws(x, q, bonds, table, F, RM, e, bpm.new_bonds_scratch()) == OK
    Fr, RMr, er = np.zeros_like(x), np.zeros_like(x), np.zeros(N_ENERGY)
    _per_bond(x, q, bonds, table, Fr, RMr, er)
    return (F, RM, e), (Fr, RMr, er)


def _same_bits(a, b):
    for u, v in zip(a, b, strict=True):
        assert u.tobytes() == v.tobytes()


@pytest.mark.parametrize("seed, nb", [(1, 1), (2, bpm.BLOCK), (3, bpm.BLOCK + 1),
                                      (4, 3 * bpm.BLOCK + 17), (5, 500)])
def test_the_blocks_give_the_bits_of_the_bond_by_bond_loop_with_every_law_mixed(seed, nb):
    got, want = _both(*_model(seed, nb))
    assert nb < bpm.BLOCK or (np.any(got[1] != 0.0) and got[2][E_SPRING] != 0.0)
    _same_bits(got, want)


@pytest.mark.parametrize("law", ["bpm/rotational", "average"])
@pytest.mark.parametrize("spread", [1e-9, 0.05, 1.5])
def test_every_bond_rotational_gives_the_same_bits_small_and_large_angles(spread, law):
    """The metamaterial's case (every bond ``bpm/rotational``, of either frame), near
    the reference (the ``|p| → 0`` branches), at working strains and past the angles'
    wrap; the average bonds through the blocks of average bonds only."""
    got, want = _both(*_model(7, 3 * bpm.BLOCK + 5, (law,), spread))
    assert np.any(got[1] != 0.0)
    _same_bits(got, want)


@pytest.mark.parametrize("smooth", [False, True, None])
def test_average_bonds_give_the_bits_of_the_bond_by_bond_loop_smooth_or_not(smooth):
    """Average bonds only (``smooth`` no, yes, or both in a block: the smoothing's pass
    and its limits of 1), then blocks of them mixed with the other laws, both ends
    first (``i < j`` and ``i > j``), blocks left part-full."""
    x, q, bonds, table = _model(21, 2 * bpm.BLOCK + 7, ("average",), smooth=smooth)
    assert np.any(bonds[:, 0] < bonds[:, 1]) and np.any(bonds[:, 0] > bonds[:, 1])
    _same_bits(*_both(x, q, bonds, table))
    xm, qm, bm, tm = _model(22, 3 * bpm.BLOCK, smooth=smooth)
    bonds = np.r_[bonds, bm]
    table = np.r_[table, tm]
    _same_bits(*_both(x, q, bonds, table))


@pytest.mark.parametrize("laws", [LAWS, ("average",)])
def test_the_interpreted_twin_gives_the_compiled_bits(laws):
    """The twin runs ``smooth no`` bonds too: their limits are not divided by; and the
    blocks of average bonds only."""
    x, q, bonds, table = _model(11, bpm.BLOCK + 9, laws)
    out = []
    for kernel in (bpm.bpm_bonds_ws, interpreted(bpm.bpm_bonds_ws)):
        F, RM, e = np.zeros_like(x), np.zeros_like(x), np.zeros(N_ENERGY)
        assert kernel(x, q, bonds, table, F, RM, e, bpm.new_bonds_scratch()) == OK
        out.append((F, RM, e))
    _same_bits(*out)


def test_a_scratch_too_small_is_err_shape_and_nothing_is_done():
    x, q, bonds, table = _model(12, 10)
    F, RM, e = np.zeros_like(x), np.zeros_like(x), np.zeros(N_ENERGY)
    assert bpm.bpm_bonds_ws(x, q, bonds, table, F, RM, e,
                            np.empty(bpm.SCRATCH_SIZE - 1)) == ERR_SHAPE
    assert not F.any() and not RM.any() and not e.any()


@pytest.mark.parametrize("phase", ["_geometry", "_loads", "_average_loads"])
def test_the_arithmetic_phases_compile_to_packed_vector_operations(phase):
    """Compiled afresh from their source (the disk cache plays no part): the divisions
    and square roots of the geometry and of the angles and loads (of the average bonds:
    ``rotational_average`` whole) run packed (``vdivpd``, ``vsqrtpd`` on xmm/ymm/zmm:
    the loop vectorised), and no libm ``atan2``/``asin``/``atan`` is called."""
    f = numba.njit(cache=False, error_model="numpy", _nrt=False)(
        getattr(bpm, phase).py_func)
    f(np.zeros(bpm.SCRATCH_SIZE), 0)
    asm = next(iter(f.inspect_asm().values()))
    assert re.search(r"\bv?divpd\b", asm) and re.search(r"\bv?sqrtpd\b", asm), phase
    assert not re.search(r"\b(atan2|asin|atan)\b", asm), phase


def _ulps(got: np.ndarray, want: np.ndarray) -> float:
    return float(np.max(np.abs(got - want) / np.spacing(np.maximum(np.abs(want), 1e-300))))


def test_the_packed_atan2_is_libm_s_to_two_ulps_in_every_octant():
    rng = np.random.default_rng(3)
    n = 50_000
    y = rng.normal(size=n) * 10.0 ** rng.uniform(-12, 3, n)
    x = rng.normal(size=n) * 10.0 ** rng.uniform(-12, 3, n)
    edges = [(0.0, 1.0), (1.0, 0.0), (0.0, -1.0), (-1.0, 0.0), (1.0, 1.0), (-1.0, -1.0),
             (0.66, 1.0), (1.0, 0.66), (1e-300, 1.0), (3.0, -1e-300)]
    y = np.concatenate([y, [e[0] for e in edges]])
    x = np.concatenate([x, [e[1] for e in edges]])
    got = np.array([atan2_packed(a, b) for a, b in zip(y, x, strict=True)])
    assert _ulps(got, np.arctan2(y, x)) <= 2.0
    twin = np.array([atan2_packed.py_func(a, b) for a, b in zip(y[:5000], x[:5000],
                                                                strict=True)])
    assert twin.tobytes() == got[:5000].tobytes()


def test_the_bending_angle_is_libm_s_asin_to_two_ulps_up_to_one():
    rng = np.random.default_rng(4)
    p = np.concatenate([rng.uniform(0.0, 1.0, 20_000), 10.0 ** rng.uniform(-12, 0, 20_000),
                        1.0 - 10.0 ** rng.uniform(-16, -1, 5000), [0.0, 1.0, 1.5]])
    got = np.array([bpm._asin(v) for v in p])
    assert _ulps(got, np.arcsin(np.minimum(p, 1.0))) <= 2.0
    assert got[-1] == got[-2] == math.pi / 2


def test_the_packed_atan2_divides_twice():
    """``z = (m − M)/(m + M)`` in one division, not Cephes's ``t = m/M`` then ``(t −
    1)/(t + 1)``: two divisions, the packed loops' costliest operation (a compilation of
    the source: the disk cache plays no part)."""
    f = numba.njit(cache=False, error_model="numpy")(atan2_packed.py_func)
    f(0.5, 0.7)
    assert next(iter(f.inspect_llvm().values())).count(" fdiv ") == 2
