"""What the worker reports of a run besides its state (issue #34: split out of
``app/gui/worker.py``): a body's data for the inspector (:func:`body_report`) and the
status bar's words for the hard-contact solver (:func:`contact_summary`,
:func:`contact_details`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from engine.diagnostics import body_rotational_energy
from engine.rotations import quat_to_matrix


def contact_summary(stats: dict[str, float] | None) -> str:
    """The status-bar text of a hard-contact run's :attr:`Simulation.contact_stats`:
    percussions (contacts with ``P_N > 0``) / active contacts of the last step, impacts so
    far, the solver's mean and largest iteration counts (the tooltip,
    :func:`contact_details`, says it in words)."""
    if not stats:
        return ""
    solves = stats.get("solves", 0.0)
    mean = stats.get("mean", stats.get("iterations", 0.0) / solves if solves else 0.0)
    return (f"percussions {stats.get('percussions', 0):.0f}/{stats.get('contacts', 0):.0f}"
            f" · impacts {stats.get('impacts', 0):,.0f} · sweeps mean {mean:.1f} max "
            f"{stats.get('max_iterations', 0):.0f}")


def contact_details(stats: dict[str, float] | None) -> str:
    """The longer form (a tooltip): :func:`contact_summary` and the largest penetration."""
    if not stats:
        return ""
    return (f"hard contacts — last step: {stats.get('percussions', 0):.0f} percussions "
            f"(P_N > 0) of {stats.get('contacts', 0):.0f} active contacts (g_N ≤ 0); "
            f"{stats.get('impacts', 0):,.0f} contact-steps with P_N > 0 so far; "
            f"{stats.get('solves', 0):,.0f} solves, {stats.get('iterations', 0):,.0f} "
            f"iterations (largest {stats.get('max_iterations', 0):.0f}); largest "
            f"penetration −g_N = {stats.get('penetration', 0):.3g}")


def body_report(model: Any, i: int, x: np.ndarray, v: np.ndarray, q: np.ndarray,
                omega: np.ndarray) -> dict[str, Any]:
    """What the inspector shows of body ``i`` at the state ``(x, v, q, ω)``: position
    (and the drawn centre where it differs), velocity, spin, its kinetic energies
    ``½ m|v|²`` and ``½ ω·𝕁ω``, and its active contacts.

    Contacts are counted from the positions: a sphere model with contacts (penalty or
    hard) touches another sphere when their centres are closer than the sum of the radii
    and the wall when its centre is closer to the wall plane than its radius (``g_N <
    0``, the gap of both contact models); models without contacts give ``None``."""
    b = model.bodies
    R = quat_to_matrix(q[i:i + 1])[0]
    out: dict[str, Any] = {"index": int(i), "n": int(model.n_bodies), "x": x[i].copy(),
                           "v": v[i].copy(), "omega": omega[i].copy()}
    offset = np.asarray(model.draw_offset, float)
    if np.any(offset != 0):
        out["drawn"] = x[i] + R @ offset
    m = float(np.asarray(b.m)[i])
    out["e_translational"] = 0.5 * m * float(v[i] @ v[i])
    if b.spherical:
        e_rot = body_rotational_energy(b.J[i:i + 1], omega[i:i + 1])
    else:
        e_rot = body_rotational_energy(b.J[i:i + 1], omega[i:i + 1], q[i:i + 1],
                                       b.inertia[i:i + 1])
    out["e_rotational"] = float(np.asarray(e_rot).ravel()[0])
    contact = getattr(model, "contact", "none")
    if contact == "none" or getattr(model, "shape", "sphere") != "sphere":
        out["contacts"] = None
        return out
    diam = model.draw_diameter if model.draw_diameter is not None else b.D
    r = 0.5 * np.asarray(diam, float)
    c = x + np.einsum("nij,j->ni", quat_to_matrix(q), offset) if np.any(offset) else x
    d = np.linalg.norm(c - c[i], axis=1)
    touching = np.flatnonzero(d < (r + r[i]) * (1.0 - 1e-9))
    touching = touching[touching != i]
    out["neighbours"] = touching.tolist()
    wall = False
    if model.wall is not None:
        normal, x_w = model.wall
        nrm = np.asarray(normal, float) / np.linalg.norm(normal)
        wall = bool(float(nrm @ c[i]) - float(x_w) < r[i] * (1.0 - 1e-9))
    out["wall"] = wall
    out["contacts"] = len(touching) + int(wall)
    out["model"] = contact
    return out

