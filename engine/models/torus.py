"""The particle-binder torus impacting a wall (Baker & Gonzalez §4, docs/physics.md §4.2).

``N_p`` spheres on a ring of diameter ``D_t`` in the x–y plane (optionally tilted about
y), neighbours just touching (``D_p = D_t sin(π/N_p)``), bonded to their neighbours by
bending, axial and shear springs, with Hertz-type contacts between all pairs and
against the wall ``x = 0``; all spheres start with ``v = (-v₀, 0, 0)``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..forcefield import ForceField
from ..layout import (
    P_E_N,
    P_E_T,
    P_K_AXIAL,
    P_K_BEND,
    P_K_CONTACT,
    P_K_SHEAR,
    P_K_WALL,
    P_MU,
    P_SKIN,
    T_BONDS,
    T_CONTACT,
    T_HARD_CONTACT,
    T_HARD_WALL,
    T_WALL,
)
from ..state import Bodies, State
from .base import Model, ModelSpec, Param, ParameterError

SPHERE_PARAMS = (
    Param("mass", "float", 1.0, "mass of each sphere", "kg", lo=0.0, lo_open=True),
    Param("inertia", "float", 1.0, "moment of inertia J of each sphere", "kg m²", lo=0.0,
          lo_open=True),
    Param("k_bend", "float", 10.0, "binder bending/torsion stiffness K^m", "J/rad²", lo=0.0),
    Param("k_axial", "float", 200.0, "binder axial stiffness K^a", "J", lo=0.0),
    Param("k_shear", "float", 200.0, "binder shear stiffness K^s", "J", lo=0.0),
    Param("k_contact", "float", 2100.0, "particle–particle contact stiffness K^pp", "J",
          lo=0.0),
    Param("k_wall", "float", 2100.0, "particle–wall contact stiffness K^pw", "J", lo=0.0),
)
"""The spheres and the binder of B&G §4 (shared with ``tori_pile``)."""

CONTACT_PARAMS = (
    Param("contact", "choice", "penalty", "contact model: Hertz penalty potentials (B&G §4) "
          "or hard unilateral constraints with percussions (Moreau-type schemes, §3.9)",
          choices=("penalty", "hard")),
    Param("e_n", "float", 1.0, "hard contact: normal restitution e_N (1: elastic)", lo=0.0,
          hi=1.0, why="Newton's law: 1 keeps the normal speed, 0 stops it; above 1 an "
          "impact would create energy"),
    Param("mu", "float", 0.0, "Coulomb friction coefficient μ (hard contacts; penalty "
          "contacts: the limit of the tangential spring k_t)", lo=0.0),
    Param("e_t", "float", 0.0, "hard contact: tangential restitution e_T", lo=0.0, hi=1.0,
          why="above 1 the friction of an impact would create energy"),
    Param("k_t", "float", 4000.0, "penalty contact: stiffness of the tangential (friction) "
          "spring, active when mu > 0", "N/m", lo=0.0),
    Param("damping", "float", 0.0, "penalty contact: normal damping ratio ζ "
          "(γ = 2ζ√(m* k_N), k_N the Hertz tangent stiffness; 0: elastic)", lo=0.0),
)
"""The contact model and the hard-contact law (shared with ``tori_pile``)."""

SCHEMA = (
    Param("n_particles", "int", 80, "number of spheres N_p in the ring", lo=3, hi=100_000,
          why="a ring needs at least 3 spheres; more spheres make a pile of rings: "
          "tori-pile"),
    Param("ring_diameter", "float", 3.0, "ring diameter D_t", "m", lo=0.0, lo_open=True),
    *SPHERE_PARAMS,
    Param("v0", "float", 1.0, "initial speed towards the wall (along -x)", "m/s"),
    Param("tilt", "float", 0.0, "tilt of the ring about the y axis", "deg", lo=-90.0,
          hi=90.0, why="a tilt beyond ±90° is one within it, the ring turned over"),
    Param("wall", "bool", True, "whether the wall at x = 0 is present"),
    Param("velocity_noise", "float", 0.0, "std. dev. of a random perturbation of each v",
          "m/s", lo=0.0),
    Param("spin_noise", "float", 0.0, "std. dev. of a random initial spin Ω of each sphere",
          "rad/s", lo=0.0),
    Param("seed", "int", 0, "seed of the random perturbations", lo=0, hi=2**32 - 1,
          why="a 32-bit unsigned integer"),
    *CONTACT_PARAMS,
)

SKIN_FRACTION = 0.5  # neighbour-list skin, in sphere diameters


def ring_positions(n: int, ring_diameter: float, tilt_deg: float,
                   centre: np.ndarray | None = None) -> tuple[np.ndarray, float]:
    """Centres of the spheres and their diameter ``D_p = D_t sin(π/N_p)``; the ring's
    centre by default at ``(D_t/2 + D_p, 0, 0)``, the torus's (the builders' ``ring`` too)."""
    dp = ring_diameter * math.sin(math.pi / n)
    phi = 2.0 * math.pi * np.arange(n) / n
    off = 0.5 * ring_diameter * np.stack([np.cos(phi), np.sin(phi), np.zeros(n)], axis=1)
    t = math.radians(tilt_deg)
    rot_y = np.array([[math.cos(t), 0.0, math.sin(t)], [0.0, 1.0, 0.0],
                      [-math.sin(t), 0.0, math.cos(t)]])
    if centre is None:
        centre = np.array([0.5 * ring_diameter + dp, 0.0, 0.0])
    return centre + off @ rot_y.T, dp


def bonded_spheres(bodies: Bodies, x: np.ndarray, bonds: np.ndarray,
                   p: dict[str, Any]) -> ForceField:
    """The force field of spheres bonded by the B&G §4 binder (reference bond vectors
    from the positions ``x``), with sphere–sphere contacts as ``p["contact"]`` says
    (penalty: Hertz, with the friction spring ``k_t`` limited by ``mu`` and the damping
    ratio ``damping`` of ``engine.potentials.friction`` when they are set; hard:
    constraints with ``e_n``, ``mu``, ``e_t``); walls and gravity are the caller's.
    Shared by ``torus`` and ``tori_pile``."""
    d0 = x[bonds[:, 0]] - x[bonds[:, 1]]
    r0 = np.linalg.norm(d0, axis=1)
    bond_ref = np.concatenate([d0 / r0[:, None], r0[:, None]], axis=1)
    ff = ForceField(bodies.m, bodies.J, bodies.D, bonds=bonds, bond_ref=bond_ref)
    ff.flags[T_BONDS] = 1
    ff.flags[T_HARD_CONTACT if p["contact"] == "hard" else T_CONTACT] = 1
    ff.fp[P_K_BEND] = p["k_bend"]
    ff.fp[P_K_AXIAL] = p["k_axial"]
    ff.fp[P_K_SHEAR] = p["k_shear"]
    ff.fp[P_K_CONTACT] = p["k_contact"]
    ff.fp[P_SKIN] = SKIN_FRACTION * float(bodies.D.max())
    ff.fp[P_E_N] = p["e_n"]
    ff.fp[P_MU] = p["mu"]
    ff.fp[P_E_T] = p["e_t"]
    if p["contact"] == "penalty":  # friction springs and damping (§4.5), if any
        ff.set_friction(p["mu"], p["k_t"], p["damping"])
    return ff


def bonded_energy_components(ff: ForceField, hard: bool, walls: bool,
                             gravity: bool = False) -> tuple[str, ...]:
    """The energy components of bonded spheres, in the plots' order: kinetic, gravity,
    the binder's three (B&G §4), then the contacts: penalty contact and wall energies
    with what friction or damping dissipates, or only the dissipated energy of hard
    contacts (the torus, the pile and an assembly alike)."""
    components = ("translational", "rotational") + (("gravity",) if gravity else ())
    components += ("bending", "axial", "shear")
    if hard:
        return components + ("dissipated",)
    components += ("contact",) + (("wall",) if walls else ())
    return components + (("dissipated",) if ff.has_history else ())


def build(p: dict[str, Any]) -> Model:
    n = p["n_particles"]
    x, dp = ring_positions(n, p["ring_diameter"], p["tilt"])
    if p["wall"] and float(x[:, 0].min()) <= 0.5 * dp:
        raise ParameterError("the ring starts in contact with the wall; lower tilt")
    bodies = Bodies(np.full(n, p["mass"]), np.full(n, p["inertia"]), np.full(n, dp))
    bonds = np.stack([np.arange(n), (np.arange(n) + 1) % n], axis=1)
    ff = bonded_spheres(bodies, x, bonds, p)
    hard = p["contact"] == "hard"
    normal = np.array([1.0, 0.0, 0.0])
    if p["wall"]:
        ff.flags[T_HARD_WALL if hard else T_WALL] = 1
        ff.fp[P_K_WALL] = p["k_wall"]
        ff.set_walls([(normal, 0.0)])
    rng = np.random.default_rng(p["seed"])
    v = np.tile([-p["v0"], 0.0, 0.0], (n, 1)) + p["velocity_noise"] * rng.standard_normal((n, 3))
    omega = p["spin_noise"] * rng.standard_normal((n, 3))
    q = np.tile([1.0, 0.0, 0.0, 0.0], (n, 1))
    components = bonded_energy_components(ff, hard, bool(p["wall"]))
    return Model(
        name="torus",
        title="Particle-binder torus impact",
        params=p,
        bodies=bodies,
        forcefield=ff,
        initial_state=State(x, v, q, omega),
        energy_components=components,
        # (a wall with friction, mu > 0, pushes along y and z too: nothing is conserved)
        conserved=(() if p["mu"] > 0.0 else ("P_y", "P_z", "L_x")) if p["wall"]
        else ("P_x", "P_y", "P_z", "L_x", "L_y", "L_z"),
        draw_diameter=bodies.D.copy(),
        wall=(normal, 0.0) if p["wall"] else None,
        walls=[(normal, 0.0)] if p["wall"] else [],
        contact="hard" if hard else "penalty",
        accuracy_c=22.0 if hard else 7.7,  # measured: docs/physics.md §7
    )


SPEC = ModelSpec("torus", "Particle-binder torus impacting a wall (B&G §4)", SCHEMA, build)
