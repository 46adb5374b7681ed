"""What the views draw of a model's dipoles, fields and stages (issue #44 item 7): the
spatial dipoles, the field at a time and the stage a time falls in — computed here, so
that the app (live window, replay, ``rrp export``) only draws them.

* The spatial dipole of sphere ``i`` is ``R_i μ_i`` (``μ_i`` fixed in its body frame,
  LAMMPS's ``dipole`` columns with ``fix nve/bpm/sphere update dipole``;
  ``engine.potentials.fields``).
* The field of a row at ``t`` is ``s(t) E₀`` (``engine.potentials.fields.ramp_scale``:
  LAMMPS's ``c*ramp(a,b)``); the rows in force are the top-level ``[[fields]]`` and the
  current stage's, its ramp from the stage's start ``t₀`` to its end ``t₁``
  (``engine.models.stages.stage_arrays``), as the driver puts them on its force field.
* A stage's span ``(k, t₀, t₁)``: from the run's stage events where a run file has them
  (``Event("stage", …)`` at each boundary), else counted in steps at ``h`` from ``t = 0``
  (``engine.models.stages.stage_steps``), as the driver enters them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ..potentials.fields import (
    FI_GAMMA,
    FI_GAMMA_ROT,
    FI_GROUP,
    FI_MU,
    FI_ROWS,
    R_E,
    R_GROUP,
    ramp_scale,
)
from ..rotations import quat_to_matrix
from .stages import stage_arrays, stage_steps


def world_dipoles(model: Any, q: np.ndarray) -> np.ndarray:
    """``R_i μ_i`` of every sphere at the attitudes ``q`` ``(n, 4)``: ``(n, 3)``, or
    ``(0, 3)`` for a model without dipoles (module docstring)."""
    mu = np.asarray(model.forcefield.fields[FI_MU], dtype=np.float64)
    if mu.shape[0] == 0 or not np.any(mu):
        return np.zeros((0, 3))
    R = quat_to_matrix(np.asarray(q, dtype=np.float64))
    return np.einsum("nij,nj->ni", R, mu)


def has_fields(model: Any) -> bool:
    """Whether the model has a field at any time: top-level rows or a stage's."""
    rows = model.forcefield.fields[FI_ROWS]
    return rows.shape[0] > 0 or any(s.fields for s in getattr(model, "stages", ()) or ())


def stage_spans(model: Any, h: float, events: Iterable[Any] = ()
                ) -> list[tuple[int, float, float]]:
    """``(k, t₀, t₁)`` of each stage of ``model`` (``[]``: none): the boundaries at the
    times of the ``"stage"`` ``events`` where given (a run file's), the others counted
    in steps of ``h`` (module docstring)."""
    stages = tuple(getattr(model, "stages", ()) or ())
    if not stages:
        return []
    at = sorted(float(e.t) for e in events if getattr(e, "kind", "") == "stage")
    spans, t0 = [], 0.0
    for k, s in enumerate(stages):
        t1 = at[k] if k < len(at) else t0 + stage_steps(s, h, k, exact=False) * h
        spans.append((k, t0, t1))
        t0 = t1
    return spans


def stage_at(spans: list[tuple[int, float, float]], t: float
             ) -> tuple[int, float, float] | None:
    """The span of :func:`stage_spans` that ``t`` falls in (a boundary belongs to the
    stage it ends, whose field the frame there was recorded with: the next stage is
    entered at the step after, ``engine.simulation.stages``; as the export's overlay
    counts it, ``app.export.track.stage_at``; after the last, the last), ``None``
    without stages."""
    for span in spans:
        if t <= span[2] + 1e-9 * max(1.0, abs(span[2])):
            return span
    return spans[-1] if spans else None


def field_rows(model: Any, span: tuple[int, float, float] | None) -> np.ndarray:
    """The field rows in force during ``span`` (``None``: the top-level ones)."""
    f = model.forcefield.fields
    if span is None:
        return np.asarray(f[FI_ROWS])
    k, t0, t1 = span
    groups = np.asarray(f[FI_GROUP])
    n = groups.shape[0]
    base = (np.asarray(f[FI_ROWS]), np.zeros(n), np.zeros(n))
    rows, _, _ = stage_arrays(model.stages[k], groups, base, t0, t1)
    return rows


def field_at(model: Any, t: float, span: tuple[int, float, float] | None = None
             ) -> np.ndarray:
    """``Σ_rows s(t) E₀``: the field on the model at ``t`` (``(3,)``; rows on different
    groups add — the metamaterial has one, on its magnets) during ``span``."""
    out = np.zeros(3)
    for row in field_rows(model, span):
        s, _ = ramp_scale(row, float(t))
        out += s * row[R_E:R_E + 3]
    return out


def field_peak(model: Any) -> float:
    """The largest ``|E|`` a field row of the model reaches (top-level or in a stage, at
    its ramp's ends): the scale of the view's field arrow."""
    peak = 0.0
    stages = getattr(model, "stages", ()) or ()
    for span in [None, *((k, 0.0, 1.0) for k in range(len(stages)))]:
        for row in field_rows(model, span):
            e = float(np.linalg.norm(row[R_E:R_E + 3]))
            peak = max(peak, e * max(abs(row[6]), abs(row[7])))
    return peak


def field_groups(model: Any) -> list[int]:
    """The groups the field rows act on (``-1``: every sphere), top-level and staged."""
    gs = {int(r[R_GROUP]) for r in model.forcefield.fields[FI_ROWS]}
    for s in getattr(model, "stages", ()) or ():
        gs |= {int(f.group) for f in s.fields}
    return sorted(gs)


def dissipation_sources(model: Any) -> tuple[str, ...]:
    """What the model's ``dissipated`` energy is the work of: ``"impacts"`` and
    ``"friction"`` (hard contacts), ``"damping"`` (viscous damping, top-level or in a
    stage) — the legend says which."""
    out: tuple[str, ...] = ()
    if getattr(model, "contact", "none") == "hard":
        out += ("impacts", "friction")
    f = model.forcefield.fields
    damped = bool(np.any(f[FI_GAMMA]) or np.any(f[FI_GAMMA_ROT])) or any(
        d.gamma > 0 or d.gamma_rot > 0 for s in getattr(model, "stages", ()) or ()
        for d in s.damping)
    if damped:
        out += ("damping",)
    return out
