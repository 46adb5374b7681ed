"""The force field of a model: which potential terms are active, their parameters, and
one kernel that evaluates them all.

A model is *parameters + a function filling forces, spatial moments and energy
components*; the integrators only ever see :func:`compute_forces` and the tuple of
arrays ``ForceField.arrays`` (``ff`` in the kernels):

``(m, J, D, flags, fp, bonds, bond_ref, nl_pairs, nl_state, nl_xref, inertia,
inertia_inv, walls, history, bptr, bpart, bond_k, fields, bpm, bond_damp, family)``

``inertia`` and ``inertia_inv`` are the body-frame tensors ``𝕁_i`` and ``𝕁_i⁻¹``
``(n, 3, 3)``; ``flags[F_NONSPHERICAL]`` says whether they differ from ``J_i I`` (the
scalar ``J`` stays the fast path for spheres).  ``walls`` ``(k, 4)``: the planar walls
``n·x ≥ c`` as rows ``(n₀, n₁, n₂, c)`` (``n`` unit, pointing into the allowed side),
active as Hertz penalty contacts when ``flags[T_WALL]`` and as unilateral constraints
when ``flags[T_HARD_WALL]``.  ``history``: the friction springs' table of the penalty
contacts with history (``flags[T_HISTORY]``, ``engine.potentials.friction``); empty
otherwise.  ``bptr``, ``bpart``: each body's bonded partners (CSR, from ``bonds``),
which the neighbour list leaves out when the model has penalty contacts, the binder
kernel adding their Hertz contact (``engine.neighbours.excluded_partners``).
``bond_k`` ``(nb, 3)``: each bond's own ``(K^m, K^a, K^s)`` (bond types of different
coefficients, issue #35 item 1), or empty: every bond takes ``fp[P_K_BEND]``, … .
``fields``: the dipoles, charges, uniform fields and viscous damping of issue #44
(``engine.potentials.fields.new_fields``; ``flags[T_FIELD]``, ``flags[T_DAMPING]``).
``bpm`` ``(nb, engine.potentials.bpm.N_COLS)``: each bond's law (the binder's, or a LAMMPS
BPM law), its coefficients and reference frame (issue #44 item 1), or empty: every bond
is the binder's.
``bond_damp``: the plan of the bonds' damping flow (the damped bonds by colour, their
constants, its scratch: ``engine.potentials.bond_damping_plan``), empty arrays without.
``family``: which terms the force field can have, as a *type* (``engine.specialize``):
every kernel is compiled for the terms of the model it runs, not for all of them.

Hot-path convention (measured: it halves the cost of a torus step and makes a pendulum
step 4x cheaper).  Every kernel called per step has a ``*_ws`` form that takes its
scratch arrays (``ws = new_scratch(n, ff)``, allocated once per run by
``engine.integrators.advance``) and therefore allocates nothing and cannot raise (status
codes only, ``error_model="numpy"``).  These are compiled with ``_nrt=False``: Numba
would otherwise increment and decrement the reference count of every array of the state
and force-field tuples at every call (atomic operations, ~0.3 µs per step), which it
cannot prune across calls that may raise.  The small ones are ``forceinline=True``: a
call passes the ~250 words of the tuples on the stack.  The public kernels
(:func:`compute_forces`, ``verlet_step``, ``step``, ``advance``, …) keep their
signatures and allocate the scratch themselves.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit

from .layout import (
    E_DISSIPATED,
    ERR_HISTORY_OVERFLOW,
    ERR_NEIGHBOUR_OVERFLOW,
    ERR_SHAPE,
    F_NONSPHERICAL,
    N_ENERGY,
    N_FP,
    N_NL_STATE,
    N_TERMS,
    NL_COUNT,
    OK,
    P_DAMPING,
    P_DB_G,
    P_DB_L,
    P_DB_M,
    P_G,
    P_G_DIR,
    P_K_AXIAL,
    P_K_BEND,
    P_K_CONTACT,
    P_K_SHEAR,
    P_K_TANGENT,
    P_K_WALL,
    P_MG,
    P_MU,
    P_RHO0,
    P_SKIN,
    T_BONDS,
    T_CONTACT,
    T_DAMPING,
    T_DUMBBELLS,
    T_FIELD,
    T_GRAVITY_FIELD,
    T_HISTORY,
    T_PIVOT_GRAVITY,
    T_WALL,
)
from .neighbours import (
    binder_adds_contact,
    excluded_partners,
    neighbours_of_family_ws,
    new_neighbour_scratch,
)
from .parallel import (
    NOT_PARALLEL,
    PARALLEL_MIN_BODIES,
    new_parallel_scratch,
    parallel_forces_ws,
)
from .potentials.binder import SCRATCH_SIZE as BINDER_SCRATCH_SIZE
from .potentials.binder import binder_bonds_ws
from .potentials.bond_damping import has_bond_damping
from .potentials.bond_damping_plan import colour_bonds, damped_mask, damping_plan, empty_plan
from .potentials.bpm import LAW_BINDER, bpm_bonds_ws
from .potentials.bpm import N_COLS as BPM_COLS
from .potentials.bpm import SCRATCH_SIZE as BPM_BONDS_SCRATCH_SIZE
from .potentials.bpm_break import breakable
from .potentials.contact import particle_contacts, wall_contacts
from .potentials.dumbbells import dumbbell_gravity
from .potentials.fields import (
    FI_CHARGE,
    FI_CLOCK,
    FI_GAMMA,
    FI_GAMMA_ROT,
    FI_GROUP,
    FI_MU,
    FI_ROWS,
    FI_SAVE,
    ROW,
    field_loads,
    new_fields,
)
from .potentials.friction import (
    DEFAULT_SLOTS,
    HI_CURRENT,
    bonded_partners,
    history_contacts,
    new_history,
)
from .potentials.gravity import pivot_gravity, uniform_gravity
from .specialize import (
    BPM,
    BPM_ONLY,
    BPM_TABLE,
    FIELDS,
    LARGE,
    binder_k,
    family_holds,
    family_marker,
    gated,
    unless,
)


@njit(nogil=True, cache=True)
def new_scratch(n, ff=None):
    """The scratch arrays of :func:`compute_forces_ws` for ``n`` bodies: the binder's
    block, the cell list of the neighbour list and, for a model of at least
    ``engine.parallel.PARALLEL_MIN_BODIES`` bodies whose force field ``ff`` is given,
    that of the parallel kernels (without ``ff``, or for a smaller model, it is empty
    and the serial kernels run), and the BPM bonds' block
    (``engine.potentials.bpm.new_bonds_scratch``: 55 kB whatever the model)."""
    nb = 0
    cap = 0
    if ff is not None:
        nb = ff[5].shape[0]
        cap = ff[7].shape[0]
        par = new_parallel_scratch(n, nb, cap)
    else:
        par = new_parallel_scratch(0, 0, 0)
    return (np.empty(BINDER_SCRATCH_SIZE),
            new_neighbour_scratch(n), par, np.empty(BPM_BONDS_SCRATCH_SIZE))


@njit(nogil=True, cache=True)
def compute_forces(x, q, ff, F, RM, energy):
    """Fill ``F = -∂U/∂x``, the spatial moments ``RM`` (docs/physics.md §1) and the
    potential-energy components of ``energy`` at the configuration ``(x, q)``.

    Returns a status code (``OK``, or the neighbour list's error).
    """
    return compute_forces_ws(x, q, ff, F, RM, energy, new_scratch(x.shape[0], ff))


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def compute_forces_ws(x, q, ff, F, RM, energy, ws):
    """:func:`compute_forces` with the scratch ``ws = new_scratch(n, ff)`` supplied.

    Allocates nothing and cannot raise, so a stepping loop that calls it keeps its
    arrays without reference counting (the integrators allocate ``ws`` once per run).
    Large models (``n ≥ PARALLEL_MIN_BODIES``, a scratch sized for them) go to the
    deterministic parallel kernels of ``engine.parallel``; the rest to the serial ones.
    """
    if not family_holds(ff):  # (flags set after the arrays were taken: engine.specialize)
        return ERR_SHAPE
    if F.shape[0] >= PARALLEL_MIN_BODIES:
        st = gated(ff, LARGE, NOT_PARALLEL, parallel_forces_ws, x, q, ff, F, RM, energy, ws)
        if st != NOT_PARALLEL:
            if st == OK and ff[3][T_FIELD]:
                gated(ff, T_FIELD, None, field_loads, x, q, ff[FIELDS], F, RM, energy)
            return st
    m, J, D, flags, fp, bonds, bond_ref, nl_pairs, nl_state, nl_xref = ff[:10]
    for i in range(F.shape[0]):
        for k in range(F.shape[1]):
            F[i, k] = 0.0
    for i in range(RM.shape[0]):
        for k in range(RM.shape[1]):
            RM[i, k] = 0.0
    for k in range(2, E_DISSIPATED):  # (D is accumulated by the hard-contact steps)
        energy[k] = 0.0
    if flags[T_PIVOT_GRAVITY]:
        gated(ff, T_PIVOT_GRAVITY, None, pivot_gravity, q, fp[P_MG], fp[P_RHO0],
              fp[P_RHO0 + 1], fp[P_RHO0 + 2], RM, energy)
    if flags[T_BONDS]:  # (with the bonded spheres' contact, which the list leaves out)
        st = unless(ff, BPM_ONLY, OK, _binder_ws, x, q, ff, F, RM, energy, ws[0])
        if st != OK:
            return st
        st = gated(ff, BPM, OK, bpm_bonds_ws, x, q, bonds, ff[BPM_TABLE], F, RM, energy,
                   ws[3])
        if st != OK:
            return st
    if flags[T_CONTACT]:
        bptr, bpart = excluded_partners(ff)
        st = gated(ff, T_CONTACT, OK, neighbours_of_family_ws, ff, x, D, fp[P_SKIN],
                   nl_pairs, nl_state, nl_xref, ws[1], bptr, bpart)
        if st != OK:
            return st
    status = OK
    if flags[T_HISTORY]:  # contacts with friction springs and/or damping
        hist = ff[13]
        if hist[4].shape[0] != F.shape[0] or hist[4].shape[1] != 3 or hist[5].shape[1] != 4:
            return ERR_SHAPE
        status = gated(ff, T_HISTORY, OK, history_contacts, x, q, D, m, nl_pairs,
                       nl_state[0] if flags[T_CONTACT] else 0, ff[12],
                       ff[12].shape[0] if flags[T_WALL] else 0, fp[P_K_CONTACT],
                       fp[P_K_WALL], fp[P_K_TANGENT], fp[P_MU], fp[P_DAMPING], hist, F, RM,
                       energy)
    else:
        if flags[T_CONTACT]:
            gated(ff, T_CONTACT, None, particle_contacts, x, D, nl_pairs, nl_state[0],
                  fp[P_K_CONTACT], F, energy)
        if flags[T_WALL]:
            gated(ff, T_WALL, None, wall_contacts, x, D, ff[12], fp[P_K_WALL], F, energy)
    if flags[T_GRAVITY_FIELD]:
        gated(ff, T_GRAVITY_FIELD, None, uniform_gravity, x, m, fp[P_G], fp[P_G_DIR],
              fp[P_G_DIR + 1], fp[P_G_DIR + 2], F, energy)
    if flags[T_DUMBBELLS]:
        gated(ff, T_DUMBBELLS, None, dumbbell_gravity, x, q, fp[P_DB_G], fp[P_DB_M],
              fp[P_DB_M + 1], fp[P_DB_L], fp[P_DB_L + 1], F, RM, energy)
    if flags[T_FIELD]:  # dipoles and charges in uniform fields (issue #44 item 3)
        gated(ff, T_FIELD, None, field_loads, x, q, ff[FIELDS], F, RM, energy)
    return status


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _binder_ws(x, q, ff, F, RM, energy, w):
    """The binder's bonds (``engine.potentials.binder``; with a BPM table, its bonds of
    other laws have zero binder coefficients and add only their spheres' contact)."""
    fp = ff[4]
    return gated(ff, T_BONDS, OK, binder_bonds_ws, x, q, ff[2], ff[5], ff[6],
                 binder_k(ff, fp[P_K_BEND]), fp[P_K_AXIAL], fp[P_K_SHEAR],
                 fp[P_K_CONTACT] if binder_adds_contact(ff) else 0.0, F, RM, energy, w)


def _pair_keys(pairs: np.ndarray, n: int) -> np.ndarray:
    """One integer per unordered pair of the rows ``(i, j)`` of ``pairs``, bodies
    ``0..n-1``: ``min(i, j) n + max(i, j)``."""
    return np.minimum(pairs[:, 0], pairs[:, 1]) * n + np.maximum(pairs[:, 0], pairs[:, 1])


@dataclass
class ForceField:
    """Arrays describing the potential terms of a model (struct of arrays, no objects).

    ``m``, ``J``, ``D``: per-body mass, scalar inertia and diameter; ``flags[T_*]``: the
    active terms; ``fp[P_*]``: their scalar parameters; ``bonds`` ``(nb, 2)`` and
    ``bond_ref`` ``(nb, 4) = (d̂₀, r₀)``: binder bonds; ``nl_*``: the neighbour list;
    ``inertia`` ``(n, 3, 3)``: body-frame inertia tensors (default ``J I``; setting a
    non-spherical one raises ``flags[F_NONSPHERICAL]``); ``walls`` ``(k, 4)``: the planar
    walls ``n·x ≥ c`` as rows ``(n, c)`` (:meth:`set_walls` normalises ``n``).
    """

    m: np.ndarray
    J: np.ndarray
    D: np.ndarray
    flags: np.ndarray = field(default_factory=lambda: np.zeros(N_TERMS, dtype=np.int64))
    fp: np.ndarray = field(default_factory=lambda: np.zeros(N_FP))
    bonds: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), dtype=np.int64))
    bond_ref: np.ndarray = field(default_factory=lambda: np.zeros((0, 4)))
    nl_pairs: np.ndarray = field(default_factory=lambda: np.zeros((1, 2), dtype=np.int64))
    nl_state: np.ndarray = field(default_factory=lambda: np.zeros(N_NL_STATE, dtype=np.int64))
    nl_xref: np.ndarray = field(default_factory=lambda: np.zeros((1, 3)))
    inertia: np.ndarray | None = None
    walls: np.ndarray = field(default_factory=lambda: np.zeros((0, 4)))
    history: tuple = field(default_factory=lambda: new_history(0))
    bond_k: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    fields: tuple = field(default_factory=new_fields)
    bpm: np.ndarray = field(default_factory=lambda: np.zeros((0, BPM_COLS)))

    _bond_family = None
    """``(per_bond, bpm_laws, breaks, bond_damped)`` pinned by :meth:`take_bonds`
    (``None``: from the bonds held)."""

    def __post_init__(self) -> None:
        n = self.m.shape[0]
        self.m = np.ascontiguousarray(self.m, dtype=np.float64)
        self.J = np.ascontiguousarray(self.J, dtype=np.float64)
        self.D = np.ascontiguousarray(self.D, dtype=np.float64)
        self.bonds = np.ascontiguousarray(self.bonds, dtype=np.int64).reshape(-1, 2)
        self.bond_ref = np.ascontiguousarray(self.bond_ref, dtype=np.float64).reshape(-1, 4)
        if self.nl_xref.shape != (n, 3):
            self.nl_xref = np.zeros((n, 3))
        if self.nl_pairs.shape[0] < 2:
            # (4 candidate pairs a body to start with, doubled on overflow: a dense
            # pile needs ≈ 6; the list and its parallel adjacency cost 32 bytes a pair)
            self.nl_pairs = np.zeros((max(16, 4 * n), 2), dtype=np.int64)
        iso = self.J[:, None, None] * np.eye(3)[None]
        if self.inertia is None:
            self.inertia = iso
        self.inertia = np.ascontiguousarray(self.inertia, dtype=np.float64).reshape(n, 3, 3)
        self.inertia_inv = np.ascontiguousarray(np.linalg.inv(self.inertia))
        spherical = np.allclose(self.inertia, iso, rtol=0.0,
                                atol=1e-15 * max(1.0, float(self.J.max(initial=0.0))))
        self.flags[F_NONSPHERICAL] = 0 if spherical else 1
        self.walls = np.ascontiguousarray(self.walls, dtype=np.float64).reshape(-1, 4)
        self.bond_k = np.ascontiguousarray(self.bond_k, dtype=np.float64).reshape(-1, 3)
        self.bpm = np.ascontiguousarray(self.bpm, dtype=np.float64).reshape(-1, BPM_COLS)

    def set_bond_laws(self, table: np.ndarray | None) -> None:
        """Give the bonds their laws: ``table (nb, bpm.N_COLS)``, a row a bond
        (``engine.potentials.bpm.law_row`` and ``reference``; issue #44 item 1).  Bonds
        of the binder's law (``LAW_BINDER``) keep the binder's coefficients; where some
        bonds follow another law the binder's per-bond table must give them zeros
        (:meth:`set_bond_coefficients`).  ``None``: every bond the binder's."""
        if table is None:
            self.bpm = np.zeros((0, BPM_COLS))
            self._damping_flag()
            return
        table = np.ascontiguousarray(table, dtype=np.float64)
        if table.shape != (self.bonds.shape[0], BPM_COLS):
            raise ValueError(f"bond laws of shape {table.shape}, expected "
                             f"({self.bonds.shape[0]}, {BPM_COLS})")
        if has_bond_damping(table) and not self.spherical:
            raise ValueError("bond damping needs spheres (inertia J I)")
        self.bpm = table
        if self.bond_damped:  # the damping flow's per-sphere arrays (engine.potentials.
            f = list(self.fields)  # damping: a failed step's velocities are kept there)
            n = self.n_bodies
            for k, shape in ((FI_GAMMA, (n,)), (FI_GAMMA_ROT, (n,)), (FI_SAVE, (n, 9))):
                if f[k].shape != shape:
                    f[k] = np.zeros(shape)
            self.fields = tuple(f)
        self._damping_flag()

    @property
    def bond_damped(self) -> bool:
        """Whether some BPM bond has a damping ``γ ≠ 0`` (issue #44 item 1: its flow is
        split off the step, ``engine.potentials.bond_damping``)."""
        return bool(self.bonds.shape[0]) and has_bond_damping(self.bpm)

    def _damping_flag(self) -> None:
        """``flags[T_DAMPING]``: a dissipative flow is split off the step (the spheres'
        viscous damping or the bonds' own)."""
        f = self.fields
        viscous = bool(np.any(f[FI_GAMMA] > 0) or np.any(f[FI_GAMMA_ROT] > 0))
        self.flags[T_DAMPING] = 1 if (viscous or self.bond_damped) else 0

    @property
    def bpm_laws(self) -> int:
        """0: every bond is the binder's; 1: some follow a BPM law; 2: all do."""
        if not (self.bpm.shape[0] and self.bonds.shape[0]):
            return 0
        other = self.bpm[:, 0] != LAW_BINDER
        return 2 if other.all() else 1 if other.any() else 0

    @property
    def breaks(self) -> bool:
        """Whether some bond breaks (``break yes``: the family slot ``BREAKS``)."""
        return self.bpm_laws > 0 and breakable(self.bpm)

    def take_bonds(self, src: ForceField, ids: np.ndarray) -> None:
        """Hold the bonds ``ids`` of ``src`` only (the model's force field; the others
        broke, issue #44 item 2): new arrays of their rows (``bonds``, ``bond_ref``, the
        per-bond and BPM tables; ``src``'s, shared with the model, never change), the
        bonded pairs' CSR made anew and the neighbour list rebuilt at the next
        evaluation (a freed pair may touch).  The family stays ``src``'s (its bond
        slots pinned: the last bond of a law broken compiles nothing new)."""
        ids = np.asarray(ids, dtype=np.int64)
        nb = src.bonds.shape[0]
        if self._bond_family is None:  # (the family stays the model's: no new compile)
            self._bond_family = (src.per_bond, src.bpm_laws, src.breaks,
                                  src.bond_damped)
        colours = src.bond_colours if src.bond_damped else None
        self.bonds = np.ascontiguousarray(src.bonds[ids])
        if src.bond_ref.shape[0] == nb:
            self.bond_ref = np.ascontiguousarray(src.bond_ref[ids])
        if src.bond_k.shape[0] == nb:
            self.bond_k = np.ascontiguousarray(src.bond_k[ids])
        if src.bpm.shape[0] == nb:
            self.bpm = np.ascontiguousarray(src.bpm[ids])
        if colours is not None:  # (a subset of a colouring is one: the model's colours)
            self._colours = (self.bonds, self.bpm, colours[ids])
        self.invalidate_neighbours()

    def set_bond_coefficients(self, k: np.ndarray | None) -> None:
        """Give every bond its own binder coefficients ``k (nb, 3) = (K^m, K^a, K^s)``
        (bond types of different coefficients, issue #35 item 1): the kernels then read
        them instead of ``fp[P_K_BEND]``, ``fp[P_K_AXIAL]``, ``fp[P_K_SHEAR]`` (another
        family, ``engine.specialize.BOND_TYPES``).  ``None``: the global ones again."""
        if k is None:
            self.bond_k = np.zeros((0, 3))
            return
        k = np.ascontiguousarray(k, dtype=np.float64)
        if k.shape != (self.bonds.shape[0], 3):
            raise ValueError(f"bond coefficients of shape {k.shape}, expected "
                             f"({self.bonds.shape[0]}, 3): one row (k_bend, k_axial, "
                             "k_shear) a bond")
        if not (np.all(np.isfinite(k)) and np.all(k >= 0.0)):
            raise ValueError("bond coefficients must be finite numbers >= 0")
        self.bond_k = k

    @property
    def per_bond(self) -> bool:
        """Whether the bonds carry their own coefficients (:meth:`set_bond_coefficients`)."""
        return bool(self.bond_k.shape[0]) and bool(self.bonds.shape[0])

    @property
    def n_bodies(self) -> int:
        return int(self.m.shape[0])

    @property
    def arrays(self) -> tuple:
        """The tuple ``ff`` passed to the kernels."""
        per_bond, laws, breaks, damped = self._bond_family or (
            self.per_bond, self.bpm_laws, self.breaks, self.bond_damped)
        return (self.m, self.J, self.D, self.flags, self.fp, self.bonds, self.bond_ref,
                self.nl_pairs, self.nl_state, self.nl_xref, self.inertia, self.inertia_inv,
                self.walls, self.history, *self.bonded, self.bond_k, self.fields, self.bpm,
                self.damping_plan,
                family_marker(self.flags, self.n_bodies, per_bond, laws, breaks, damped))

    @property
    def bond_colours(self) -> np.ndarray:
        """Each bond's colour in the damping's sweep (``−1``: not damped;
        ``engine.potentials.bond_damping_plan.colour_bonds``), made from the bonds and
        their laws when first asked for; after :meth:`take_bonds` the model's colours of
        the bonds left."""
        cached = getattr(self, "_colours", None)
        if cached is None or cached[0] is not self.bonds or cached[1] is not self.bpm:
            cached = self._colours = (self.bonds, self.bpm, colour_bonds(
                self.bonds, self.n_bodies, damped_mask(self.bpm, self.bonds.shape[0])))
        return cached[2]

    @property
    def damping_plan(self) -> tuple:
        """The slot ``BOND_DAMP`` of :attr:`arrays`: the plan of the bonds' damping
        (``engine.potentials.bond_damping_plan.damping_plan``), made when first asked
        for after the bonds or their laws were set; each force field has its own (its
        scratch), :meth:`working_copy` included."""
        cached = getattr(self, "_damp_plan", None)
        if cached is None or cached[0] is not self.bonds or cached[1] is not self.bpm:
            plan = damping_plan(self.bonds, self.bpm, self.m, self.J, self.bond_colours) \
                if self.bond_damped else empty_plan()
            cached = self._damp_plan = (self.bonds, self.bpm, plan)
        return cached[2]

    @property
    def bonded(self) -> tuple[np.ndarray, np.ndarray]:
        """Each body's bonded partners as a CSR ``(bptr (n + 1,), bpart (2 nb,) int32)``
        (``bpart[bptr[i]:bptr[i + 1]]``), made from ``bonds`` when first asked for after
        they were set; ``ValueError`` for a bond of a body with itself or a pair bonded
        twice (the bonded spheres' contact would be counted twice)."""
        cached = getattr(self, "_bonded", None)
        if cached is not None and cached[0] is self.bonds:
            return cached[1]
        n = self.n_bodies
        b = self.bonds
        if b.shape[0] and (b.min() < 0 or b.max() >= n):
            raise ValueError(f"a bond joins a body outside 0..{n - 1}")
        if np.any(b[:, 0] == b[:, 1]):
            k = int(np.argmax(b[:, 0] == b[:, 1]))
            raise ValueError(f"bond {k} joins body {int(b[k, 0])} with itself")
        keys = np.sort(_pair_keys(b, n))
        twice = np.nonzero(keys[1:] == keys[:-1])[0]
        if twice.shape[0]:
            i, j = divmod(int(keys[twice[0]]), n)
            raise ValueError(f"bodies {i} and {j} are bonded twice; list each bond once")
        csr = bonded_partners(n, b)
        self._bonded = (self.bonds, csr)
        return csr

    @property
    def n_walls(self) -> int:
        return int(self.walls.shape[0])

    def set_walls(self, walls) -> None:
        """Set the planar walls from ``[(normal, c), ...]`` (the wall ``n̂·x ≥ c`` with
        ``n̂ = normal/|normal|``; ``c`` is the signed distance of the plane from the
        origin along ``n̂``).  Whether they act is ``flags[T_WALL]`` (penalty) or
        ``flags[T_HARD_WALL]`` (unilateral)."""
        rows = []
        for normal, c in walls:
            nv = np.asarray(normal, dtype=np.float64).reshape(3)
            norm = float(np.linalg.norm(nv))
            if not norm > 0.0:
                raise ValueError(f"a wall normal must be non-zero, got {normal!r}")
            rows.append([*(nv / norm), float(c)])
        self.walls = np.ascontiguousarray(np.array(rows, dtype=np.float64).reshape(-1, 4))

    def set_gravity(self, g: float, direction=(0.0, 0.0, -1.0)) -> None:
        """Uniform gravity ``g`` pulling along ``direction`` (normalised) on every body:
        ``U = -Σ m_i g (ê·x_i)``; ``g = 0`` switches the term off."""
        d = np.asarray(direction, dtype=np.float64).reshape(3)
        norm = float(np.linalg.norm(d))
        if not norm > 0.0:
            raise ValueError(f"the gravity direction must be non-zero, got {direction!r}")
        self.fp[P_G] = float(g)
        self.fp[P_G_DIR:P_G_DIR + 3] = d / norm
        self.flags[T_GRAVITY_FIELD] = 1 if g != 0.0 else 0

    # ------------------------------------------------ fields and damping (issue #44)
    def _fields_for(self) -> list:
        """The fields tuple as a list, its per-sphere arrays sized for this model."""
        n = self.n_bodies
        f = list(self.fields)
        if f[FI_GROUP].shape[0] != n:
            fresh = new_fields(n)
            f = [fresh[k] if k not in (FI_ROWS, FI_CLOCK) else f[k] for k in range(len(f))]
            f[FI_MU] = np.zeros((0, 3))
            f[FI_CHARGE] = np.zeros(0)
        return f

    def set_groups(self, group: np.ndarray) -> None:
        """Each sphere's group (the fields and damping act on groups)."""
        f = self._fields_for()
        g = np.ascontiguousarray(group, dtype=np.int64).reshape(-1)
        if g.shape[0] != self.n_bodies:
            raise ValueError(f"{g.shape[0]} groups for {self.n_bodies} bodies")
        f[FI_GROUP] = g
        self.fields = tuple(f)

    def set_dipoles(self, mu: np.ndarray | None) -> None:
        """Each sphere's point dipole ``μ_i`` in its body frame ``(n, 3)`` (it turns with
        the body; LAMMPS's ``dipole`` columns), or ``None``: none."""
        f = self._fields_for()
        if mu is None:
            f[FI_MU] = np.zeros((0, 3))
        else:
            mu = np.ascontiguousarray(mu, dtype=np.float64).reshape(-1, 3)
            if mu.shape[0] != self.n_bodies or not np.all(np.isfinite(mu)):
                raise ValueError(f"dipoles must be {self.n_bodies} finite rows of 3")
            f[FI_MU] = mu
        self.fields = tuple(f)

    def set_charges(self, charge: np.ndarray | None) -> None:
        """Each sphere's charge ``q_i`` (a field gives it ``qE``), or ``None``: none."""
        f = self._fields_for()
        if charge is None:
            f[FI_CHARGE] = np.zeros(0)
        else:
            c = np.ascontiguousarray(charge, dtype=np.float64).reshape(-1)
            if c.shape[0] != self.n_bodies or not np.all(np.isfinite(c)):
                raise ValueError(f"charges must be {self.n_bodies} finite numbers")
            f[FI_CHARGE] = c
        self.fields = tuple(f)

    def add_field(self, E, group: int = -1, ramp=None) -> None:
        """A uniform field ``E(t) = s(t) E`` on the spheres of ``group`` (``-1``: all):
        force ``qE``, torque ``μ × E``, energy ``−μ·E − qE·x``
        (``engine.potentials.fields``); ``ramp = (t0, t1, c0, c1)``: ``s = c0`` until
        ``t0``, linear to ``c1`` at ``t1``, ``c1`` after (LAMMPS's ``c*ramp(a,b)``);
        ``None``: constant, ``s = 1``."""
        e = np.asarray(E, dtype=np.float64).reshape(3)
        t0, t1, c0, c1 = (0.0, 0.0, 1.0, 1.0) if ramp is None else (float(r) for r in ramp)
        if not (np.all(np.isfinite(e)) and all(np.isfinite([t0, t1, c0, c1]))):
            raise ValueError("a field and its ramp must be finite numbers")
        if t1 < t0:
            raise ValueError(f"a ramp must end after it starts (t0 = {t0:g}, t1 = {t1:g})")
        f = self._fields_for()
        row = np.zeros((1, ROW))
        row[0, :8] = (int(group), *e, t0, t1, c0, c1)
        f[FI_ROWS] = np.ascontiguousarray(np.vstack([f[FI_ROWS], row]))
        self.fields = tuple(f)
        self.flags[T_FIELD] = 1

    def set_damping(self, gamma: np.ndarray, gamma_rot: np.ndarray) -> None:
        """Each sphere's viscous damping ``γ_i`` (``F = −γ v``, LAMMPS's ``fix viscous``)
        and ``γ_r,i`` (``τ = −γ_r Ω``, ``fix viscous/sphere``); all zero switches it
        off (``engine.potentials.damping``; spheres only)."""
        f = self._fields_for()
        g = np.ascontiguousarray(gamma, dtype=np.float64).reshape(-1)
        gr = np.ascontiguousarray(gamma_rot, dtype=np.float64).reshape(-1)
        n = self.n_bodies
        if g.shape[0] != n or gr.shape[0] != n:
            raise ValueError(f"damping coefficients must be {n} numbers each")
        if not (np.all(np.isfinite(g)) and np.all(g >= 0) and np.all(np.isfinite(gr))
                and np.all(gr >= 0)):
            raise ValueError("damping coefficients must be finite numbers >= 0")
        if not self.spherical and np.any(gr > 0):
            raise ValueError("rotational damping needs spheres (inertia J I)")
        f[FI_GAMMA] = g
        f[FI_GAMMA_ROT] = gr
        self.fields = tuple(f)
        self._damping_flag()

    def set_field_time(self, t: float) -> None:
        """The fields' clock (the time of the next force evaluation): the driver sets it
        to the state's time before evaluating it, the stepping loop to each step's."""
        self.fields[FI_CLOCK][0] = float(t)

    @property
    def spherical(self) -> bool:
        """Whether every body's inertia is ``J I`` (the scalar fast path applies)."""
        return not self.flags[F_NONSPHERICAL]

    def grow_neighbour_list(self) -> None:
        """Double the capacity of the neighbour list (after ``ERR_NEIGHBOUR_OVERFLOW``;
        at least 16 pairs: a list of none, e.g. rings apart, has room for none)."""
        self.nl_pairs = np.zeros((max(16, 2 * self.nl_pairs.shape[0]), 2), dtype=np.int64)
        self.nl_state[:] = 0

    def drop_excluded_pairs(self) -> None:
        """Remove from the neighbour list the pairs it now leaves out (the bonded ones,
        with penalty contacts): a list saved before the binder added their contact
        (``Simulation`` resume formats 1 and 2) holds them, and they would count twice.
        The rest keeps its order."""
        if not (self.bonds.shape[0] and binder_adds_contact(self.arrays)):
            return
        count = int(self.nl_state[NL_COUNT])
        pairs = self.nl_pairs[:count]
        bonded = np.isin(_pair_keys(pairs, self.n_bodies), _pair_keys(self.bonds, self.n_bodies))
        if bonded.any():
            kept = pairs[~bonded].copy()
            self.nl_pairs[:kept.shape[0]] = kept
            self.nl_state[NL_COUNT] = kept.shape[0]

    def invalidate_neighbours(self) -> None:
        """Force a rebuild at the next evaluation (after the state was replaced)."""
        self.nl_state[2] = 0

    # ------------------------------------------------------------ friction history
    def set_friction(self, mu: float, k_t: float, damping: float = 0.0) -> None:
        """Penalty contacts with a tangential spring ``k_t`` limited by Coulomb's ``μ``
        and a normal damping ratio ``ζ = damping`` (``engine.potentials.friction``);
        ``μ = 0`` and ``ζ = 0``: the conservative Hertz contacts."""
        for name, val in (("mu", mu), ("k_t", k_t), ("damping", damping)):
            if not (np.isfinite(val) and val >= 0.0):
                raise ValueError(f"{name} must be a finite number >= 0, got {val!r}")
        self.fp[P_MU] = float(mu)
        self.fp[P_K_TANGENT] = float(k_t)
        self.fp[P_DAMPING] = float(damping)
        self.flags[T_HISTORY] = 1 if (mu > 0.0 and k_t > 0.0) or damping > 0.0 else 0

    @property
    def has_history(self) -> bool:
        """Whether the contacts carry friction springs or damping."""
        return bool(self.flags[T_HISTORY])

    def reset_history(self, x: np.ndarray, q: np.ndarray, springs: tuple | None = None) -> None:
        """Anchor the history at ``(x, q)`` with no springs, or with the committed
        ``springs = (partner, xi)`` of :meth:`committed_springs` (a checkpoint)."""
        if not self.has_history:
            self.history = new_history(0)
            return
        n = self.n_bodies
        slots = DEFAULT_SLOTS if springs is None else int(springs[0].shape[1])
        self.history = new_history(n, slots, x, q, self.bonds)
        if springs is not None:
            self.history[2][0] = springs[0]
            self.history[3][0] = springs[1]

    def committed_springs(self) -> tuple[np.ndarray, np.ndarray]:
        """Copies of the committed ``(partner (n, slots), xi (n, slots, 4))`` (springs and
        damping forces)."""
        cur = int(self.history[1][HI_CURRENT])
        return self.history[2][cur].copy(), self.history[3][cur].copy()

    def committed_springs_sparse(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The committed springs as a list: ``(sphere (k,) int32, partner (k,) int32,
        xi (k, 4))``, one row per occupied slot in the order of the slot table (by
        sphere, then slot), so that :meth:`dense_springs` rebuilds the same table.
        What a recorded frame keeps (a settled pile has a few springs a sphere, the
        table has ``DEFAULT_SLOTS`` or more)."""
        cur = int(self.history[1][HI_CURRENT])
        partner = self.history[2][cur]
        # a sphere's list ends at its first -1: the slots after it may hold the springs
        # of a longer list of two steps before (the kernels never read them)
        i, s = np.nonzero(np.logical_and.accumulate(partner >= 0, axis=1))
        return (i.astype(np.int32), partner[i, s].astype(np.int32),
                self.history[3][cur][i, s].copy())

    def dense_springs(self, sphere: np.ndarray, partner: np.ndarray,
                      xi: np.ndarray, slots: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """The slot table ``(partner (n, slots), xi (n, slots, 4))`` of the list of
        :meth:`committed_springs_sparse` (for :meth:`reset_history`), with at least
        ``slots`` slots a sphere; ``ValueError`` when the list does not fit this
        model."""
        n = self.n_bodies
        sphere = np.asarray(sphere, dtype=np.int64).reshape(-1)
        partner = np.asarray(partner, dtype=np.int64).reshape(-1)
        xi = np.asarray(xi, dtype=np.float64)
        k = sphere.shape[0]
        if partner.shape[0] != k or xi.shape != (k, 4):
            raise ValueError(f"the springs' arrays have different lengths ({k}, "
                             f"{partner.shape[0]}, {xi.shape})")
        if k and (sphere.min() < 0 or sphere.max() >= n or np.any(np.diff(sphere) < 0)
                  or partner.max() >= n + self.n_walls or np.any(partner <= sphere)):
            raise ValueError(f"the springs do not fit a model of {n} spheres and "
                             f"{self.n_walls} walls")
        counts = np.bincount(sphere, minlength=n)
        slots = max(DEFAULT_SLOTS, int(counts.max(initial=0)), int(slots))
        slot = np.arange(k) - np.repeat(np.cumsum(counts) - counts, counts)
        dense_p = np.full((n, slots), -1, dtype=np.int32)
        dense_x = np.zeros((n, slots, 4))
        dense_p[sphere, slot] = partner
        dense_x[sphere, slot] = xi
        return dense_p, dense_x

    def grow_history(self) -> None:
        """Double the slots per sphere (after ``ERR_HISTORY_OVERFLOW``), keeping the
        committed springs and the anchor."""
        partner, xi = self.committed_springs()
        n, k = partner.shape
        h = new_history(n, 2 * k, self.history[4], self.history[5], self.bonds)
        h[2][0, :, :k] = partner
        h[3][0, :, :k] = xi
        self.history = h

    def working_copy(self) -> ForceField:
        """A copy for a simulation to step: the arrays a run changes (neighbour list,
        friction history, flags, parameters) are copied; the model's constant data
        (masses, inertias, diameters, bonds, walls) is shared, not duplicated (≈ 400
        bytes a sphere at 10⁶ spheres).  Replace, never write into, the shared arrays."""
        import copy as _copy

        ff = _copy.copy(self)
        ff.flags = self.flags.copy()
        ff.fp = self.fp.copy()
        ff.nl_pairs = self.nl_pairs.copy()
        ff.nl_state = self.nl_state.copy()
        ff.nl_xref = self.nl_xref.copy()
        ff.history = tuple(a.copy() for a in self.history)
        ff.fields = tuple(a.copy() for a in self.fields)
        ff._damp_plan = None  # (its own damping scratch; the colours are shared)
        return ff

    def copy(self) -> ForceField:
        """A deep copy: every array, the per-bond coefficients (``bond_k``), the fields
        and the BPM table included (``bond_k`` was dropped before: a copy of a model with
        bond types of different coefficients ran with the global ones)."""
        ff = ForceField(self.m.copy(), self.J.copy(), self.D.copy(), self.flags.copy(),
                        self.fp.copy(), self.bonds.copy(), self.bond_ref.copy(),
                        self.nl_pairs.copy(), self.nl_state.copy(), self.nl_xref.copy(),
                        self.inertia.copy(), self.walls.copy(),
                        tuple(a.copy() for a in self.history), bond_k=self.bond_k.copy(),
                        bpm=self.bpm.copy())
        ff.fields = tuple(a.copy() for a in self.fields)
        ff._bond_family = self._bond_family
        if self.bond_damped:  # (the colours of the bonds it holds: a broken model's too)
            ff._colours = (ff.bonds, ff.bpm, self.bond_colours.copy())
        return ff


def evaluate(ff: ForceField, x: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray,
                                                                     np.ndarray]:
    """Forces, spatial moments and energy components (potential slots filled) at
    ``(x, q)``, growing the neighbour list as needed.  For diagnostics and tests."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    q = np.ascontiguousarray(q, dtype=np.float64)
    n = x.shape[0]
    F = np.zeros((n, 3))
    RM = np.zeros((n, 3))
    energy = np.zeros(N_ENERGY)
    if ff.has_history and ff.history[4].shape[0] != n:
        ff.reset_history(x, q)  # anchored here: no damping, springs from zero
    while True:
        st = compute_forces(x, q, ff.arrays, F, RM, energy)
        if st == ERR_NEIGHBOUR_OVERFLOW:
            ff.grow_neighbour_list()
            continue
        if st == ERR_HISTORY_OVERFLOW:
            ff.grow_history()
            continue
        if st != OK:
            raise FloatingPointError("non-finite positions in the force evaluation")
        return F, RM, energy


def one_body_stand_in(family: tuple | None = None) -> tuple[tuple, np.ndarray]:
    """``(ff, q)``: the arrays of a one-body ``ForceField`` with no term switched on but
    of the ``family`` given (``engine.specialize``; default: no term), and the body's
    attitude (the identity).  The kernels are compiled for the argument *types*, which
    this shares with any model of that family: priming them on it costs no memory
    (``engine.priming``)."""
    one = np.ones(1)
    q = np.zeros((1, 4))
    q[0, 0] = 1.0
    ff = ForceField(one, one.copy(), one.copy()).arrays
    return (ff if family is None else (*ff[:-1], tuple(family))), q
