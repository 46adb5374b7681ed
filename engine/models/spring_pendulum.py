"""The planar spring pendulum with a frictionless wall (Capobianco, Eugster & Leine's
benchmark; physics.md §4.4), a model in generalized coordinates.

A point mass ``m`` on a linear spring (stiffness ``k``, rest length ``l₀``) hinged at a
pivot at the origin, under gravity ``g`` along ``−y``, with a rigid wall ``x ≥ x_w``
(gap ``g_N = x − x_w``) and Newton's impact law with restitution ``e_N``.  Written in
polar ``q = (r, φ)`` or Cartesian ``q = (x, y)`` coordinates (``coordinates``); driven
by the Moreau-type schemes of :mod:`engine.generalized.schemes` through
:class:`engine.generalized.simulation.GeneralizedSimulation`.

The view sees one body at ``(x, y, 0)``, turned about ``z`` by the pendulum angle
``φ = atan2(x, −y)`` (``Ω = (0, 0, φ̇)``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..forcefield import ForceField
from ..generalized.spring_pendulum import COORDINATES, system_array
from ..state import Bodies, State
from .base import Model, ModelSpec, Param, ParameterError

SCHEMA = (
    Param("coordinates", "choice", "polar",
          "generalized coordinates of the model: polar q = (r, φ) (M(q) = diag(m, m r²), "
          "velocity-dependent h(q, u): the schemes are implicit) or cartesian q = (x, y) "
          "(constant M, h = f(q))", choices=COORDINATES),
    Param("mass", "float", 1.0, "mass m of the bob", "kg", lo=0.0, lo_open=True),
    Param("k", "float", 100.0, "spring stiffness k", "N/m", lo=0.0, lo_open=True),
    Param("l0", "float", 1.0, "rest length l₀ of the spring", "m", lo=0.0, lo_open=True),
    Param("g", "float", 10.0, "gravitational acceleration g (along −y)", "m/s²", lo=0.0),
    Param("wall_x", "float", -0.5,
          "wall position x_w: the bob stays in x ≥ x_w (gap g_N = x − x_w)", "m"),
    Param("e_n", "float", 1.0,
          "Newton's normal restitution e_N (1: conservative impacts, 0: plastic)",
          lo=0.0, hi=1.0, why="Newton's law: 1 keeps the normal speed, 0 stops it; above 1 "
          "an impact would create energy"),
    Param("x0", "float", 1.0, "initial position x₀ of the bob", "m"),
    Param("y0", "float", 0.0, "initial position y₀ of the bob", "m"),
    Param("vx0", "float", 0.0, "initial velocity ẋ₀", "m/s"),
    Param("vy0", "float", 0.0, "initial velocity ẏ₀", "m/s"),
    Param("diameter", "float", 0.1, "drawn diameter of the bob (drawing only)", "m",
          lo=0.0, lo_open=True),
)


MIN_START_DISTANCE = 1e-6
"""The least distance of the initial bob from the pivot, in rest lengths ``l₀``."""


@dataclass(frozen=True)
class SpringPendulumSystem:
    """The generalized-coordinate system: ``sp`` is the constant array of the kernels
    (:func:`engine.generalized.spring_pendulum.system_array`)."""

    coordinates: str
    sp: np.ndarray
    x0: tuple[float, float, float, float]
    """Initial ``(x, y, ẋ, ẏ)``."""

    # the entries of ``sp`` by name (system_array's order)
    mass = property(lambda self: float(self.sp[0]))
    stiffness = property(lambda self: float(self.sp[1]))
    rest_length = property(lambda self: float(self.sp[2]))
    gravity = property(lambda self: float(self.sp[3]))


def build(p: dict[str, Any]) -> Model:
    x0, y0 = p["x0"], p["y0"]
    if x0 < p["wall_x"]:
        raise ParameterError(f"x0 = {x0:g} lies behind the wall (x ≥ wall_x = "
                             f"{p['wall_x']:g}); move the bob or the wall")
    r0 = math.hypot(x0, y0)
    if r0 < MIN_START_DISTANCE * p["l0"]:
        raise ParameterError(f"(x0, y0) = ({x0:g}, {y0:g}) puts the bob {r0:g} from the "
                             f"pivot: it must start at least {MIN_START_DISTANCE:g} l₀ = "
                             f"{MIN_START_DISTANCE * p['l0']:g} away (at the pivot the "
                             "spring has no direction and the polar coordinates are "
                             "singular); choose a start away from the origin")
    sp = system_array(p["mass"], p["k"], p["l0"], p["g"], p["wall_x"], p["e_n"],
                      p["coordinates"])
    system = SpringPendulumSystem(p["coordinates"], sp, (x0, y0, p["vx0"], p["vy0"]))
    d = p["diameter"]
    m = p["mass"]
    bodies = Bodies(np.array([m]), np.array([0.1 * m * d * d]), np.array([d]))
    ff = ForceField(bodies.m, bodies.J, bodies.D)
    phi = math.atan2(x0, -y0)
    r2 = x0 * x0 + y0 * y0
    state = State(np.array([[x0, y0, 0.0]]), np.array([[p["vx0"], p["vy0"], 0.0]]),
                  np.array([[math.cos(phi / 2), 0.0, 0.0, math.sin(phi / 2)]]),
                  np.array([[0.0, 0.0, (x0 * p["vy0"] - y0 * p["vx0"]) / r2]]))
    return Model(  # (name, title, params, bodies, forcefield, initial_state)
        "spring-pendulum", "Spring pendulum with a wall", p, bodies, ff, state,
        energy_components=("translational", "spring", "gravity", "dissipated"),
        conserved=(),
        draw_diameter=np.array([d]),
        pivot=np.zeros(3),
        wall=(np.array([1.0, 0.0, 0.0]), p["wall_x"]),
        contact="hard",
        coordinates="generalized",
        system=system,
        spring=(np.zeros(3), p["l0"]),
    )


SPEC = ModelSpec("spring-pendulum", "Spring pendulum with a wall (CEL benchmark)", SCHEMA,
                 build)
