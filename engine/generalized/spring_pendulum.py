"""The planar spring pendulum with a frictionless wall (physics.md §4.4) in generalized
coordinates: Numba kernels for ``M(q)``, ``h(q, u)``, the gap ``g_N``, its gradient
``w_N``, the energy and the map to the Cartesian picture.

The system's constants live in one float array ``sp`` (slots ``SP_*``).  Two coordinate
variants (``sp[SP_COORD]``):

* polar ``q = (r, φ)``, ``x = r sin φ``, ``y = −r cos φ``:
  ``M = diag(m, m r²)``,
  ``h = (m r φ̇² − k(r − l₀) + m g cos φ, −2 m r ṙ φ̇ − m g r sin φ)``,
  ``g_N = r sin φ − x_w``, ``w_N = (sin φ, r cos φ)`` (physics.md §4.4);
* Cartesian ``q = (x, y)``: ``M = m I``, ``h = f(q) = −k (r − l₀) q/r − m g e_y``,
  ``g_N = x − x_w``, ``w_N = (1, 0)``.

``h(q, u) = −Ṁ u + (∂T/∂q)ᵀ + f`` (CEL §2).  The mass matrix is diagonal in both
variants, which the kernels use (``M`` is returned as its diagonal).  Potential:
``V = ½ k (r − l₀)² + m g y + c`` with ``c = m g l₀ + (m g)²/(2k)``, so that ``V = 0`` at
the static equilibrium ``(0, −l₀ − m g/k)`` (default ``E₀ = 10.5``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

SP_M = 0  # mass m
SP_K = 1  # spring stiffness k
SP_L0 = 2  # rest length l₀
SP_G = 3  # gravitational acceleration g (along −y)
SP_XW = 4  # wall position: the wall is x ≥ x_w (gap g_N = x − x_w)
SP_EN = 5  # Newton's restitution coefficient e_N
SP_OFF = 6  # energy offset c of the gravity component
SP_COORD = 7  # 0: polar (r, φ), 1: Cartesian (x, y)
N_SP = 8

POLAR = 0
CARTESIAN = 1
COORDINATES = ("polar", "cartesian")


def system_array(m: float, k: float, l0: float, g: float, x_wall: float, e_n: float,
                 coordinates: str) -> np.ndarray:
    """The constant array ``sp`` of the kernels (physics.md §4.4)."""
    sp = np.zeros(N_SP)
    sp[SP_M], sp[SP_K], sp[SP_L0], sp[SP_G] = m, k, l0, g
    sp[SP_XW], sp[SP_EN] = x_wall, e_n
    sp[SP_OFF] = m * g * l0 + (m * g) ** 2 / (2.0 * k)
    sp[SP_COORD] = float(COORDINATES.index(coordinates))
    return sp


@njit(nogil=True, cache=True)
def mass_diag(sp, q0, q1):
    """Diagonal of ``M(q)``: ``(m, m r²)`` polar, ``(m, m)`` Cartesian (physics.md §4.4)."""
    m = sp[SP_M]
    if sp[SP_COORD] == POLAR:
        return m, m * q0 * q0
    return m, m


@njit(nogil=True, cache=True)
def forces(sp, q0, q1, u0, u1):
    """``h(q, u) = −Ṁu + (∂T/∂q)ᵀ + f`` (CEL §2; physics.md §4.4)."""
    m, k, l0, g = sp[SP_M], sp[SP_K], sp[SP_L0], sp[SP_G]
    if sp[SP_COORD] == POLAR:
        s, c = math.sin(q1), math.cos(q1)
        return (m * q0 * u1 * u1 - k * (q0 - l0) + m * g * c,
                -2.0 * m * q0 * u0 * u1 - m * g * q0 * s)
    r = math.sqrt(q0 * q0 + q1 * q1)
    a = -k * (r - l0) / r
    return a * q0, a * q1 - m * g


@njit(nogil=True, cache=True)
def forces_du(sp, q0, q1, u0, u1):
    """``∂h/∂u`` as ``(a00, a01, a10, a11)`` (zero in Cartesian coordinates)."""
    m = sp[SP_M]
    if sp[SP_COORD] == POLAR:
        return 0.0, 2.0 * m * q0 * u1, -2.0 * m * q0 * u1, -2.0 * m * q0 * u0
    return 0.0, 0.0, 0.0, 0.0


@njit(nogil=True, cache=True)
def lagrangian_dq(sp, q0, q1, u0, u1):
    """``(∂L/∂q)ᵀ = (∂T/∂q)ᵀ − (∂V/∂q)ᵀ`` for ``L = T − V`` (the variational scheme)."""
    m, k, l0, g = sp[SP_M], sp[SP_K], sp[SP_L0], sp[SP_G]
    if sp[SP_COORD] == POLAR:
        s, c = math.sin(q1), math.cos(q1)
        return m * q0 * u1 * u1 - k * (q0 - l0) + m * g * c, -m * g * q0 * s
    r = math.sqrt(q0 * q0 + q1 * q1)
    a = -k * (r - l0) / r
    return a * q0, a * q1 - m * g


@njit(nogil=True, cache=True)
def lagrangian_dq_du(sp, q0, q1, u0, u1):
    """``∂/∂u (∂L/∂q)ᵀ`` as ``(a00, a01, a10, a11)``."""
    if sp[SP_COORD] == POLAR:
        return 0.0, 2.0 * sp[SP_M] * q0 * u1, 0.0, 0.0
    return 0.0, 0.0, 0.0, 0.0


@njit(nogil=True, cache=True)
def gap(sp, q0, q1):
    """Normal gap ``g_N(q) = x(q) − x_w`` (physics.md §4.4)."""
    if sp[SP_COORD] == POLAR:
        return q0 * math.sin(q1) - sp[SP_XW]
    return q0 - sp[SP_XW]


@njit(nogil=True, cache=True)
def gap_gradient(sp, q0, q1):
    """``w_N(q) = (∂g_N/∂q)ᵀ``: ``(sin φ, r cos φ)`` polar, ``(1, 0)`` Cartesian."""
    if sp[SP_COORD] == POLAR:
        return math.sin(q1), q0 * math.cos(q1)
    return 1.0, 0.0


@njit(nogil=True, cache=True)
def potentials(sp, q0, q1):
    """``(spring, gravity)`` energies: ``½ k (r − l₀)²`` and ``m g y + c``."""
    if sp[SP_COORD] == POLAR:
        r, y = q0, -q0 * math.cos(q1)
    else:
        r, y = math.sqrt(q0 * q0 + q1 * q1), q1
    d = r - sp[SP_L0]
    return 0.5 * sp[SP_K] * d * d, sp[SP_M] * sp[SP_G] * y + sp[SP_OFF]


@njit(nogil=True, cache=True)
def kinetic(sp, q0, q1, u0, u1):
    """``T = ½ uᵀ M(q) u``."""
    m0, m1 = mass_diag(sp, q0, q1)
    return 0.5 * (m0 * u0 * u0 + m1 * u1 * u1)


@njit(nogil=True, cache=True)
def cartesian(sp, q0, q1, u0, u1):
    """Position and velocity in the plane: ``(x, y, ẋ, ẏ)``."""
    if sp[SP_COORD] == POLAR:
        s, c = math.sin(q1), math.cos(q1)
        return q0 * s, -q0 * c, u0 * s + q0 * c * u1, -u0 * c + q0 * s * u1
    return q0, q1, u0, u1


@njit(nogil=True, cache=True)
def generalized(sp, x, y, vx, vy):
    """Inverse of :func:`cartesian`: ``(q0, q1, u0, u1)`` from ``(x, y, ẋ, ẏ)``."""
    if sp[SP_COORD] == POLAR:
        r = math.sqrt(x * x + y * y)
        phi = math.atan2(x, -y)
        s, c = math.sin(phi), math.cos(phi)
        # ẋ = ṙ s + r c φ̇, ẏ = −ṙ c + r s φ̇
        return r, phi, vx * s - vy * c, (vx * c + vy * s) / r
    return x, y, vx, vy


# ---------------------------------------------------------------- array wrappers (tests)
def mass_matrix(sp: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``M(q)`` as a 2×2 array."""
    return np.diag(mass_diag(sp, float(q[0]), float(q[1])))


def force_vector(sp: np.ndarray, q: np.ndarray, u: np.ndarray) -> np.ndarray:
    """``h(q, u)`` as an array."""
    return np.array(forces(sp, float(q[0]), float(q[1]), float(u[0]), float(u[1])))


def potential(sp: np.ndarray, q: np.ndarray) -> float:
    """``V(q)`` (spring + gravity)."""
    a, b = potentials(sp, float(q[0]), float(q[1]))
    return a + b
