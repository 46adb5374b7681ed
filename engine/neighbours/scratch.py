"""The neighbour list's bookkeeping (issue #34: split out of ``engine.neighbours``): the
layout of the cell list's integer scratch (:func:`scratch_places`) and the header of
its partial updates, the excluded partners, the end of a full build (:func:`_built`)
and the skin check (:func:`moved_blocks`), shared by the cell-list, partial-update and
all-pairs kernels of :mod:`engine.neighbours`."""

from __future__ import annotations

import numpy as np
from numba import njit

from ..layout import (
    NL_COUNT,
    NL_REBUILDS,
    NL_VALID,
)

SEARCH_CHUNK = 1024
"""Bodies per task of the parallel pair search (from ``PARALLEL_SEARCH_MIN`` bodies)."""
MOVED_BLOCK = 64
"""Bodies a word of the skin check's flags (:func:`moved_blocks`)."""

# the header of the partial updates in the scratch (scratch_places(n)[6]), 16 words
_PH_WORDS = 16
_PH_MAGIC = 0  # _MAGIC while the words below describe the list of version ...
_PH_STAMP = 1  # ... nl_state[NL_REBUILDS] = this
_PH_M = 2  # the grid's cells along each axis (3 words)
_PH_NRESET = 5  # bodies reset since the full build
_PH_LO = 6  # the grid's lower corner (3 doubles)
_PH_Z = 9  # its cell edges (3 doubles)
_PH_CUT = 12  # max D + skin at the full build (a double)
_PH_DELTA = 13  # the largest distance of a reset body's reference from its cell (a double)
_MAGIC = 0x5EED1157


@njit(nogil=True, cache=True)
def neighbour_scratch_size(n):
    """Length of the integer scratch of the cell list (:func:`scratch_places`)."""
    return scratch_places(n)[5]


@njit(nogil=True, cache=True)
def forget_grid(iw, n):
    """Make the next update of the list a full build (the list may have been replaced:
    a restore)."""
    iw[scratch_places(n)[6] + _PH_MAGIC] = 0


@njit(nogil=True, cache=True)
def new_neighbour_scratch(n):
    """The integer scratch of :func:`ensure_neighbours_ws` for ``n`` bodies, with no
    partial update possible until its first full build."""
    iw = np.empty(neighbour_scratch_size(n), dtype=np.int64)
    head = scratch_places(n)[6]
    for k in range(_PH_WORDS):
        iw[head + k] = 0
    return iw


@njit(nogil=True, cache=True)
def scratch_places(n):
    """Where the parts of the cell list's integer scratch ``iw`` start, for ``n`` bodies:
    ``max(64, 8 n) + 1`` cell starts from 0, then ``n`` body indices in cell order
    (``order``), ``n`` cell indices (``cell``), ``4 n`` words holding ``(x, D/2)`` in
    cell order as doubles (``xs``), the pair counts of the chunks of the parallel search
    (``counts``), the bucket counts of the sort of the pairs (``bins``), the header of
    the partial updates (:func:`_partial_update`: the grid of the last full build) and
    one bit a body (reset since that build), then one word a block of ``MOVED_BLOCK``
    bodies (whether one of them moved more than ``skin/2``: :func:`moved_blocks`);
    returns ``(order, cell, xs, counts, bins, end, head, bits, moved)``."""
    order = max(64, 8 * n) + 1
    cell = order + n
    xs = cell + n
    counts = xs + 4 * n
    bins = counts + n // SEARCH_CHUNK + 2
    head = bins + (1 << _radix_bits(n)) + 1
    bits = head + _PH_WORDS
    moved = bits + n // 64 + 1
    return order, cell, xs, counts, bins, moved + n // MOVED_BLOCK + 1, head, bits, moved


@njit(nogil=True, cache=True)
def _radix_bits(n):
    """Bits of one digit of the pairs' radix sort: the least ``b`` with ``4^b ≥ n``, so
    that two digits cover every body index (``2^b < 2√n`` buckets)."""
    b = 1
    while (1 << (2 * b)) < n:
        b += 1
    return b


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, inline="always")
def _excluded(i, j, bptr, bpart):
    """Whether ``j`` is among the excluded partners of ``i`` (none unless ``bptr`` has
    an entry for ``i + 1``)."""
    if i + 1 >= bptr.shape[0]:
        return False
    for t in range(bptr[i], bptr[i + 1]):
        if bpart[t] == j:
            return True
    return False


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, inline="always")
def _built(x, count, nl_state, nl_xref):
    """A full build of ``count`` pairs is done: the list is valid, its rebuild stamp
    moves on (``engine.contact.detect`` and ``engine.parallel`` key their per-pair data
    by it), and the reference places are the bodies' places now."""
    nl_state[NL_COUNT] = count
    nl_state[NL_REBUILDS] += 1
    nl_state[NL_VALID] = 1
    for i in range(x.shape[0]):
        for k in range(3):
            nl_xref[i, k] = x[i, k]


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, inline="always")
def _lowest_bit(w):
    """The place of the lowest set bit of the non-zero word ``w``."""
    k = 0
    while not (w >> k) & 1:
        k += 1
    return k


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, inline="always")
def moved_flags(iw, n):
    """The skin check's flags in the scratch ``iw`` of ``n`` bodies, one word a block of
    ``MOVED_BLOCK`` bodies (:func:`moved_blocks`)."""
    at = scratch_places(n)[8]
    return iw[at:at + (n + MOVED_BLOCK - 1) // MOVED_BLOCK]


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, inline="always")
def moved_blocks(x, xref, lim, flags, i0, i1):
    """The skin check of the bodies ``i0 ≤ i < i1``: ``flags[b]`` is set, for each
    block ``b`` of ``MOVED_BLOCK`` bodies from ``i0``, to whether one of them is farther
    than ``√lim`` from its reference place (or not finite); returns whether any is.
    :func:`_partial_update` reads the flags to visit only those blocks."""
    moved = 0
    for b in range((i1 - i0 + MOVED_BLOCK - 1) // MOVED_BLOCK):
        a = i0 + b * MOVED_BLOCK
        xb = x[a:min(i1, a + MOVED_BLOCK)]
        rb = xref[a:min(i1, a + MOVED_BLOCK)]
        if not (xb.shape[1] == 3 and rb.shape[1] == 3 and rb.shape[0] == xb.shape[0]):
            return True  # (checked by the callers: this tells the compiler the shapes)
        mv = 0
        for i in range(xb.shape[0]):  # (views from 0, no early exit, a count: this
            d0 = xb[i, 0] - rb[i, 0]  # vectorises; or-ing booleans over index ranges
            d1 = xb[i, 1] - rb[i, 1]  # was 4x slower at 10⁶)
            d2 = xb[i, 2] - rb[i, 2]
            mv += not d0 * d0 + d1 * d1 + d2 * d2 <= lim  # (also for NaN)
        flags[b] = mv
        moved += mv
    return moved > 0
