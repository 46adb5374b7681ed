"""The dipoles, the field and the stage in the 3D scene (issue #44 item 7): each
sphere's dipole drawn as an arrow through it (a compass needle, fixed in its body: it
turns with the sphere), the field as one arrow beside the model, as long as the field's
current magnitude over its largest, with a label giving the magnitude, and the stage
with its time in the view's corner.

Pure PyVista, as :mod:`app.scene`: the live window, its replay and ``rrp export`` draw
it on their plotters.  What is drawn comes from the engine
(:mod:`engine.models.field_view`: the spatial dipoles ``R_i μ_i``, the field at ``t``
in the stage in force, the stages' spans): the scene only places arrows.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyvista as pv

from engine.models.field_view import (
    field_at,
    field_peak,
    has_fields,
    stage_at,
    world_dipoles,
)

DIPOLE_COLOUR = "#e8000b"
"""The dipole arrows (red: apart from the groups' colours)."""
FIELD_COLOUR = "#6a3d9a"
"""The field arrow and its label (purple)."""
DIPOLE_REACH = 3.0
"""A dipole arrow's length in its sphere's diameters (centred on the sphere: its tip and
tail stick out of it)."""
FIELD_SHARE = 0.3
"""The field arrow's length at the field's largest magnitude, in the model's size."""


def _arrow_template(resolution: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """Points and faces of an arrow of length 1 along +x from −½ to +½."""
    a = pv.Arrow(start=(-0.5, 0.0, 0.0), direction=(1.0, 0.0, 0.0), scale=1.0,
                 tip_length=0.35, tip_radius=0.16, shaft_radius=0.06,
                 tip_resolution=resolution, shaft_resolution=resolution).triangulate()
    return np.asarray(a.points, dtype=np.float64), np.asarray(a.faces).reshape(-1, 4)[:, 1:]


def _frames(d: np.ndarray) -> np.ndarray:
    """``(m, 3, 3)`` rotations taking ``+x`` to each unit vector ``d`` (rows ``(m, 3)``):
    columns ``d``, ``u``, ``d × u`` (drawing only: where an arrow points)."""
    m = d.shape[0]
    helper = np.where(np.abs(d[:, :1]) < 0.9, np.array([[1.0, 0.0, 0.0]]),
                      np.array([[0.0, 1.0, 0.0]]))
    u = np.cross(d, helper)
    u /= np.maximum(np.linalg.norm(u, axis=1, keepdims=True), 1e-300)
    w = np.cross(d, u)
    out = np.empty((m, 3, 3))
    out[:, :, 0], out[:, :, 1], out[:, :, 2] = d, u, w
    return out


class FieldScene:
    """The dipole arrows, the field arrow and the stage line of ``model`` on
    ``plotter``; :meth:`update` with each state (its time, and the stage span it is in:
    ``engine.models.field_view.stage_spans``).  Build it with :meth:`for_model`, which
    gives ``None`` for a model with neither dipoles nor fields nor stages."""

    def __init__(self, plotter: pv.BasePlotter, model: Any, diameter: np.ndarray,
                 spans: list[tuple[int, float, float]] | None = None,
                 font_size: int = 10, caption: bool = True) -> None:
        self.plotter = plotter
        self.model = model
        self.spans = list(spans or [])
        st = model.initial_state
        mu = world_dipoles(model, st.q)
        norm = np.linalg.norm(mu, axis=1) if mu.size else np.zeros(0)
        self.dipole_bodies = np.flatnonzero(norm > 0)
        """The spheres that carry a dipole (the others get no arrow)."""
        self.length = DIPOLE_REACH * np.asarray(diameter, float)[self.dipole_bodies]
        self._tpl, faces = _arrow_template()
        k = self._tpl.shape[0]
        self.mesh: pv.PolyData | None = None
        if self.dipole_bodies.size:
            m = self.dipole_bodies.size
            tri = (faces[None, :, :] + k * np.arange(m)[:, None, None]).reshape(-1, 3)
            cells = np.hstack([np.full((tri.shape[0], 1), 3), tri]).ravel()
            self.mesh = pv.PolyData(np.zeros((m * k, 3)), cells)
            self._place(self.mesh, np.asarray(st.x, float)[self.dipole_bodies],
                        mu[self.dipole_bodies], self.length)
            self.dipole_actor = plotter.add_mesh(self.mesh, color=DIPOLE_COLOUR,
                                                 smooth_shading=False, name="rrp-dipoles",
                                                 reset_camera=False, render=False)
        self.peak = field_peak(model) if has_fields(model) else 0.0
        self.n_stages = len(getattr(model, "stages", ()) or ())
        x0 = np.asarray(st.x, float)
        lo, hi = x0.min(axis=0), x0.max(axis=0)
        self.size = float(max(np.linalg.norm(hi - lo), np.max(diameter), 1e-12))
        self.field_base = np.array([hi[0] + 0.12 * self.size, 0.5 * (lo[1] + hi[1]),
                                    0.5 * (lo[2] + hi[2])])
        self.field_mesh: pv.PolyData | None = None
        self.field = np.zeros(3)
        if self.peak > 0:
            self.field_mesh = pv.PolyData(np.zeros((k, 3)),
                                          np.hstack([np.full((faces.shape[0], 1), 3),
                                                     faces]).ravel())
            self.field_actor = plotter.add_mesh(self.field_mesh, color=FIELD_COLOUR,
                                                name="rrp-field", reset_camera=False,
                                                render=False)
        self.text = ""
        self._caption = None
        if caption and (self.peak > 0 or self.n_stages):
            self._caption = plotter.add_text(" ", position="lower_left",
                                             font_size=font_size, color=FIELD_COLOUR,
                                             name="rrp-field-label", render=False)
        self.update(0.0, st.x, st.q)

    @classmethod
    def for_model(cls, plotter: pv.BasePlotter, model: Any, diameter: np.ndarray,
                  spans: list[tuple[int, float, float]] | None = None, **kw: Any
                  ) -> FieldScene | None:
        """The scene of ``model``'s dipoles, field and stages, ``None`` where it has
        none of them."""
        mu = world_dipoles(model, model.initial_state.q)
        if not (mu.size or has_fields(model) or getattr(model, "stages", ())):
            return None
        return cls(plotter, model, diameter, spans, **kw)

    def _place(self, mesh: pv.PolyData, centres: np.ndarray, d: np.ndarray,
               length: np.ndarray) -> None:
        """Arrows of ``length`` through ``centres`` along ``d`` (in place)."""
        n = np.linalg.norm(d, axis=1, keepdims=True)
        rot = _frames(d / np.maximum(n, 1e-300))
        pts = np.einsum("mij,kj->mki", rot, self._tpl) * length[:, None, None]
        mesh.points[:] = (pts + centres[:, None, :]).reshape(-1, 3)
        mesh.Modified()

    def update(self, t: float, x: np.ndarray, q: np.ndarray,
               span: tuple[int, float, float] | None = None) -> None:
        """Move the arrows to the state ``(x, q)`` at ``t``; ``span`` the stage it is in
        (``None``: the one of :attr:`spans` that ``t`` falls in)."""
        if span is None:
            span = stage_at(self.spans, t)
        if self.mesh is not None:
            b = self.dipole_bodies
            mu = world_dipoles(self.model, q)
            self._place(self.mesh, np.asarray(x, float)[b], mu[b], self.length)
        lines = []
        if span is not None and self.n_stages:
            k, t0, t1 = span
            stage = self.model.stages[k]
            name = f" ({stage.name})" if stage.name else ""
            lines.append(f"stage {k + 1} of {self.n_stages}{name}: "
                         f"{t - t0:.3f} of {t1 - t0:.6g} s")
        if self.peak > 0:
            self.field = field_at(self.model, t, span if self.n_stages else None)
            mag = float(np.linalg.norm(self.field))
            if self.field_mesh is not None:
                length = FIELD_SHARE * self.size * mag / self.peak
                d = self.field / mag if mag > 0 else np.array([0.0, 0.0, 1.0])
                # (its tail at the base: the arrow grows from it as the field does)
                self._place(self.field_mesh, (self.field_base + 0.5 * length * d)[None, :],
                            d[None, :], np.array([length]))
                self.field_actor.SetVisibility(mag > 0)
            along = "" if mag == 0 else " along ({})".format(
                ", ".join(f"{c / mag:.3g}" for c in self.field))
            lines.append(f"field E = {mag:.4g} (largest {self.peak:.4g}){along}")
        self.text = "\n".join(lines)
        if self._caption is not None:
            self._caption.SetText(0, self.text or " ")  # (0: the lower left corner)

    @property
    def field_length(self) -> float:
        """The field arrow's drawn length (0 without a field or at ``E = 0``)."""
        if self.field_mesh is None or not self.field_actor.GetVisibility():
            return 0.0
        p = np.asarray(self.field_mesh.points)
        return float(np.ptp(p @ (self.field / max(np.linalg.norm(self.field), 1e-300))))

    def dipole_directions(self) -> np.ndarray:
        """Each drawn dipole arrow's direction (unit, ``(m, 3)``): from its tail to its
        tip, as drawn (the template's ``−x`` and ``+x`` ends)."""
        if self.mesh is None:
            return np.zeros((0, 3))
        k = self._tpl.shape[0]
        p = np.asarray(self.mesh.points).reshape(-1, k, 3)
        x = self._tpl[:, 0]
        tip = p[:, x >= x.max() - 1e-9, :].mean(axis=1)
        tail = p[:, x <= x.min() + 1e-9, :].mean(axis=1)
        d = tip - tail
        return d / np.linalg.norm(d, axis=1, keepdims=True)
