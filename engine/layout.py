"""Fixed layout of the arrays shared by the Numba kernels.

A *force field* is a tuple of plain arrays (see :class:`engine.forcefield.ForceField`):
``(m, J, D, flags, fp, bonds, bond_ref, nl_pairs, nl_state, nl_xref, inertia,
inertia_inv)``.  The indices
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
E_MUTUAL_GRAVITY = 8
N_ENERGY = 9
ENERGY_NAMES: tuple[str, ...] = (
    "translational",
    "rotational",
    "gravity",
    "bending",
    "axial",
    "shear",
    "contact",
    "wall",
    "mutual gravity",
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
    "mutual gravity": "mutual gravity −G m₁m₂/4 Σ 1/|d_pq|",
}

# flags: which terms of the force field are active -------------------------------------
T_PIVOT_GRAVITY = 0
T_BONDS = 1
T_CONTACT = 2
T_WALL = 3
T_DUMBBELLS = 4  # mutual gravity of two dumbbells (docs/physics.md §4.3)
F_NONSPHERICAL = 5  # not a term: the bodies have inertia tensors (kinetic energy R𝕁Rᵀ)
N_TERMS = 6

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
P_DB_G = 16  # dumbbells: gravitational constant G
P_DB_M = 17  # dumbbells: total masses m₁, m₂ (2 slots, 17..18)
P_DB_L = 19  # dumbbells: lengths l₁, l₂ (2 slots, 19..20)
N_FP = 24

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
ERR_NO_CONVERGENCE = 6  # an implicit step's iteration did not converge (info: body, its, |Δ|)

# integrator parameters (work[5]) and iteration statistics (work[6]) ---------------------
IP_PHI = 0  # campello-implicit: the blend φ of eq. (26)
IP_TOL = 1  # Newton / fixed-point tolerance on the size of the update (relative)
IP_MAX_IT = 2  # iteration limit
N_IP = 4
IS_SOLVES = 0  # number of solves (body-steps for Newton, steps for fixed point)
IS_ITERATIONS = 1  # total iterations
IS_MAX = 2  # largest iteration count of one solve
N_IS = 4
DEFAULT_TOLERANCE = 1e-14
DEFAULT_MAX_ITERATIONS = 50
