"""The state of N rigid bodies as a struct of arrays.

Kinematics (:class:`State`) and constants (:class:`Bodies`) are kept apart: integrators
change the first and read the second.  Per-scheme internal variables (e.g. the body
angular momentum ``Π`` of a Lie group variational integrator) live in ``State.aux`` and
are derived from the physical state when a scheme is switched on, so the physical state
``(x, v, q, Ω)`` is the one thing all schemes share.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .rotations import quat_to_matrix


@dataclass
class Bodies:
    """Constant properties: mass ``m``, scalar inertia ``J`` (spheres; about the pivot
    for the pendulum), diameter ``D`` and a body-frame inertia tensor ``inertia``
    (``J I`` for spheres; the general form is for non-spherical bodies)."""

    m: np.ndarray
    J: np.ndarray
    D: np.ndarray
    inertia: np.ndarray | None = None

    def __post_init__(self) -> None:
        self.m = np.ascontiguousarray(self.m, dtype=np.float64)
        self.J = np.ascontiguousarray(self.J, dtype=np.float64)
        self.D = np.ascontiguousarray(self.D, dtype=np.float64)
        n = self.m.shape[0]
        if self.J.shape != (n,) or self.D.shape != (n,):
            raise ValueError("m, J and D must have one entry per body")
        if self.inertia is None:
            self.inertia = self.J[:, None, None] * np.eye(3)[None]
        self.inertia = np.ascontiguousarray(self.inertia, dtype=np.float64)

    @property
    def n(self) -> int:
        return int(self.m.shape[0])

    @property
    def spherical(self) -> bool:
        """True when every body's inertia tensor is a multiple of the identity."""
        iso = self.J[:, None, None] * np.eye(3)[None]
        return bool(np.allclose(self.inertia, iso, rtol=0.0, atol=1e-15 * max(1.0, self.J.max())))


@dataclass
class State:
    """Physical state: position ``x``, velocity ``v``, attitude ``q`` (unit quaternion,
    scalar first, body → inertial) and **spatial** angular velocity ``omega`` (Ω = R ω),
    each of shape ``(N, 3)`` / ``(N, 4)``."""

    x: np.ndarray
    v: np.ndarray
    q: np.ndarray
    omega: np.ndarray
    aux: dict[str, np.ndarray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.x = np.ascontiguousarray(self.x, dtype=np.float64)
        self.v = np.ascontiguousarray(self.v, dtype=np.float64)
        self.q = np.ascontiguousarray(self.q, dtype=np.float64)
        self.omega = np.ascontiguousarray(self.omega, dtype=np.float64)
        n = self.x.shape[0]
        for name, a, w in (("x", self.x, 3), ("v", self.v, 3), ("q", self.q, 4),
                           ("omega", self.omega, 3)):
            if a.shape != (n, w):
                raise ValueError(f"state array {name} has shape {a.shape}, expected ({n}, {w})")

    @property
    def n(self) -> int:
        return int(self.x.shape[0])

    def rotation_matrices(self) -> np.ndarray:
        """``R_i`` (body → inertial), shape ``(N, 3, 3)``."""
        return quat_to_matrix(self.q)

    def body_omega(self) -> np.ndarray:
        """Body-frame angular velocity ``ω = Rᵀ Ω``."""
        return np.einsum("nji,nj->ni", self.rotation_matrices(), self.omega)

    def copy(self) -> State:
        return State(self.x.copy(), self.v.copy(), self.q.copy(), self.omega.copy(),
                     {k: a.copy() for k, a in self.aux.items()})

    def is_finite(self) -> bool:
        return bool(np.isfinite(self.x).all() and np.isfinite(self.v).all()
                    and np.isfinite(self.q).all() and np.isfinite(self.omega).all())
