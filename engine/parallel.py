"""Deterministic parallel force evaluation for large models (issue #9 §2), and the
thread count.

Used by ``engine.forcefield.compute_forces_ws`` for models of at least
``PARALLEL_MIN_BODIES`` bodies whose terms are among binder bonds, penalty contacts
(with or without friction springs and damping), penalty walls and uniform gravity (the
pile); everything else, and every smaller model, keeps the serial kernels, bit for bit.
(``prange`` has a fixed cost of some µs per loop: at 80 bodies it is ~50x slower than
the serial loop.)

**The same bits for any thread count.**  No floating-point atomics and no reduction
whose order depends on the threads: one ``prange`` loop runs over *fixed* chunks of
``CHUNK`` bodies (set by the model size only); a chunk writes the forces and moments of
its own bodies only, and its partial energies, which are summed serially in chunk order.

**Owner computes.**  Each chunk, in one pass and in a fixed order:

1. the bonds with an end among its bodies, by the binder's vectorised block kernel
   (``engine.potentials.binder``, with the Hertz contact of the bonded spheres, which
   the neighbour list leaves out), adding to its own ends: first those whose first end
   is in the chunk (a run of the bond array, which the models sort by first end; for
   unsorted bonds, a list), then the few whose second end only is (a list per chunk, in
   bond order, built once per scratch); a bond's energy is counted by the chunk of its
   first end;
2. for each of its bodies ``i``: the contacts of the neighbour list whose lower index is
   ``i`` (the list is sorted by it, so a chunk's pairs are one contiguous run), adding to
   ``i`` and, when it is in the chunk too, to the partner; then the walls and gravity;
3. the contacts whose higher index is in the chunk and lower index is not (a list per
   chunk, in pair order, rebuilt serially with the neighbour list), added to the partner
   in the chunk.  Such a contact is evaluated once by each of its two chunks, with the
   same arguments in the same order, so both get the same bits; its energy, its trial
   friction spring and its dissipated work are taken by the lower index's chunk alone.

Every bond and contact is therefore evaluated once, as in the serial kernels, except
those across a chunk boundary (a few per chunk of 1024 bodies for rings of 20), and no
per-bond or per-pair result goes through memory.  The forces equal the serial kernels'
to round-off (the sums are in another order), not bit for bit; hence the threshold
rather than a switch at every size.

Scratch (in ``ws[2]`` of ``engine.forcefield.new_scratch``; ``n``: bodies, ``nb``:
bonds, ``cap``: the neighbour list's capacity in pairs): per chunk the start of its run
of pairs, of its run of own bonds and of its lists of bonds (``≤ 2 nb`` ``int32``) and
of cross-chunk contacts (``≤ cap`` ``int32``), one binder block, its partial energies.
Below the threshold it is a few empty arrays.

Hot path as in ``engine.forcefield``: ``_nrt=False``, no allocation, status codes.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from .layout import (
    E_AXIAL,
    E_BENDING,
    E_CONTACT,
    E_DISSIPATED,
    E_GRAVITY,
    E_SHEAR,
    E_WALL,
    ERR_HISTORY_OVERFLOW,
    NL_COUNT,
    NL_REBUILDS,
    OK,
    P_DAMPING,
    P_G,
    P_G_DIR,
    P_K_AXIAL,
    P_K_BEND,
    P_K_CONTACT,
    P_K_SHEAR,
    P_K_TANGENT,
    P_K_WALL,
    P_MU,
    P_SKIN,
    T_BONDS,
    T_CONTACT,
    T_DUMBBELLS,
    T_GRAVITY_FIELD,
    T_HISTORY,
    T_PIVOT_GRAVITY,
    T_WALL,
)
from .neighbours import binder_adds_contact, ensure_neighbours_ws, excluded_partners
from .potentials.binder import (
    _EA,
    _EC,
    _ES,
    BLOCK,
    SCRATCH_SIZE,
    _evaluate_block,
    add_to_first_end,
    add_to_second_end,
    bend_of,
    bond_run,
    bond_theta,
    coefficients_fit,
    gather_bond,
    gather_coefficients,
)
from .potentials.contact import wall_contacts_range
from .potentials.friction import (
    H_DISSIPATED,
    add_hit,
    close_trial,
    sphere_pair,
    sphere_wall,
    store_trial,
)
from .potentials.gravity import gravity_sum
from .specialize import PARALLEL_MIN_BODIES, binder_k, gated, unless

PARALLEL_MIN_UPDATE = 32768
"""Models with at least this many bodies also update their bodies (velocity-Verlet
schemes) and sum their kinetic energy chunk by chunk in parallel.  (Below it, waking the
sleeping threads for these short loops costs more than they take: measured at 10⁴.)"""
CHUNK = 1024
"""Bodies per task of the parallel body loop (fixed: the results do not depend on the
thread count)."""
BOND_CHUNK = 8 * BLOCK
"""Bonds per task of the parallel bond loop (a whole number of binder blocks)."""
NOT_PARALLEL = -1
"""Returned by :func:`parallel_forces_ws` when the model is not for the parallel path
(the caller runs the serial kernels)."""

# the header ws[2][0]
_H_CSR_VALID = 0  # the pair runs and cross lists are those of the list ...
_H_CSR_STAMP = 1  # ... of this rebuild count
_H_BONDS_VALID = 2  # the bond lists are built

# the partial energies of a chunk, ws[2][7][c]
_EP_CONTACT = 0
_EP_WALL = 1
_EP_GRAVITY = 2  # Σ m (ê·x)
_EP_DISSIPATED = 3  # work removed by damping and slip
_EP_OVERFLOW = 4  # 1: a sphere ran out of history slots
_EP_BEND = 5
_EP_AXIAL = 6
_EP_SHEAR = 7
_N_EP = 8


# --------------------------------------------------------------------------- threads
def max_threads() -> int:
    """The most threads Numba can use in this process (``NUMBA_NUM_THREADS``)."""
    from numba.core import config

    return int(config.NUMBA_NUM_THREADS)


def set_threads(n: int) -> int:
    """Use ``n`` threads in the parallel kernels (``1 ≤ n ≤ NUMBA_NUM_THREADS``, by
    default the number of cores); returns ``n``.  The results do not depend on it."""
    import numba

    top = max_threads()
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= top:
        raise ValueError(f"threads must be an integer from 1 to {top} "
                         f"(NUMBA_NUM_THREADS), got {n!r}")
    numba.set_num_threads(int(n))
    return int(n)


def get_threads() -> int:
    """The number of threads the parallel kernels use now."""
    import numba

    return int(numba.get_num_threads())




# --------------------------------------------------------------------------- scratch
@njit(nogil=True, cache=True)
def new_parallel_scratch(n, nb, cap):
    """The scratch of :func:`parallel_forces_ws` for ``n`` bodies, ``nb`` bonds and a
    neighbour list of ``cap`` pairs (empty below ``PARALLEL_MIN_BODIES``)."""
    if n < PARALLEL_MIN_BODIES:
        n = 0
        nb = 0
        cap = 0
        nc = -1
    else:
        nc = (n + CHUNK - 1) // CHUNK
    return (np.zeros(4, dtype=np.int64),  # header
            np.zeros(nc + 1, dtype=np.int64),  # per chunk: its first pair (run by i)
            np.zeros(cap, dtype=np.int32),  # cross-chunk pairs by the chunk of j
            np.zeros(nc + 1, dtype=np.int64),  # ... their start per chunk
            np.zeros(nc + 1, dtype=np.int64),  # per chunk: the start of its bonds ...
            np.zeros(2 * nb, dtype=np.int32),  # ... in bond order
            np.zeros(max(nc, 0) * SCRATCH_SIZE),  # one binder block per chunk
            np.zeros((max(nc, 0), _N_EP)),  # per chunk: partial energies, overflow
            np.zeros((max(nc, 0), 2)),  # ... and kinetic energies (engine.integrators)
            np.zeros(nc + 1, dtype=np.int64))  # per chunk: its run of own bonds


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def _pair_runs(n, pairs, count, pptr, xin, xptr):
    """The run of pairs of each chunk (``pairs[pptr[c]:pptr[c + 1]]``: lower index in
    chunk ``c``) and, in ``xin[xptr[c]:xptr[c + 1]]``, the pairs whose higher index is
    in chunk ``c`` and lower index is not, in pair order.  ``False`` unless the pairs
    are ``i < j`` sorted by ``i`` (as ``engine.neighbours`` builds them)."""
    nc = pptr.shape[0] - 1
    for c in range(nc + 1):
        xptr[c] = 0
    c = 0
    last = -1
    for p in range(count):
        i = pairs[p, 0]
        j = pairs[p, 1]
        if not (last <= i < j < n):
            return False
        last = i
        ci = i // CHUNK
        while c <= ci:
            pptr[c] = p
            c += 1
        cj = j // CHUNK
        if cj != ci:
            xptr[cj + 1] += 1
    while c <= nc:
        pptr[c] = count
        c += 1
    for c in range(nc):
        xptr[c + 1] += xptr[c]
    for p in range(count):  # xptr[c]: the next free place of chunk c ...
        cj = pairs[p, 1] // CHUNK
        if cj != pairs[p, 0] // CHUNK:
            xin[xptr[cj]] = p
            xptr[cj] += 1
    for c in range(nc, 0, -1):  # ... back to the starts
        xptr[c] = xptr[c - 1]
    xptr[0] = 0
    return True


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def _bond_lists(bonds, bown, bcptr, cbonds):
    """The bonds of each chunk ``c``.  When the bonds are sorted by their first end (as
    every model builds them), its *own* bonds (first end in the chunk) are the run
    ``bown[c]:bown[c + 1]`` of the bond array, and ``cbonds[bcptr[c]:bcptr[c + 1]]``
    lists, in bond order, the others with their second end in it; otherwise the runs
    are empty and that list holds every bond with an end in the chunk."""
    nc = bcptr.shape[0] - 1
    nb = bonds.shape[0]
    by_first = True
    for b in range(1, nb):
        by_first &= bonds[b - 1, 0] <= bonds[b, 0]
    c = 0
    for b in range(nb):
        ci = bonds[b, 0] // CHUNK if by_first else nc
        while c <= ci:
            bown[c] = b
            c += 1
    while c <= nc:
        bown[c] = nb if by_first else 0
        c += 1
    for c in range(nc + 1):
        bcptr[c] = 0
    for b in range(nb):
        ci = bonds[b, 0] // CHUNK
        cj = bonds[b, 1] // CHUNK
        if not by_first:
            bcptr[ci + 1] += 1
        if cj != ci:
            bcptr[cj + 1] += 1
    for c in range(nc):
        bcptr[c + 1] += bcptr[c]
    for b in range(nb):
        ci = bonds[b, 0] // CHUNK
        cj = bonds[b, 1] // CHUNK
        if not by_first:
            cbonds[bcptr[ci]] = b
            bcptr[ci] += 1
        if cj != ci:
            cbonds[bcptr[cj]] = b
            bcptr[cj] += 1
    for c in range(nc, 0, -1):
        bcptr[c] = bcptr[c - 1]
    bcptr[0] = 0


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def parallel_applies(ff, n, ws):
    """Whether the parallel path applies: a large model, only the terms it has, and a
    scratch of the right size."""
    flags = ff[3]
    par = ws[2]
    nc = (n + CHUNK - 1) // CHUNK
    return (n >= PARALLEL_MIN_BODIES and par[1].shape[0] == nc + 1
            and par[6].shape[0] == nc * SCRATCH_SIZE and par[7].shape[0] == nc
            and not flags[T_PIVOT_GRAVITY] and not flags[T_DUMBBELLS]
            and par[5].shape[0] >= 2 * ff[5].shape[0])


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def parallel_forces_ws(x, q, ff, F, RM, energy, ws):
    """``compute_forces_ws`` by the parallel kernels (see the module docstring), or
    ``NOT_PARALLEL`` (nothing done beyond the neighbour list) when they do not apply."""
    n = x.shape[0]
    if not (x.shape[1] == 3 and q.shape[1] == 4 and F.shape[1] == 3 and RM.shape[1] == 3
            and F.shape[0] == n and RM.shape[0] == n and parallel_applies(ff, n, ws)):
        return NOT_PARALLEL
    m, J, D, flags, fp, bonds, bond_ref, nl_pairs, nl_state, nl_xref = ff[:10]
    if not (nl_pairs.shape[1] == 2 and ff[12].shape[1] == 4 and bonds.shape[1] == 2
            and bond_ref.shape[1] == 4):
        return NOT_PARALLEL  # (the serial kernels report the shape error)
    par = ws[2]
    hdr = par[0]
    n_pairs = 0
    if flags[T_CONTACT]:
        stamp = nl_state[NL_REBUILDS]
        bptr, bpart = excluded_partners(ff)
        st = ensure_neighbours_ws(x, D, fp[P_SKIN], nl_pairs, nl_state, nl_xref, ws[1], bptr,
                                  bpart)
        if st != OK:
            return st
        n_pairs = nl_state[NL_COUNT]
        if n_pairs > par[2].shape[0]:
            return NOT_PARALLEL  # (a grown list in a scratch sized for the old one)
        if (hdr[_H_CSR_VALID] == 0 or hdr[_H_CSR_STAMP] != nl_state[NL_REBUILDS]
                or stamp != nl_state[NL_REBUILDS]):
            hdr[_H_CSR_VALID] = 0
            if not _pair_runs(n, nl_pairs, n_pairs, par[1], par[2], par[3]):
                return NOT_PARALLEL
            hdr[_H_CSR_STAMP] = nl_state[NL_REBUILDS]
            hdr[_H_CSR_VALID] = 1
    nb = 0
    if flags[T_BONDS]:
        nb = bonds.shape[0]
        if bond_ref.shape[0] < nb or not coefficients_fit(binder_k(ff, fp[P_K_BEND]), nb):
            return NOT_PARALLEL
        if hdr[_H_BONDS_VALID] == 0:
            _bond_lists(bonds, par[9], par[4], par[5])
            hdr[_H_BONDS_VALID] = 1
    g = fp[P_G] if flags[T_GRAVITY_FIELD] else 0.0
    nw = ff[12].shape[0] if flags[T_WALL] else 0
    hist = ff[13]
    hist_on = flags[T_HISTORY] != 0
    if hist_on and not (hist[4].shape[0] == n and hist[4].shape[1] == 3
                        and hist[5].shape[1] == 4 and hist[6].shape[0] == n):
        return NOT_PARALLEL  # (the serial kernel reports the shape error)
    kcb = fp[P_K_CONTACT] if binder_adds_contact(ff) else 0.0  # bonded spheres' contact
    kbend = binder_k(ff, fp[P_K_BEND])  # (or the bonds' own: issue #35 item 1)
    args = (x, q, m, D, nb, bonds, bond_ref, kbend, fp[P_K_AXIAL], fp[P_K_SHEAR], kcb,
            par[9], par[4], par[5], par[6], n_pairs, nl_pairs, par[1], par[2], par[3],
            fp[P_K_CONTACT], ff[12], nw, fp[P_K_WALL], g, fp[P_G_DIR], fp[P_G_DIR + 1],
            fp[P_G_DIR + 2], fp[P_K_TANGENT], fp[P_MU], fp[P_DAMPING], hist, F, RM, par[7])
    if hist_on:  # (each compiled for the models that can take it: engine.specialize)
        gated(ff, T_HISTORY, None, _pass_with_history, args)
    else:
        unless(ff, T_HISTORY, None, _pass_without_history, args)
    for k in range(2, E_DISSIPATED):  # as the serial kernel
        energy[k] = 0.0
    ep = par[7]
    e_c = e_w = e_g = e_d = e_o = e_b = e_a = e_s = 0.0
    for c in range(ep.shape[0]):  # chunk order
        e_c += ep[c, _EP_CONTACT]
        e_w += ep[c, _EP_WALL]
        e_g += ep[c, _EP_GRAVITY]
        e_d += ep[c, _EP_DISSIPATED]
        e_o += ep[c, _EP_OVERFLOW]
        e_b += ep[c, _EP_BEND]
        e_a += ep[c, _EP_AXIAL]
        e_s += ep[c, _EP_SHEAR]
    if nb > 0:
        energy[E_BENDING] += e_b
        energy[E_AXIAL] += e_a
        energy[E_SHEAR] += e_s
    if flags[T_CONTACT]:
        energy[E_CONTACT] += e_c
    if flags[T_WALL]:
        energy[E_WALL] += e_w
    if flags[T_GRAVITY_FIELD]:
        energy[E_GRAVITY] -= g * e_g
    if hist_on:
        hist[0][H_DISSIPATED] = e_d
        if e_o > 0.0:
            return ERR_HISTORY_OVERFLOW
    return OK


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _pass_with_history(args):
    """:func:`_chunk_pass_history` on the argument tuple of :func:`parallel_forces_ws`."""
    _chunk_pass_history(*args)


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _pass_without_history(args):
    """:func:`_chunk_pass_hertz` on the argument tuple of :func:`parallel_forces_ws`."""
    _chunk_pass_hertz(*args)


# Each chunk's work is split into functions that are *not* inlined: compiled as one
# loop body, the friction branch's code made the frictionless contacts 1.6x slower
# (register pressure), so the two contact laws get their own ``prange`` loop.
@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def _bonds_of_chunk(i0, i1, x, q, D, bonds, bond_ref, k_bend, k_axial, k_shear, k_contact, lo,
                    hi, cbonds, w, F, RM):
    """The bonds ``cbonds[lo:hi]`` (an end in bodies ``i0 ≤ · < i1``), block by block,
    added to their ends in the chunk; returns the bending, axial, shear and contact
    energies of those whose first end is in the chunk.  (``bond_run`` with an index list: one loop
    for both, choosing the index per bond, made the chunks' own bonds 5–8 % slower.)"""
    e_bend = 0.0
    e_axial = 0.0
    e_shear = 0.0
    e_contact = 0.0
    if not (x.shape[1] == 3 and q.shape[1] == 4 and F.shape[1] == 3 and RM.shape[1] == 3
            and bonds.shape[1] == 2 and bond_ref.shape[1] == 4):
        return e_bend, e_axial, e_shear, e_contact  # (as above)
    for start in range(lo, hi, BLOCK):
        count = min(BLOCK, hi - start)
        for b in range(count):
            bb = cbonds[start + b]
            gather_bond(w, b, x, q, D, bond_ref, bonds[bb, 0], bonds[bb, 1], bb)
            gather_coefficients(w, b, k_bend, bb)
        _evaluate_block(w, count, k_bend, k_axial, k_shear, k_contact)
        for b in range(count):
            bb = cbonds[start + b]
            i = bonds[bb, 0]
            j = bonds[bb, 1]
            t0, t1, t2 = bond_theta(w, b)
            kb = bend_of(w, b, k_bend)
            if i0 <= i < i1:
                add_to_first_end(w, b, t0, t1, t2, kb, F, RM, i)
                e_bend += 0.5 * kb * (t0 * t0 + t1 * t1 + t2 * t2)
                e_axial += w[_EA + b]
                e_shear += w[_ES + b]
                e_contact += w[_EC + b]
            if i0 <= j < i1:
                add_to_second_end(w, b, t0, t1, t2, kb, F, RM, j)
    return e_bend, e_axial, e_shear, e_contact


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _hertz(xi0, xi1, xi2, xj0, xj1, xj2, di, dj, k_contact):
    """The frictionless Hertz contact of ``i < j`` (``engine.potentials.contact``):
    ``(hit, f, d₀, d₁, d₂, e)``, the force on ``i`` being ``f d``."""
    d0 = xi0 - xj0
    d1 = xi1 - xj1
    d2 = xi2 - xj2
    rr = d0 * d0 + d1 * d1 + d2 * d2
    sigma = 0.5 * (di + dj)
    if rr >= sigma * sigma:
        return False, 0.0, d0, d1, d2, 0.0
    r = math.sqrt(rr)
    delta = 1.0 - r / sigma
    sq = math.sqrt(delta)
    e = 0.4 * k_contact * delta * delta * sq
    f = (k_contact / sigma) * delta * sq / r if r > 0.0 else 0.0
    return True, f, d0, d1, d2, e


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def _hertz_of_chunk(i0, i1, x, m, D, pairs, p0, p1, xin, a0, a1, k_contact, walls, nw,
                    k_wall, g, g0, g1, g2, F):
    """Bodies ``i0 ≤ i < i1``, frictionless: the Hertz contacts of the pairs
    ``p0 ≤ · < p1`` (lower index in the chunk), the walls, gravity, then the contacts
    ``xin[a0:a1]`` (higher index in the chunk, lower index not); returns the contact,
    wall and ``Σ m (ê·x)`` sums of the chunk.  Each term is its own loop over the
    chunk (walls and gravity vectorise; measured: 1.8x faster than one loop per body)."""
    e_contact = 0.0
    e_wall = 0.0
    e_g = 0.0
    if not (x.shape[1] == 3 and F.shape[1] == 3 and pairs.shape[1] == 2
            and walls.shape[1] == 4):
        return e_contact, e_wall, e_g  # (parallel_forces_ws checked)
    for p in range(p0, p1):
        i = pairs[p, 0]
        j = pairs[p, 1]
        hit, f, d0, d1, d2, e = _hertz(x[i, 0], x[i, 1], x[i, 2], x[j, 0], x[j, 1], x[j, 2],
                                       D[i], D[j], k_contact)
        if not hit:
            continue
        e_contact += e
        F[i, 0] += f * d0
        F[i, 1] += f * d1
        F[i, 2] += f * d2
        if j < i1:
            F[j, 0] -= f * d0
            F[j, 1] -= f * d1
            F[j, 2] -= f * d2
    # (on views of the chunk, looped from 0: with a start index the loops do not vectorise)
    xc = x[i0:i1]
    Fc = F[i0:i1]
    e_wall = wall_contacts_range(xc, D[i0:i1], walls, nw, k_wall, Fc, 0, i1 - i0)
    if g != 0.0:
        e_g = gravity_sum(xc, m[i0:i1], g, g0, g1, g2, Fc)
    for a in range(a0, a1):
        pp = xin[a]
        i = pairs[pp, 0]
        j = pairs[pp, 1]
        hit, f, d0, d1, d2, e = _hertz(x[i, 0], x[i, 1], x[i, 2], x[j, 0], x[j, 1], x[j, 2],
                                       D[i], D[j], k_contact)
        if hit:
            F[j, 0] -= f * d0
            F[j, 1] -= f * d1
            F[j, 2] -= f * d2
    return e_contact, e_wall, e_g


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def _history_of_chunk(i0, i1, x, q, m, D, pairs, p, p_end, xin, a0, a1, k_contact, walls, nw,
                      k_wall, g, g0, g1, g2, k_t, mu, zeta, hist, F, RM):
    """:func:`_hertz_of_chunk` with friction springs and damping
    (``engine.potentials.friction``): each sphere's trial springs are stored in its
    slots in the order of its contacts, then its walls.  Returns the contact, wall and
    gravity sums, the work removed and ``1.0`` if a sphere ran out of slots."""
    n = x.shape[0]
    track = (mu > 0.0 and k_t > 0.0) or zeta > 0.0
    e_contact = 0.0
    e_wall = 0.0
    e_g = 0.0
    diss = 0.0
    over = 0.0
    if not (x.shape[1] == 3 and q.shape[1] == 4 and F.shape[1] == 3 and RM.shape[1] == 3
            and pairs.shape[1] == 2 and walls.shape[1] == 4):
        return e_contact, e_wall, e_g, diss, over  # (parallel_forces_ws checked)
    for i in range(i0, i1):
        hist[6][i] = 0  # the trial slots of i are filled below
        while p < p_end and pairs[p, 0] == i:
            j = pairs[p, 1]
            p += 1
            (hit, h0, h1, h2, ti0, ti1, ti2, tj0, tj1, tj2, e, dd, t0, t1, t2,
             gd) = sphere_pair(i, j, x, q, D, m, k_contact, k_t, mu, zeta, hist)
            if not hit:
                continue
            add_hit(F, RM, i, h0, h1, h2, ti0, ti1, ti2)
            if j < i1:
                add_hit(F, RM, j, -h0, -h1, -h2, tj0, tj1, tj2)
            e_contact += e
            diss += dd
            if track and not store_trial(hist, i, j, t0, t1, t2, gd):
                over = 1.0
        # (friction.history_contacts' wall step, body by body here: not merged, the
        # order of these sums fixes the bits for any thread count, tests/test_bits.py)
        for w in range(nw):
            (hit, h0, h1, h2, ti0, ti1, ti2, e, dd, t0, t1, t2,
             gd) = sphere_wall(i, w, x, q, D, m, walls, k_wall, k_t, mu, zeta, hist)
            if not hit:
                continue
            add_hit(F, RM, i, h0, h1, h2, ti0, ti1, ti2)
            e_wall += e
            diss += dd
            if track and not store_trial(hist, i, n + w, t0, t1, t2, gd):
                over = 1.0
        if track:
            diss += close_trial(hist, i, k_t)
    if g != 0.0:  # (no later term of the loop above adds to a body already passed)
        e_g = gravity_sum(x[i0:i1], m[i0:i1], g, g0, g1, g2, F[i0:i1])
    for a in range(a0, a1):
        pp = xin[a]
        i = pairs[pp, 0]
        j = pairs[pp, 1]
        (hit, h0, h1, h2, ti0, ti1, ti2, tj0, tj1, tj2, e, dd, t0, t1, t2,
         gd) = sphere_pair(i, j, x, q, D, m, k_contact, k_t, mu, zeta, hist)
        if hit:
            add_hit(F, RM, j, -h0, -h1, -h2, tj0, tj1, tj2)
    return e_contact, e_wall, e_g, diss, over


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _start_chunk(c, n, nb, x, q, D, bonds, bond_ref, k_bend, k_axial, k_shear, k_contact, bown,
                 bcptr, cbonds, bwork, F, RM, ep):
    """Zero the forces and moments of chunk ``c``'s bodies, add its bonds (its own run,
    then its list: :func:`_bond_lists`), store their binder energies in ``ep[c]``;
    returns the chunk's bodies ``(i0, i1)`` and the contact energy of its bonds."""
    i0 = c * CHUNK
    i1 = min(n, i0 + CHUNK)
    Fc = F[i0:i1]
    RMc = RM[i0:i1]
    for i in range(i1 - i0):
        for k in range(3):
            Fc[i, k] = 0.0
            RMc[i, k] = 0.0
    e_bend = e_axial = e_shear = e_contact = 0.0
    if nb > 0:
        w = bwork[c * SCRATCH_SIZE:(c + 1) * SCRATCH_SIZE]
        e_bend, e_axial, e_shear, e_contact = bond_run(  # (no indirection: 0.0266 ->
            i0, i1, x, q, D, bonds, bond_ref, k_bend, k_axial, k_shear,  # 0.023 µs a
            k_contact, bown[c], bown[c + 1], w, F, RM)  # sphere at 10⁶)
        if bcptr[c + 1] > bcptr[c]:
            b2, a2, s2, c2 = _bonds_of_chunk(i0, i1, x, q, D, bonds, bond_ref, k_bend,
                                             k_axial, k_shear, k_contact, bcptr[c],
                                             bcptr[c + 1], cbonds, w, F, RM)
            e_bend += b2
            e_axial += a2
            e_shear += s2
            e_contact += c2
    ep[c, _EP_BEND] = e_bend
    ep[c, _EP_AXIAL] = e_axial
    ep[c, _EP_SHEAR] = e_shear
    return i0, i1, e_contact


@njit(nogil=True, cache=True, parallel=True, error_model="numpy", _nrt=False)
def _chunk_pass_hertz(x, q, m, D, nb, bonds, bond_ref, k_bend, k_axial, k_shear, kcb, bown,
                      bcptr, cbonds, bwork, n_pairs, pairs, pptr, xin, xptr, k_contact, walls,
                      nw, k_wall, g, g0, g1, g2, k_t, mu, zeta, hist, F, RM, ep):
    """Every chunk of bodies (``prange``), owner computes (the module docstring), the
    frictionless contacts: ``F``, ``RM`` of its bodies; ``ep[c]``: its partial
    energies."""
    n = x.shape[0]
    for c in prange((n + CHUNK - 1) // CHUNK):
        i0, i1, e_bonded = _start_chunk(c, n, nb, x, q, D, bonds, bond_ref, k_bend, k_axial,
                                        k_shear, kcb, bown, bcptr, cbonds, bwork, F, RM, ep)
        p = p_end = a0 = a1 = 0
        if n_pairs > 0:
            p, p_end, a0, a1 = pptr[c], pptr[c + 1], xptr[c], xptr[c + 1]
        e_contact, e_wall, e_g = _hertz_of_chunk(i0, i1, x, m, D, pairs, p, p_end, xin, a0,
                                                 a1, k_contact, walls, nw, k_wall, g, g0,
                                                 g1, g2, F)
        ep[c, _EP_CONTACT] = e_bonded + e_contact
        ep[c, _EP_WALL] = e_wall
        ep[c, _EP_GRAVITY] = e_g
        ep[c, _EP_DISSIPATED] = 0.0
        ep[c, _EP_OVERFLOW] = 0.0


@njit(nogil=True, cache=True, parallel=True, error_model="numpy", _nrt=False)
def _chunk_pass_history(x, q, m, D, nb, bonds, bond_ref, k_bend, k_axial, k_shear, kcb, bown,
                        bcptr, cbonds, bwork, n_pairs, pairs, pptr, xin, xptr, k_contact,
                        walls, nw, k_wall, g, g0, g1, g2, k_t, mu, zeta, hist, F, RM, ep):
    """:func:`_chunk_pass_hertz` with friction springs and damping; ``ep[c]`` also
    holds the work they removed and whether a sphere ran out of history slots."""
    n = x.shape[0]
    for c in prange((n + CHUNK - 1) // CHUNK):
        i0, i1, e_bonded = _start_chunk(c, n, nb, x, q, D, bonds, bond_ref, k_bend, k_axial,
                                        k_shear, kcb, bown, bcptr, cbonds, bwork, F, RM, ep)
        p = p_end = a0 = a1 = 0
        if n_pairs > 0:
            p, p_end, a0, a1 = pptr[c], pptr[c + 1], xptr[c], xptr[c + 1]
        e_contact, e_wall, e_g, diss, over = _history_of_chunk(
            i0, i1, x, q, m, D, pairs, p, p_end, xin, a0, a1, k_contact, walls, nw, k_wall, g,
            g0, g1, g2, k_t, mu, zeta, hist, F, RM)
        ep[c, _EP_CONTACT] = e_bonded + e_contact
        ep[c, _EP_WALL] = e_wall
        ep[c, _EP_GRAVITY] = e_g
        ep[c, _EP_DISSIPATED] = diss
        ep[c, _EP_OVERFLOW] = over
