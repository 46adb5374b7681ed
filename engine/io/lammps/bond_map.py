"""Our binder bonds as LAMMPS ``bond_style bpm/rotational`` bond types (issue #43 item 2;
LAMMPS ``doc/src/bond_bpm_rotational.rst``; ours B&G §4, docs/physics.md §4.2).

Ours per bond: ``U^a = ½ K^a (r/r₀ − 1)² = ½ (K^a/r₀²)(r − r₀)²``, bending and torsion
``½ K^m |θ|²``, shear ``¼ K^s [(1 − c_i)² + (1 − c_j)²]``.  ``bpm/rotational``:
``f_r = k_r (r − r₀)``, torques ``k_b θ_b``, ``k_t θ_t``, shear force ``k_s`` times the
shear displacement.  So ``k_r = K^a/r₀²`` (exact), ``k_b = k_t = K^m`` (exact at small
angles: ours is the rotation vector's length, LAMMPS splits bending from twist),
``k_s = K^s/r₀²`` (ours is quartic at small angles: no exact map).  A LAMMPS bond type
has one set of coefficients, so each of our types is split by rest length
(:func:`split_by_rest_length`): every bond's ``k_r`` is then that of its own ``r₀``.
"""

from __future__ import annotations

import numpy as np

REST_RTOL = 1e-9
"""Rest lengths within this relative distance share a LAMMPS bond type (a lattice's
neighbours differ in their last bits; the coefficients are written to 17 digits)."""


def split_by_rest_length(our_type: np.ndarray, r0: np.ndarray,
                         coeffs: dict[int, tuple[float, float, float]],
                         rtol: float = REST_RTOL
                         ) -> tuple[np.ndarray, dict[int, tuple[float, float, float, float]]]:
    """Each bond's LAMMPS bond type (1-based) and each LAMMPS type's ``(k_bend, k_axial,
    k_shear, r₀)``: one type per (our type, rest length), rest lengths within ``rtol``
    of the cluster's first counted as one (their mean is the type's ``r₀``).  ``coeffs``:
    our types' ``(k_bend, k_axial, k_shear)``."""
    our_type = np.asarray(our_type, dtype=np.int64)
    r0 = np.asarray(r0, dtype=np.float64)
    out = np.zeros(our_type.shape[0], dtype=np.int64)
    table: dict[int, tuple[float, float, float, float]] = {}
    for t in np.unique(our_type).tolist():
        idx = np.flatnonzero(our_type == t)
        order = idx[np.argsort(r0[idx], kind="stable")]
        start = 0
        while start < order.size:
            first = r0[order[start]]
            stop = start + 1
            while stop < order.size and r0[order[stop]] - first <= rtol * abs(first):
                stop += 1
            lt = len(table) + 1
            members = order[start:stop]
            out[members] = lt
            kb, ka, ks = coeffs[int(t)]
            table[lt] = (float(kb), float(ka), float(ks), float(r0[members].mean()))
            start = stop
    return out, table


def num(v: float) -> str:
    """A double as the shortest text that reads back to it (LAMMPS reads it so too)."""
    return repr(float(v))


def bond_coeff_line(lt: int, kb: float, ka: float, ks: float, r0: float,
                    damping: tuple[float, ...]) -> str:
    """The ``bond_coeff`` of one LAMMPS type (module docstring): ``k_r k_s k_t k_b``,
    the breaking limits out of reach (bonds never break in ours), ``γ_n γ_s γ_r γ_t``."""
    return (f"bond_coeff      {lt} {num(ka / r0 ** 2)} {num(ks / r0 ** 2)} {num(kb)} "
            f"{num(kb)} 1e30 1e30 1e30 1e30 " + " ".join(f"{g:g}" for g in damping))
