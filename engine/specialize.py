"""Compile what a run uses: the force field's *family* in the type of its arrays.

Numba types every branch of a function, so a kernel that tests a flag at run time
(``if flags[T_BONDS]: binder_bonds_ws(...)``) compiles the binder for every model, the
pendulum included; a cold start compiled every term of every model, and every scheme
(issue #25).  Two compile-time facts remove that:

* **The family** — which of the large terms a force field can switch on, and whether
  it is large enough for the parallel kernels — is the *type* of the last slot of
  ``ff`` (``ForceField.arrays``): a tuple with one entry per slot of ``flags`` and one
  for ``LARGE``, ``0`` where the term is present and ``None`` where it is absent
  (:func:`family_marker`; only the slots of :data:`GATED` can be absent).  Numba
  compiles a kernel once per argument types, so each family gets its own
  specialisation of every kernel that takes ``ff``, loaded from the disk cache like
  any other.
* **The gate** :func:`gated` (``gated(ff, T_BONDS, OK, binder_bonds_ws, x, …)``) is
  resolved while typing: for a family with the term it is the call, for one without
  it is the constant ``absent`` and the kernel is never typed, so never compiled.

The flags still decide at run time (a term present in the family may be off); the
family only removes code for terms the force field cannot have.  A force field whose
flags were switched on after its arrays were taken would reach an absent gate: the
force kernel checks :func:`family_holds` first and reports ``ERR_SHAPE`` rather than
silently skipping a term.

The scheme is specialised the same way, by the stepping loop of each scheme
(``engine.integrators.advance.loop_kernel``).
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.core import cgutils
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic, overload

from .layout import (
    F_NONSPHERICAL,
    N_TERMS,
    T_BONDS,
    T_CONTACT,
    T_DAMPING,
    T_DUMBBELLS,
    T_FIELD,
    T_HISTORY,
    T_PIVOT_GRAVITY,
    T_WALL,
)

PARALLEL_MIN_BODIES = 4096
"""Models with at least this many bodies use the parallel force kernels
(``engine.parallel``; the constant sits here, below the kernels it gates: issue #34)."""
SMALL_LIST_MAX = 256
"""Models of at most this many bodies keep their list by
``engine.neighbours.ensure_all_pairs_ws`` (``n(n−1)/2 ≤ 32640`` distance tests a rebuild,
no cell list), the larger ones by ``engine.neighbours.ensure_neighbours_ws``; the family
slot :data:`CELLS` says which, so a small model never compiles the cell list (issue #25)."""

LARGE = N_TERMS
"""Family slot after the flags: at least :data:`PARALLEL_MIN_BODIES` bodies (the parallel
force kernels, the in-place velocity-Verlet loop)."""
CELLS = N_TERMS + 1
"""Family slot: a neighbour list built from a cell list, for contacts among more than
:data:`SMALL_LIST_MAX` bodies; a smaller model tests all its pairs
(``engine.neighbours.ensure_all_pairs_ws``), whose kernel compiles in a fraction of the
time."""
BOND_TYPES = N_TERMS + 2
"""Family slot: the binder's bonds carry their own coefficients ``ff[BOND_K] (nb, 3) =
(K^m, K^a, K^s)`` (bond types of different coefficients, issue #35 item 1); absent, the
kernels take the global ``fp[P_K_BEND]``, ``fp[P_K_AXIAL]``, ``fp[P_K_SHEAR]`` and
compile as before this slot existed (:func:`binder_k`)."""
BPM = N_TERMS + 3
"""Family slot: some bonds follow a LAMMPS BPM law (``bpm/rotational``, ``bpm/spring``:
``engine.potentials.bpm``), each bond's law, coefficients and reference frame a row of
``ff[BPM_TABLE]`` (issue #44 item 1); absent, that kernel is not compiled."""
BPM_ONLY = N_TERMS + 4
"""Family slot: *every* bond follows a BPM law: the binder's kernel is not compiled
(``engine.specialize.unless``), so a model of one law pays nothing for the others."""
BREAKS = N_TERMS + 5
"""Family slot: some BPM bond breaks (``break yes``, issue #44 item 2): the stepping loop
asks ``engine.potentials.bpm_break.any_breaks`` after each step and carries the
``broken`` energy; absent, neither is compiled (a model whose bonds never break pays
nothing)."""
BPM_DAMPED = N_TERMS + 6
"""Family slot: some BPM bond has a damping ``γ ≠ 0`` (its flow split off the step,
``engine.potentials.bond_damping``); absent, that flow is not compiled."""
N_FAMILY = N_TERMS + 7
BOND_K = 16
"""The slot of ``ff`` holding the per-bond coefficients ``(nb, 3)`` (empty: none)."""
FIELDS = 17
"""The slot of ``ff`` holding the dipoles, charges, fields and damping of
``engine.potentials.fields.new_fields`` (issue #44 items 3 and 4; empty arrays: none)."""
BPM_TABLE = 18
"""The slot of ``ff`` holding the BPM laws' per-bond table ``(nb, bpm.N_COLS)`` (empty:
none; ``engine.potentials.bpm``)."""
BOND_DAMP = 19
"""The slot of ``ff`` holding the bonds' damping plan ``(pairs, order, chunks, cst,
buf)``: the damped bonds by colour, their constants and the flow's scratch
(``engine.potentials.bond_damping_plan``; empty arrays: no bond damped)."""


GATED = (T_PIVOT_GRAVITY, T_DUMBBELLS, T_BONDS, T_CONTACT, T_WALL, T_HISTORY,
         F_NONSPHERICAL, LARGE, CELLS, BOND_TYPES, T_FIELD, T_DAMPING, BPM, BPM_ONLY, BREAKS,
         BPM_DAMPED)
"""The slots that make a family: the terms whose kernels are large enough to be worth
leaving out (the binder, the neighbour list and contacts, friction, the rigid-body RK4,
the parallel kernels, the cell list; the fields and the damping of issue #44, so that a
model without them keeps its kernels and bits), and the gravity of the pendulum and of
the dumbbells: each is set by its model's builder, never by a parameter, so gating them
splits no family that could share its kernels, and no other model compiles them (issue
#45, "less to compile").  Uniform gravity is small and always compiled: every other
slot counts as present, so a model that switches it on (``g`` a parameter) shares its
kernels with the same model without it (fewer families, fewer compiles)."""


def family_marker(flags: np.ndarray, n_bodies: int, per_bond: bool = False,
                  bpm: int = 0, breaks: bool = False, bpm_damped: bool = False) -> tuple:
    """The family slot of ``ff``: ``None`` for each gated slot (:data:`GATED`) that is
    off (a flag not set, fewer than ``PARALLEL_MIN_BODIES`` bodies for ``LARGE``, no
    contacts or at most ``SMALL_LIST_MAX`` bodies for ``CELLS``, no per-bond
    coefficients for ``BOND_TYPES``; ``bpm``: 0 no bond of a BPM law, 1 some, 2 all, for
    ``BPM`` and ``BPM_ONLY``; ``breaks``: some BPM bond breaks, for ``BREAKS``;
    ``bpm_damped``: some BPM bond is damped, for ``BPM_DAMPED``), ``0`` for the rest.
    A model with BPM bonds runs the serial kernels whatever its size
    (``engine.parallel`` has the binder only: ``LARGE`` off)."""
    bpm_on = bool(bpm) and bool(flags[T_BONDS])
    on = [bool(f) for f in flags[:N_TERMS]] + [
        n_bodies >= PARALLEL_MIN_BODIES and not bpm_on,
        bool(flags[T_CONTACT]) and n_bodies > SMALL_LIST_MAX,
        bool(per_bond) and bool(flags[T_BONDS]),
        bpm_on, bpm_on and bpm >= 2, bpm_on and bool(breaks), bpm_on and bool(bpm_damped)]
    return tuple(0 if on[k] or k not in GATED else None for k in range(N_FAMILY))


def family_code(marker: tuple) -> int:
    """The family as a bit mask (bit ``k``: slot ``k`` present), for names and logs."""
    return sum(1 << k for k, m in enumerate(marker) if m is not None)


def marker_of_code(code: int) -> tuple:
    """The family slot for a bit mask (:func:`family_code`'s inverse)."""
    return tuple(0 if code >> k & 1 else None for k in range(N_FAMILY))


def _present(ff_type, slot: int) -> bool:
    marker = ff_type.types[-1]
    return not isinstance(marker.types[slot], types.NoneType)


def _gate_typer(typingctx, ff, slot, absent, fn, args, when_present: bool):
    """Type a gate (:func:`gated` when ``when_present``, else :func:`unless`) and make
    its code: where the family's ``slot`` is as asked, a direct call of ``fn`` (its
    compiled implementation for ``args``), else the value ``absent``.  An intrinsic,
    not an overload returning a jitted ``_call``/``_skip``: an overload compiled one
    more function per gate and signature (a whole Numba pipeline each: 2.7 s of the
    pendulum's 24 s cold compile went to ``_skip``; issue #45, "less to compile")."""
    if not isinstance(slot, types.IntegerLiteral):
        return None
    if _present(ff, slot.literal_value) == when_present:
        fn_sig = typingctx.resolve_function_type(fn, tuple(args), {})
        if fn_sig is None:
            return None
        star = types.StarArgTuple.from_types(tuple(args))

        def codegen(context, builder, sig, llargs):
            vals = [context.cast(builder, v, a, b) for v, a, b in
                    zip(cgutils.unpack_tuple(builder, llargs[4]), star, fn_sig.args,
                        strict=True)]
            return context.get_function(fn, fn_sig)(builder, vals)
        return fn_sig.return_type(ff, slot, absent, fn, star), codegen
    out = types.unliteral(absent)

    def skip(context, builder, sig, llargs):
        return context.cast(builder, llargs[2], sig.args[2], out)
    return out(ff, slot, absent, fn, types.StarArgTuple.from_types(tuple(args))), skip


@intrinsic(prefer_literal=True)
def gated(typingctx, ff, slot, absent, fn, *args):
    """``fn(*args)`` if the family of ``ff`` has ``slot``, else ``absent`` (jitted code
    only: resolved while typing, see the module docstring and :func:`_gate_typer`)."""
    return _gate_typer(typingctx, ff, slot, absent, fn, args, True)


@intrinsic(prefer_literal=True)
def unless(typingctx, ff, slot, absent, fn, *args):
    """``fn(*args)`` if the family of ``ff`` does *not* have ``slot``, else ``absent``
    (the other branch of :func:`gated`)."""
    return _gate_typer(typingctx, ff, slot, absent, fn, args, False)


def family_holds(ff):
    """Whether every set flag of ``ff`` is in its family (jitted code only)."""
    raise NotImplementedError("family_holds() is resolved by Numba inside jitted kernels")


@overload(family_holds, jit_options={"forceinline": True, "_nrt": False})
def _family_holds(ff):
    absent = tuple(k for k in range(N_TERMS) if not _present(ff, k))
    if not absent:
        def every(ff):
            return True
        return every

    def impl(ff):
        flags = ff[3]
        for k in absent:
            if flags[k]:
                return False
        return True
    return impl



@intrinsic
def binder_k(typingctx, ff, k_global):
    """The binder's bending coefficient as the kernels take it (jitted code only):
    ``k_global`` (``fp[P_K_BEND]``, a float), or, for a family with
    :data:`BOND_TYPES`, the per-bond table ``ff[BOND_K]`` ``(nb, 3)``, whose type then
    selects the per-bond reads of ``engine.potentials.binder`` (issue #35 item 1).
    Resolved while typing; an intrinsic, not an overload, because a kernel compiled
    with ``_nrt=False`` may not call a function that returns an array."""
    if _present(ff, BOND_TYPES):
        out = ff.types[BOND_K]

        def codegen(context, builder, sig, args):
            return impl_ret_borrowed(context, builder, out,
                                     builder.extract_value(args[0], BOND_K))
    else:
        out = k_global

        def codegen(context, builder, sig, args):
            return args[1]
    return out(ff, k_global), codegen
