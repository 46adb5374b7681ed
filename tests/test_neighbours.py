"""The Verlet neighbour list (engine/neighbours/): exactly the pairs within
``σ_ij + skin`` of an all-pairs search, ``i < j`` sorted by ``(i, j)`` (the parallel
kernels' chunks rely on the order by ``i``; the whole order fixes the order of the force
sums), the same for any thread count, rebuilt only past ``skin/2``; and the parallel
kernels' runs of pairs per chunk (engine/parallel.py)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.layout import (
    ERR_NEIGHBOUR_OVERFLOW,
    ERR_NONFINITE,
    N_NL_STATE,
    NL_COUNT,
    NL_PARTIAL,
    NL_REBUILDS,
    OK,
)
from engine.neighbours import (
    MOVED_BLOCK,
    PARALLEL_SEARCH_MIN,
    PARTIAL_RESET_SHARE,
    SEARCH_CHUNK,
    SMALL_LIST_MAX,
    _search_chunks,
    build_neighbours,
    cell_list_ws,
    ensure_all_pairs_ws,
    ensure_neighbours,
    ensure_neighbours_ws,
    moved_blocks,
    neighbour_scratch_size,
    new_neighbour_scratch,
    scratch_places,
)
from engine.parallel import CHUNK, _pair_runs, get_threads, set_threads

NO_EXCLUSION = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int32))
"""The CSR of excluded partners that excludes none."""


def _brute(x: np.ndarray, D: np.ndarray, skin: float) -> set[tuple[int, int]]:
    out: set[tuple[int, int]] = set()
    for a in range(0, x.shape[0], 1000):  # (rows in blocks: 5000 bodies fit in memory)
        d = np.linalg.norm(x[a:a + 1000, None, :] - x[None, :, :], axis=2)
        lim = 0.5 * (D[a:a + 1000, None] + D[None, :]) + skin
        i, j = np.nonzero(d < lim)
        i += a
        keep = i < j
        out |= set(zip(i[keep].tolist(), j[keep].tolist(), strict=True))
    return out


def _build(x, D, skin, capacity=None):
    n = x.shape[0]
    pairs = np.zeros((capacity or 8 * n, 2), dtype=np.int64)
    state = np.zeros(N_NL_STATE, dtype=np.int64)
    xref = np.zeros((n, 3))
    st = build_neighbours(x, D, skin, pairs, state, xref)
    return st, pairs[:state[NL_COUNT]], state, xref


CLOUDS = {
    # uniform, sizes from 0.05 to 0.2
    "uniform": lambda rng: (rng.uniform(0.0, 2.0, (600, 3)), rng.uniform(0.05, 0.2, 600)),
    # a dense clump and a few far away: the grid is coarsened to its cap of cells
    "clustered": lambda rng: (np.concatenate([rng.normal(0.0, 0.3, (500, 3)),
                                              rng.uniform(-50.0, 50.0, (20, 3))]),
                              np.full(520, 0.1)),
    # all in one plane: one layer of cells
    "flat": lambda rng: (np.column_stack([rng.uniform(0.0, 3.0, (400, 2)), np.zeros(400)]),
                         np.full(400, 0.15)),
    # large enough for the parallel search, chunk by chunk
    "parallel": lambda rng: (rng.uniform(0.0, 6.0, (PARALLEL_SEARCH_MIN + 900, 3)),
                             rng.uniform(0.1, 0.3, PARALLEL_SEARCH_MIN + 900)),
}


@pytest.mark.parametrize("cloud", sorted(CLOUDS))
@pytest.mark.parametrize("skin", [0.0, 0.05])
def test_the_list_is_the_all_pairs_search_sorted_by_the_lower_index(cloud, skin):
    x, D = CLOUDS[cloud](np.random.default_rng(3))
    st, pairs, state, xref = _build(x, D, skin)
    assert st == OK and state[NL_REBUILDS] == 1
    expected = _brute(x, D, skin)
    assert len(expected) > 20
    # each pair once, (lower, higher), sorted by the lower index, then the higher
    assert [tuple(p) for p in pairs.tolist()] == sorted(expected)
    assert np.array_equal(xref, x)


def test_the_list_is_the_same_for_one_and_two_threads():
    x, D = CLOUDS["parallel"](np.random.default_rng(4))
    before = get_threads()
    try:
        lists = []
        for threads in (1, 2):
            set_threads(threads)
            st, pairs, *_ = _build(x, D, 0.05)
            assert st == OK
            lists.append(pairs.copy())
    finally:
        set_threads(before)
    assert np.array_equal(lists[0], lists[1])


def test_a_list_of_more_than_five_pairs_a_body_is_sorted_in_its_unused_rows():
    """The sort's copy of the pairs lives in the cell list, which holds 5 pairs a body;
    a denser list uses its own unused rows, and asks to be grown if it has not enough."""
    rng = np.random.default_rng(12)
    n = 700
    x = rng.uniform(0.0, 1.5, (n, 3))
    D = np.full(n, 0.3)
    expected = sorted(_brute(x, D, 0.05))
    assert len(expected) > 5 * n
    st, pairs, *_ = _build(x, D, 0.05, capacity=2 * len(expected))
    assert st == OK
    assert [tuple(p) for p in pairs.tolist()] == expected
    st, *_ = _build(x, D, 0.05, capacity=2 * len(expected) - 1)
    assert st == ERR_NEIGHBOUR_OVERFLOW


def test_overflow_and_non_finite_positions_are_reported():
    x, D = CLOUDS["uniform"](np.random.default_rng(5))
    n_pairs = len(_brute(x, D, 0.05))
    st, *_ = _build(x, D, 0.05, capacity=n_pairs - 1)
    assert st == ERR_NEIGHBOUR_OVERFLOW
    st, pairs, *_ = _build(x, D, 0.05, capacity=n_pairs)
    assert st == OK and len(pairs) == n_pairs
    x[7, 1] = np.nan
    st, *_ = _build(x, D, 0.05)
    assert st == ERR_NONFINITE


def test_a_chunk_with_more_pairs_than_its_share_falls_back_to_the_whole_search():
    """The parallel search gives each chunk of bodies an equal share of the list; a
    dense first chunk overflows its share while the list as a whole has room."""
    rng = np.random.default_rng(9)
    n = PARALLEL_SEARCH_MIN + SEARCH_CHUNK
    x = rng.uniform(0.0, 40.0, (n, 3))
    x[:SEARCH_CHUNK] = rng.uniform(0.0, 1.0, (SEARCH_CHUNK, 3))  # a dense clump
    D = np.full(n, 0.1)
    expected = _brute(x, D, 0.02)
    # the premise: with the list's capacity, a chunk of the cell order overflows its share
    capacity = len(expected) + 10
    nch = (n + SEARCH_CHUNK - 1) // SEARCH_CHUNK
    iw = np.empty(neighbour_scratch_size(n), dtype=np.int64)
    m0, m1, m2 = cell_list_ws(x, D, 0.02, iw)
    order, _, at_xs, at_counts = scratch_places(n)[:4]
    xs = iw[at_xs:at_counts].view(np.float64)
    counts = np.zeros(nch, dtype=np.int64)
    assert not _search_chunks(n, 0.02, iw, order, xs, m0, m1, m2,
                              np.zeros((capacity, 2), dtype=np.int64), capacity // nch, counts,
                              *NO_EXCLUSION)
    st, pairs, *_ = _build(x, D, 0.02, capacity=capacity)
    assert st == OK
    assert [tuple(p) for p in pairs.tolist()] == sorted(expected)
    st, *_ = _build(x, D, 0.02, capacity=len(expected) - 1)
    assert st == ERR_NEIGHBOUR_OVERFLOW


def test_rebuilt_only_when_a_body_moved_more_than_half_the_skin():
    x, D = CLOUDS["uniform"](np.random.default_rng(6))
    skin = 0.05
    n = x.shape[0]
    pairs = np.zeros((8 * n, 2), dtype=np.int64)
    state = np.zeros(N_NL_STATE, dtype=np.int64)
    xref = np.zeros((n, 3))
    assert ensure_neighbours(x, D, skin, pairs, state, xref) == OK
    assert state[NL_REBUILDS] == 1
    y = x.copy()
    y[11, 0] += 0.49 * skin
    assert ensure_neighbours(y, D, skin, pairs, state, xref) == OK
    assert state[NL_REBUILDS] == 1  # kept
    y[11, 0] += 0.02 * skin
    assert ensure_neighbours(y, D, skin, pairs, state, xref) == OK
    assert state[NL_REBUILDS] == 2
    assert {tuple(p) for p in pairs[:state[NL_COUNT]].tolist()} == _brute(y, D, skin)


def test_each_chunk_gets_its_run_of_pairs_and_its_incoming_cross_pairs():
    rng = np.random.default_rng(8)
    n = 3 * CHUNK + 17
    x = rng.uniform(0.0, 4.0, (n, 3))
    D = np.full(n, 0.3)
    st, pairs, *_ = _build(x, D, 0.05)
    assert st == OK
    count = pairs.shape[0]
    nc = (n + CHUNK - 1) // CHUNK
    pptr = np.zeros(nc + 1, dtype=np.int64)
    xptr = np.zeros(nc + 1, dtype=np.int64)
    xin = np.zeros(count, dtype=np.int32)
    assert _pair_runs(n, pairs, count, pptr, xin, xptr)
    crossing = 0
    for c in range(nc):
        run = pairs[pptr[c]:pptr[c + 1]]
        assert np.all(run[:, 0] // CHUNK == c)
        inc = xin[xptr[c]:xptr[c + 1]]
        assert np.all(np.diff(inc) > 0)  # in pair order
        assert np.all(pairs[inc, 1] // CHUNK == c) and np.all(pairs[inc, 0] // CHUNK != c)
        crossing += len(inc)
    assert pptr[0] == 0 and pptr[nc] == count
    assert crossing == int(np.sum(pairs[:, 0] // CHUNK != pairs[:, 1] // CHUNK)) > 0
    # a list not sorted by its lower index is refused (the serial kernels then run)
    assert not _pair_runs(n, pairs[::-1].copy(), count, pptr, xin, xptr)


def _listed(pairs: np.ndarray) -> list[tuple[int, int]]:
    return [tuple(p) for p in pairs.tolist()]


def _kept_list(x, D, skin):
    """A list built at ``x`` with a scratch kept for its later updates."""
    n = x.shape[0]
    pairs = np.zeros((8 * n, 2), dtype=np.int64)
    state = np.zeros(N_NL_STATE, dtype=np.int64)
    xref = np.zeros((n, 3))
    iw = new_neighbour_scratch(n)
    assert ensure_neighbours_ws(x, D, skin, pairs, state, xref, iw, *NO_EXCLUSION) == OK
    return pairs, state, xref, iw


def test_a_body_past_half_the_skin_is_added_without_a_full_build():
    """A few bodies past ``skin/2``: their references are reset and their pairs merged
    into the list (a partial update), which stays sorted, unique and complete for the
    references: every pair closer than ``σ_ij + skin`` at them is listed, hence every
    contact.  The same body again, or more than ``max(16, n // 32)`` bodies, and the
    list is built anew."""
    rng = np.random.default_rng(21)
    x, D = CLOUDS["uniform"](rng)
    n, skin = x.shape[0], 0.05
    pairs, state, xref, iw = _kept_list(x, D, skin)
    assert state[NL_REBUILDS] == 1 and state[NL_PARTIAL] == 0
    y = x + rng.uniform(-0.25, 0.25, x.shape) * skin / np.sqrt(3.0)  # all within skin/2
    fast = [5, 300, 301]
    y[fast] += 0.8 * skin * np.array([[1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, 1.0]])
    y[599] = y[5] + [0.0, 0.9 * (D[5] + D[599]) / 2, 0.0]  # and one lands on another
    fast.append(599)
    before = xref.copy()
    assert ensure_neighbours_ws(y, D, skin, pairs, state, xref, iw, *NO_EXCLUSION) == OK
    assert state[NL_REBUILDS] == 2 and state[NL_PARTIAL] == 1
    moved = np.zeros(n, dtype=bool)
    moved[fast] = True
    assert np.array_equal(xref[moved], y[moved]) and np.array_equal(xref[~moved], before[~moved])
    listed = _listed(pairs[:state[NL_COUNT]])
    assert listed == sorted(set(listed))  # sorted by (i, j), each pair once
    assert all(i < j for i, j in listed)
    assert _brute(xref, D, skin) <= set(listed)  # complete for the references ...
    assert _brute(y, D, 0.0) <= set(listed)  # ... so every contact is listed
    assert (5, 599) in set(listed)
    # the same body past half the skin again: a full build
    y[300, 1] -= 0.6 * skin
    assert ensure_neighbours_ws(y, D, skin, pairs, state, xref, iw, *NO_EXCLUSION) == OK
    assert state[NL_REBUILDS] == 3 and state[NL_PARTIAL] == 1
    assert _listed(pairs[:state[NL_COUNT]]) == sorted(_brute(y, D, skin))
    # more bodies at once than a partial update resets: a full build
    cap = max(16, n // PARTIAL_RESET_SHARE)
    y[:cap + 1, 2] += 0.6 * skin
    assert ensure_neighbours_ws(y, D, skin, pairs, state, xref, iw, *NO_EXCLUSION) == OK
    assert state[NL_REBUILDS] == 4 and state[NL_PARTIAL] == 1
    y[:cap, 0] += 0.6 * skin
    assert ensure_neighbours_ws(y, D, skin, pairs, state, xref, iw, *NO_EXCLUSION) == OK
    assert state[NL_REBUILDS] == 5 and state[NL_PARTIAL] == 2
    assert _brute(xref, D, skin) <= set(_listed(pairs[:state[NL_COUNT]]))


def test_the_skin_check_flags_the_blocks_of_the_bodies_that_moved():
    """``moved_blocks`` flags each block of ``MOVED_BLOCK`` bodies holding one farther
    than ``√lim`` from its reference place, or not finite (the last block short, and
    from a start inside the array); the partial update then looks at those blocks
    only."""
    n = 5 * MOVED_BLOCK + 7
    xref = np.random.default_rng(3).uniform(-1.0, 1.0, (n, 3))
    x = xref + 0.01
    flags = np.full(n // MOVED_BLOCK + 1, 7, dtype=np.int64)
    assert not moved_blocks(x, xref, 1e-2, flags, 0, n)
    assert not flags.any()
    x[MOVED_BLOCK + 3, 1] += 0.2  # block 1
    x[n - 1, 0] = np.nan  # the short last block
    assert moved_blocks(x, xref, 1e-2, flags, 0, n)
    assert flags.astype(bool).tolist() == [False, True, False, False, False, True]
    # from the third block on: its flags start at flags[0]
    flags[:] = 7
    assert moved_blocks(x, xref, 1e-2, flags, 2 * MOVED_BLOCK, n)
    assert flags[:4].astype(bool).tolist() == [False, False, False, True]
    x[n - 1, 0] = xref[n - 1, 0]
    assert not moved_blocks(x, xref, 1e-2, flags, 2 * MOVED_BLOCK, n)


def test_a_body_that_left_the_grid_is_still_found():
    """A reset body far outside the grid of the last full build, then another body moved
    next to it: the search reaches it through the largest reset distance."""
    rng = np.random.default_rng(22)
    x, D = CLOUDS["uniform"](rng)
    skin = 0.05
    pairs, state, xref, iw = _kept_list(x, D, skin)
    y = x.copy()
    y[40] = [9.0, -3.0, 4.0]
    assert ensure_neighbours_ws(y, D, skin, pairs, state, xref, iw, *NO_EXCLUSION) == OK
    y[41] = y[40] + [0.5 * (D[40] + D[41]), 0.0, 0.0]
    assert ensure_neighbours_ws(y, D, skin, pairs, state, xref, iw, *NO_EXCLUSION) == OK
    assert state[NL_PARTIAL] == 2
    listed = set(_listed(pairs[:state[NL_COUNT]]))
    assert (40, 41) in listed and _brute(xref, D, skin) <= listed


def test_partial_updates_leave_the_trajectory_to_the_bit():
    """A pile stepped in one call (partial updates of the list) and one step a call (a
    full build at each call's first update): the same state, bit for bit, because a pair
    beyond contact adds nothing and the sums run in partner order."""
    from engine.scenarios import load_scenario
    from engine.simulation import Simulation

    params = {"n_tori": 250, "n_particles": 20, "box": 7.6, "velocity_noise": 1.0}
    runs = []
    for calls in (1, 150):
        model = load_scenario("tori-pile", params).build_model()
        sim = Simulation(model, "rrp-newmark", 1e-3, record_every=10**9, record_frames=False)
        for _ in range(calls):
            sim.advance(150 // calls)
        runs.append(sim)
    one, many = runs
    assert one.ff.nl_state[NL_PARTIAL] > 3 and many.ff.nl_state[NL_PARTIAL] == 0
    assert one.ff.nl_state[NL_REBUILDS] - one.ff.nl_state[NL_PARTIAL] \
        < many.ff.nl_state[NL_REBUILDS]  # fewer full builds
    for a, b in zip(one._s0[:6], many._s0[:6], strict=True):
        assert np.array_equal(a, b)


def _small_cloud(seed: int, n: int = 200):
    rng = np.random.default_rng(seed)
    return rng.uniform(0.0, 1.2, (n, 3)), rng.uniform(0.05, 0.2, n)


def _csr(n: int, bonds: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """The excluded partners of ``bonds`` as the neighbour list takes them."""
    partners: list[list[int]] = [[] for _ in range(n)]
    for i, j in bonds:
        partners[i].append(j)
        partners[j].append(i)
    bptr = np.zeros(n + 1, dtype=np.int64)
    bptr[1:] = np.cumsum([len(p) for p in partners])
    return bptr, np.array([j for p in partners for j in sorted(p)], dtype=np.int32)


@pytest.mark.parametrize("skin", [0.0, 0.05])
def test_a_small_models_list_is_the_cell_lists_list(skin):
    """``ensure_all_pairs_ws`` (models of at most ``SMALL_LIST_MAX`` bodies: no cell list
    to compile) lists the same pairs in the same order as the cell-list build, with the
    excluded partners left out."""
    x, D = _small_cloud(21)
    n = x.shape[0]
    full = sorted(_brute(x, D, skin))
    bonds = full[::3]  # a third of the listed pairs are bonded: left out
    bptr, bpart = _csr(n, bonds)
    lists = []
    for kernel in ("cells", "all pairs"):
        pairs = np.zeros((8 * n, 2), dtype=np.int64)
        state = np.zeros(N_NL_STATE, dtype=np.int64)
        xref = np.zeros((n, 3))
        if kernel == "cells":
            st = ensure_neighbours_ws(x, D, skin, pairs, state, xref,
                                      new_neighbour_scratch(n), bptr, bpart)
        else:
            st = ensure_all_pairs_ws(x, D, skin, pairs, state, xref, bptr, bpart)
        assert st == OK and state[NL_REBUILDS] == 1 and np.array_equal(xref, x)
        lists.append([tuple(p) for p in pairs[:state[NL_COUNT]].tolist()])
    assert lists[1] == lists[0] == [p for p in full if p not in set(bonds)]
    assert len(lists[1]) > 20


def test_a_small_models_list_is_rebuilt_past_half_the_skin_and_reports_errors():
    x, D = _small_cloud(22)
    skin = 0.05
    n = x.shape[0]
    pairs = np.zeros((8 * n, 2), dtype=np.int64)
    state = np.zeros(N_NL_STATE, dtype=np.int64)
    xref = np.zeros((n, 3))
    assert ensure_all_pairs_ws(x, D, skin, pairs, state, xref, *NO_EXCLUSION) == OK
    y = x.copy()
    y[11, 0] += 0.49 * skin
    assert ensure_all_pairs_ws(y, D, skin, pairs, state, xref, *NO_EXCLUSION) == OK
    assert state[NL_REBUILDS] == 1  # kept
    y[11, 0] += 0.02 * skin
    assert ensure_all_pairs_ws(y, D, skin, pairs, state, xref, *NO_EXCLUSION) == OK
    assert state[NL_REBUILDS] == 2 and np.array_equal(xref, y)
    assert [tuple(p) for p in pairs[:state[NL_COUNT]].tolist()] == sorted(_brute(y, D, skin))
    count = int(state[NL_COUNT])
    short = np.zeros((count - 1, 2), dtype=np.int64)
    state[:] = 0
    assert ensure_all_pairs_ws(y, D, skin, short, state, xref, *NO_EXCLUSION) \
        == ERR_NEIGHBOUR_OVERFLOW
    y[7, 2] = np.inf
    assert ensure_all_pairs_ws(y, D, skin, pairs, state, xref, *NO_EXCLUSION) == ERR_NONFINITE


def test_the_family_says_which_list_kernel_a_model_compiles():
    """The cell list is in the family (``engine.specialize.CELLS``) only for contacts
    among more than ``SMALL_LIST_MAX`` bodies."""
    from engine.layout import N_TERMS, T_CONTACT
    from engine.specialize import CELLS, family_marker

    flags = np.zeros(N_TERMS, dtype=np.int64)
    assert family_marker(flags, 10_000)[CELLS] is None  # no contacts: no list at all
    flags[T_CONTACT] = 1
    assert family_marker(flags, SMALL_LIST_MAX)[CELLS] is None
    assert family_marker(flags, SMALL_LIST_MAX + 1)[CELLS] == 0
