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

Pairs of *excluded partners* are left out: ``bpart[bptr[i]:bptr[i + 1]]`` are those of
``i`` (a CSR of ``n + 1`` and ``2 nb`` entries; empty arrays exclude none).  A model
with binder bonds and penalty contacts excludes its bonded neighbours
(:func:`excluded_partners`), whose Hertz contact the binder kernel evaluates with the
bond (``engine.potentials.binder``): in a ring pile they are nearly every listed pair.

The ``*_ws`` kernels take an integer scratch array of at least
``neighbour_scratch_size(n)`` entries (the cell list) and allocate nothing, so that the
stepping loop calling them has no error path (see ``engine.forcefield``); the plain
kernels allocate it themselves.

The package (issue #34: one module of 850 lines before): the list's bookkeeping and
scratch layout in :mod:`.scratch`, the cell list with its full build and partial updates
in :mod:`.cells`; here the entry points and the all-pairs list of small models.
Splitting it changed no kernel: Numba compiles each function on its own and inlines the
``inline="always"`` helpers whichever module holds them, so the compiled code, and every
bit of a run, is that of the single module (``tests/test_bits.py``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..layout import (
    ERR_NEIGHBOUR_OVERFLOW,
    ERR_NONFINITE,
    ERR_SHAPE,
    NL_COUNT,
    NL_VALID,
    OK,
    T_BONDS,
    T_CONTACT,
)
from ..specialize import CELLS, SMALL_LIST_MAX, gated, unless
from .cells import (
    PARALLEL_SEARCH_MIN,
    PARTIAL_RESET_SHARE,
    _lower_bound,
    _partial_update,
    _search_chunks,
    build_neighbours_ws,
    cell_list_ws,
)
from .scratch import (
    MOVED_BLOCK,
    SEARCH_CHUNK,
    _built,
    _excluded,
    _lowest_bit,
    forget_grid,
    moved_blocks,
    moved_flags,
    neighbour_scratch_size,
    new_neighbour_scratch,
    scratch_places,
)

__all__ = [  # (the names imported from here before the split, issue #34)
    "SMALL_LIST_MAX",
    "_lower_bound",
    "_search_chunks",
    "MOVED_BLOCK",
    "PARALLEL_SEARCH_MIN",
    "PARTIAL_RESET_SHARE",
    "SEARCH_CHUNK",
    "binder_adds_contact",
    "build_neighbours",
    "build_neighbours_ws",
    "cell_list_ws",
    "ensure_all_pairs_ws",
    "ensure_neighbours",
    "ensure_neighbours_ws",
    "excluded_partners",
    "forget_grid",
    "moved_blocks",
    "moved_flags",
    "neighbour_scratch_size",
    "neighbours_of_family_ws",
    "new_neighbour_scratch",
    "scratch_places",
]


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, inline="always")
def binder_adds_contact(ff):
    """Whether the binder kernel adds the Hertz contact of bonded spheres, and the
    neighbour list of the force field ``ff`` leaves them out: when the model has both
    binder bonds and penalty contacts (the one place this rule is written)."""
    flags = ff[3]
    return flags[T_BONDS] != 0 and flags[T_CONTACT] != 0


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, inline="always")
def excluded_partners(ff):
    """The partners the neighbour list of the force field ``ff`` leaves out, as the CSR
    ``(bptr, bpart)``: the bonded ones (``ff[14]``, ``ff[15]``) when
    :func:`binder_adds_contact`, else none (empty views)."""
    if binder_adds_contact(ff):
        return ff[14], ff[15]
    return ff[14][:0], ff[15][:0]


@njit(nogil=True, cache=True)
def ensure_neighbours(x, D, skin, pairs, nl_state, nl_xref):
    """Rebuild the list if it is invalid or a body moved more than ``skin/2`` (no pair
    excluded).

    Returns ``OK``, ``ERR_NONFINITE`` (positions not finite) or ``ERR_NEIGHBOUR_OVERFLOW``
    (``pairs`` too small: the caller grows it and calls again).
    """
    iw = new_neighbour_scratch(x.shape[0])
    return ensure_neighbours_ws(x, D, skin, pairs, nl_state, nl_xref, iw,
                                np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int32))


@njit(nogil=True, cache=True)
def build_neighbours(x, D, skin, pairs, nl_state, nl_xref):
    """Cell-list construction of all pairs with ``r < (D_i + D_j)/2 + skin`` (no pair
    excluded)."""
    iw = new_neighbour_scratch(x.shape[0])
    return build_neighbours_ws(x, D, skin, pairs, nl_state, nl_xref, iw,
                               np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int32))


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def ensure_neighbours_ws(x, D, skin, pairs, nl_state, nl_xref, iw, bptr, bpart):
    """:func:`ensure_neighbours` with the scratch ``iw`` supplied and the partners
    ``(bptr, bpart)`` excluded (the module docstring); ``ERR_SHAPE`` if the arrays do
    not have the shapes of ``ForceField`` or ``iw`` is too short."""
    n = x.shape[0]
    if not (x.shape[1] == 3 and nl_xref.shape[1] == 3 and nl_xref.shape[0] >= n
            and pairs.shape[1] == 2 and iw.shape[0] >= neighbour_scratch_size(n)):
        return ERR_SHAPE
    if nl_state[NL_VALID] == 1:
        lim = 0.25 * skin * skin
        if not moved_blocks(x, nl_xref, lim, moved_flags(iw, n), 0, n):
            return OK
        if _partial_update(x, D, skin, pairs, nl_state, nl_xref, iw, lim, bptr, bpart):
            return OK
    return build_neighbours_ws(x, D, skin, pairs, nl_state, nl_xref, iw, bptr, bpart)


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def neighbours_of_family_ws(ff, x, D, skin, pairs, nl_state, nl_xref, iw, bptr, bpart):
    """The neighbour list of the force field ``ff`` brought up to date by its family's
    kernel: :func:`ensure_neighbours_ws` (cell list, partial updates) above
    ``SMALL_LIST_MAX`` bodies, :func:`ensure_all_pairs_ws` up to it; ``ERR_SHAPE`` if
    the family and the body count disagree."""
    if x.shape[0] > SMALL_LIST_MAX:
        return gated(ff, CELLS, ERR_SHAPE, ensure_neighbours_ws, x, D, skin, pairs,
                     nl_state, nl_xref, iw, bptr, bpart)
    return unless(ff, CELLS, ERR_SHAPE, ensure_all_pairs_ws, x, D, skin, pairs, nl_state,
                  nl_xref, bptr, bpart)


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def ensure_all_pairs_ws(x, D, skin, pairs, nl_state, nl_xref, bptr, bpart):
    """:func:`ensure_neighbours_ws` for a small model: when the list is invalid or a
    body moved more than ``skin/2`` since the last build, every pair ``i < j`` is
    tested (``r < σ_ij + skin``, the excluded partners ``(bptr, bpart)`` left out), in
    the order ``(i, j)`` that the list keeps, so no sort is needed; no scratch.

    The list holds the pairs of a full build at the same reference places, and each
    body's contacts are summed in the order of the partner's index, so the forces are
    those of the cell-list kernel to the bit (``tests/test_bits.py``); it compiles in a
    fraction of its time (``BENCHMARKS.md``, start-up).  The distance tests of 32
    partners at a time set the bits of a word without a branch, and only the hits are
    visited (the excluded partners, most of a ring's hits, left out there); the skin
    check counts rather than stops: both loops run at a few ns a pair.  Returns
    ``OK``, ``ERR_NONFINITE``, ``ERR_SHAPE`` or ``ERR_NEIGHBOUR_OVERFLOW`` (the caller
    grows ``pairs`` and calls again), as :func:`ensure_neighbours_ws` does."""
    n = x.shape[0]
    if not (x.shape[1] == 3 and nl_xref.shape[1] == 3 and nl_xref.shape[0] >= n
            and pairs.shape[1] == 2 and D.shape[0] >= n):
        return ERR_SHAPE
    if nl_state[NL_VALID] == 1:
        lim = 0.25 * skin * skin
        moved = 0
        for i in range(n):
            d0 = x[i, 0] - nl_xref[i, 0]
            d1 = x[i, 1] - nl_xref[i, 1]
            d2 = x[i, 2] - nl_xref[i, 2]
            moved += not d0 * d0 + d1 * d1 + d2 * d2 <= lim  # (also for NaN)
        if moved == 0:
            return OK
    nl_state[NL_VALID] = 0
    nl_state[NL_COUNT] = 0
    for i in range(n):
        if not (math.isfinite(x[i, 0]) and math.isfinite(x[i, 1])
                and math.isfinite(x[i, 2])):
            return ERR_NONFINITE
    capacity = pairs.shape[0]
    count = 0
    for i in range(n):
        xi0 = x[i, 0]
        xi1 = x[i, 1]
        xi2 = x[i, 2]
        ri = 0.5 * D[i] + skin
        for j0 in range(i + 1, n, 32):  # 32 partners at a time, tested without a branch
            j1 = min(n, j0 + 32)
            hits = 0
            for j in range(j0, j1):
                d0 = xi0 - x[j, 0]
                d1 = xi1 - x[j, 1]
                d2 = xi2 - x[j, 2]
                lim_ij = ri + 0.5 * D[j]
                hits |= np.uint32(d0 * d0 + d1 * d1 + d2 * d2 < lim_ij * lim_ij) << (j - j0)
            while hits:  # (the excluded partners left out)
                j = j0 + _lowest_bit(hits)
                hits &= hits - np.uint32(1)
                if _excluded(i, j, bptr, bpart):
                    continue
                if count >= capacity:
                    return ERR_NEIGHBOUR_OVERFLOW
                pairs[count, 0] = i
                pairs[count, 1] = j
                count += 1
    _built(x, count, nl_state, nl_xref)
    return OK
