"""The bodies of the 3D scene (issue #34: split out of ``app.scene``, whose docstring
describes it): :class:`BodyScene` builds the scene of a model, moves its spheres and
body-frame axes to each state and colours them; its decorations and camera are the
mixins :class:`~app.scene.decorations.SceneDecorations` and
:class:`~app.scene.camera.SceneCamera`."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pyvista as pv

from engine.diagnostics import body_rotational_energy
from engine.rotations import quat_to_matrix

from .bonds import SceneBonds
from .camera import SceneCamera
from .decorations import SceneDecorations
from .meshes import _SphereSet, _SpriteSet, body_groups, set_lighting
from .style import (
    AXES_ALL_LIMIT,
    AXES_DETAILS,
    AXIS_LENGTH,
    AXIS_RGB,
    BACKGROUND,
    BACKGROUND_TOP,
    CMAP,
    COLOUR_MODES,
    FOLLOW_FILL,
    GROUP_COLOURS,
    GROUP_PALETTE,
    PIVOT_AXIS_REACH,
    SPHERE_COLOUR,
    SPRITE_MIN_SPHERES,
    TRAIL_CAPACITY,
    UNITS,
)

if TYPE_CHECKING:
    from engine.models.base import Model


def _nice_ceil(v: float) -> float:
    """The smallest of 1, 2, 5 × 10^k that is ≥ ``v`` (stable colour ranges)."""
    if not v > 0 or not math.isfinite(v):
        return 1.0
    k = math.floor(math.log10(v))
    for m in (1.0, 2.0, 5.0, 10.0):
        if m * 10.0**k >= v * (1 - 1e-12):
            return m * 10.0**k
    return 10.0 ** (k + 1)


class BodyScene(SceneDecorations, SceneCamera, SceneBonds):
    """Draws a :class:`~engine.models.base.Model`'s bodies on a PyVista plotter.

    ``colour_by``: one of :data:`COLOUR_MODES`; ``trail``: keep a trail of the pendulum
    bob (models with a pivot); ``axes``: draw each body's frame (red/green/blue lines).
    Build it once per model; call :meth:`update` with each new state, then render.
    """

    def __init__(self, plotter: pv.BasePlotter, model: Model, *, colour_by: str = "none",
                 trail: bool = True, axes: bool = True, axis_scale: float = 1.0,
                 follow: bool | None = None) -> None:
        self.plotter = plotter
        self.model = model
        self.n = int(model.n_bodies)
        diam = model.draw_diameter if model.draw_diameter is not None else model.bodies.D
        self.diameter = np.asarray(diam, dtype=np.float64).copy()
        self.diameter[~(self.diameter > 0)] = 0.1
        self.offset = np.asarray(model.draw_offset, dtype=np.float64)
        self._has_offset = bool(np.any(self.offset != 0))
        # Bodies drawn as several spheres (a dumbbell: one per point mass, joined by a
        # rod): body-frame points (n, k, 3) about x; a sphere is k = 1 at draw_offset.
        bp = getattr(model, "body_points", None)
        self.shape = getattr(model, "shape", "sphere")
        if self.shape != "sphere" and bp is not None:
            self.body_points: np.ndarray | None = np.asarray(bp, dtype=np.float64)
        else:
            self.body_points = None
        self.k = 1 if self.body_points is None else self.body_points.shape[1]
        self.pivot = None if model.pivot is None else np.asarray(model.pivot, float)
        spring = getattr(model, "spring", None)
        self.spring: tuple[np.ndarray, float] | None = (
            None if spring is None else (np.asarray(spring[0], float), float(spring[1])))
        st0 = model.initial_state
        # a planar model (the spring pendulum: generalized coordinates in the x–y plane)
        # is looked at from +z, its wall drawn as a slab seen edge-on
        self.planar = (getattr(model, "coordinates", "bodies") == "generalized"
                       and not np.any(np.asarray(st0.x)[:, 2])
                       and not np.any(np.asarray(st0.v)[:, 2]))
        self._resolution = 24 if self.n <= 8 else 12 if self.n <= 2000 else 6
        try:  # the plotter's creator should already have asked for none
            plotter.ren_win.SetMultiSamples(0)
        except AttributeError:
            pass

        plotter.set_background(BACKGROUND, top=BACKGROUND_TOP)
        set_lighting(plotter)
        st = model.initial_state
        self._centres = self._drawn_centres(st.x, quat_to_matrix(st.q))

        # spheres: a mesh of low-poly spheres, or point impostors for large models
        radii = 0.5 * np.repeat(self.diameter, self.k)
        self.sprites = self.n * self.k >= SPRITE_MIN_SPHERES
        self._groups = body_groups(model)
        self._spheres: _SphereSet | _SpriteSet
        if self.sprites:
            self._spheres = _SpriteSet(radii)
        else:
            self._spheres = _SphereSet(radii, self._resolution)
        self._spheres.move(self._sphere_centres(self._centres, quat_to_matrix(st.q)))
        self._rods_mesh = None
        if self.k > 1:
            self._add_rods()
        self._add_bonds()  # (a model whose bonds break: issue #44 item 2)
        if self.sprites:
            self._sphere_actor = self._spheres.add_to(plotter, "rrp-spheres")
            self._sphere_actor.prop.color = SPHERE_COLOUR
        else:
            self._sphere_actor = plotter.add_mesh(
                self._spheres.mesh, scalars="value", cmap=CMAP, clim=[0.0, 1.0],
                show_scalar_bar=False, color=SPHERE_COLOUR, specular=0.3, specular_power=20,
                diffuse=0.8, ambient=0.15, name="rrp-spheres", reset_camera=False)
            self._sphere_actor.prop.interpolation = "gouraud"
        self._lut = pv.LookupTable(CMAP)
        self._group_lut = pv.LookupTable(values=np.array(
            [[int(c[k:k + 2], 16) for k in (1, 3, 5)] + [255] for c in GROUP_PALETTE],
            dtype=np.uint8))
        self._sphere_actor.mapper.lookup_table = self._lut

        # body-frame axes: points [c, c + L e1, c + L e2, c + L e3] per body
        n = self.n
        self._axis_base = AXIS_LENGTH * self.diameter
        if self.body_points is not None:  # long bodies: axes as long as the body's reach
            reach = np.linalg.norm(self.body_points, axis=2).max(axis=1)
            self._axis_base = np.maximum(self._axis_base, 0.8 * reach)
        if self.pivot is not None:  # a pendulum: axes scaled to the body, not the bob
            arm = np.linalg.norm(self._centres - self.pivot, axis=1)
            self._axis_base = np.maximum(self._axis_base, PIVOT_AXIS_REACH * arm)
        self.axis_scale = float(axis_scale) if axis_scale > 0 else 1.0
        self._axis_len = self.axis_scale * self._axis_base
        # level of detail: the axes of the bodies in _axes_idx only (see AXES_DETAILS)
        self.axes_on = bool(axes)
        self.axes_detail = "auto"
        self.highlighted: int | None = None
        self._axes_idx = self._wanted_axes()
        self._axes_mesh = pv.PolyData()
        self._build_axes_mesh()
        self._axes_actor = plotter.add_mesh(
            self._axes_mesh, scalars="rgb", rgb=True, line_width=4.0 if n <= 8 else 2.5,
            lighting=False, name="rrp-axes", reset_camera=False)
        # drawn over the lines they coincide with (the pendulum's e3 lies along its rod)
        mapper = self._axes_actor.GetMapper()
        mapper.SetResolveCoincidentTopologyToPolygonOffset()
        mapper.SetRelativeCoincidentTopologyLineOffsetParameters(0.0, -8.0)
        self._axes_actor.SetVisibility(self._axes_shown())

        # wall
        self._wall_actor = None
        if model.wall is not None:
            self._add_wall()

        # pendulum pivot, rod (or spring) and trail
        self._rod_mesh = None
        self._coil_mesh = None
        self.follow = (self.pivot is None) if follow is None else bool(follow)
        self._follow_at: np.ndarray | None = None  # the box centre the camera was carried to
        self._follow_fill = FOLLOW_FILL  # how much of the view the box may fill
        self._trail_mesh = None
        self._trail_on = bool(trail)
        self._trail_buf = np.zeros((TRAIL_CAPACITY, 3))
        self._trail_len = 0
        if self.pivot is not None:
            self._add_pendulum_parts()

        # colouring
        self.colour_by = "none"
        self._vmax = {m: 0.0 for m in COLOUR_MODES}
        self._bar_title: str | None = None
        self._last_v: np.ndarray | None = np.asarray(st.v, float)
        self._last_omega: np.ndarray | None = np.asarray(st.omega, float)
        self._last_q = np.asarray(st.q, dtype=np.float64)
        self._last_R = quat_to_matrix(st.q)
        self.set_colour_by(colour_by)

        # ghosts (compare mode)
        self._ghosts: list[tuple[_SphereSet | _SpriteSet, object]] = []

        # the picked body (inspector): a wire cage around its spheres
        self._halo: _SphereSet | None = None
        self._halo_actor = None

        try:
            plotter.add_axes(line_width=2, viewport=(0.0, 0.0, 0.14, 0.18))
        except Exception:  # no interactor (some off-screen set-ups): skip the widget
            pass
        self.update(st.x, st.q, st.v, st.omega)
        self.reset_camera()

    def _wanted_axes(self) -> np.ndarray:
        """The bodies whose axes the detail level asks for (see :data:`AXES_DETAILS`)."""
        mode = self.axes_detail
        if mode == "all" or (mode == "auto" and self.n <= AXES_ALL_LIMIT):
            return np.arange(self.n)
        if self.highlighted is None:
            return np.zeros(0, dtype=np.int64)
        return np.array([self.highlighted])

    def _axes_shown(self) -> bool:
        return self.axes_on and len(self._axes_idx) > 0

    def _build_axes_mesh(self) -> None:
        """(Re)build the axes mesh for the bodies ``_axes_idx``: points ``[c, c + L e1,
        c + L e2, c + L e3]`` per body, three coloured segments.  Only when the set of
        bodies changes (the detail level, the inspected body); per frame the points are
        rewritten in place (:meth:`_move_axes`)."""
        m = max(len(self._axes_idx), 1)  # (an empty set keeps one hidden frame)
        base = 4 * np.arange(m)
        lines = np.empty((m, 3, 3), dtype=np.int64)
        lines[:, :, 0] = 2
        lines[:, :, 1] = base[:, None]
        lines[:, :, 2] = base[:, None] + np.arange(1, 4)[None]
        mesh = pv.PolyData(np.zeros((4 * m, 3)), lines=lines.ravel())
        mesh.cell_data.set_array(np.tile(AXIS_RGB, (m, 1)), "rgb")
        self._axes_mesh.copy_from(mesh)
        self._axes_pts = self._axes_mesh.points.reshape(m, 4, 3)

    def _refresh_axes(self) -> None:
        """Follow a change of the detail level, the inspected body or the axes toggle."""
        idx = self._wanted_axes()
        if not np.array_equal(idx, self._axes_idx):
            self._axes_idx = idx
            self._build_axes_mesh()
        shown = self._axes_shown()
        self._axes_actor.SetVisibility(shown)
        if shown:
            self._move_axes(self._centres, self._last_R)

    def _drawn_centres(self, x: np.ndarray, R: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        if not self._has_offset:
            return x
        return x + R @ self.offset

    def _sphere_centres(self, c: np.ndarray, R: np.ndarray | None) -> np.ndarray:
        """Centres of the drawn spheres, ``(n·k, 3)``: the body's drawn centre ``c`` for
        spheres, ``c + R p`` for each body-frame point ``p`` of a multi-sphere body."""
        if self.body_points is None:
            return c
        return (c[:, None, :] + np.einsum("nij,nkj->nki", R, self.body_points)).reshape(-1, 3)

    def update(self, x: np.ndarray, q: np.ndarray, v: np.ndarray | None = None,
               omega: np.ndarray | None = None, *, trail: bool = True) -> None:
        """Move spheres, axes, rod and trail to the state ``(x, q)``; recolour from ``v``
        / ``omega`` when colouring by them.  Does not render.  ``trail=False``: leave the
        trail alone (the caller feeds it every recorded row: :meth:`extend_trail`)."""
        self._last_q = np.asarray(q, dtype=np.float64)
        R = quat_to_matrix(self._last_q)
        c = self._drawn_centres(x, R)
        self._centres = c
        self._last_R = R
        sc = self._sphere_centres(c, R)
        self._spheres.move(sc)
        if self._rods_mesh is not None:
            self._rods_mesh.points[:] = sc
            self._rods_mesh.GetPoints().Modified()
        if self._axes_shown():
            self._move_axes(c, R)
        self._move_bonds(c)
        if v is not None:
            self._last_v = np.asarray(v, dtype=np.float64)
        if omega is not None:
            self._last_omega = np.asarray(omega, dtype=np.float64)
        if self.colour_by != "none":
            self._recolour()
        if self._rod_mesh is not None:
            self._rod_mesh.points[1] = c[0]
            self._rod_mesh.GetPoints().Modified()
        if self._coil_mesh is not None:
            self._coil_points(c[0])
        if self.pivot is not None and trail:
            self._append_trail(c[0])
        if self._halo is not None:
            self._move_halo(sc)
        if self.follow:
            self._follow_bodies(sc)
        self.plotter.renderer.ResetCameraClippingRange()

    def _move_axes(self, c: np.ndarray, R: np.ndarray) -> None:
        idx = self._axes_idx
        if not len(idx):
            return
        if len(idx) < self.n:
            c, R, length = c[idx], R[idx], self._axis_len[idx]
        else:
            length = self._axis_len
        pts = self._axes_pts
        pts[:, 0] = c
        # column j of R is body e_j in the inertial frame
        pts[:, 1:] = c[:, None, :] + length[:, None, None] * np.swapaxes(R, 1, 2)
        self._axes_mesh.GetPoints().Modified()

    def body_values(self, mode: str | None = None) -> np.ndarray:
        """Per-body values of a colour mode from the last ``v``/``omega`` given:
        speed of the drawn centre (``|v + Ω × R d|``) or ``½ Ω·(R I Rᵀ) Ω``."""
        mode = self.colour_by if mode is None else mode
        n = self.n
        om = self._last_omega if self._last_omega is not None else np.zeros((n, 3))
        if mode == "speed":
            v = self._last_v if self._last_v is not None else np.zeros((n, 3))
            if self._has_offset:
                v = v + np.cross(om, self._last_R @ self.offset)
            return np.linalg.norm(v, axis=1)
        if mode == "body group":
            return self._groups.astype(np.float64)
        if mode == "rotational energy":
            b = self.model.bodies
            if b.spherical:
                return body_rotational_energy(b.J, om)
            return body_rotational_energy(b.J, om, self._last_q, b.inertia)
        return np.zeros(n)

    def _recolour(self) -> None:
        vals = self.body_values()
        if self.colour_by == "body group":  # fixed per body: a qualitative map
            self._spheres.set_values(np.repeat(vals % GROUP_COLOURS, self.k))
            return
        self._spheres.set_values(np.repeat(vals, self.k))
        vmax = float(np.max(vals)) if vals.size else 0.0
        if math.isfinite(vmax) and vmax > self._vmax[self.colour_by]:
            self._vmax[self.colour_by] = _nice_ceil(vmax)
            self._apply_range()

    def _apply_range(self) -> None:
        if self.colour_by == "body group":  # value k ↦ colour k of the table
            rng = (-0.5, GROUP_COLOURS - 0.5)
        else:
            rng = (0.0, self._vmax[self.colour_by] or 1.0)
        mapper = self._sphere_actor.mapper
        mapper.scalar_range = rng
        mapper.lookup_table.scalar_range = rng  # (the mapper sets it when drawing, too)

    @property
    def colour_range(self) -> tuple[float, float]:
        """The colour map's current range (grows only, to 1-2-5 steps)."""
        return tuple(self._sphere_actor.mapper.scalar_range)

    def set_colour_by(self, mode: str) -> None:
        """Colour the spheres by ``mode`` (one of :data:`COLOUR_MODES`)."""
        if mode not in COLOUR_MODES:
            raise ValueError(f"unknown colour mode {mode!r}; allowed: "
                             + ", ".join(repr(m) for m in COLOUR_MODES))
        self.colour_by = mode
        mapper = self._sphere_actor.mapper
        if self._bar_title is not None:
            self.plotter.remove_scalar_bar(self._bar_title, render=False)
            self._bar_title = None
        if mode == "none":
            mapper.scalar_visibility = False
            return
        mapper.scalar_visibility = True
        mapper.lookup_table = self._group_lut if mode == "body group" else self._lut
        self._recolour()
        self._apply_range()
        if mode == "body group":  # categories: no colour bar
            return
        self._bar_title = UNITS[mode]
        self.plotter.add_scalar_bar(
            self._bar_title, mapper=mapper, vertical=True, n_labels=3, fmt="%.3g",
            position_x=0.86, position_y=0.25, width=0.08, height=0.5, color="#333333",
            title_font_size=12, label_font_size=11, render=False)

    def set_axes(self, on: bool) -> None:
        """Show or hide the body-frame axes (of the bodies the detail level picks)."""
        self.axes_on = bool(on)
        self._refresh_axes()

    def set_axes_detail(self, mode: str) -> None:
        """Level of detail of the body axes, one of :data:`AXES_DETAILS`: "auto" (all
        bodies' up to :data:`AXES_ALL_LIMIT` bodies, else the inspected body's), "all",
        or "inspected" (the inspected body's only)."""
        if mode not in AXES_DETAILS:
            raise ValueError(f"unknown axes detail {mode!r}; allowed: "
                             + ", ".join(repr(m) for m in AXES_DETAILS))
        self.axes_detail = mode
        self._refresh_axes()

    @property
    def axes_bodies(self) -> np.ndarray:
        """The bodies whose axes are drawn now (empty when hidden)."""
        return self._axes_idx.copy() if self._axes_shown() else np.zeros(0, dtype=np.int64)

    def set_axis_scale(self, scale: float) -> None:
        """Draw the body axes ``scale`` times their default length (which is scaled to
        the body: its diameter, the reach of a dumbbell, the arm of a pendulum)."""
        if not (scale > 0 and math.isfinite(scale)):
            raise ValueError(f"axis scale must be a positive number, got {scale!r}")
        self.axis_scale = float(scale)
        self._axis_len = self.axis_scale * self._axis_base
        if self._axes_shown():
            self._move_axes(self._centres, self._last_R)

    @property
    def sphere_mesh(self) -> pv.PolyData:
        """All spheres: ``k`` template points per body, body after body (do not edit)."""
        return self._spheres.mesh

    @property
    def sphere_actor(self) -> pv.Actor:
        return self._sphere_actor

    @property
    def points_per_sphere(self) -> int:
        return self._spheres.k

    @property
    def axes_mesh(self) -> pv.PolyData:
        """Body frames: points ``[c, c + L e1, c + L e2, c + L e3]`` per body."""
        return self._axes_mesh

    @property
    def axis_length(self) -> np.ndarray:
        """Drawn length ``L`` of each body's axes."""
        return self._axis_len

    @property
    def centres(self) -> np.ndarray:
        """Drawn sphere centres of the last :meth:`update` (``x + R d``)."""
        return self._centres
