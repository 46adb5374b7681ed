"""Hertz-type penalty contacts (B&G eqs. (56)–(59), docs/physics.md §4.2).

Hot-path kernels (see ``engine.forcefield``): no zero-division check, so a body of zero
diameter in contact would give non-finite forces (reported as a blow-up), not raise.
"""

from __future__ import annotations

import math

from numba import njit

from ..layout import E_CONTACT, E_WALL


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def particle_contacts(x, D, pairs, n_pairs, k_contact, F, energy):
    """``U^pp = (2/5) K^pp [1 - r/σ]₊^{5/2}``, ``σ = (D_i + D_j)/2``,
    ``F_i = (K^pp/σ) [1 - r/σ]₊^{3/2} d̂ = -F_j`` for the candidate pairs of the
    neighbour list (B&G eqs. (56), (57) with the 2/5 of docs/physics.md §8)."""
    e = 0.0
    for p in range(n_pairs):
        i = pairs[p, 0]
        j = pairs[p, 1]
        d0 = x[i, 0] - x[j, 0]
        d1 = x[i, 1] - x[j, 1]
        d2 = x[i, 2] - x[j, 2]
        r2 = d0 * d0 + d1 * d1 + d2 * d2
        sigma = 0.5 * (D[i] + D[j])
        if r2 >= sigma * sigma:
            continue
        r = math.sqrt(r2)
        delta = 1.0 - r / sigma
        sq = math.sqrt(delta)
        e += 0.4 * k_contact * delta * delta * sq
        if r > 0.0:
            f = (k_contact / sigma) * delta * sq / r
            F[i, 0] += f * d0
            F[i, 1] += f * d1
            F[i, 2] += f * d2
            F[j, 0] -= f * d0
            F[j, 1] -= f * d1
            F[j, 2] -= f * d2
    energy[E_CONTACT] += e


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def wall_contacts(x, D, walls, k_wall, F, energy):
    """Each wall ``n·x ≥ c`` (the rows ``walls[w] = (n₀, n₁, n₂, c)``, ``n`` unit) as a
    particle of zero diameter: ``U^pw = (2/5) K^pw [1 - g_i/(D_i/2)]₊^{5/2}``,
    ``g_i = n·x_i - c``, ``F_i = (K^pw/(D_i/2)) [·]₊^{3/2} n`` (B&G eqs. (58), (59)),
    summed over the walls."""
    energy[E_WALL] += wall_contacts_range(x, D, walls, walls.shape[0], k_wall, F, 0,
                                          x.shape[0])


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def wall_contacts_range(x, D, walls, nw, k_wall, F, i0, i1):
    """:func:`wall_contacts` of the first ``nw`` walls on the bodies ``i0 ≤ i < i1``;
    returns their energy (walls outer, bodies inner: one loop per wall, it
    vectorises)."""
    e = 0.0
    for w in range(nw):
        n0 = walls[w, 0]
        n1 = walls[w, 1]
        n2 = walls[w, 2]
        x_wall = walls[w, 3]
        for i in range(i0, i1):
            rad = 0.5 * D[i]
            g = n0 * x[i, 0] + n1 * x[i, 1] + n2 * x[i, 2] - x_wall
            if g >= rad:
                continue
            delta = 1.0 - g / rad
            sq = math.sqrt(delta)
            e += 0.4 * k_wall * delta * delta * sq
            f = (k_wall / rad) * delta * sq
            F[i, 0] += f * n0
            F[i, 1] += f * n1
            F[i, 2] += f * n2
    return e
