"""``atan2`` in plain arithmetic, so that a loop of it vectorises (issue #44 item 9): the
BPM bonds' three angles a bond (``engine.potentials.bpm``) were two ``atan2`` and one
``asin`` of libm, a call each, ~23 ns a bond of the metamaterial's 55 ns.

Cephes's ``atan`` (S. L. Moshier, *Methods and Programs for Mathematical Functions*,
1989, ``atan.c``; the same reduction and coefficients as its ``atan2``), branch-free:
with ``t = m/M ∈ [0, 1]`` (``m = min(|x|, |y|)``, ``M = max(|x|, |y|)``), ``atan t = z +
z³ P(z²)/Q(z²)`` for ``t ≤ 0.66`` (``z = t``), else ``π/4 + atan z`` with ``z = (t −
1)/(t + 1) = (m − M)/(m + M)`` (``|z| ≤ 0.205``; the branch taken where ``m > 0.66 M``,
and ``z`` one division of ``m − M``, exact, by ``m + M``: two divisions in all, not
Cephes's three — the packed loops of ``engine.potentials.bpm`` are bound by their
divisions); ``P/Q`` of degree 4/5 (peak relative error of the approximant 2.6e-18); the
octant then by ``π/2 − a`` where ``|y| > |x|``, ``π − a`` where ``x < 0``, and the sign
of ``y``, each constant with its next bits (``MOREBITS`` = π/2 − fl(π/2)). Every
operation is an IEEE ``+ − × /`` or a comparison, so the compiled code (packed, no FMA:
LLVM contracts nothing without ``fastmath``) and the interpreted twin
(``engine.interpreted``) agree to the bit; against libm's ``atan2`` it is within 2 ulp
(tests/test_bpm_block.py), libm's own last-bit differences across platforms' size.
``atan2(±0, ±0)`` is ``±0`` (libm: ``±π`` for ``x = −0``).
"""

from __future__ import annotations

import math

from numba import njit

_P0 = -8.750608600031904122785e-1
_P1 = -1.615753718733365076637e1
_P2 = -7.500855792314704667340e1
_P3 = -1.228866684490136173410e2
_P4 = -6.485021904942025371773e1
_Q0 = 2.485846490142306297962e1
_Q1 = 1.650270098316988542046e2
_Q2 = 4.328810604912902668951e2
_Q3 = 4.853903996359136964868e2
_Q4 = 1.945506571482613964425e2
_PIO4 = 7.85398163397448309616e-1
_PIO2 = 1.57079632679489661923
_PI = 3.14159265358979323846
_MOREBITS = 6.123233995736765886130e-17  # π/2 − fl(π/2)


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def atan2_packed(y, x):
    """``atan2(y, x)`` (module docstring): the angle of ``(x, y)`` in ``[−π, π]``."""
    ax = abs(x)
    ay = abs(y)
    steep = ay > ax
    num = ax if steep else ay
    den = ay if steep else ax
    mid = num > 0.66 * den
    zn = num - den if mid else num  # (exact where mid: Sterbenz)
    zd = num + den if mid else den
    z = zn / zd if zd > 0.0 else 0.0
    zz = z * z
    pz = ((((_P0 * zz + _P1) * zz + _P2) * zz + _P3) * zz + _P4) * zz
    qz = ((((zz + _Q0) * zz + _Q1) * zz + _Q2) * zz + _Q3) * zz + _Q4
    a = z * (pz / qz) + z
    a = _PIO4 + (a + 0.5 * _MOREBITS) if mid else a
    a = _PIO2 + (_MOREBITS - a) if steep else a
    a = _PI + (2.0 * _MOREBITS - a) if x < 0.0 else a
    return math.copysign(a, y)
