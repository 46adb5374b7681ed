"""Verlet neighbour list with a skin, rebuilt from a cell list.

Candidate pairs are those with ``r < σ_ij + skin`` when the list is built; it is rebuilt
as soon as any body has moved more than ``skin/2`` since, so every pair with ``r < σ_ij``
at any step is in the list: contact forces are exactly those of an all-pairs loop, at
O(N) cost per step (O(N) per rebuild through the cell list).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .layout import ERR_NEIGHBOUR_OVERFLOW, ERR_NONFINITE, NL_COUNT, NL_REBUILDS, NL_VALID, OK


@njit(nogil=True, cache=True)
def ensure_neighbours(x, D, skin, pairs, nl_state, nl_xref):
    """Rebuild the list if it is invalid or a body moved more than ``skin/2``.

    Returns ``OK``, ``ERR_NONFINITE`` (positions not finite) or ``ERR_NEIGHBOUR_OVERFLOW``
    (``pairs`` too small: the caller grows it and calls again).
    """
    n = x.shape[0]
    if nl_state[NL_VALID] == 1:
        lim = 0.25 * skin * skin
        moved = False
        for i in range(n):
            d0 = x[i, 0] - nl_xref[i, 0]
            d1 = x[i, 1] - nl_xref[i, 1]
            d2 = x[i, 2] - nl_xref[i, 2]
            dd = d0 * d0 + d1 * d1 + d2 * d2
            if not dd <= lim:  # also true for NaN
                moved = True
                break
        if not moved:
            return OK
    return build_neighbours(x, D, skin, pairs, nl_state, nl_xref)


@njit(nogil=True, cache=True)
def build_neighbours(x, D, skin, pairs, nl_state, nl_xref):
    """Cell-list construction of all pairs with ``r < (D_i + D_j)/2 + skin``."""
    n = x.shape[0]
    nl_state[NL_VALID] = 0
    nl_state[NL_COUNT] = 0
    if n < 2:
        nl_state[NL_VALID] = 1
        return OK
    lo = np.empty(3)
    hi = np.empty(3)
    for k in range(3):
        lo[k] = x[0, k]
        hi[k] = x[0, k]
    dmax = 0.0
    for i in range(n):
        for k in range(3):
            v = x[i, k]
            if not math.isfinite(v):
                return ERR_NONFINITE
            if v < lo[k]:
                lo[k] = v
            if v > hi[k]:
                hi[k] = v
        if D[i] > dmax:
            dmax = D[i]
    cutoff = dmax + skin
    if cutoff <= 0.0:
        cutoff = 1.0
    # cells of edge >= cutoff; at most max(64, 8 n) cells in all
    cap = max(64, 8 * n)
    edge = cutoff
    dims = np.empty(3, dtype=np.int64)
    while True:
        total = 1
        for k in range(3):
            dims[k] = max(1, int((hi[k] - lo[k]) / edge))
            total *= dims[k]
        if total <= cap:
            break
        edge *= 1.5
    size = np.empty(3)
    for k in range(3):
        ext = hi[k] - lo[k]
        size[k] = ext / dims[k] if ext > 0.0 else 1.0
    ncell = dims[0] * dims[1] * dims[2]
    head = -np.ones(ncell, dtype=np.int64)
    nxt = np.empty(n, dtype=np.int64)
    cell = np.empty((n, 3), dtype=np.int64)
    for i in range(n):
        for k in range(3):
            c = int((x[i, k] - lo[k]) / size[k])
            if c >= dims[k]:
                c = dims[k] - 1
            if c < 0:
                c = 0
            cell[i, k] = c
        idx = (cell[i, 0] * dims[1] + cell[i, 1]) * dims[2] + cell[i, 2]
        nxt[i] = head[idx]
        head[idx] = i
    count = 0
    capacity = pairs.shape[0]
    for i in range(n):
        for a in range(max(0, cell[i, 0] - 1), min(dims[0], cell[i, 0] + 2)):
            for b in range(max(0, cell[i, 1] - 1), min(dims[1], cell[i, 1] + 2)):
                for c in range(max(0, cell[i, 2] - 1), min(dims[2], cell[i, 2] + 2)):
                    j = head[(a * dims[1] + b) * dims[2] + c]
                    while j >= 0:
                        if j > i:
                            d0 = x[i, 0] - x[j, 0]
                            d1 = x[i, 1] - x[j, 1]
                            d2 = x[i, 2] - x[j, 2]
                            lim = 0.5 * (D[i] + D[j]) + skin
                            if d0 * d0 + d1 * d1 + d2 * d2 < lim * lim:
                                if count >= capacity:
                                    return ERR_NEIGHBOUR_OVERFLOW
                                pairs[count, 0] = i
                                pairs[count, 1] = j
                                count += 1
                        j = nxt[j]
    nl_state[NL_COUNT] = count
    nl_state[NL_REBUILDS] += 1
    nl_state[NL_VALID] = 1
    for i in range(n):
        for k in range(3):
            nl_xref[i, k] = x[i, k]
    return OK
