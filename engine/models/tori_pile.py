"""A pile of particle-binder tori falling into a box (issue #9, first increment).

``n_tori`` rings, each the B&G §4 torus of ``engine.models.torus`` (``N_p`` spheres of
diameter ``D_p = D_t sin(π/N_p)`` on a ring of diameter ``D_t``, neighbours just
touching, bonded to their two neighbours by bending, axial and shear springs; bonds only
within a ring), start at rest without overlap in random orientations on a grid of cubic
cells of edge ``a = D_t + 2 D_p`` stacked in layers above the floor, and fall under
uniform gravity ``g`` (along ``−z``) into a box: the floor ``z ≥ 0`` and, with
``walls``, the side walls ``|x|, |y| ≤ box/2`` (no ceiling).  Spheres of any rings
touch through the Hertz law ``K^pp``, spheres and walls through ``K^pw``, or with
``contact = "hard"`` as unilateral constraints (Moreau-type schemes, ``e_N``, ``μ``,
``e_T`` as for the torus).  Penalty contacts may carry friction (a tangential spring
``k_t`` with Coulomb's limit ``μ``) and normal damping ``ζ``
(``engine.potentials.friction``); frictionless, undamped ones keep the model
conservative.

Placement: each ring's bounding sphere (radius ``(D_t + D_p)/2 = a/2 − D_p/2``) sits in
its cell, shifted by a random offset of at most ``D_p/4`` per coordinate, so the
surfaces of spheres of different rings stay at least ``D_p/2`` apart and at least
``D_p/4`` from every wall (checked after placement).  Orientations are uniform on
SO(3) (normalised Gaussian quaternions from ``seed``).  The sphere attitudes start at
``R = I`` (the binder's reference directions are those of the placed rings).
Everything is vectorised: 10⁵ spheres build in well under a second (BENCHMARKS-style
figures in the model's test and the issue report).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..layout import (
    NL_COUNT,
    OK,
    P_K_WALL,
    T_HARD_WALL,
    T_WALL,
)
from ..neighbours import build_neighbours
from ..state import Bodies, State
from .base import Model, ModelSpec, Param, ParameterError
from .torus import CONTACT_PARAMS, SPHERE_PARAMS, bonded_energy_components, bonded_spheres

SCHEMA = (
    Param("n_tori", "int", 50, "number of tori (rings)", lo=1, hi=1_000_000,
          why="at least one ring; n_tori × n_particles is at most 10⁷ spheres (about 2 kB "
          "each)"),
    Param("n_particles", "int", 20, "number of spheres N_p in each ring", lo=3, hi=10_000,
          why="a ring needs at least 3 spheres; n_tori × n_particles is at most 10⁷"),
    Param("ring_diameter", "float", 1.0, "ring diameter D_t (sphere diameter "
          "D_p = D_t sin(π/N_p))", "m", lo=0.0, lo_open=True),
    *SPHERE_PARAMS,
    Param("g", "float", 1.0, "gravity, pulling along −z", "m/s²", lo=0.0),
    Param("box", "float", 8.0, "side of the box: side walls at x, y = ±box/2 (floor z = 0; "
          "the rings are stacked in as many layers as needed)", "m", lo=0.0, lo_open=True),
    Param("walls", "bool", True, "whether the floor and the side walls are present"),
    Param("velocity_noise", "float", 0.0, "std. dev. of a random initial velocity of each "
          "ring (all its spheres)", "m/s", lo=0.0),
    Param("spin_noise", "float", 0.0, "std. dev. of a random initial spin Ω of each sphere",
          "rad/s", lo=0.0),
    Param("seed", "int", 0, "seed of the orientations, offsets and perturbations", lo=0,
          hi=2**32 - 1, why="a 32-bit unsigned integer"),
    *CONTACT_PARAMS,
)

MAX_SPHERES = 10**7
"""The most spheres a pile may have: a run needs about 2 kB a sphere (the 10⁶-sphere pile
peaks at 1.9 GB, BENCHMARKS.md), so 10⁷ already needs about 20 GB."""
MAX_CELLS_PER_SIDE = 1e6
"""The widest box, in start cells of edge ``D_t + 2 D_p``: the rings fill the box from
one corner, so a wider box only moves them to coordinates so large (relative to a
sphere) that their contacts are resolved to fewer digits."""
OFFSET_FRACTION = 0.25  # largest random offset of a ring in its cell, per coordinate, in D_p


def random_rotations(rng: np.random.Generator, k: int) -> np.ndarray:
    """``k`` rotation matrices uniform on SO(3) (normalised Gaussian quaternions)."""
    q = rng.standard_normal((k, 4))
    q /= np.linalg.norm(q, axis=1)[:, None]
    w, x, y, z = q.T
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
        np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
        np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
    ], axis=1)


def box_walls(box: float) -> list[tuple[np.ndarray, float]]:
    """The floor ``z ≥ 0`` and the side walls ``|x|, |y| ≤ box/2`` as ``(n, c)``."""
    h = 0.5 * box
    return [(np.array([0.0, 0.0, 1.0]), 0.0),
            (np.array([1.0, 0.0, 0.0]), -h), (np.array([-1.0, 0.0, 0.0]), -h),
            (np.array([0.0, 1.0, 0.0]), -h), (np.array([0.0, -1.0, 0.0]), -h)]


def place_tori(n_tori: int, n_p: int, ring_diameter: float, box: float,
               rng: np.random.Generator) -> tuple[np.ndarray, float, np.ndarray]:
    """Sphere centres ``(n_tori N_p, 3)``, the sphere diameter and the ring centres."""
    dp = ring_diameter * math.sin(math.pi / n_p)
    a = ring_diameter + 2.0 * dp
    cells = box / a
    if cells < 1.0:
        raise ParameterError(f"box = {box:g} is smaller than one cell of edge D_t + 2 D_p = "
                             f"{a:.4g}; raise box")
    if cells > MAX_CELLS_PER_SIDE:
        raise ParameterError(
            f"box = {box:g} is {cells:.3g} cells of edge D_t + 2 D_p = {a:.4g} wide, more "
            f"than {MAX_CELLS_PER_SIDE:.0e}: the rings start in one corner, and coordinates "
            "that much larger than a sphere resolve its contacts to too few digits; lower "
            "box or raise ring_diameter")
    n_side = int(box // a)
    per_layer = n_side * n_side
    t = np.arange(n_tori)
    layer, rem = np.divmod(t, per_layer)
    iy, ix = np.divmod(rem, n_side)
    margin = 0.5 * (box - n_side * a)
    centres = np.stack([-0.5 * box + margin + (ix + 0.5) * a,
                        -0.5 * box + margin + (iy + 0.5) * a,
                        (layer + 0.5) * a], axis=1)
    centres += OFFSET_FRACTION * dp * rng.uniform(-1.0, 1.0, (n_tori, 3))
    rot = random_rotations(rng, n_tori)
    phi = 2.0 * math.pi * np.arange(n_p) / n_p
    ring = 0.5 * ring_diameter * np.stack([np.cos(phi), np.sin(phi), np.zeros(n_p)], axis=1)
    x = centres[:, None, :] + np.einsum("tij,pj->tpi", rot, ring)
    return x.reshape(-1, 3), dp, centres


def check_no_overlap(x: np.ndarray, D: np.ndarray, n_p: int,
                     walls: list[tuple[np.ndarray, float]]) -> None:
    """Raise ``RuntimeError`` if spheres of different rings overlap, or a sphere cuts a
    wall (spheres of one ring may touch: their neighbours do, by construction)."""
    n = x.shape[0]
    pairs = np.zeros((max(16, 4 * n), 2), dtype=np.int64)
    state = np.zeros(4, dtype=np.int64)
    xref = np.zeros((n, 3))
    while True:
        st = build_neighbours(x, D, 0.0, pairs, state, xref)
        if st == OK:
            break
        pairs = np.zeros((2 * pairs.shape[0], 2), dtype=np.int64)
    p = pairs[:state[NL_COUNT]]
    cross = p[p[:, 0] // n_p != p[:, 1] // n_p]
    if cross.shape[0]:
        raise RuntimeError(f"placement: {cross.shape[0]} overlapping spheres of different "
                           f"tori, e.g. {tuple(cross[0])}")
    for normal, c in walls:
        gap = x @ normal - c - 0.5 * D
        if gap.min(initial=math.inf) <= 0.0:
            raise RuntimeError(f"placement: sphere {int(np.argmin(gap))} cuts the wall "
                               f"{normal.tolist()}·x ≥ {c:g}")


def build(p: dict[str, Any]) -> Model:
    n_t = p["n_tori"]
    n_p = p["n_particles"]
    n = n_t * n_p
    if n > MAX_SPHERES:
        raise ParameterError(
            f"n_tori × n_particles = {n_t} × {n_p} = {n:.3g} spheres is more than "
            f"{MAX_SPHERES:.0e}: a run needs about 2 kB a sphere (10⁶ spheres: 2 GB, "
            "BENCHMARKS.md), so this many would not fit in memory; lower n_tori or "
            "n_particles")
    rng = np.random.default_rng(p["seed"])
    x, dp, _ = place_tori(n_t, n_p, p["ring_diameter"], p["box"], rng)
    walls = box_walls(p["box"]) if p["walls"] else []
    bodies = Bodies(np.full(n, p["mass"]), np.full(n, p["inertia"]), np.full(n, dp))
    check_no_overlap(x, bodies.D, n_p, walls)
    local = np.arange(n_p)
    first = (np.arange(n_t) * n_p)[:, None]
    bonds = np.stack([(first + local).ravel(), (first + (local + 1) % n_p).ravel()], axis=1)
    ff = bonded_spheres(bodies, x, bonds, p)
    hard = p["contact"] == "hard"
    if walls:
        ff.flags[T_HARD_WALL if hard else T_WALL] = 1
        ff.fp[P_K_WALL] = p["k_wall"]
        ff.set_walls(walls)
    ff.set_gravity(p["g"], (0.0, 0.0, -1.0))
    v = np.repeat(p["velocity_noise"] * rng.standard_normal((n_t, 3)), n_p, axis=0)
    omega = p["spin_noise"] * rng.standard_normal((n, 3))
    q = np.zeros((n, 4))
    q[:, 0] = 1.0
    components = bonded_energy_components(ff, hard, bool(walls), p["g"] != 0.0)
    if walls:
        conserved: tuple[str, ...] = ()
    elif p["g"] != 0.0:
        conserved = ("P_x", "P_y", "L_z")
    else:
        conserved = ("P_x", "P_y", "P_z", "L_x", "L_y", "L_z")
    return Model(
        name="tori-pile",
        title="Pile of particle-binder tori",
        params=p,
        bodies=bodies,
        forcefield=ff,
        initial_state=State(x, v, q, omega),
        energy_components=components,
        conserved=conserved,
        draw_diameter=bodies.D.copy(),
        wall=walls[0] if walls else None,
        walls=walls,
        contact="hard" if hard else "penalty",
        # measured (rrp-newmark, default pile, t = 5): 1 % between h = 3e-3 and 4e-3
        # (0.48 % at 3.3e-3, 1.9 % at 4e-3); c = hω/√ε with ω_max at t = 0, ≈ 438 since the
        # estimate counts the floor impacts to come (issue #42 item 2; the binder's 181
        # before, c = 6); hard contacts not calibrated
        accuracy_c=None if hard else 14.5,
    )


SPEC = ModelSpec("tori-pile", "Pile of particle-binder tori falling into a box (issue #9)",
                 SCHEMA, build)
