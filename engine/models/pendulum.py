"""The 3D pendulum on SO(3) (Baker & Gonzalez §3, docs/physics.md §4.1).

One rigid body hinged at a fixed pivot at the origin; ``ρ₀ = e₃`` points from the centre
of mass to the pivot, so the bob is drawn at ``-R ρ₀``.  ``J`` is the inertia about the
pivot.  ``U(R) = -m g e₃ · R ρ₀``; the translational state stays at rest.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..forcefield import ForceField
from ..layout import P_MG, P_RHO0, T_PIVOT_GRAVITY
from ..rotations import quat_from_rrp
from ..state import Bodies, State
from .base import Model, ModelSpec, Param

RHO0 = np.array([0.0, 0.0, 1.0])

SCHEMA = (
    Param("mass", "float", 1.0, "mass of the bob", "kg", lo=0.0, lo_open=True),
    Param("g", "float", 1.0, "gravitational acceleration (along -e₃)", "m/s²", lo=0.0),
    Param("inertia", "float", 1.0, "scalar moment of inertia about the pivot", "kg m²",
          lo=0.0, lo_open=True),
    Param("alpha0", "vec3", [0.0, 2.0 * math.tan(3.0 * math.pi / 8.0), 0.0],
          "initial attitude as rescaled Rodrigues parameters (default: 135° about y)"),
    Param("omega0", "vec3", [0.2, 0.0, 0.2], "initial spatial angular velocity Ω₀", "rad/s"),
)


def build(p: dict[str, Any]) -> Model:
    bodies = Bodies(np.array([p["mass"]]), np.array([p["inertia"]]), np.array([0.0]))
    ff = ForceField(bodies.m, bodies.J, bodies.D)
    ff.flags[T_PIVOT_GRAVITY] = 1
    ff.fp[P_MG] = p["mass"] * p["g"]
    ff.fp[P_RHO0:P_RHO0 + 3] = RHO0
    q0 = quat_from_rrp(np.array([p["alpha0"]]))
    state = State(np.zeros((1, 3)), np.zeros((1, 3)), q0, np.array([p["omega0"]]))
    return Model(  # (name, title, params, bodies, forcefield, initial_state)
        "pendulum", "3D pendulum", p, bodies, ff, state,
        energy_components=("rotational", "gravity"),
        conserved=("L_z",),
        draw_offset=-RHO0,
        draw_diameter=np.array([0.3]),
        pivot=np.zeros(3),
        accuracy_c=0.95,  # rrp-exact, lgvi: ε = (hω/0.95)² (docs/physics.md §7)
    )


SPEC = ModelSpec("pendulum", "3D pendulum (B&G §3)", SCHEMA, build)
