"""The plan of the bonds' damping flow (issue #44 item 9; docs/physics.md §4.6 "Bond
damping"): which damped bond's exact mode flows go in which order, and their constant
per-bond data, built once per bond list so that ``engine.potentials.bond_damping``
sweeps the bonds in chunks its compiled loops can vectorize.

* **Colours.** The damped bonds are edge-coloured greedily in the model's bond order
  (:func:`colour_bonds`: each bond takes the lowest colour that neither of its spheres
  has yet), so no sphere appears twice within a colour (at most ``2Δ − 1`` colours for
  spheres of at most ``Δ`` bonds; the LAMMPS metamaterial's 1440 bonds take 6).  The
  flows of the bonds of one colour touch disjoint spheres: they commute exactly, and
  the forward sweep ``D`` is the bonds colour by colour (ascending), each bond's modes
  in order; the backward sweep ``D*`` the colours descending, each bond's modes
  reversed: still the exact adjoint.  A subset of a colouring is one: a broken bond
  leaves its colour (``ForceField.take_bonds`` keeps the model's colours of the bonds
  left), so a run resumed across a break has the plan of the run it continues.
* **Chunks.** Each colour's ``bpm/rotational`` bonds (both frames) are cut into chunks
  of at most :data:`LANES` bonds, those with ``smooth yes`` apart (their ``w`` is the
  breaking measure's, computed a bond); ``bpm/spring`` bonds (one mode) form scalar
  chunks of their colour.  The plan lists the chunks in sweep order: ``chunks (nc, 3)``
  ``= (first position, end position, kind)``, ``pairs (P, 2)`` the spheres ``(i, j)``
  and ``order (P,)`` the bond of each position.
* **Constants.** ``cst``: for each chunk a block of :data:`N_CONST` rows of
  :data:`LANES` (row ``K_*``, lane = the bond's place in its chunk): ``1/m_i``,
  ``1/m_j``, ``1/J_i``, ``1/J_j``, the normal and spinning modes' ``κ = 1/m_i + 1/m_j``,
  ``1/J_i + 1/J_j`` and ``1/κ`` of the latter, ``γ_n``, ``γ_s``, ``½ γ_r``, ``½ γ_t``:
  none of them changes while the bond lives.
* ``buf``: the chunk's scratch, :data:`N_BUF` rows of :data:`LANES` (the gathered
  velocities); ``geo``: each chunk's geometry (the bond vectors, ``n``, the modes'
  decays), kept with the positions and ``τ`` it was computed at, so that the forward
  sweep before a step takes what the backward sweep after the previous one computed
  at the same ``x`` (bit for bit what it would compute).  Each ``ForceField`` has its
  own (``ForceField.working_copy`` does not share them).

The plan is the force-field slot ``engine.specialize.BOND_DAMP`` (empty arrays for a
model without bond damping); it allocates nothing in the kernels.  Its layout (the
lanes, the rows ``K_*`` and ``B_*``, the chunk kinds) is defined beside the kernels
that read it, in ``engine.potentials.bond_damping`` (an edit of it recompiles them).
"""

from __future__ import annotations

import numpy as np

from .bond_damping import (
    C_GAMMA_ROT,
    CHUNK_ROTATIONAL,
    CHUNK_SMOOTH,
    CHUNK_SPRING,
    LANES,
    N_BUF,
    N_CONST,
    N_GEO,
    damped_bonds,
)
from .bpm import C_SMOOTH


def damped_mask(table: np.ndarray, nb: int) -> np.ndarray:
    """The mask of the ``nb`` bonds whose flow does something (some ``γ ≠ 0``; none
    where the BPM table is not theirs: every bond the binder's)."""
    if table.shape[0] != nb:
        return np.zeros(nb, dtype=bool)
    rot, spr = damped_bonds(table)
    return rot | spr


def colour_bonds(bonds: np.ndarray, n: int, damped: np.ndarray) -> np.ndarray:
    """Each bond's colour (``−1``: not damped): greedy in bond order, the lowest colour
    neither sphere has yet (module docstring)."""
    colour = np.full(bonds.shape[0], -1, dtype=np.int64)
    used = [0] * n  # (a sphere's colours as bits)
    for k in np.flatnonzero(damped).tolist():
        i, j = int(bonds[k, 0]), int(bonds[k, 1])
        free = ~(used[i] | used[j])
        c = (free & -free).bit_length() - 1
        colour[k] = c
        used[i] |= 1 << c
        used[j] |= 1 << c
    return colour


def empty_plan() -> tuple:
    """The slot of a model without bond damping (the types of :func:`damping_plan`'s)."""
    return (np.zeros((0, 2), dtype=np.int64), np.zeros(0, dtype=np.int64),
            np.zeros((0, 3), dtype=np.int64), np.zeros(0), np.zeros(0), np.zeros(0),
            np.zeros((0, 3)), np.zeros(0), np.zeros(0), np.full(1, np.nan))


def damping_plan(bonds: np.ndarray, table: np.ndarray, m: np.ndarray, J: np.ndarray,
                 colour: np.ndarray) -> tuple:
    """The plan ``(pairs, order, chunks, cst, ctau, buf, omega0, geo, xkey, gkey)`` of the
    bonds' damping (module docstring) for the bonds, their BPM table, the spheres'
    masses and moments of inertia and the bonds' colours (:func:`colour_bonds`);
    ``ctau``: the ``τ`` of each chunk's cached decays (NaN: none yet), ``omega0 (n,
    3)``: the spheres' ``ω`` kept at the start of a sweep that moves ``Π`` with them;
    ``geo``: each chunk's geometry (:data:`N_GEO` rows of :data:`LANES`), computed at
    the positions ``xkey (3n,)`` and the ``τ`` ``gkey (1,)`` (NaN: none yet)."""
    rot, spr = damped_bonds(table)
    if not (rot.any() or spr.any()):
        return empty_plan()
    smooth = table[:, C_SMOOTH] != 0.0
    kind = np.where(spr, CHUNK_SPRING, np.where(smooth, CHUNK_SMOOTH, CHUNK_ROTATIONAL))
    ids = np.flatnonzero(rot | spr)
    # colour by colour; in a colour the rotational chunks, then the smooth, then springs
    rank = np.where(kind[ids] == CHUNK_SPRING, 2, kind[ids] - 1)
    ids = ids[np.lexsort((ids, rank, colour[ids]))]
    key = colour[ids] * 3 + kind[ids]
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    ends = np.r_[starts[1:], ids.shape[0]]
    rows = []
    for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
        k = int(kind[ids[s]])
        step = LANES if k != CHUNK_SPRING else e - s
        rows.extend((p, min(p + step, e), k) for p in range(s, e, step))
    chunks = np.array(rows, dtype=np.int64).reshape(-1, 3)
    pairs = np.ascontiguousarray(bonds[ids], dtype=np.int64)
    cst = np.zeros((chunks.shape[0], N_CONST, LANES))
    i, j = pairs[:, 0], pairs[:, 1]
    mi, mj, Ji, Jj = 1.0 / m[i], 1.0 / m[j], 1.0 / J[i], 1.0 / J[j]
    g = table[ids]
    vals = (mi, mj, Ji, Jj, mi + mj, 1.0 / (mi + mj), Ji + Jj, 1.0 / (Ji + Jj),
            g[:, C_GAMMA_ROT], g[:, C_GAMMA_ROT + 1], 0.5 * g[:, C_GAMMA_ROT + 2],
            0.5 * g[:, C_GAMMA_ROT + 3])
    for c, (p0, p1, k) in enumerate(chunks.tolist()):
        if k != CHUNK_SPRING:
            for r, val in enumerate(vals):
                cst[c, r, :p1 - p0] = val[p0:p1]
    return (pairs, np.ascontiguousarray(ids, dtype=np.int64), chunks, cst.reshape(-1),
            np.full(chunks.shape[0], np.nan), np.zeros(N_BUF * LANES),
            np.zeros((m.shape[0], 3)), np.zeros(chunks.shape[0] * N_GEO * LANES),
            np.zeros(3 * m.shape[0]), np.full(1, np.nan))


def plan_for(bonds: np.ndarray, table: np.ndarray, m: np.ndarray, J: np.ndarray) -> tuple:
    """:func:`damping_plan` with the bonds coloured here (:func:`colour_bonds`): the
    plan of a bond list outside a ``ForceField`` (tests, benchmarks)."""
    bonds = np.ascontiguousarray(bonds, dtype=np.int64).reshape(-1, 2)
    return damping_plan(bonds, table, np.asarray(m, dtype=np.float64),
                        np.asarray(J, dtype=np.float64),
                        colour_bonds(bonds, len(m), damped_mask(table, bonds.shape[0])))
