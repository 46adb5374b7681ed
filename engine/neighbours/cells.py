"""The cell list, the full build of the neighbour list from it and its partial updates
(issue #34: split out of ``engine.neighbours``, whose docstring describes the list): the
counting sort of the bodies by cell (:func:`cell_list_ws`), the search of each body's
half shell of cells (serial or chunk by chunk in parallel), the radix sort of the pairs,
and between full builds the update of the few bodies that moved more than ``skin/2``
through the cell list of the last build (:func:`_partial_update`)."""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from ..layout import (
    ERR_NEIGHBOUR_OVERFLOW,
    ERR_NONFINITE,
    ERR_SHAPE,
    NL_COUNT,
    NL_PARTIAL,
    NL_REBUILDS,
    NL_VALID,
    OK,
)
from .scratch import (
    _MAGIC,
    _PH_CUT,
    _PH_DELTA,
    _PH_LO,
    _PH_M,
    _PH_MAGIC,
    _PH_NRESET,
    _PH_STAMP,
    _PH_WORDS,
    _PH_Z,
    MOVED_BLOCK,
    SEARCH_CHUNK,
    _built,
    _excluded,
    _radix_bits,
    neighbour_scratch_size,
    scratch_places,
)

PARALLEL_SEARCH_MIN = 4096
"""Lists of at least this many bodies are searched in parallel, chunk by chunk of the cell
order, each chunk writing its pairs to its own share of the list, then moved together
and sorted: the same list as the serial search, for any thread count."""
PARTIAL_RESET_SHARE = 32
"""Between two full builds, partial updates (:func:`_partial_update`) reset at most
``max(16, n // PARTIAL_RESET_SHARE)`` bodies, each at most once."""


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


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def build_neighbours_ws(x, D, skin, pairs, nl_state, nl_xref, iw, bptr, bpart):
    """:func:`build_neighbours` with the scratch ``iw`` supplied and the partners
    ``(bptr, bpart)`` excluded."""
    n = x.shape[0]
    if not (x.shape[1] == 3 and nl_xref.shape[1] == 3 and nl_xref.shape[0] >= n
            and pairs.shape[1] == 2 and iw.shape[0] >= neighbour_scratch_size(n)):
        return ERR_SHAPE
    nl_state[NL_VALID] = 0
    nl_state[NL_COUNT] = 0
    order, cell, at_xs, at_counts, at_bins, _, head, bits = scratch_places(n)[:8]
    iw[head + _PH_MAGIC] = 0
    if n < 2:
        nl_state[NL_VALID] = 1
        return OK
    m0, m1, m2 = cell_list_ws(x, D, skin, iw)
    if m0 == 0:
        return ERR_NONFINITE
    xs = iw[at_xs:at_counts].view(np.float64)
    capacity = pairs.shape[0]
    count = -1
    if n >= PARALLEL_SEARCH_MIN:
        counts = iw[at_counts:at_bins]
        nch = (n + SEARCH_CHUNK - 1) // SEARCH_CHUNK
        share = capacity // nch
        if _search_chunks(n, skin, iw, order, xs, m0, m1, m2, pairs, share, counts, bptr,
                          bpart):
            count = counts[0]
            for c in range(1, nch):  # the chunks' runs moved together, in chunk order
                at = c * share
                for p in range(counts[c]):
                    pairs[count + p, 0] = pairs[at + p, 0]
                    pairs[count + p, 1] = pairs[at + p, 1]
                count += counts[c]
    if count < 0:  # (serial, or a chunk had more pairs than its share: all at once)
        count = _search(0, n, skin, iw, order, xs, m0, m1, m2, pairs, 0, capacity, bptr,
                        bpart)
        if count < 0:
            return ERR_NEIGHBOUR_OVERFLOW
    # sorted by (i, j), through a copy: in the part of the cell list no longer needed
    # (the cell indices and the positions: up to 2.5 pairs a body; the cell starts and
    # the order stay, for the partial updates), else in the list's unused rows, else
    # (up to 5 pairs a body) over the cell starts too; a list too full for any of these
    # is grown by the caller
    bins = iw[at_bins:head]
    keep_grid = True
    if 2 * count <= at_counts - cell:
        _sort_pairs(pairs, count, iw[cell:cell + count], iw[cell + count:cell + 2 * count],
                    bins, n)
    elif 2 * count <= capacity:
        _sort_pairs(pairs, count, pairs[capacity - count:, 0], pairs[capacity - count:, 1],
                    bins, n)
    elif count <= 5 * n:
        _sort_pairs(pairs, count, iw[:count], iw[cell:cell + count], bins, n)
        keep_grid = False
    else:
        return ERR_NEIGHBOUR_OVERFLOW
    _built(x, count, nl_state, nl_xref)
    for w in range(bits, bits + n // 64 + 1):  # no body reset yet
        iw[w] = 0
    iw[head + _PH_NRESET] = 0
    iw[head:head + _PH_WORDS].view(np.float64)[_PH_DELTA] = 0.0
    if keep_grid:
        iw[head + _PH_STAMP] = nl_state[NL_REBUILDS]
        iw[head + _PH_MAGIC] = _MAGIC
    return OK


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, inline="always")
def _grid_cell(v, lo, z, m):
    """The cell along one axis of the coordinate ``v`` in the grid ``(lo, z, m)``,
    clamped to it as :func:`cell_list_ws` clamps the bodies (monotone in ``v``)."""
    u = (v - lo) / z
    if not u > 0.0:  # (also NaN)
        return 0
    if u >= m - 1.0:
        return m - 1
    return int(u)


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, inline="always")
def _pair_before(i, j, k, m):
    """Whether the pair ``(i, j)`` comes before ``(k, m)`` in the list's order (by the
    first index, then the second)."""
    return i < k or (i == k and j < m)


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
    head = scratch_places(n)[6]  # the grid, for the partial updates
    iw[head + _PH_M] = m0
    iw[head + _PH_M + 1] = m1
    iw[head + _PH_M + 2] = m2
    fh = iw[head:head + _PH_WORDS].view(np.float64)
    fh[_PH_LO] = lo0
    fh[_PH_LO + 1] = lo1
    fh[_PH_LO + 2] = lo2
    fh[_PH_Z] = z0
    fh[_PH_Z + 1] = z1
    fh[_PH_Z + 2] = z2
    fh[_PH_CUT] = cutoff
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
def _pairs_in_run(a0, a1, i, xi0, xi1, xi2, ri, iw, order, xs, pairs, count, end, bptr,
                  bpart):
    """The sphere ``i`` (at ``xi``, radius plus skin ``ri``) against the spheres at
    places ``a0 ≤ k < a1`` of the cell order: each pair closer than the cutoff, unless
    excluded, is written ``(lower, higher)`` at ``pairs[count]``; returns the new
    count, or ``-1`` at ``end``."""
    for k in range(a0, a1):
        d0 = xi0 - xs[4 * k]
        d1 = xi1 - xs[4 * k + 1]
        d2 = xi2 - xs[4 * k + 2]
        lim = ri + xs[4 * k + 3]
        if d0 * d0 + d1 * d1 + d2 * d2 < lim * lim:
            j = iw[order + k]
            if _excluded(i, j, bptr, bpart):
                continue
            if count >= end:
                return -1
            if i < j:
                pairs[count, 0] = i
                pairs[count, 1] = j
            else:
                pairs[count, 0] = j
                pairs[count, 1] = i
            count += 1
    return count


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def _search(k0, k1, skin, iw, order, xs, m0, m1, m2, pairs, at, end, bptr, bpart):
    """The pairs of the spheres at places ``k0 ≤ k < k1`` of the cell order with the
    spheres after them in their own cell and in the 13 cells of the half shell ahead
    (the next cell along x; the three of the next row; the nine of the next layer), so
    every pair is found once, written ``(lower, higher)`` to ``pairs[at:end]`` in the
    cell order (the excluded partners ``(bptr, bpart)`` left out); returns how many, or
    ``-1`` when they do not fit.

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
                          ri, iw, order, xs, pairs, count, end, bptr, bpart)
        if count < 0:
            return -1
        if c1 + 1 < m1:  # the next row: three cells
            row = (c2 * m1 + c1 + 1) * m0
            count = _pairs_in_run(iw[row + b0], iw[row + b1], i, xi0, xi1, xi2, ri, iw, order,
                              xs, pairs, count, end, bptr, bpart)
            if count < 0:
                return -1
        if c2 + 1 < m2:  # the next layer: three rows of three cells
            for b in range(max(0, c1 - 1), min(m1, c1 + 2)):
                row = ((c2 + 1) * m1 + b) * m0
                count = _pairs_in_run(iw[row + b0], iw[row + b1], i, xi0, xi1, xi2, ri, iw,
                                  order, xs, pairs, count, end, bptr, bpart)
                if count < 0:
                    return -1
    return count - at


@njit(nogil=True, cache=True, parallel=True, error_model="numpy", _nrt=False)
def _search_chunks(n, skin, iw, order, xs, m0, m1, m2, pairs, share, counts, bptr, bpart):
    """:func:`_search` chunk by chunk of the cell order (``prange``), chunk ``c``
    writing to ``pairs[c share:(c + 1) share]`` and its count to ``counts[c]``;
    ``False`` if a chunk's pairs did not fit its share."""
    nch = (n + SEARCH_CHUNK - 1) // SEARCH_CHUNK
    for c in prange(nch):
        counts[c] = _search(c * SEARCH_CHUNK, min(n, (c + 1) * SEARCH_CHUNK), skin, iw, order,
                            xs, m0, m1, m2, pairs, c * share, (c + 1) * share, bptr, bpart)
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
        while b >= p0 and _pair_before(i, j, pairs[b, 0], pairs[b, 1]):
            pairs[b + 1, 0] = pairs[b, 0]
            pairs[b + 1, 1] = pairs[b, 1]
            b -= 1
        pairs[b + 1, 0] = i
        pairs[b + 1, 1] = j


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def _partial_update(x, D, skin, pairs, nl_state, nl_xref, iw, lim, bptr, bpart):
    """Bring the list up to date for the few bodies that moved more than ``skin/2``
    (``|x − x_ref|² > lim``), without a full build; ``False`` (the caller builds it
    all) unless the scratch holds the grid of the list's last full build and the update
    fits in its limits.  Only the blocks of bodies that the skin check flagged
    (:func:`moved_blocks`, just before) are looked at again.

    The list holds every pair closer than ``σ_ij + skin`` at the bodies' reference
    places ``x_ref``.  A body that moved more than ``skin/2`` gets its reference reset
    to where it is now, and its pairs closer than ``σ_ij + skin`` to the others'
    references are added to the list; then every body is within ``skin/2`` of its
    reference again, so every pair with ``r < σ_ij`` is listed (``r ≥ |x_ref,i −
    x_ref,j| − skin``), as after a full build.  The others are found through the cell
    list of that build (its cell starts and order stay in the scratch), in the cells
    within ``max D + skin + δ`` of the body, ``δ`` being the largest distance of a reset
    reference from the place in the grid.  Pairs that have drifted apart stay listed
    until the next full build: a pair beyond contact adds nothing, and each body's
    contacts are summed in the order of the partner's index whichever list holds them,
    so the forces, and the trajectory, are those of full builds to the bit.

    With one fast body (a rattler, a sphere thrown off an impact) the whole list used to
    be rebuilt every few steps.  A body is reset at most once between full builds, and
    at most ``max(16, n // PARTIAL_RESET_SHARE)`` of them; the new pairs are sorted,
    those already listed dropped, and the rest merged into the sorted list, which keeps
    its ``(i, j)`` order (``engine.parallel``)."""
    n = x.shape[0]
    order, cell, _, at_counts, at_bins, _, head, bits, at_moved = scratch_places(n)
    if iw[head + _PH_MAGIC] != _MAGIC or iw[head + _PH_STAMP] != nl_state[NL_REBUILDS]:
        return False
    fh = iw[head:head + _PH_WORDS].view(np.float64)
    nreset = iw[head + _PH_NRESET]
    cap = max(16, n // PARTIAL_RESET_SHARE)
    delta = fh[_PH_DELTA]
    ns = 0  # the bodies to reset, at iw[cell:cell + ns]
    for blk in range((n + MOVED_BLOCK - 1) // MOVED_BLOCK):  # (the skin check's flags)
        if iw[at_moved + blk] == 0:
            continue
        for i in range(blk * MOVED_BLOCK, min(n, (blk + 1) * MOVED_BLOCK)):
            d0 = x[i, 0] - nl_xref[i, 0]
            d1 = x[i, 1] - nl_xref[i, 1]
            d2 = x[i, 2] - nl_xref[i, 2]
            dd = d0 * d0 + d1 * d1 + d2 * d2
            if not dd <= lim:
                if (not math.isfinite(dd) or nreset + ns >= cap
                        or (iw[bits + (i >> 6)] >> (i & 63)) & 1):
                    return False  # (not finite: the full build reports it)
                iw[cell + ns] = i
                ns += 1
                delta = max(delta, math.sqrt(dd))  # (x_ref: still its place in the grid)
    for a in range(ns):
        i = iw[cell + a]
        iw[bits + (i >> 6)] |= 1 << (i & 63)
        for k in range(3):
            nl_xref[i, k] = x[i, k]
    # their pairs, written from pairs[base] on; room is left to merge below base
    capacity = pairs.shape[0]
    count = nl_state[NL_COUNT]
    room = (capacity - count) // 2
    base = capacity - room
    m0 = iw[head + _PH_M]
    m1 = iw[head + _PH_M + 1]
    m2 = iw[head + _PH_M + 2]
    reach = fh[_PH_CUT] + delta
    kk = 0
    for a in range(ns):
        i = iw[cell + a]
        xi0 = x[i, 0]
        xi1 = x[i, 1]
        xi2 = x[i, 2]
        ri = 0.5 * D[i] + skin
        a0 = _grid_cell(xi0 - reach, fh[_PH_LO], fh[_PH_Z], m0)
        b0 = _grid_cell(xi0 + reach, fh[_PH_LO], fh[_PH_Z], m0)
        a1 = _grid_cell(xi1 - reach, fh[_PH_LO + 1], fh[_PH_Z + 1], m1)
        b1 = _grid_cell(xi1 + reach, fh[_PH_LO + 1], fh[_PH_Z + 1], m1)
        a2 = _grid_cell(xi2 - reach, fh[_PH_LO + 2], fh[_PH_Z + 2], m2)
        b2 = _grid_cell(xi2 + reach, fh[_PH_LO + 2], fh[_PH_Z + 2], m2)
        for c2 in range(a2, b2 + 1):
            for c1 in range(a1, b1 + 1):
                row = (c2 * m1 + c1) * m0
                for k in range(iw[row + a0], iw[row + b0 + 1]):
                    j = iw[order + k]
                    if j == i:
                        continue
                    d0 = xi0 - nl_xref[j, 0]
                    d1 = xi1 - nl_xref[j, 1]
                    d2 = xi2 - nl_xref[j, 2]
                    rij = ri + 0.5 * D[j]
                    if (d0 * d0 + d1 * d1 + d2 * d2 < rij * rij
                            and not _excluded(i, j, bptr, bpart)):
                        if kk + 1 >= room:
                            return False
                        pairs[base + kk, 0] = min(i, j)
                        pairs[base + kk, 1] = max(i, j)
                        kk += 1
    if 2 * kk > at_counts - cell:
        return False
    new = pairs[base:base + kk]
    if kk <= 64:
        _insertion_sort_pairs(new, 0, kk)
    else:  # (the copies in the cell indices and positions: kk < capacity / 2)
        _sort_pairs(new, kk, iw[cell:cell + kk], iw[cell + kk:cell + 2 * kk],
                    iw[at_bins:head], n)
    # drop the repeated and the listed ones ...
    w = 0
    r = 0
    for t in range(kk):
        pi = new[t, 0]
        pj = new[t, 1]
        if w > 0 and new[w - 1, 0] == pi and new[w - 1, 1] == pj:
            continue
        r = _lower_bound(pairs, r, count, pi, pj)
        if r < count and pairs[r, 0] == pi and pairs[r, 1] == pj:
            continue
        new[w, 0] = pi
        new[w, 1] = pj
        w += 1
    # ... and merge the rest in from the back (count + w < base: no overlap)
    r = count - 1
    t = w - 1
    out = count + w - 1
    while t >= 0:
        if r >= 0 and _pair_before(new[t, 0], new[t, 1], pairs[r, 0], pairs[r, 1]):
            pairs[out, 0] = pairs[r, 0]
            pairs[out, 1] = pairs[r, 1]
            r -= 1
        else:
            pairs[out, 0] = new[t, 0]
            pairs[out, 1] = new[t, 1]
            t -= 1
        out -= 1
    nl_state[NL_COUNT] = count + w
    nl_state[NL_REBUILDS] += 1
    nl_state[NL_PARTIAL] += 1
    iw[head + _PH_NRESET] = nreset + ns
    fh[_PH_DELTA] = delta
    iw[head + _PH_STAMP] = nl_state[NL_REBUILDS]
    return True


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, inline="always")
def _lower_bound(pairs, r, count, pi, pj):
    """The first place ``p ≥ r`` of the sorted ``pairs[:count]`` with
    ``pairs[p] ≥ (pi, pj)`` (galloping from ``r``, then bisecting)."""
    step = 1
    lo = r
    hi = r
    while hi < count and _pair_before(pairs[hi, 0], pairs[hi, 1], pi, pj):
        lo = hi + 1
        hi = r + step
        step *= 2
    if hi > count:
        hi = count
    while lo < hi:
        mid = (lo + hi) // 2
        if _pair_before(pairs[mid, 0], pairs[mid, 1], pi, pj):
            lo = mid + 1
        else:
            hi = mid
    return lo
