"""Verlet neighbour list with a skin, rebuilt from a cell list.

Candidate pairs are those with ``r < σ_ij + skin`` when the list is built; it is rebuilt
as soon as any body has moved more than ``skin/2`` since, so every pair with ``r < σ_ij``
at any step is in the list: contact forces are exactly those of an all-pairs loop, at
O(N) cost per step (O(N) per rebuild through the cell list).

The pairs ``(i, j)`` have ``i < j`` and are sorted by ``(i, j)`` (``engine.parallel``
gives each chunk of bodies the contiguous run of pairs whose lower index it holds; the
order fixes the order in which each body's contact forces are summed, so it must not
depend on the thread count).  The cell list is a counting sort of the bodies by cell
with a copy of their positions in that order; the search visits the bodies in that
order, each against the half shell of cells ahead of its own, so that it streams
through memory instead of jumping to the neighbourhood of each body in index order,
and the pairs are then sorted (:func:`_sort_pairs`).

The ``*_ws`` kernels take an integer scratch array of at least
``neighbour_scratch_size(n)`` entries (the cell list) and allocate nothing, so that the
stepping loop calling them has no error path (see ``engine.forcefield``); the plain
kernels allocate it themselves.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from .layout import (
    ERR_NEIGHBOUR_OVERFLOW,
    ERR_NONFINITE,
    ERR_SHAPE,
    NL_COUNT,
    NL_REBUILDS,
    NL_VALID,
    OK,
)


def _launch_threading_layer() -> None:
    """Start Numba's threading layer now, as loading a ``parallel=True`` kernel from the
    cache would.  A cached kernel that is not parallel itself but calls one (here
    ``build_neighbours`` → ``_search_chunks``) does not start it, and ran into a
    segmentation fault in a fresh process that had run no parallel kernel yet (seen in
    CI: ``rrp list`` building the pile's placement check from a cache another process
    had written)."""
    from numba.np.ufunc.parallel import _launch_threads

    _launch_threads()


_launch_threading_layer()

SEARCH_CHUNK = 1024
"""Bodies per task of the parallel pair search (from ``PARALLEL_SEARCH_MIN`` bodies)."""
PARALLEL_SEARCH_MIN = 4096
"""Lists of at least this many bodies are searched in parallel, chunk by chunk of the cell
order, each chunk writing its pairs to its own share of the list, then moved together
and sorted: the same list as the serial search, for any thread count."""


@njit(nogil=True, cache=True)
def neighbour_scratch_size(n):
    """Length of the integer scratch of the cell list (:func:`scratch_places`)."""
    return scratch_places(n)[5]


@njit(nogil=True, cache=True)
def scratch_places(n):
    """Where the parts of the cell list's integer scratch ``iw`` start, for ``n`` bodies:
    ``max(64, 8 n) + 1`` cell starts from 0, then ``n`` body indices in cell order
    (``order``), ``n`` cell indices (``cell``), ``4 n`` words holding ``(x, D/2)`` in
    cell order as doubles (``xs``), the pair counts of the chunks of the parallel search
    (``counts``) and the bucket counts of the sort of the pairs (``bins``); returns
    ``(order, cell, xs, counts, bins, end)``."""
    order = max(64, 8 * n) + 1
    cell = order + n
    xs = cell + n
    counts = xs + 4 * n
    bins = counts + n // SEARCH_CHUNK + 2
    return order, cell, xs, counts, bins, bins + (1 << _radix_bits(n)) + 1


@njit(nogil=True, cache=True)
def _radix_bits(n):
    """Bits of one digit of the pairs' radix sort: the least ``b`` with ``4^b ≥ n``, so
    that two digits cover every body index (``2^b < 2√n`` buckets)."""
    b = 1
    while (1 << (2 * b)) < n:
        b += 1
    return b


@njit(nogil=True, cache=True)
def ensure_neighbours(x, D, skin, pairs, nl_state, nl_xref):
    """Rebuild the list if it is invalid or a body moved more than ``skin/2``.

    Returns ``OK``, ``ERR_NONFINITE`` (positions not finite) or ``ERR_NEIGHBOUR_OVERFLOW``
    (``pairs`` too small: the caller grows it and calls again).
    """
    iw = np.empty(neighbour_scratch_size(x.shape[0]), dtype=np.int64)
    return ensure_neighbours_ws(x, D, skin, pairs, nl_state, nl_xref, iw)


@njit(nogil=True, cache=True)
def build_neighbours(x, D, skin, pairs, nl_state, nl_xref):
    """Cell-list construction of all pairs with ``r < (D_i + D_j)/2 + skin``."""
    iw = np.empty(neighbour_scratch_size(x.shape[0]), dtype=np.int64)
    return build_neighbours_ws(x, D, skin, pairs, nl_state, nl_xref, iw)


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def ensure_neighbours_ws(x, D, skin, pairs, nl_state, nl_xref, iw):
    """:func:`ensure_neighbours` with the scratch ``iw`` supplied (``ERR_SHAPE`` if the
    arrays do not have the shapes of ``ForceField`` or ``iw`` is too short)."""
    n = x.shape[0]
    if not (x.shape[1] == 3 and nl_xref.shape[1] == 3 and nl_xref.shape[0] >= n
            and pairs.shape[1] == 2 and iw.shape[0] >= neighbour_scratch_size(n)):
        return ERR_SHAPE
    if nl_state[NL_VALID] == 1:
        lim = 0.25 * skin * skin
        moved = False
        for i in range(n):  # (no early exit: the loop vectorises)
            d0 = x[i, 0] - nl_xref[i, 0]
            d1 = x[i, 1] - nl_xref[i, 1]
            d2 = x[i, 2] - nl_xref[i, 2]
            dd = d0 * d0 + d1 * d1 + d2 * d2
            moved |= not dd <= lim  # also true for NaN
        if not moved:
            return OK
    return build_neighbours_ws(x, D, skin, pairs, nl_state, nl_xref, iw)


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def build_neighbours_ws(x, D, skin, pairs, nl_state, nl_xref, iw):
    """:func:`build_neighbours` with the scratch ``iw`` supplied."""
    n = x.shape[0]
    if not (x.shape[1] == 3 and nl_xref.shape[1] == 3 and nl_xref.shape[0] >= n
            and pairs.shape[1] == 2 and iw.shape[0] >= neighbour_scratch_size(n)):
        return ERR_SHAPE
    nl_state[NL_VALID] = 0
    nl_state[NL_COUNT] = 0
    if n < 2:
        nl_state[NL_VALID] = 1
        return OK
    m0, m1, m2 = cell_list_ws(x, D, skin, iw)
    if m0 == 0:
        return ERR_NONFINITE
    order, cell, at_xs, at_counts, at_bins, _ = scratch_places(n)
    xs = iw[at_xs:at_counts].view(np.float64)
    capacity = pairs.shape[0]
    count = -1
    if n >= PARALLEL_SEARCH_MIN:
        counts = iw[at_counts:at_bins]
        nch = (n + SEARCH_CHUNK - 1) // SEARCH_CHUNK
        share = capacity // nch
        if _search_chunks(n, skin, iw, order, xs, m0, m1, m2, pairs, share, counts):
            count = counts[0]
            for c in range(1, nch):  # the chunks' runs moved together, in chunk order
                at = c * share
                for p in range(counts[c]):
                    pairs[count + p, 0] = pairs[at + p, 0]
                    pairs[count + p, 1] = pairs[at + p, 1]
                count += counts[c]
    if count < 0:  # (serial, or a chunk had more pairs than its share: all at once)
        count = _search(0, n, skin, iw, order, xs, m0, m1, m2, pairs, 0, capacity)
        if count < 0:
            return ERR_NEIGHBOUR_OVERFLOW
    # sorted by (i, j), through a copy: in the cell list, no longer needed (up to 5
    # pairs a body: the cell starts, and the cell indices with the positions), else in
    # the list's unused rows; a list too full for either is grown by the caller
    bins = iw[at_bins:]
    if count <= 5 * n:
        _sort_pairs(pairs, count, iw[:count], iw[cell:cell + count], bins, n)
    elif 2 * count <= capacity:
        _sort_pairs(pairs, count, pairs[capacity - count:, 0], pairs[capacity - count:, 1],
                    bins, n)
    else:
        return ERR_NEIGHBOUR_OVERFLOW
    nl_state[NL_COUNT] = count
    nl_state[NL_REBUILDS] += 1
    nl_state[NL_VALID] = 1
    for i in range(n):
        for k in range(3):
            nl_xref[i, k] = x[i, k]
    return OK


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def cell_list_ws(x, D, skin, iw):
    """The cell list of the ``n ≥ 2`` bodies at ``x`` in the scratch ``iw``
    (:func:`neighbour_scratch_size`): cells of edge at least ``max D + skin`` (1.5×
    larger while there would be more than ``max(64, 8 n)``), numbered with x fastest;
    ``iw[c]``: the first place of cell ``c`` in the cell order (``nc + 1`` entries);
    then (:func:`scratch_places`) the bodies in cell order (by index within a cell),
    the cell of each body, and ``(x, D/2)`` of each place as doubles.  Returns the
    cells along each axis ``(m0, m1, m2)``, or ``(0, 0, 0)`` if a position is not
    finite."""
    n = x.shape[0]
    lo0 = hi0 = x[0, 0]
    lo1 = hi1 = x[0, 1]
    lo2 = hi2 = x[0, 2]
    dmax = 0.0
    for i in range(n):
        v0 = x[i, 0]
        v1 = x[i, 1]
        v2 = x[i, 2]
        if not (math.isfinite(v0) and math.isfinite(v1) and math.isfinite(v2)):
            return 0, 0, 0
        lo0 = min(lo0, v0)
        hi0 = max(hi0, v0)
        lo1 = min(lo1, v1)
        hi1 = max(hi1, v1)
        lo2 = min(lo2, v2)
        hi2 = max(hi2, v2)
        if D[i] > dmax:
            dmax = D[i]
    cutoff = dmax + skin
    if cutoff <= 0.0:
        cutoff = 1.0
    # cells of edge >= cutoff; at most max(64, 8 n) cells in all
    cap = max(64, 8 * n)
    edge = cutoff
    while True:
        m0 = max(1, int((hi0 - lo0) / edge))
        m1 = max(1, int((hi1 - lo1) / edge))
        m2 = max(1, int((hi2 - lo2) / edge))
        if m0 * m1 * m2 <= cap:
            break
        edge *= 1.5
    z0 = (hi0 - lo0) / m0 if hi0 - lo0 > 0.0 else 1.0
    z1 = (hi1 - lo1) / m1 if hi1 - lo1 > 0.0 else 1.0
    z2 = (hi2 - lo2) / m2 if hi2 - lo2 > 0.0 else 1.0
    # scratch: cell starts (a counting sort of the bodies by cell), the bodies sorted by
    # cell (by index within a cell), the cell of each body
    start = 0
    order, cell, at_xs, at_counts = scratch_places(n)[:4]
    xs = iw[at_xs:at_counts].view(np.float64)  # (x, D/2) in cell order
    nc = m0 * m1 * m2
    for c in range(nc + 1):
        iw[start + c] = 0
    for i in range(n):
        c0 = min(max(int((x[i, 0] - lo0) / z0), 0), m0 - 1)
        c1 = min(max(int((x[i, 1] - lo1) / z1), 0), m1 - 1)
        c2 = min(max(int((x[i, 2] - lo2) / z2), 0), m2 - 1)
        idx = (c2 * m1 + c1) * m0 + c0  # (x fastest: see the loop below)
        iw[cell + i] = idx
        iw[start + idx + 1] += 1
    for c in range(nc):
        iw[start + c + 1] += iw[start + c]
    for i in range(n):  # iw[start + c]: the next free place of cell c ...
        c = iw[cell + i]
        k = iw[start + c]
        iw[order + k] = i
        xs[4 * k] = x[i, 0]
        xs[4 * k + 1] = x[i, 1]
        xs[4 * k + 2] = x[i, 2]
        xs[4 * k + 3] = 0.5 * D[i]
        iw[start + c] = k + 1
    for c in range(nc, 0, -1):  # ... back to the starts
        iw[start + c] = iw[start + c - 1]
    iw[start] = 0
    return m0, m1, m2


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, inline="always")
def _pairs_in_run(a0, a1, i, xi0, xi1, xi2, ri, iw, order, xs, pairs, count, end):
    """The sphere ``i`` (at ``xi``, radius plus skin ``ri``) against the spheres at
    places ``a0 ≤ k < a1`` of the cell order: each pair closer than the cutoff is
    written ``(lower, higher)`` at ``pairs[count]``; returns the new count, or ``-1``
    at ``end``."""
    for k in range(a0, a1):
        d0 = xi0 - xs[4 * k]
        d1 = xi1 - xs[4 * k + 1]
        d2 = xi2 - xs[4 * k + 2]
        lim = ri + xs[4 * k + 3]
        if d0 * d0 + d1 * d1 + d2 * d2 < lim * lim:
            if count >= end:
                return -1
            j = iw[order + k]
            if i < j:
                pairs[count, 0] = i
                pairs[count, 1] = j
            else:
                pairs[count, 0] = j
                pairs[count, 1] = i
            count += 1
    return count


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def _search(k0, k1, skin, iw, order, xs, m0, m1, m2, pairs, at, end):
    """The pairs of the spheres at places ``k0 ≤ k < k1`` of the cell order with the
    spheres after them in their own cell and in the 13 cells of the half shell ahead
    (the next cell along x; the three of the next row; the nine of the next layer), so
    every pair is found once, written ``(lower, higher)`` to ``pairs[at:end]`` in the
    cell order; returns how many, or ``-1`` when they do not fit.

    The spheres are visited in cell order, so the cells read next are those read a
    row or a layer before: the search streams through the cell list instead of jumping
    to the neighbourhood of each sphere in index order (0.16 → 0.06 µs a sphere at 10⁶,
    BENCHMARKS.md).  The neighbouring cells along x are one run of the cell order."""
    if k0 >= k1:
        return 0
    lo = 0  # the cell of k0: the last c with start[c] ≤ k0 (start[nc] = n > k0)
    hi = m0 * m1 * m2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if iw[mid] <= k0:
            lo = mid
        else:
            hi = mid
    c = lo
    count = at
    for k in range(k0, k1):
        while iw[c + 1] <= k:
            c += 1
        i = iw[order + k]
        c0 = c % m0
        c1 = (c // m0) % m1
        c2 = c // (m0 * m1)
        b0 = max(0, c0 - 1)
        b1 = min(m0, c0 + 2)
        xi0 = xs[4 * k]
        xi1 = xs[4 * k + 1]
        xi2 = xs[4 * k + 2]
        ri = xs[4 * k + 3] + skin
        # the rest of its own cell and the next cell along x
        count = _pairs_in_run(k + 1, iw[c + 2] if c0 + 1 < m0 else iw[c + 1], i, xi0, xi1, xi2,
                          ri, iw, order, xs, pairs, count, end)
        if count < 0:
            return -1
        if c1 + 1 < m1:  # the next row: three cells
            row = (c2 * m1 + c1 + 1) * m0
            count = _pairs_in_run(iw[row + b0], iw[row + b1], i, xi0, xi1, xi2, ri, iw, order,
                              xs, pairs, count, end)
            if count < 0:
                return -1
        if c2 + 1 < m2:  # the next layer: three rows of three cells
            for b in range(max(0, c1 - 1), min(m1, c1 + 2)):
                row = ((c2 + 1) * m1 + b) * m0
                count = _pairs_in_run(iw[row + b0], iw[row + b1], i, xi0, xi1, xi2, ri, iw,
                                  order, xs, pairs, count, end)
                if count < 0:
                    return -1
    return count - at


@njit(nogil=True, cache=True, parallel=True, error_model="numpy", _nrt=False)
def _search_chunks(n, skin, iw, order, xs, m0, m1, m2, pairs, share, counts):
    """:func:`_search` chunk by chunk of the cell order (``prange``), chunk ``c``
    writing to ``pairs[c share:(c + 1) share]`` and its count to ``counts[c]``;
    ``False`` if a chunk's pairs did not fit its share."""
    nch = (n + SEARCH_CHUNK - 1) // SEARCH_CHUNK
    for c in prange(nch):
        counts[c] = _search(c * SEARCH_CHUNK, min(n, (c + 1) * SEARCH_CHUNK), skin, iw, order,
                            xs, m0, m1, m2, pairs, c * share, (c + 1) * share)
    ok = True
    for c in range(nch):
        ok &= counts[c] >= 0
    return ok


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def _sort_pairs(pairs, count, ti, tj, cnt, n):
    """Sort ``pairs[:count]`` by ``(i, j)``: a least-significant-digit radix sort on
    ``i`` (two counting passes of ``2^b < 2√n`` buckets each, through the copies ``ti``,
    ``tj`` of ``count`` words each, with the bucket counts in ``cnt``, ``2^b + 1``
    words), then each ``i``'s few partners by insertion.  The order depends on the
    pairs only, not on how the search was split: the same list for any thread count.
    Each pass writes to as many places as there are buckets, which stay in the cache."""
    if count <= 64:
        _insertion_sort_pairs(pairs, 0, count)
        return
    b = _radix_bits(n)
    _counting_pass(pairs[:, 0], pairs[:, 1], ti, tj, count, cnt, 0, b)  # low digit of i
    _counting_pass(ti, tj, pairs[:, 0], pairs[:, 1], count, cnt, b, b)  # high digit
    p = 0
    while p < count:  # runs of one i, by j
        q = p + 1
        while q < count and pairs[q, 0] == pairs[p, 0]:
            q += 1
        if q - p > 1:
            _insertion_sort_pairs(pairs, p, q)
        p = q


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def _counting_pass(si, sj, di, dj, count, cnt, shift, bits):
    """One stable counting pass of :func:`_sort_pairs`: the pairs ``(si, sj)[:count]``
    to ``(di, dj)`` by the digit ``(i >> shift) & (2^bits − 1)`` (``cnt``: ``2^bits + 1``
    words)."""
    nb = 1 << bits
    mask = nb - 1
    for d in range(nb + 1):
        cnt[d] = 0
    for p in range(count):
        cnt[((si[p] >> shift) & mask) + 1] += 1
    for d in range(nb):
        cnt[d + 1] += cnt[d]
    for p in range(count):
        i = si[p]
        d = (i >> shift) & mask
        k = cnt[d]
        di[k] = i
        dj[k] = sj[p]
        cnt[d] = k + 1


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def _insertion_sort_pairs(pairs, p0, p1):
    """Sort ``pairs[p0:p1]`` by ``(i, j)`` in place (short runs)."""
    for a in range(p0 + 1, p1):
        i = pairs[a, 0]
        j = pairs[a, 1]
        b = a - 1
        while b >= p0 and (pairs[b, 0] > i or (pairs[b, 0] == i and pairs[b, 1] > j)):
            pairs[b + 1, 0] = pairs[b, 0]
            pairs[b + 1, 1] = pairs[b, 1]
            b -= 1
        pairs[b + 1, 0] = i
        pairs[b + 1, 1] = j
