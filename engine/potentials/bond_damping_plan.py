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
  velocities, the bond vector, the modes' decays): each ``ForceField`` has its own
  (``ForceField.working_copy`` does not share it).

The plan is the force-field slot ``engine.specialize.BOND_DAMP`` (empty arrays for a
model without bond damping); it allocates nothing in the kernels.
"""

from __future__ import annotations

import numpy as np

from .bpm import C_COEF, C_LAW, C_SMOOTH, LAW_ROTATIONAL, LAW_ROTATIONAL_AVERAGE, LAW_SPRING

C_GAMMA_ROT = C_COEF + 8  # γ_n, γ_s, γ_r, γ_t of bpm/rotational (4)
C_GAMMA_SPRING = C_COEF + 2  # γ of bpm/spring

LANES = 64
"""Bonds a chunk at most (its scratch rows: 64 doubles, a cache line's multiple)."""

CHUNK_SPRING = 0
"""Chunk kind: ``bpm/spring`` bonds, one at a time (the normal mode alone)."""
CHUNK_ROTATIONAL = 1
"""Chunk kind: ``bpm/rotational`` bonds with ``smooth no`` (``w = 1``)."""
CHUNK_SMOOTH = 2
"""Chunk kind: ``bpm/rotational`` bonds with ``smooth yes`` (``w`` a bond)."""

# the rows of a chunk's constants (``cst``): 1/m_i, 1/m_j, 1/J_i, 1/J_j, the normal
# mode's κ and 1/κ, the spinning modes' κ and 1/κ, γ_n, γ_s, ½γ_r, ½γ_t; then, for a
# chunk with ``smooth no`` and the ``τ`` in ``ctau``, the normal mode's decay over κ,
# ``(e^z − 1)/κ``, and its energy factor ``−½ (e^z − 1)(e^z + 1)/κ`` (the kinetic energy
# removed is that times |u|²), and the twisting's two (they depend on nothing else)
(K_MI, K_MJ, K_JI, K_JJ, K_KN, K_IKN, K_KJ, K_IKJ, K_GN, K_GS, K_GR, K_GT, K_PN, K_FN,
 K_ET, K_FT) = range(16)
N_CONST = 16
# the rows of the chunk's scratch (``buf``): the bond vector d = x_i − x_j, the spheres'
# velocities, the smoothing w, the unit vector n, 1/κ of the sliding, the modes' z =
# −cκτ and decays e^z − 1 (sliding, rolling; normal and twisting as K_PN … K_FT for a
# chunk with ``smooth yes``) and the energy each bond's modes removed
(B_D0, B_D1, B_D2, B_VI0, B_VI1, B_VI2, B_VJ0, B_VJ1, B_VJ2, B_OI0, B_OI1, B_OI2,
 B_OJ0, B_OJ1, B_OJ2, B_W, B_N0, B_N1, B_N2, B_IKS, B_ZN, B_ZS, B_ZR, B_ZT, B_ES, B_ER,
 B_PN, B_FN, B_ET, B_FT, B_OUT) = range(31)
N_BUF = 31

def damped_bonds(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(rotational, spring)``: masks of the bonds of the BPM table ``(nb, N_COLS)``
    whose flow does something (some ``γ ≠ 0``)."""
    if not table.shape[0]:
        z = np.zeros(0, dtype=bool)
        return z, z
    law = table[:, C_LAW]
    rot = (law == LAW_ROTATIONAL) | (law == LAW_ROTATIONAL_AVERAGE)
    rot &= np.any(table[:, C_GAMMA_ROT:C_GAMMA_ROT + 4] != 0.0, axis=1)
    spr = (law == LAW_SPRING) & (table[:, C_GAMMA_SPRING] != 0.0)
    return rot, spr


def has_bond_damping(table: np.ndarray) -> bool:
    """Whether some bond of the BPM table ``(nb, bpm.N_COLS)`` has a damping ``γ ≠ 0``."""
    rot, spr = damped_bonds(table)
    return bool(rot.any() or spr.any())


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
            np.zeros((0, 3)))


def damping_plan(bonds: np.ndarray, table: np.ndarray, m: np.ndarray, J: np.ndarray,
                 colour: np.ndarray) -> tuple:
    """The plan ``(pairs, order, chunks, cst, ctau, buf, omega0)`` of the bonds' damping
    (module docstring) for the bonds, their BPM table, the spheres' masses and moments
    of inertia and the bonds' colours (:func:`colour_bonds`); ``ctau``: the ``τ`` of
    each chunk's cached decays (NaN: none yet), ``omega0 (n, 3)``: the spheres' ``ω``
    kept at the start of a sweep that moves ``Π`` with them."""
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
            np.zeros((m.shape[0], 3)))


def plan_for(bonds: np.ndarray, table: np.ndarray, m: np.ndarray, J: np.ndarray) -> tuple:
    """:func:`damping_plan` with the bonds coloured here (:func:`colour_bonds`): the
    plan of a bond list outside a ``ForceField`` (tests, benchmarks)."""
    bonds = np.ascontiguousarray(bonds, dtype=np.int64).reshape(-1, 2)
    rot, spr = damped_bonds(table)
    return damping_plan(bonds, table, np.asarray(m, dtype=np.float64),
                        np.asarray(J, dtype=np.float64),
                        colour_bonds(bonds, len(m), rot | spr))
