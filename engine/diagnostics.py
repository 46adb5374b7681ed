"""Diagnostics (docs/physics.md §5): energies, momenta, invariants, error measures.

Everything here works on plain arrays (a state, or recorded time series), never on a
running simulation, so the GUI, the CLI and the tests share it.
"""

from __future__ import annotations

import math

import numpy as np

from .forcefield import ForceField, evaluate
from .layout import E_ROTATIONAL, E_TRANSLATIONAL, ENERGY_NAMES, P_RHO0, T_PIVOT_GRAVITY
from .rotations import orthogonality_error, quat_to_matrix

MOMENTUM_NAMES = ("P_x", "P_y", "P_z", "L_x", "L_y", "L_z")


def spin_momentum(J: np.ndarray, omega: np.ndarray, q: np.ndarray | None = None,
                  inertia: np.ndarray | None = None) -> np.ndarray:
    """Spatial angular momentum of each body's spin: ``J Ω`` for spheres, ``R 𝕁 Rᵀ Ω``
    when the body-frame tensors ``inertia (n, 3, 3)`` and attitudes ``q`` are given."""
    omega = np.asarray(omega, dtype=float)
    if inertia is None or q is None:
        return np.asarray(J, dtype=float)[:, None] * omega
    R = quat_to_matrix(np.asarray(q, dtype=float))
    return np.einsum("nij,njk,nlk,nl->ni", R, inertia, R, omega)


def body_rotational_energy(J: np.ndarray, omega: np.ndarray, q: np.ndarray | None = None,
                           inertia: np.ndarray | None = None) -> np.ndarray:
    """``½ Ω · R 𝕁 Rᵀ Ω`` of each body (``½ J|Ω|²`` for spheres)."""
    return 0.5 * np.sum(np.asarray(omega) * spin_momentum(J, omega, q, inertia), axis=1)


def rotational_energy(J: np.ndarray, omega: np.ndarray, q: np.ndarray | None = None,
                      inertia: np.ndarray | None = None) -> float:
    """``½ Σ Ω · R 𝕁 Rᵀ Ω`` (``½ Σ J|Ω|²`` for spheres)."""
    return float(np.sum(body_rotational_energy(J, omega, q, inertia)))


def _tensors(ff: ForceField) -> np.ndarray | None:
    return None if ff.spherical else ff.inertia


def energy_components(ff: ForceField, x: np.ndarray, v: np.ndarray, q: np.ndarray,
                      omega: np.ndarray) -> np.ndarray:
    """All energy components (``layout.ENERGY_NAMES`` order) at one state."""
    _, _, e = evaluate(ff, x, q)
    e[E_TRANSLATIONAL] = 0.5 * float(np.sum(ff.m * np.sum(v * v, axis=1)))
    e[E_ROTATIONAL] = rotational_energy(ff.J, omega, q, _tensors(ff))
    return e


def linear_momentum(m: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``P = Σ m v``."""
    return np.einsum("n,nk->k", m, v)


def angular_momentum(m: np.ndarray, J: np.ndarray, x: np.ndarray, v: np.ndarray,
                     omega: np.ndarray, q: np.ndarray | None = None,
                     inertia: np.ndarray | None = None) -> np.ndarray:
    """``L = Σ (x × m v + J Ω)`` about the origin (``R 𝕁 Rᵀ Ω`` with tensors)."""
    return (np.cross(x, m[:, None] * v).sum(axis=0)
            + spin_momentum(J, omega, q, inertia).sum(axis=0))


def momentum_scales(m: np.ndarray, J: np.ndarray, x: np.ndarray, v: np.ndarray,
                    omega: np.ndarray, q: np.ndarray | None = None,
                    inertia: np.ndarray | None = None) -> tuple[float, float]:
    """Scales against which momentum drift is relative: ``Σ m|v|`` and
    ``Σ (|x × m v| + |I Ω|)`` (each ≥ the norm of the total; never zero)."""
    p = float(np.sum(m * np.linalg.norm(v, axis=1)))
    lv = float(np.sum(np.linalg.norm(np.cross(x, m[:, None] * v), axis=1)
                      + np.linalg.norm(spin_momentum(J, omega, q, inertia), axis=1)))
    return (p if p > 0 else 1.0), (lv if lv > 0 else 1.0)


AT_REST = 1e-12
"""A start whose ``Σ |E₀ components|`` is below this fraction of the model's stiffness
energy (``engine.stability.stiffness_energy``) is at rest: its ``E₀`` is round-off
(issue #42 item 1: LAMMPS's metamaterial, every sphere at rest, had ``E₀ = 7·10⁻³²``)."""


def energy_scale(e0: np.ndarray, stiffness: float = 0.0) -> float:
    """The scale of the relative energy error ``(E − E₀)/E_scale``, which the blow-up
    check (the energy tolerance) and every plot of the error divide by: ``|E₀|``; or
    ``Σ |components|`` when the total nearly cancels; or, for a start at rest (``Σ
    |components| ≤ AT_REST × stiffness``), ``stiffness``, the model's stiffness energy at
    a diameter's strain (``engine.stability.stiffness_energy``), so that the round-off
    of a resting model is never a blow-up (issue #42 item 1; docs/physics.md §5)."""
    total = abs(float(np.sum(e0)))
    parts = float(np.sum(np.abs(e0)))
    if stiffness > 0.0 and math.isfinite(stiffness) and parts <= AT_REST * stiffness:
        return float(stiffness)
    if total > 1e-8 * parts:
        return total
    return parts if parts > 0 else 1.0


def error_scale_symbol(e_ref: float, e_scale: float) -> str:
    """What a relative energy error was divided by, for the plots' labels: ``"|E₀|"``,
    or ``"E_s"`` for another scale of :func:`energy_scale` (the components nearly cancel
    in ``E₀``, or the model starts at rest: its stiffness energy at a diameter's strain;
    docs/physics.md §5)."""
    if math.isfinite(e_ref) and math.isfinite(e_scale) and e_scale != abs(e_ref):
        return "E_s"
    return "|E₀|"


def relative_energy_error(energy: np.ndarray, e_ref: float, scale: float) -> np.ndarray:
    """``(E - E₀)/E_scale`` for a series of totals (``scale``: :func:`energy_scale`)."""
    return (np.asarray(energy) - e_ref) / scale


def momentum_drift(P: np.ndarray, L: np.ndarray) -> dict[str, float]:
    """Largest ``|c(t) - c(0)|`` of each momentum component over a recorded series."""
    out = {}
    both = np.concatenate([np.asarray(P), np.asarray(L)], axis=1)
    for k, name in enumerate(MOMENTUM_NAMES):
        out[name] = float(np.max(np.abs(both[:, k] - both[0, k]))) if len(both) else 0.0
    return out


def pendulum_invariants(q: np.ndarray, omega: np.ndarray,
                        rho0: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """For frames ``q (n, 4)`` and ``Ω (n, 3)`` of the pendulum: ``Rρ₀·Ω`` (exactly 0 for
    the RRP schemes), ``e₃·Ω``, ``|Rρ₀|`` and ``‖RᵀR - I‖`` (docs/physics.md §4.1)."""
    rho0 = np.array([0.0, 0.0, 1.0]) if rho0 is None else np.asarray(rho0, dtype=float)
    R = quat_to_matrix(q)
    r = R @ rho0
    return {
        "R_rho0_dot_omega": np.einsum("nk,nk->n", r, omega),
        "e3_dot_omega": np.asarray(omega)[:, 2].copy(),
        "norm_R_rho0": np.linalg.norm(r, axis=1),
        "orthogonality_error": orthogonality_error(R),
    }


INVARIANT_NAMES = {"R_rho0_dot_omega": "Rρ₀·Ω", "e3_dot_omega": "e₃·Ω"}
"""The pendulum's invariants a view plots (keys of :func:`pendulum_invariants`), with
their symbols."""


def model_invariant_names(ff: ForceField) -> tuple[str, ...]:
    """Names (:data:`INVARIANT_NAMES` keys) of the invariants that say more about a model
    than its linear momentum, from its force field ``ff``: the pendulum's (pivot gravity:
    no translation, ``P ≡ 0``); ``()`` for the other models."""
    return tuple(INVARIANT_NAMES) if ff.flags[T_PIVOT_GRAVITY] else ()


def fixed_momenta(ff: ForceField) -> tuple[str, ...]:
    """Momentum components (:data:`MOMENTUM_NAMES`) a model holds at zero by construction:
    the pendulum's ``P`` (pivot gravity: no translation, ``P ≡ 0``, as the app's plot
    title says); ``()`` for the other models (issue #33 item 10)."""
    return ("P_x", "P_y", "P_z") if ff.flags[T_PIVOT_GRAVITY] else ()


def model_invariants(ff: ForceField, q: np.ndarray, omega: np.ndarray) -> np.ndarray:
    """The :func:`model_invariant_names` of the model of force field ``ff`` at the rows
    ``q (n, 4)``, ``Ω (n, 3)`` of its body 0, as columns ``(n, k)`` (``k = 0`` for a
    model without such invariants)."""
    names = model_invariant_names(ff)
    if not names:
        return np.zeros((len(q), 0))
    inv = pendulum_invariants(q, omega, np.asarray(ff.fp[P_RHO0:P_RHO0 + 3], dtype=float))
    return np.column_stack([inv[k] for k in names])


def max_orthogonality_error(q: np.ndarray) -> float:
    """``max ‖RᵀR - I‖`` over any array of quaternions ``(..., 4)``."""
    q = np.asarray(q)
    if q.size == 0:
        return 0.0
    return float(orthogonality_error(quat_to_matrix(q.reshape(-1, 4))).max())


__all__ = [
    "ENERGY_NAMES",
    "INVARIANT_NAMES",
    "MOMENTUM_NAMES",
    "angular_momentum",
    "energy_components",
    "energy_scale",
    "error_scale_symbol",
    "linear_momentum",
    "max_orthogonality_error",
    "model_invariant_names",
    "model_invariants",
    "momentum_drift",
    "momentum_scales",
    "pendulum_invariants",
    "relative_energy_error",
    "body_rotational_energy",
    "rotational_energy",
    "spin_momentum",
]
