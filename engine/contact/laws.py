"""The contact law of Capobianco, Eugster & Leine (their law (1)) as proximal maps
(Studer, *Numerics of Unilateral Contacts and Friction*, 2009, §§ 4.3–4.4).

With the contact velocities ``γ`` and Newton/Coulomb restitutions, the inclusions

* ``−ξ_N ∈ N_{ℝ₊}(P_N)``,     ``ξ_N = γ_N⁺ + e_N γ_N⁻``   (impenetrability, impact)
* ``−ξ_T ∈ N_{C_T(P_N)}(P_T)``, ``ξ_T = γ_T⁺ + e_T γ_T⁻``,
  ``C_T(P_N) = {P_T : |P_T| ≤ μ P_N}``                   (Coulomb friction)

are equivalent, for any ``r > 0``, to the fixed-point equations
``P_N = prox_{ℝ₊}(P_N − r ξ_N)`` and ``P_T = prox_{C_T(P_N)}(P_T − r ξ_T)``: the
projected Gauss–Seidel iteration of :mod:`.percussions` applies them contact by contact.
"""

from __future__ import annotations

import math

from numba import njit


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def prox_normal(p, xi, r):
    """``prox_{ℝ₊}(P_N − r ξ_N) = max(0, P_N − r ξ_N)``."""
    a = p - r * xi
    return a if a > 0.0 else 0.0


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def prox_disc(p0, p1, p2, radius):
    """Projection of the tangential percussion ``(p0, p1, p2)`` (a vector in the
    tangent plane) onto the disc ``|P_T| ≤ radius`` (``C_T(P_N)``, radius ``μ P_N``)."""
    n2 = p0 * p0 + p1 * p1 + p2 * p2
    if n2 <= radius * radius:
        return p0, p1, p2
    if radius <= 0.0:
        return 0.0, 0.0, 0.0
    c = radius / math.sqrt(n2)
    return c * p0, c * p1, c * p2
