"""Deterministic parallel force evaluation for large models (issue #9 §2), and the
thread count.

Used by ``engine.forcefield.compute_forces_ws`` for models of at least
``PARALLEL_MIN_BODIES`` bodies whose terms are among binder bonds, penalty contacts,
penalty walls and uniform gravity (the pile); everything else, and every smaller model,
keeps the serial kernels, bit for bit.  (``prange`` has a fixed cost of some µs per
loop: at 80 bodies it is ~50x slower than the serial loop.)

**The same bits for any thread count.**  No floating-point atomics and no reduction
whose order depends on the threads: every ``prange`` loop runs over *fixed* chunks (of
``CHUNK`` bodies or ``BOND_CHUNK`` bonds, set by the model size only), each chunk writes
only its own outputs, and the partial energies of the chunks are summed serially in
chunk order.

1. bonds (``prange`` over bond chunks): each bond is evaluated once, by the binder's
   vectorised block kernel (``engine.potentials.binder``), into ``bond_out`` ``(nb, 12)``:
   its force on the first end, the moments on both ends, its three energies;
2. bodies (``prange`` over body chunks): each body *gathers* — sums in a fixed order —
   the forces and moments of its own bonds (through the per-body bond adjacency, built
   once per scratch), then its contacts (through a per-body CSR adjacency of the
   neighbour list, both directions, in pair-list order, rebuilt serially whenever the
   list is), then the walls and gravity.  A contact is evaluated from both sides
   (``x_j - x_i = -(x_i - x_j)`` exactly, so the two forces are exact opposites); its
   energy is counted by the lower index.

The forces equal the serial kernels' to round-off (the sums are in another order), not
bit for bit; hence the threshold rather than a switch at every size.

Scratch (in ``ws[2]`` of ``engine.forcefield.new_scratch``; ``n``: bodies, ``nb``:
bonds, ``cap``: the neighbour list's capacity in pairs): the adjacencies ``int32``
(``2 cap + 2 nb``) and their offsets, ``bond_out`` (12 doubles per bond), one binder
block per bond chunk, the chunk energies.  Below the threshold it is a few empty arrays.

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
from .neighbours import ensure_neighbours_ws
from .potentials.binder import (
    _D,
    _EA,
    _ES,
    _F,
    _MI,
    _MJ,
    _QI,
    _QJ,
    _REF,
    _TH,
    BLOCK,
    SCRATCH_SIZE,
    _evaluate_block,
    _rotvec_wide_t,
)
from .potentials.friction import (
    H_DISSIPATED,
    close_trial,
    sphere_pair,
    sphere_wall,
    store_trial,
)
from .rotations import quat_mul_t

PARALLEL_MIN_BODIES = 4096
"""Models with at least this many bodies use the parallel force kernels."""
CHUNK = 256
"""Bodies per task of the parallel body loop (fixed: the results do not depend on the
thread count)."""
BOND_CHUNK = 8 * BLOCK
"""Bonds per task of the parallel bond loop (a whole number of binder blocks)."""
NOT_PARALLEL = -1
"""Returned by :func:`parallel_forces_ws` when the model is not for the parallel path
(the caller runs the serial kernels)."""

# the header ws[2][0]
_H_CSR_VALID = 0  # the contact adjacency is that of the list ...
_H_CSR_STAMP = 1  # ... of this rebuild count
_H_BONDS_VALID = 2  # the bond adjacency is built


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
        n = -1
        nb = 0
        cap = 0
    nbc = (nb + BOND_CHUNK - 1) // BOND_CHUNK
    nc = (max(n, 0) + CHUNK - 1) // CHUNK
    hdr = np.zeros(4, dtype=np.int64)
    return (hdr,
            np.zeros(n + 1, dtype=np.int64),  # contact adjacency: offsets
            np.zeros(2 * cap, dtype=np.int32),  # ... partners
            np.zeros(n + 1, dtype=np.int64),  # bond adjacency: offsets
            np.zeros(2 * nb, dtype=np.int32),  # ... 2 b (first end) or 2 b + 1 (second)
            np.zeros((nb, 12)),  # per bond: F on i, RM on i, RM on j, 3 energies
            np.zeros(nbc * SCRATCH_SIZE),  # one binder block per bond chunk
            np.zeros((nbc, 3)),  # bond energies per bond chunk
            np.zeros((nc, 5)))  # per body chunk: contact, wall, gravity energies, work
    #                               removed by damping and slip, history overflow


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def _build_adjacency(n, pairs, count, ptr, adj, code):
    """CSR adjacency of the pairs ``pairs[:count]`` (both directions, in pair order):
    the partners of ``i`` are ``adj[ptr[i]:ptr[i + 1]]``; ``code``: store the partner
    (0) or ``2 p`` / ``2 p + 1`` for the first / second end of pair ``p`` (1)."""
    for i in range(n + 1):
        ptr[i] = 0
    for p in range(count):
        ptr[pairs[p, 0] + 1] += 1
        ptr[pairs[p, 1] + 1] += 1
    for i in range(n):
        ptr[i + 1] += ptr[i]
    for p in range(count):  # ptr[i]: the next free slot of i
        i = pairs[p, 0]
        j = pairs[p, 1]
        if code == 0:
            adj[ptr[i]] = j
            adj[ptr[j]] = i
        else:
            adj[ptr[i]] = 2 * p
            adj[ptr[j]] = 2 * p + 1
        ptr[i] += 1
        ptr[j] += 1
    for i in range(n, 0, -1):  # back to the starts
        ptr[i] = ptr[i - 1]
    ptr[0] = 0


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def parallel_applies(ff, n, ws):
    """Whether the parallel path applies: a large model, only the terms it has, and a
    scratch of the right size."""
    flags = ff[3]
    par = ws[2]
    return (n >= PARALLEL_MIN_BODIES and par[1].shape[0] == n + 1
            and not flags[T_PIVOT_GRAVITY] and not flags[T_DUMBBELLS]
            and par[4].shape[0] >= 2 * ff[5].shape[0] and par[5].shape[0] >= ff[5].shape[0])


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def parallel_forces_ws(x, q, ff, F, RM, energy, ws):
    """``compute_forces_ws`` by the parallel kernels (see the module docstring), or
    ``NOT_PARALLEL`` (nothing done beyond the neighbour list) when they do not apply."""
    n = x.shape[0]
    if not (x.shape[1] == 3 and q.shape[1] == 4 and F.shape[1] == 3 and RM.shape[1] == 3
            and F.shape[0] == n and RM.shape[0] == n and parallel_applies(ff, n, ws)):
        return NOT_PARALLEL
    m, J, D, flags, fp, bonds, bond_ref, nl_pairs, nl_state, nl_xref = ff[:10]
    par = ws[2]
    hdr = par[0]
    n_pairs = 0
    if flags[T_CONTACT]:
        stamp = nl_state[NL_REBUILDS]
        st = ensure_neighbours_ws(x, D, fp[P_SKIN], nl_pairs, nl_state, nl_xref, ws[1])
        if st != OK:
            return st
        n_pairs = nl_state[NL_COUNT]
        if 2 * n_pairs > par[2].shape[0]:
            return NOT_PARALLEL  # (a grown list in a scratch sized for the old one)
        if (hdr[_H_CSR_VALID] == 0 or hdr[_H_CSR_STAMP] != nl_state[NL_REBUILDS]
                or stamp != nl_state[NL_REBUILDS]):
            _build_adjacency(n, nl_pairs, n_pairs, par[1], par[2], 0)
            hdr[_H_CSR_STAMP] = nl_state[NL_REBUILDS]
            hdr[_H_CSR_VALID] = 1
    nb = 0
    if flags[T_BONDS]:
        nb = bonds.shape[0]
        if not (bonds.shape[1] == 2 and bond_ref.shape[1] == 4 and bond_ref.shape[0] >= nb):
            return NOT_PARALLEL
        if hdr[_H_BONDS_VALID] == 0:
            _build_adjacency(n, bonds, nb, par[3], par[4], 1)
            hdr[_H_BONDS_VALID] = 1
        _bond_pass(x, q, bonds, bond_ref, fp[P_K_BEND], fp[P_K_AXIAL], fp[P_K_SHEAR],
                   par[5], par[6], par[7])
    g = fp[P_G] if flags[T_GRAVITY_FIELD] else 0.0
    nw = ff[12].shape[0] if flags[T_WALL] else 0
    hist = ff[13]
    hist_on = flags[T_HISTORY] != 0
    if hist_on and not (hist[4].shape[0] == n and hist[4].shape[1] == 3
                        and hist[5].shape[1] == 4 and hist[6].shape[0] == n):
        return NOT_PARALLEL  # (the serial kernel reports the shape error)
    _body_pass(x, q, m, D, nb, par[3], par[4], par[5], n_pairs, par[1], par[2],
               fp[P_K_CONTACT], ff[12], nw, fp[P_K_WALL], g, fp[P_G_DIR], fp[P_G_DIR + 1],
               fp[P_G_DIR + 2], hist_on, fp[P_K_TANGENT], fp[P_MU], fp[P_DAMPING], hist, F,
               RM, par[8])
    for k in range(2, E_DISSIPATED):  # as the serial kernel
        energy[k] = 0.0
    eb = par[7]
    if nb > 0:
        e0 = 0.0
        e1 = 0.0
        e2 = 0.0
        for c in range(eb.shape[0]):  # chunk order
            e0 += eb[c, 0]
            e1 += eb[c, 1]
            e2 += eb[c, 2]
        energy[E_BENDING] += e0
        energy[E_AXIAL] += e1
        energy[E_SHEAR] += e2
    ep = par[8]
    e0 = 0.0
    e1 = 0.0
    e2 = 0.0
    for c in range(ep.shape[0]):
        e0 += ep[c, 0]
        e1 += ep[c, 1]
        e2 += ep[c, 2]
    if flags[T_CONTACT]:
        energy[E_CONTACT] += e0
    if flags[T_WALL]:
        energy[E_WALL] += e1
    if flags[T_GRAVITY_FIELD]:
        energy[E_GRAVITY] -= g * e2
    if hist_on:
        diss = 0.0
        over = 0.0
        for c in range(ep.shape[0]):
            diss += ep[c, 3]
            over += ep[c, 4]
        hist[0][H_DISSIPATED] = diss
        if over > 0.0:
            return ERR_HISTORY_OVERFLOW
    return OK


@njit(nogil=True, cache=True, parallel=True, error_model="numpy", _nrt=False)
def _bond_pass(x, q, bonds, bond_ref, k_bend, k_axial, k_shear, out, wall, eb):
    """Every bond once, chunk by chunk (``prange``): ``out[b]`` = force on its first
    end, moments on both ends, energies (bending, axial, shear); ``eb[c]``: the
    energies of chunk ``c`` summed in bond order."""
    nb = bonds.shape[0]
    nbc = (nb + BOND_CHUNK - 1) // BOND_CHUNK
    for c in prange(nbc):
        w = wall[c * SCRATCH_SIZE:(c + 1) * SCRATCH_SIZE]
        e_bend = 0.0
        e_axial = 0.0
        e_shear = 0.0
        stop = min(nb, (c + 1) * BOND_CHUNK)
        for start in range(c * BOND_CHUNK, stop, BLOCK):
            count = min(BLOCK, stop - start)
            for b in range(count):
                i = bonds[start + b, 0]
                j = bonds[start + b, 1]
                for k in range(4):
                    w[_QI + k * BLOCK + b] = q[i, k]
                    w[_QJ + k * BLOCK + b] = q[j, k]
                    w[_REF + k * BLOCK + b] = bond_ref[start + b, k]
                for k in range(3):
                    w[_D + k * BLOCK + b] = x[i, k] - x[j, k]
            _evaluate_block(w, count, k_bend, k_axial, k_shear)
            for b in range(count):
                t0 = w[_TH + b]
                t1 = w[_TH + BLOCK + b]
                t2 = w[_TH + 2 * BLOCK + b]
                if math.isnan(t0):
                    t0, t1, t2 = _rotvec_wide_t(*quat_mul_t(
                        w[_QI + b], w[_QI + BLOCK + b], w[_QI + 2 * BLOCK + b],
                        w[_QI + 3 * BLOCK + b], w[_QJ + b], -w[_QJ + BLOCK + b],
                        -w[_QJ + 2 * BLOCK + b], -w[_QJ + 3 * BLOCK + b]))
                o = start + b
                out[o, 0] = w[_F + b]
                out[o, 1] = w[_F + BLOCK + b]
                out[o, 2] = w[_F + 2 * BLOCK + b]
                out[o, 3] = w[_MI + b] - k_bend * t0
                out[o, 4] = w[_MI + BLOCK + b] - k_bend * t1
                out[o, 5] = w[_MI + 2 * BLOCK + b] - k_bend * t2
                out[o, 6] = w[_MJ + b] + k_bend * t0
                out[o, 7] = w[_MJ + BLOCK + b] + k_bend * t1
                out[o, 8] = w[_MJ + 2 * BLOCK + b] + k_bend * t2
                e_bend += 0.5 * k_bend * (t0 * t0 + t1 * t1 + t2 * t2)
                e_axial += w[_EA + b]
                e_shear += w[_ES + b]
        eb[c, 0] = e_bend
        eb[c, 1] = e_axial
        eb[c, 2] = e_shear


@njit(nogil=True, cache=True, parallel=True, error_model="numpy", _nrt=False)
def _body_pass(x, q, m, D, nb, bptr, badj, bout, n_pairs, cptr, cadj, k_contact, walls, nw,
               k_wall, g, g0, g1, g2, hist_on, k_t, mu, zeta, hist, F, RM, ep):
    """Every body, chunk by chunk (``prange``): ``F``, ``RM`` gathered from its bonds,
    contacts, the walls and gravity, in that order; ``ep[c]``: the contact (pairs
    counted by their lower index), wall and ``Σ m (ê·x)`` sums of chunk ``c``, and
    with ``hist_on`` (friction springs, damping: ``engine.potentials.friction``) the
    work they removed and whether a sphere ran out of history slots.  With history a
    contact is evaluated by ``sphere_pair`` for the ordered pair ``(min, max)`` from
    either side (the same bits), and its trial spring is stored by the lower index."""
    n = x.shape[0]
    nc = (n + CHUNK - 1) // CHUNK
    track = hist_on and ((mu > 0.0 and k_t > 0.0) or zeta > 0.0)
    for c in prange(nc):
        e_contact = 0.0
        e_wall = 0.0
        e_g = 0.0
        diss = 0.0
        over = 0.0
        for i in range(c * CHUNK, min(n, (c + 1) * CHUNK)):
            f0 = 0.0
            f1 = 0.0
            f2 = 0.0
            r0 = 0.0
            r1 = 0.0
            r2 = 0.0
            if nb > 0:
                for a in range(bptr[i], bptr[i + 1]):
                    code = badj[a]
                    b = code >> 1
                    if code & 1 == 0:
                        f0 += bout[b, 0]
                        f1 += bout[b, 1]
                        f2 += bout[b, 2]
                        r0 += bout[b, 3]
                        r1 += bout[b, 4]
                        r2 += bout[b, 5]
                    else:
                        f0 -= bout[b, 0]
                        f1 -= bout[b, 1]
                        f2 -= bout[b, 2]
                        r0 += bout[b, 6]
                        r1 += bout[b, 7]
                        r2 += bout[b, 8]
            if hist_on:
                hist[6][i] = 0  # the trial slots of i are filled below
                a_end = cptr[i + 1] if n_pairs > 0 else cptr[i]
                for a in range(cptr[i], a_end):
                    j = cadj[a]
                    lo = min(i, j)
                    hi = max(i, j)
                    (hit, h0, h1, h2, ti0, ti1, ti2, tj0, tj1, tj2, e, dd, t0, t1, t2,
                     gd) = sphere_pair(lo, hi, x, q, D, m, k_contact, k_t, mu, zeta, hist)
                    if not hit:
                        continue
                    if i == lo:
                        f0 += h0
                        f1 += h1
                        f2 += h2
                        r0 += ti0
                        r1 += ti1
                        r2 += ti2
                        e_contact += e
                        diss += dd
                        if track and not store_trial(hist, i, hi, t0, t1, t2, gd):
                            over = 1.0
                    else:
                        f0 -= h0
                        f1 -= h1
                        f2 -= h2
                        r0 += tj0
                        r1 += tj1
                        r2 += tj2
                for w in range(nw):
                    (hit, h0, h1, h2, ti0, ti1, ti2, e, dd, t0, t1, t2,
                     gd) = sphere_wall(i, w, x, q, D, m, walls, k_wall, k_t, mu, zeta, hist)
                    if not hit:
                        continue
                    f0 += h0
                    f1 += h1
                    f2 += h2
                    r0 += ti0
                    r1 += ti1
                    r2 += ti2
                    e_wall += e
                    diss += dd
                    if track and not store_trial(hist, i, n + w, t0, t1, t2, gd):
                        over = 1.0
                if track:
                    diss += close_trial(hist, i, k_t)
            else:
                if n_pairs > 0:
                    xi0 = x[i, 0]
                    xi1 = x[i, 1]
                    xi2 = x[i, 2]
                    di = D[i]
                    for a in range(cptr[i], cptr[i + 1]):
                        j = cadj[a]
                        d0 = xi0 - x[j, 0]
                        d1 = xi1 - x[j, 1]
                        d2 = xi2 - x[j, 2]
                        rr = d0 * d0 + d1 * d1 + d2 * d2
                        sigma = 0.5 * (di + D[j])  # (the same bits from either side)
                        if rr >= sigma * sigma:
                            continue
                        r = math.sqrt(rr)
                        delta = 1.0 - r / sigma
                        sq = math.sqrt(delta)
                        if i < j:
                            e_contact += 0.4 * k_contact * delta * delta * sq
                        if r > 0.0:
                            f = (k_contact / sigma) * delta * sq / r
                            f0 += f * d0
                            f1 += f * d1
                            f2 += f * d2
                if nw > 0:
                    rad = 0.5 * D[i]
                    for w in range(nw):
                        n0 = walls[w, 0]
                        n1 = walls[w, 1]
                        n2 = walls[w, 2]
                        gap = n0 * x[i, 0] + n1 * x[i, 1] + n2 * x[i, 2] - walls[w, 3]
                        if gap >= rad:
                            continue
                        delta = 1.0 - gap / rad
                        sq = math.sqrt(delta)
                        e_wall += 0.4 * k_wall * delta * delta * sq
                        fw = (k_wall / rad) * delta * sq
                        f0 += fw * n0
                        f1 += fw * n1
                        f2 += fw * n2
            if g != 0.0:
                e_g += m[i] * (g0 * x[i, 0] + g1 * x[i, 1] + g2 * x[i, 2])
                fg = m[i] * g
                f0 += fg * g0
                f1 += fg * g1
                f2 += fg * g2
            F[i, 0] = f0
            F[i, 1] = f1
            F[i, 2] = f2
            RM[i, 0] = r0
            RM[i, 1] = r1
            RM[i, 2] = r2
        ep[c, 0] = e_contact
        ep[c, 1] = e_wall
        ep[c, 2] = e_g
        ep[c, 3] = diss
        ep[c, 4] = over
