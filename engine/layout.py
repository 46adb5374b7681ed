"""Fixed layout of the arrays shared by the Numba kernels.

A *force field* is a tuple of plain arrays (see :class:`engine.forcefield.ForceField`):
``(m, J, D, flags, fp, bonds, bond_ref, nl_pairs, nl_state, nl_xref, inertia,
inertia_inv, walls, history, bptr, bpart, bond_k, bpm, family)``.  The indices
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
E_SPRING = 9  # spring pendulum: ½ k (r − l₀)² (docs/physics.md §4.4)
E_DISSIPATED = 10
"""Accumulated work removed by impacts and friction (hard contacts, §3.9): *not* a
function of the configuration but carried from step to step, so that ``E + D = E₀`` is
the check of a dissipative run.  The force kernels never zero this slot, nor the ones
after it (they zero ``2..E_DISSIPATED − 1`` only)."""
E_FIELD = 11
"""Uniform fields on dipoles and charges: ``U = −Σ s(t) (μ_i·E₀ + q_i E₀·x_i)``
(``engine.potentials.fields``); set by the field kernel, not accumulated."""
E_FIELD_WORK = 12
"""Work booked for a time-dependent field, ``−∫ ∂U/∂t dt``: carried from step to step
like ``dissipated`` (``engine.potentials.fields.field_work``), so that the total with it
is constant."""
E_BROKEN = 13
"""Energy stored in the bonds that broke (issue #44 item 2; ``engine.simulation.breaking``):
booked when a bond leaves the model between two steps, carried from step to step like
``dissipated``, so that ``E + broken`` is constant across a break."""
N_ENERGY = 14
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
    "spring",
    "dissipated",
    "field",
    "field work",
    "broken",
)
ENERGY_LABELS: dict[str, str] = {
    "translational": "translational kinetic ½m|v|²",
    "rotational": "rotational kinetic ½J|Ω|²",
    "gravity": "gravity (pendulum −m g e₃·Rρ₀; spheres Σ m g ê·x)",
    "bending": "bond bending/torsion (binder U^m; bpm/rotational bending + twist)",
    "axial": "bond axial (binder U^a; bpm/rotational normal)",
    "shear": "bond shear (binder U^s; bpm/rotational shear)",
    "contact": "particle–particle contact U^pp",
    "wall": "particle–wall contact U^pw",
    "mutual gravity": "mutual gravity −G m₁m₂/4 Σ 1/|d_pq|",
    "spring": "spring ½k(r − l₀)² (spring pendulum; bpm/spring bonds)",
    "dissipated": "dissipated by impacts, friction and damping D",
    "field": "field on dipoles and charges −Σ(μ·E + qE·x)",
    "field work": "work booked for the field's change −∫∂U/∂t dt",
    "broken": "stored in the bonds that broke (bpm break)",
}
SIGNED_ENERGY = ("gravity", "mutual gravity", "field", "field work")
"""Components that may be negative (drawn as lines, not stacked areas)."""

# flags: which terms of the force field are active -------------------------------------
T_PIVOT_GRAVITY = 0
T_BONDS = 1
T_CONTACT = 2
T_WALL = 3  # the planar walls ``ff.walls`` as Hertz penalty contacts (all of them)
T_DUMBBELLS = 4  # mutual gravity of two dumbbells (docs/physics.md §4.3)
F_NONSPHERICAL = 5  # not a term: the bodies have inertia tensors (kinetic energy R𝕁Rᵀ)
T_HARD_CONTACT = 6  # particle–particle contacts as unilateral constraints (§3.9)
T_HARD_WALL = 7  # the walls ``ff.walls`` as unilateral constraints (§3.9)
T_GRAVITY_FIELD = 8  # uniform gravity on every body: U = Σ m_i g (ê·x_i)
T_HISTORY = 9  # penalty contacts with friction springs and/or normal damping (§4.5)
T_FIELD = 10  # uniform fields on groups: dipoles (torque μ × E) and charges (qE)
T_DAMPING = 11  # viscous damping on groups: F = −γ v, τ = −γ_r Ω (split off the step)
N_TERMS = 12

# fp: scalar parameters -------------------------------------------------------------------
P_MG = 0  # pendulum: m g
P_RHO0 = 1  # pendulum: ρ₀ (3 slots, 1..3), centre of mass → pivot, body frame
P_K_BEND = 4
P_K_AXIAL = 5
P_K_SHEAR = 6
P_K_CONTACT = 7
P_K_WALL = 8
P_K_TANGENT = 9  # penalty friction: tangential spring stiffness k_t (force per length)
P_DAMPING = 10  # penalty contacts: normal damping ratio ζ (γ = 2ζ sqrt(m* k_n(δ)))
# 11..12: free (the single wall's normal and position until the walls became the
# force-field array ``walls (k, 4) = (n, c)``, the wall ``n·x ≥ c``)
P_SKIN = 13  # neighbour-list skin
P_DB_G = 16  # dumbbells: gravitational constant G
P_DB_M = 17  # dumbbells: total masses m₁, m₂ (2 slots, 17..18)
P_DB_L = 19  # dumbbells: lengths l₁, l₂ (2 slots, 19..20)
P_E_N = 21  # hard contacts: normal restitution e_N (Newton's impact law)
P_MU = 22  # Coulomb friction coefficient μ (hard contacts; penalty friction springs)
P_E_T = 23  # hard contacts: tangential restitution e_T
P_G = 24  # uniform gravity: acceleration g (≥ 0)
P_G_DIR = 25  # uniform gravity: unit direction ê (3 slots, 25..27), e.g. −e₃
N_FP = 28

# nl_state: neighbour-list bookkeeping ------------------------------------------------------
NL_COUNT = 0
NL_REBUILDS = 1
NL_VALID = 2
NL_PARTIAL = 3  # of the NL_REBUILDS, the partial updates (engine.neighbours)
N_NL_STATE = 4

# kernel status codes ------------------------------------------------------------------------
OK = 0
ERR_RRP_LIMIT = 1  # rrp-exact: h|w| >= 1
ERR_NONFINITE = 2  # a non-finite energy
ERR_ENERGY = 3  # energy error beyond the blow-up threshold
ERR_NEIGHBOUR_OVERFLOW = 4  # neighbour list capacity exceeded (the driver grows it)
ERR_SHAPE = 5  # arrays of the wrong shape (rows of 3, 4 for q) or a too short scratch
ERR_NO_CONVERGENCE = 6  # an implicit step's iteration did not converge (info: body, its, |Δ|)
ERR_CONTACT = 7  # the percussion solver did not converge (info: contacts, its, residual)
ERR_HISTORY_OVERFLOW = 8  # a sphere has more friction contacts than history slots (grown)
BONDS_BREAK = 9  # not an error: a bond is past its breaking criterion at the end of the
# last step taken (the driver removes it: engine.simulation.breaking, issue #44 item 2)

# integrator parameters (work[5]) and iteration statistics (work[6]) ---------------------
IP_PHI = 0  # campello-implicit: the blend φ of eq. (26)
IP_TOL = 1  # Newton / fixed-point tolerance on the size of the update (relative)
IP_MAX_IT = 2  # iteration limit
IP_CONTACT_TOL = 3  # percussion solver: tolerance on the relative change of P per sweep
IP_CONTACT_MAX_IT = 4  # percussion solver: sweep limit
N_IP = 6
IS_SOLVES = 0  # number of solves (body-steps for Newton, steps for fixed point)
IS_ITERATIONS = 1  # total iterations
IS_MAX = 2  # largest iteration count of one solve
IS_CONTACT_SOLVES = 3  # percussion solves (steps with at least one active contact)
IS_CONTACT_ITERATIONS = 4  # total sweeps of the percussion solver
IS_CONTACT_MAX = 5  # largest sweep count of one solve
IS_CONTACTS = 6  # active contacts (g_N ≤ 0) in the last step
IS_PERCUSSIONS = 7  # contacts with P_N > 0 in the last step
IS_PENETRATION = 8  # largest penetration −g_N seen (≥ 0)
IS_IMPACTS = 9  # total count of contact-steps with P_N > 0
N_IS = 10
DEFAULT_TOLERANCE = 1e-14
DEFAULT_MAX_ITERATIONS = 50
DEFAULT_CONTACT_TOLERANCE = 1e-10
DEFAULT_CONTACT_MAX_ITERATIONS = 10000
