"""Fixed layout of the arrays shared by the Numba kernels.

A *force field* is a tuple of plain arrays (see :class:`engine.forcefield.ForceField`):
``(m, J, D, flags, fp, bonds, bond_ref, nl_pairs, nl_state, nl_xref)``.  The indices
below name the slots of ``flags`` (which terms are active), ``fp`` (their scalar
parameters) and of the energy-component vector every kernel fills.
"""

from __future__ import annotations

# energy components (docs/physics.md §4.2, §5) -------------------------------------------
E_TRANSLATIONAL = 0
E_ROTATIONAL = 1
E_GRAVITY = 2
E_BENDING = 3
E_AXIAL = 4
E_SHEAR = 5
E_CONTACT = 6
E_WALL = 7
N_ENERGY = 8
ENERGY_NAMES: tuple[str, ...] = (
    "translational",
    "rotational",
    "gravity",
    "bending",
    "axial",
    "shear",
    "contact",
    "wall",
)
ENERGY_LABELS: dict[str, str] = {
    "translational": "translational kinetic ½m|v|²",
    "rotational": "rotational kinetic ½J|Ω|²",
    "gravity": "gravity −m g e₃·Rρ₀",
    "bending": "binder bending/torsion U^m",
    "axial": "binder axial U^a",
    "shear": "binder shear U^s",
    "contact": "particle–particle contact U^pp",
    "wall": "particle–wall contact U^pw",
}

# flags: which terms of the force field are active -------------------------------------
T_PIVOT_GRAVITY = 0
T_BONDS = 1
T_CONTACT = 2
T_WALL = 3
N_TERMS = 4

# fp: scalar parameters -------------------------------------------------------------------
P_MG = 0  # pendulum: m g
P_RHO0 = 1  # pendulum: ρ₀ (3 slots, 1..3), centre of mass → pivot, body frame
P_K_BEND = 4
P_K_AXIAL = 5
P_K_SHEAR = 6
P_K_CONTACT = 7
P_K_WALL = 8
P_WALL_N = 9  # wall normal (3 slots, 9..11), unit
P_WALL_X = 12  # wall position: n·x = x_w
P_SKIN = 13  # neighbour-list skin
N_FP = 16

# nl_state: neighbour-list bookkeeping ------------------------------------------------------
NL_COUNT = 0
NL_REBUILDS = 1
NL_VALID = 2
N_NL_STATE = 4

# kernel status codes ------------------------------------------------------------------------
OK = 0
ERR_RRP_LIMIT = 1  # rrp-exact: h|w| >= 1
ERR_NONFINITE = 2  # a non-finite energy
ERR_ENERGY = 3  # energy error beyond the blow-up threshold
ERR_NEIGHBOUR_OVERFLOW = 4  # neighbour list capacity exceeded (the driver grows it)
ERR_SHAPE = 5  # arrays of the wrong shape (rows of 3, 4 for q) or a too short scratch
