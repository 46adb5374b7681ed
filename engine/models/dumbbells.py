"""Two dumbbells under mutual gravity: the full body problem of Lee, Leok & McClamroch
§5 (docs/physics.md §4.3).

Dumbbell ``i``: two point masses ``m_i/2`` at ``±ρ_i``, ``ρ_i = [l_i/2, 0, 0]`` (body
frame), body-frame inertia ``𝕁_i = diag(...)`` (not spherical: only the schemes that
take an inertia tensor apply).  ``U = −Σ_pq G (m₁/2)(m₂/2)/|x₁ + R₁ρ₁p − x₂ − R₂ρ₂q|``.
The defaults are the paper's normalised data and initial state; ``G = 1/(m₁ + m₂)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..forcefield import ForceField
from ..layout import P_DB_G, P_DB_L, P_DB_M, T_DUMBBELLS
from ..rotations import quat_from_rrp, quat_to_matrix
from ..state import Bodies, State
from .base import Model, ModelSpec, Param, ParameterError

SCHEMA = (
    Param("mass1", "float", 1.5, "mass m₁ of dumbbell 1 (two points of m₁/2)", "", lo=0.0,
          lo_open=True),
    Param("length1", "float", 0.25, "length l₁ of dumbbell 1 (points at ±l₁/2 along its "
          "body x axis)", "", lo=0.0, lo_open=True),
    Param("inertia1", "vec3", [0.0004, 0.0238, 0.0238],
          "principal moments of inertia 𝕁₁ = diag(·) (body frame)", "", lo=0.0, lo_open=True),
    Param("mass2", "float", 3.0, "mass m₂ of dumbbell 2", "", lo=0.0, lo_open=True),
    Param("length2", "float", 0.5, "length l₂ of dumbbell 2", "", lo=0.0, lo_open=True),
    Param("inertia2", "vec3", [0.0030, 0.1905, 0.1905],
          "principal moments of inertia 𝕁₂ = diag(·) (body frame)", "", lo=0.0, lo_open=True),
    Param("G", "float", 1.0 / 4.5, "gravitational constant (published: 1/(m₁ + m₂))", "",
          lo=0.0),
    Param("x1", "vec3", [0.67, 0.0, 0.2], "initial position of dumbbell 1 (= x₂ + [1, 0, 0.3])"),
    Param("v1", "vec3", [0.0, 0.67, 0.0], "initial velocity of dumbbell 1 (= v₂ + [0, 1, 0])"),
    Param("alpha1", "vec3", [0.0, 0.0, 0.0], "initial attitude R₁ as RRP (default: I)"),
    Param("omega1", "vec3", [0.0, 0.0, 9.0], "initial body-frame angular velocity ω₁",
          "rad/s"),
    Param("x2", "vec3", [-0.33, 0.0, -0.1], "initial position of dumbbell 2"),
    Param("v2", "vec3", [0.0, -0.33, 0.0], "initial velocity of dumbbell 2"),
    Param("alpha2", "vec3", [0.0, 0.0, 0.0], "initial attitude R₂ as RRP (default: I)"),
    Param("omega2", "vec3", [0.0, 0.0, 0.0], "initial body-frame angular velocity ω₂",
          "rad/s"),
)


def build(p: dict[str, Any]) -> Model:
    inertia = np.array([np.diag(p["inertia1"]), np.diag(p["inertia2"])])
    if not (np.array(p["inertia1"]) > 0).all() or not (np.array(p["inertia2"]) > 0).all():
        raise ParameterError("inertia1 and inertia2 must be positive principal moments")
    m = np.array([p["mass1"], p["mass2"]])
    J = np.trace(inertia, axis1=1, axis2=2) / 3.0
    lengths = np.array([p["length1"], p["length2"]])
    bodies = Bodies(m, J, 0.2 * lengths, inertia=inertia)
    ff = ForceField(bodies.m, bodies.J, bodies.D, inertia=inertia)
    ff.flags[T_DUMBBELLS] = 1
    ff.fp[P_DB_G] = p["G"]
    ff.fp[P_DB_M:P_DB_M + 2] = m
    ff.fp[P_DB_L:P_DB_L + 2] = lengths
    x = np.array([p["x1"], p["x2"]])
    if np.linalg.norm(x[0] - x[1]) <= 0.5 * lengths.sum():
        raise ParameterError("the dumbbells start too close (|x₁ − x₂| ≤ (l₁ + l₂)/2); "
                             "move x1 or x2 apart")
    q = quat_from_rrp(np.array([p["alpha1"], p["alpha2"]]))
    R = quat_to_matrix(q)
    omega = np.einsum("nij,nj->ni", R, np.array([p["omega1"], p["omega2"]]))
    state = State(x, np.array([p["v1"], p["v2"]]), q, omega)
    half = 0.5 * lengths
    points = np.zeros((2, 2, 3))
    points[:, 0, 0] = half
    points[:, 1, 0] = -half
    return Model(  # (name, title, params, bodies, forcefield, initial_state)
        "dumbbells", "Two dumbbells under mutual gravity", p, bodies, ff, state,
        energy_components=("translational", "rotational", "mutual gravity"),
        conserved=("P_x", "P_y", "P_z", "L_x", "L_y", "L_z"),
        draw_diameter=0.2 * lengths,
        shape="dumbbell",
        body_points=points,
    )


SPEC = ModelSpec("dumbbells", "Two dumbbells under mutual gravity (LLM §5)", SCHEMA, build)
