"""Breaking of BPM bonds (issue #44 item 2; docs/physics.md "Breaking"): LAMMPS's
criteria (``doc/src/bond_bpm_rotational.rst``, ``bond_bpm_spring.rst``, ``break yes``)
on the rows of ``ff[BPM_TABLE]`` whose column ``C_BREAK`` is set.

* ``bpm/rotational``: the combined criterion ``B = f_r/f_rc + |f_s|/f_sc + |τ_b|/τ_bc +
  |τ_t|/τ_tc ≥ 1`` with ``f_r = k_r (r − r₀)`` *signed* (a compressed bond lowers ``B``:
  LAMMPS's ``breaking = Fr/Fcr + …``, clamped at 0, tested ``>= 1``), ``|f_s| = k_s r₀²
  α / r`` the shear force of ``engine.potentials.bpm`` (``α`` the shear angle),
  ``|τ_b| = k_b θ``, ``|τ_t| = k_t |ψ|`` (bending and twist angles, as the smoothing's
  ``B`` in ``bpm._rotational``);
* ``bpm/rotational`` with ``frame = "average"`` (``engine.potentials.bpm_average``): the
  same ``B`` from that law's own loads (``f_r = k_r (|r_c| − r₀)`` signed, ``F_s``,
  ``k_b θ``, ``k_t ψ``);
* ``bpm/spring``: the strain ``|r − r₀|/r₀ > ε_c`` (LAMMPS: ``fabs(e) > ecrit``).

:func:`breaking_ratio` gives, per bond, the criterion scaled so that the bond breaks at
``ratio ≥ 1`` (rotational: ``B``; spring: ``|e|/ε_c``, strictly past 1, so exactly 1
reports just under it); 0 for a bond that does not break.  :func:`any_breaks` is what
the stepping loop asks after each step (gated by the family slot ``BREAKS``, so a model
whose bonds never break compiles none of it); the driver then takes the bonds out
between two steps (``engine.simulation.breaking``).  Pure functions, allocating
nothing.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..layout import E_BROKEN
from ..rotations import quat_mul_t, quat_rotate_t
from .bpm import (
    C_AI,
    C_AJ,
    C_BREAK,
    C_COEF,
    C_LAW,
    C_R0,
    C_REL,
    LAW_ROTATIONAL,
    LAW_ROTATIONAL_AVERAGE,
    LAW_SPRING,
    _average_raw,
)

SPRING_NEXT = 1.0 + 2.0 ** -52
"""A spring at ``|e| = ε_c`` reports this much less than 1 (LAMMPS's test is strict)."""


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def rotational_b(t, b, x, q, i, j):
    """LAMMPS's ``B`` of one ``bpm/rotational`` bond (module docstring), unclamped: the
    breaking criterion, and the smoothing's ``B`` of the bonds' damping
    (``engine.potentials.bond_damping``)."""
    d0 = x[i, 0] - x[j, 0]
    d1 = x[i, 1] - x[j, 1]
    d2 = x[i, 2] - x[j, 2]
    r = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
    n0 = d0 / r
    n1 = d1 / r
    n2 = d2 / r
    r0 = t[b, C_R0]
    fr = t[b, C_COEF] * (r - r0)
    ei0, ei1, ei2 = quat_rotate_t(q[i, 0], q[i, 1], q[i, 2], q[i, 3],
                                  t[b, C_AI], t[b, C_AI + 1], t[b, C_AI + 2])
    ej0, ej1, ej2 = quat_rotate_t(q[j, 0], q[j, 1], q[j, 2], q[j, 3],
                                  t[b, C_AJ], t[b, C_AJ + 1], t[b, C_AJ + 2])
    m0 = 0.5 * (ei0 + ej0)
    m1 = 0.5 * (ei1 + ej1)
    m2 = 0.5 * (ei2 + ej2)
    mn = m0 * n0 + m1 * n1 + m2 * n2
    p0 = m0 - mn * n0
    p1 = m1 - mn * n1
    p2 = m2 - mn * n2
    alpha = math.atan2(math.sqrt(p0 * p0 + p1 * p1 + p2 * p2), mn)
    fs = t[b, C_COEF + 1] * r0 * r0 * alpha / r
    a0, a1, a2, a3 = quat_mul_t(q[j, 0], q[j, 1], q[j, 2], q[j, 3], t[b, C_REL],
                                t[b, C_REL + 1], t[b, C_REL + 2], t[b, C_REL + 3])
    w, v0, v1, v2 = quat_mul_t(a0, a1, a2, a3, q[i, 0], -q[i, 1], -q[i, 2], -q[i, 3])
    if w < 0.0:
        w, v0, v1, v2 = -w, -v0, -v1, -v2
    vn = v0 * n0 + v1 * n1 + v2 * n2
    c0 = v0 - vn * n0
    c1 = v1 - vn * n1
    c2 = v2 - vn * n2
    pb = math.sqrt(c0 * c0 + c1 * c1 + c2 * c2)
    tt = t[b, C_COEF + 2] * abs(2.0 * math.atan2(vn, w))
    tb = t[b, C_COEF + 3] * 2.0 * math.asin(pb if pb < 1.0 else 1.0)
    return (fr / t[b, C_COEF + 4] + fs / t[b, C_COEF + 5] + tb / t[b, C_COEF + 6]
            + tt / t[b, C_COEF + 7])


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def bond_ratio(t, b, x, q, i, j):
    """The criterion of row ``b`` of ``t`` (bond ``i``–``j``), scaled to break at ``≥ 1``
    (module docstring); 0 for a row that does not break."""
    if t[b, C_BREAK] == 0.0:
        return 0.0
    law = t[b, C_LAW]
    if law == LAW_SPRING:
        d0 = x[i, 0] - x[j, 0]
        d1 = x[i, 1] - x[j, 1]
        d2 = x[i, 2] - x[j, 2]
        r0 = t[b, C_R0]
        e = abs(math.sqrt(d0 * d0 + d1 * d1 + d2 * d2) - r0) / r0
        z = e / t[b, C_COEF + 1]
        return z if e > t[b, C_COEF + 1] else z / SPRING_NEXT
    if law == LAW_ROTATIONAL:
        B = rotational_b(t, b, x, q, i, j)
        return B if B > 0.0 else 0.0
    if law == LAW_ROTATIONAL_AVERAGE:  # (frame = "average": its own loads, f_r signed)
        out = _average_raw(t, b, x, q, i, j)
        d0 = x[i, 0] - x[j, 0]
        d1 = x[i, 1] - x[j, 1]
        d2 = x[i, 2] - x[j, 2]
        fr = out[12] if math.sqrt(d0 * d0 + d1 * d1 + d2 * d2) >= t[b, C_R0] else -out[12]
        B = (fr / t[b, C_COEF + 4] + out[13] / t[b, C_COEF + 5] + out[14] / t[b, C_COEF + 6]
             + out[15] / t[b, C_COEF + 7])
        return B if B > 0.0 else 0.0
    return 0.0


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def any_breaks(x, q, bonds, table):
    """Whether some bond of ``table`` is past its criterion at ``(x, q)`` (the stepping
    loop's test after each step; allocates nothing)."""
    for b in range(bonds.shape[0]):
        if table[b, C_BREAK] != 0.0 and bond_ratio(table, b, x, q, bonds[b, 0],
                                                   bonds[b, 1]) >= 1.0:
            return True
    return False


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def breaking_ratios(x, q, bonds, table, out):
    """``out[b]`` = the criterion of each bond (:func:`bond_ratio`)."""
    for b in range(bonds.shape[0]):
        out[b] = bond_ratio(table, b, x, q, bonds[b, 0], bonds[b, 1])


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def carry_broken(e0, e1):
    """``e1[broken] = e0[broken]``: the stepping loop carries the booked energy of the
    broken bonds from a step's start buffer to its end buffer."""
    e1[E_BROKEN] = e0[E_BROKEN]


def ratios(x: np.ndarray, q: np.ndarray, bonds: np.ndarray, table: np.ndarray) -> np.ndarray:
    """The criterion of each bond at ``(x, q)`` (breaks at ``≥ 1``; 0: never breaks)."""
    out = np.zeros(bonds.shape[0])
    if table.shape[0] and bonds.shape[0]:
        breaking_ratios(x, q, bonds, table, out)
    return out


def breakable(table: np.ndarray) -> bool:
    """Whether some row of ``table`` breaks (``break yes``)."""
    return bool(table.shape[0]) and bool((table[:, C_BREAK] != 0.0).any())
