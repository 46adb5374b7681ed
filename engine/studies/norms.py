"""Error measures of docs/physics.md §5 (Baker & Gonzalez eqs. (35)–(38)).

All integrals are over the sample instants of :class:`~.trajectory.Trajectory`
(trapezoidal rule); a run and its reference must share these instants.

* ``‖q‖²_{H¹} = ∫ Σ_i (|x_i|² + |v_i|² + |θ_i|² + |Ω_i|²) dt`` with
  ``|θ| = 2 arctan(|α|/2)`` the rotation angle of the attitude (B&G eq. (35));
* the paper's q-error ``|‖q_h‖² − ‖q‖²|^{1/2} / ‖q‖`` (B&G eq. (36)): a difference of
  squared norms, whose slope is *half* the order of the method;
* the true distance ``‖q_h − q‖_{H¹} / ‖q‖_{H¹}`` with the rotation part
  ``|log(R_h Rᵀ)|`` (the angle of the relative rotation): slope = the order;
* the E-error ``(∫ (E_h − E₀)² dt)^{1/2} / (∫ E₀² dt)^{1/2}`` (B&G eq. (38)).
"""

from __future__ import annotations

import numpy as np

from .trajectory import Trajectory


def rotation_angle(q: np.ndarray) -> np.ndarray:
    """Angle ``|θ| ∈ [0, π]`` of unit quaternions ``(..., 4)`` (scalar first); equals
    ``2 arctan(|α|/2)`` for the RRP ``α = 2 q_vec/q₀`` (docs/physics.md §2).  Works for
    quaternions that drifted off the unit sphere (``rk4``): only the ratio matters."""
    q = np.asarray(q, dtype=np.float64)
    return 2.0 * np.arctan2(np.linalg.norm(q[..., 1:], axis=-1), np.abs(q[..., 0]))


def relative_rotation_angle(q_h: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``|log(R_h Rᵀ)|``: the angle of ``q_h ⊗ q*``, computed stably as
    ``2 atan2(|vec|, |scalar|)`` of the product."""
    a = np.asarray(q_h, dtype=np.float64)
    b = np.asarray(q, dtype=np.float64)
    w = np.sum(a * b, axis=-1)  # scalar part of a ⊗ b*
    vec = (b[..., :1] * a[..., 1:] - a[..., :1] * b[..., 1:]
           - np.cross(a[..., 1:], b[..., 1:]))
    return 2.0 * np.arctan2(np.linalg.norm(vec, axis=-1), np.abs(w))


def _integrate(t: np.ndarray, f: np.ndarray) -> float:
    """Trapezoidal rule; a single sample integrates to its value (degenerate grid)."""
    if len(t) < 2:
        return float(f.sum())
    return float(np.sum(0.5 * (f[1:] + f[:-1]) * np.diff(t)))


def h1_integrand(tr: Trajectory) -> np.ndarray:
    """``Σ_i |x_i|² + |v_i|² + |θ_i|² + |Ω_i|²`` at each sample (B&G eq. (35))."""
    return (np.sum(tr.x**2, axis=(1, 2)) + np.sum(tr.v**2, axis=(1, 2))
            + np.sum(rotation_angle(tr.q) ** 2, axis=1) + np.sum(tr.omega**2, axis=(1, 2)))


def h1_norm_squared(tr: Trajectory) -> float:
    """``‖q‖²_{H¹}`` over the sampled interval (B&G eq. (35))."""
    return _integrate(tr.t, h1_integrand(tr))


def _common(tr: Trajectory, ref: Trajectory) -> int:
    n = min(len(tr.t), len(ref.t))
    if n == 0 or not np.allclose(tr.t[:n], ref.t[:n], rtol=0, atol=1e-9 * max(1, tr.t[n - 1])):
        raise ValueError("the run and the reference are not sampled at the same instants")
    if tr.x.shape[1:] != ref.x.shape[1:]:
        raise ValueError("the run and the reference have different numbers of bodies")
    return n


def _cut(tr: Trajectory, n: int) -> Trajectory:
    return Trajectory(tr.t[:n], tr.x[:n], tr.v[:n], tr.q[:n], tr.omega[:n], tr.energy[:n],
                      tr.e0, tr.e_scale)


def paper_q_error(tr: Trajectory, ref: Trajectory) -> float:
    """``|‖q_h‖² − ‖q‖²|^{1/2} / ‖q‖`` (B&G eq. (36)) over the instants both runs reached."""
    n = _common(tr, ref)
    a, b = h1_norm_squared(_cut(tr, n)), h1_norm_squared(_cut(ref, n))
    return float(np.sqrt(abs(a - b) / b)) if b > 0 else float("nan")


def h1_distance(tr: Trajectory, ref: Trajectory) -> float:
    """``‖q_h − q‖_{H¹} / ‖q‖_{H¹}`` with the rotation part ``|log(R_h Rᵀ)|``."""
    n = _common(tr, ref)
    a, b = _cut(tr, n), _cut(ref, n)
    d = (np.sum((a.x - b.x) ** 2, axis=(1, 2)) + np.sum((a.v - b.v) ** 2, axis=(1, 2))
         + np.sum(relative_rotation_angle(a.q, b.q) ** 2, axis=1)
         + np.sum((a.omega - b.omega) ** 2, axis=(1, 2)))
    norm2 = h1_norm_squared(b)
    return float(np.sqrt(_integrate(a.t, d) / norm2)) if norm2 > 0 else float("nan")


def energy_error(tr: Trajectory) -> float:
    """``(∫ (E_h − E₀)² dt)^{1/2} / (∫ E₀² dt)^{1/2}`` (B&G eq. (38)); the exact energy
    is the constant ``E₀``, so no reference run is needed."""
    num = _integrate(tr.t, (tr.energy - tr.e0) ** 2)
    den = _integrate(tr.t, np.full(len(tr.t), tr.e0**2))
    return float(np.sqrt(num / den)) if den > 0 else float("nan")
