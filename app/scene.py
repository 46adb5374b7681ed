"""The 3D scene of RRP Studio: oriented spheres, the wall, the pendulum rod and trail,
the spring of the spring pendulum.

Pure PyVista (no Qt): the desktop window draws it on a pyvistaqt ``QtInteractor`` and
``rrp export`` on an off-screen plotter.  The scene only *draws* what it is given; it
never integrates anything.

Speed matters (≥ 30 fps with the 80-sphere torus on llvmpipe), hence:

* all spheres are ONE :class:`pyvista.PolyData` (a low-poly template sphere, scaled and
  offset per body) whose points are rewritten in place each frame, with fixed outward
  normals (translation and uniform scaling leave them valid);
* all body-frame axes are ONE PolyData of line segments with per-cell RGB colours
  (red/green/blue = body ``e1/e2/e3``, i.e. the columns of the attitude matrix ``R``);
* no multi-sampling; :meth:`BodyScene.update` never renders (the caller does, once).

Large models (issue #9: piles of 10³–10⁵ spheres) change three things, above
:data:`SPRITE_MIN_SPHERES` drawn spheres:

* the spheres are ONE point each, drawn by a ``vtkPointGaussianMapper`` as shaded
  sphere impostors (a screen-facing quad per sphere, of the sphere's radius in world
  units, lit in the fragment shader: :data:`SPHERE_SPLAT`) — the points, radii and
  colour values are arrays rewritten in place; measured against instanced glyphs
  (``vtkGlyph3DMapper``: 3 fps at 10⁴ spheres on llvmpipe) and fixed-pixel point sprites
  (``render_points_as_spheres``, which do not scale with the zoom), it is the fastest
  that draws true sizes (BENCHMARKS.md, issue #9);
* level of detail for the body axes (:data:`AXES_DETAILS`): by default ("auto") every
  body's axes up to :data:`AXES_ALL_LIMIT` bodies, beyond that only the inspected
  body's;
* a per-body colour mode, ``"body group"``: the torus (ring) each sphere belongs to, from
  the model's ``n_particles`` (:func:`body_groups`), in a qualitative colour map.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pyvista as pv
from vtkmodules.vtkRenderingOpenGL2 import vtkOpenGLPointGaussianMapper

from engine.diagnostics import body_rotational_energy
from engine.rotations import quat_to_matrix

if TYPE_CHECKING:
    from engine.models.base import Model

COLOUR_MODES = ("none", "speed", "rotational energy", "body group")
"""What the spheres can be coloured by (:meth:`BodyScene.set_colour_by`): "body group"
is the ring (torus) a sphere belongs to, see :func:`body_groups`."""
AXES_DETAILS = ("auto", "all", "inspected")
"""Which bodies' axes are drawn (:meth:`BodyScene.set_axes_detail`): "auto": all up to
:data:`AXES_ALL_LIMIT` bodies, else the inspected one; "all"; "inspected" only."""
AXES_ALL_LIMIT = 500
""""auto" axes: every body's frame up to this many bodies (the 80-sphere torus), only the
inspected body's above (a pile: 10³–10⁵ frames would hide the spheres and cost as much to
draw as the spheres themselves)."""
SPRITE_MIN_SPHERES = 400
"""From this many drawn spheres on they are point impostors (see the module docstring);
below, a mesh of low-poly spheres (the torus, the pendulum, the dumbbells)."""
GROUP_CMAP = "tab20"
GROUP_COLOURS = 20
""""body group" colours: group index modulo this many, in :data:`GROUP_CMAP`."""
SPHERE_SPLAT = (
    "//VTK::Color::Impl\n"
    "float rr = dot(offsetVCVSOutput.xy, offsetVCVSOutput.xy);\n"
    "if (rr > 1.0) { discard; }\n"
    "vec3 nrm = vec3(offsetVCVSOutput.xy, sqrt(1.0 - rr));\n"
    "vec3 lgt = normalize(vec3(-0.35, 0.45, 1.0));\n"
    "float dif = max(dot(nrm, lgt), 0.0);\n"
    "float spc = pow(max(dot(reflect(-lgt, nrm), vec3(0.0, 0.0, 1.0)), 0.0), 24.0);\n"
    "diffuseColor = diffuseColor * (0.28 + 0.72 * dif) + vec3(0.25 * spc);\n"
    "ambientColor = vec3(0.0);\n"
)
"""Fragment code of the sphere impostors: a disc of the sphere's radius (``offsetVC`` is
the offset from the centre in radii), lit as the sphere's front half by a light above
left of the camera (diffuse and a specular spot)."""

BACKGROUND = "#f7f8fa"
BACKGROUND_TOP = "#dde5ee"
SPHERE_COLOUR = "#c9ced6"
AXIS_RGB = np.array([[214, 39, 40], [44, 160, 44], [31, 119, 180]], dtype=np.uint8)
WALL_COLOUR = "#d3dce8"
ROD_COLOUR = "#4a4f57"
TRAIL_COLOUR = "#e377c2"
GHOST_COLOURS = ("#ff7f0e", "#9467bd", "#17becf", "#8c564b", "#bcbd22")
GHOST_OPACITY = 0.35
CMAP = "viridis"
UNITS = {"speed": "speed [m/s]", "rotational energy": "rot. energy [J]",
         "body group": "body group"}

AXIS_LENGTH = 0.95
"""Body-frame axis length in sphere diameters from the centre (0.45 D shows outside)."""
PIVOT_AXIS_REACH = 0.45
"""Models with a pivot (the pendulum): the bob's axes are at least this fraction of the
pivot–bob distance long, so that its rotation R(α) is plainly visible."""
HIGHLIGHT_COLOUR = "#ffb000"
FOLLOW_EASE = 0.3
"""Follow: the fraction of the way to the wanted framing taken per frame (smooth)."""
FOLLOW_FILL = 0.8
"""Follow: the bodies' bounding sphere may fill this fraction of the view's half-height."""
TRAIL_CAPACITY = 4000
"""Most recent bob positions kept in the trail."""
SPRING_COLOUR = "#3d5a80"
COIL_TURNS = 14
COIL_POINTS_PER_TURN = 16
PLANAR_WALL_COLOUR = "#aab7ca"
SWING_REACH = 1.65
"""Planar pendulum models: the view frames the pivot ± this many spring rest lengths
(or initial distances, if larger): the bob of the spring pendulum swings out to ≈ 1.6."""


def make_plotter(size: tuple[int, int] = (800, 600), *, off_screen: bool = True) -> pv.Plotter:
    """A plotter set up for this scene: no multi-sampling (≈3× faster on llvmpipe)."""
    theme = pv.themes.DocumentTheme()
    theme.multi_samples = 0
    theme.anti_aliasing = None
    return pv.Plotter(off_screen=off_screen, window_size=list(size), theme=theme)


def set_lighting(plotter: pv.BasePlotter) -> None:
    """The scene's lights, the same in the window and the export: VTK's light kit on the
    active renderer.  (A view cleared for a new model has lost its lights: without any,
    VTK draws the mesh spheres as flat discs of ambient + diffuse colour.)"""
    plotter.enable_lightkit(only_active=True)


def _union(lo: np.ndarray, hi: np.ndarray,
           extent: tuple[np.ndarray, np.ndarray] | None) -> tuple[np.ndarray, np.ndarray]:
    """The box ``(lo, hi)`` grown to hold ``extent`` too (``None``: as it is)."""
    if extent is None:
        return lo, hi
    return np.minimum(lo, extent[0]), np.maximum(hi, extent[1])


def _nice_ceil(v: float) -> float:
    """The smallest of 1, 2, 5 × 10^k that is ≥ ``v`` (stable colour ranges)."""
    if not v > 0 or not math.isfinite(v):
        return 1.0
    k = math.floor(math.log10(v))
    for m in (1.0, 2.0, 5.0, 10.0):
        if m * 10.0**k >= v * (1 - 1e-12):
            return m * 10.0**k
    return 10.0 ** (k + 1)


def body_groups(model: Model) -> np.ndarray:
    """Per body, the index of the group it belongs to: its ring (torus) for models of
    ``n_particles`` bonded spheres per ring (the torus, the pile: body ``i`` is in ring
    ``i // n_particles``), otherwise each body its own group."""
    n = int(model.n_bodies)
    n_p = (getattr(model, "params", None) or {}).get("n_particles")
    if isinstance(n_p, (int, np.integer)) and n_p > 0 and n % int(n_p) == 0:
        return np.arange(n) // int(n_p)
    return np.arange(n)


class _ImpostorMapper(vtkOpenGLPointGaussianMapper):
    """A ``vtkPointGaussianMapper`` (its OpenGL class) with the few PyVista-style
    properties the scene and ``add_scalar_bar`` use.  (PyVista's own
    ``PointGaussianMapper`` crashed VTK 9.7 on llvmpipe at the first render after a
    screenshot once scalars were shown.)"""

    def __init__(self) -> None:
        super().__init__()
        self._lut: pv.LookupTable | None = None

    @property
    def scalar_range(self) -> tuple[float, float]:
        """The range of the colour map."""
        return tuple(self.GetScalarRange())

    @scalar_range.setter
    def scalar_range(self, rng: tuple[float, float]) -> None:
        self.SetScalarRange(float(rng[0]), float(rng[1]))

    @property
    def scalar_visibility(self) -> bool:
        """Whether the ``value`` array colours the points."""
        return bool(self.GetScalarVisibility())

    @scalar_visibility.setter
    def scalar_visibility(self, on: bool) -> None:
        self.SetScalarVisibility(bool(on))

    @property
    def lookup_table(self) -> pv.LookupTable | None:
        """The colour map (a :class:`pyvista.LookupTable`)."""
        return self._lut

    @lookup_table.setter
    def lookup_table(self, lut: pv.LookupTable) -> None:
        self._lut = lut
        self.SetLookupTable(lut)


class _SpriteSet:
    """Many spheres as one point each (the centre, with a ``radius`` and a ``value``
    array), drawn as sphere impostors by a ``vtkPointGaussianMapper``; rewritten in
    place.  Same interface as :class:`_SphereSet` (``k = 1`` point per sphere)."""

    k = 1

    def __init__(self, radii: np.ndarray) -> None:
        n = int(radii.shape[0])
        self.n = n
        self.mesh = pv.PolyData(np.zeros((n, 3)))
        self.mesh.point_data.set_array(np.asarray(radii, dtype=np.float64), "radius")
        self.mesh.point_data.set_array(np.zeros(n), "value")
        self._pts = self.mesh.points
        self._val = self.mesh.point_data["value"]

    def move(self, centres: np.ndarray) -> None:
        self._pts[:] = centres
        self.mesh.GetPoints().Modified()

    def set_values(self, per_body: np.ndarray) -> None:
        self._val[:] = per_body
        self.mesh.GetPointData().GetArray("value").Modified()

    def centres(self) -> np.ndarray:
        """Current centres."""
        return np.asarray(self._pts)

    def add_to(self, plotter: pv.BasePlotter, name: str) -> pv.Actor:
        """An actor drawing these points as sphere impostors (scalars off)."""
        mapper = _ImpostorMapper()
        mapper.SetInputData(self.mesh)
        mapper.SetScaleArray("radius")
        mapper.SetScaleFactor(1.0)
        mapper.SetEmissive(False)
        mapper.SetSplatShaderCode(SPHERE_SPLAT)
        mapper.SetScalarModeToUsePointFieldData()
        mapper.SelectColorArray("value")
        mapper.scalar_visibility = False
        actor = pv.Actor(mapper=mapper)
        plotter.add_actor(actor, name=name, reset_camera=False, render=False)
        return actor


class _SphereSet:
    """Many spheres in one PolyData: template points scaled by the radii, offset by the
    centres, rewritten in place."""

    def __init__(self, radii: np.ndarray, resolution: int) -> None:
        tpl = pv.Sphere(radius=1.0, theta_resolution=resolution, phi_resolution=resolution)
        pts = np.asarray(tpl.points, dtype=np.float64)
        self.template = pts / np.linalg.norm(pts, axis=1)[:, None]  # exact unit sphere
        k = self.template.shape[0]
        n = radii.shape[0]
        faces = np.asarray(tpl.faces).reshape(-1, 4)
        all_faces = np.tile(faces, (n, 1))
        all_faces[:, 1:] += (np.arange(n) * k).repeat(faces.shape[0])[:, None]
        self.k, self.n = k, n
        self.scaled = radii[:, None, None] * self.template[None]  # (n, k, 3)
        self.mesh = pv.PolyData(np.zeros((n * k, 3)), all_faces.ravel())
        self.mesh.point_data.set_array(np.tile(self.template, (n, 1)), "Normals")
        self.mesh.point_data.active_normals_name = "Normals"
        self.mesh.point_data.set_array(np.zeros(n * k), "value")
        self._pts = self.mesh.points  # a view on the VTK array
        self._pts3 = self._pts.reshape(n, k, 3)
        self._val = self.mesh.point_data["value"].reshape(n, k)

    def move(self, centres: np.ndarray) -> None:
        np.add(self.scaled, centres[:, None, :], out=self._pts3)
        self.mesh.GetPoints().Modified()

    def set_values(self, per_body: np.ndarray) -> None:
        self._val[:] = per_body[:, None]
        self.mesh.GetPointData().GetArray("value").Modified()

    def centres(self) -> np.ndarray:
        """Current centres (mean of each sphere's points)."""
        return self._pts3.mean(axis=1)


class BodyScene:
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
        self._group_lut = pv.LookupTable(GROUP_CMAP, n_values=GROUP_COLOURS)
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

    # ------------------------------------------------------------------ building
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

    def _wall_corners(self) -> np.ndarray:
        """Corners ``(4, 3)`` of the drawn wall: a rectangle in the plane ``n·x = x_w``,
        upright (its second side along the part of e₃ in the plane), sized to the bodies."""
        normal, x_w = self.model.wall
        nrm = np.asarray(normal, float) / np.linalg.norm(normal)
        c = self._centres
        mid = c.mean(axis=0)
        foot = mid - (nrm @ mid - float(x_w)) * nrm
        up = np.array([0.0, 0.0, 1.0]) - nrm[2] * nrm
        if np.linalg.norm(up) < 1e-6:  # a horizontal wall (floor): any in-plane pair
            up = np.array([1.0, 0.0, 0.0]) - nrm[0] * nrm
        up /= np.linalg.norm(up)
        side = np.cross(nrm, up)
        d = float(self.diameter.max())
        span_s = float(np.ptp(c @ side)) + d
        span_u = float(np.ptp(c @ up)) + d
        big = max(span_s, span_u, 4.0 * d)
        half_s = 0.5 * max(1.3 * span_s, 0.6 * big)
        half_u = 0.5 * max(1.3 * span_u, 0.5 * big)
        return np.array([foot + a * half_s * side + b * half_u * up
                         for a, b in ((-1, -1), (1, -1), (1, 1), (-1, 1))])

    def _swing_region(self) -> tuple[np.ndarray, np.ndarray]:
        """The box ``(lo, hi)`` a planar pendulum's bob may sweep: the pivot ± the reach
        (:data:`SWING_REACH` rest lengths) in x, from −reach to +reach/4 in y (these
        models hang along −y), cut at the wall."""
        c0 = self._centres[0]
        piv = self.pivot if self.pivot is not None else np.zeros(3)
        length = self.spring[1] if self.spring is not None else 0.0
        reach = SWING_REACH * max(length, float(np.linalg.norm(c0 - piv)))
        r = 0.5 * float(self.diameter.max())
        lo = piv - np.array([reach, reach, r])
        hi = piv + np.array([reach, 0.25 * reach, r])
        lo, hi = np.minimum(lo, c0 - r), np.maximum(hi, c0 + r)
        if self.model.wall is not None:
            normal, x_w = self.model.wall
            nrm = np.asarray(normal, float) / np.linalg.norm(normal)
            k = int(np.argmax(np.abs(nrm)))
            if abs(nrm[k]) > 0.999:  # an axis-aligned wall: nothing behind it
                if nrm[k] > 0:
                    lo[k] = max(lo[k], float(x_w) / nrm[k])
                else:
                    hi[k] = min(hi[k], float(x_w) / nrm[k])
        return lo, hi

    def _add_planar_wall(self) -> None:
        """The wall of a planar model: a slab behind the plane ``n·x = x_w`` across the
        swing region, hatched on the side facing the camera (+z), as in a drawing."""
        normal, x_w = self.model.wall
        nrm = np.asarray(normal, float) / np.linalg.norm(normal)
        ez = np.array([0.0, 0.0, 1.0])
        tan = np.cross(ez, nrm)
        if np.linalg.norm(tan) < 1e-6:
            tan = np.array([1.0, 0.0, 0.0])
        tan /= np.linalg.norm(tan)
        lo, hi = self._swing_region()
        box = np.array([[a, b, 0.0] for a in (lo[0], hi[0]) for b in (lo[1], hi[1])])
        along = box @ tan
        span = float(np.ptp(along))
        a0, a1 = along.min() - 0.06 * span, along.max() + 0.06 * span
        thick = 0.045 * span
        zh = 0.08 * span
        foot = float(x_w) * nrm
        pts = np.array([foot + a * tan - b * thick * nrm + z * ez
                        for z in (-zh, zh) for b in (0, 1) for a in (a0, a1)])
        # vertices: z-, front: 0 (a0), 1 (a1); back: 2, 3; z+: 4..7 likewise
        faces = [4, 0, 1, 3, 2, 4, 4, 6, 7, 5, 4, 0, 4, 5, 1, 4, 2, 3, 7, 6,
                 4, 0, 2, 6, 4, 4, 1, 5, 7, 3]
        self._wall_bounds = pts
        self._wall_actor = self.plotter.add_mesh(
            pv.PolyData(pts, faces=faces), color=PLANAR_WALL_COLOUR, name="rrp-wall",
            reset_camera=False, lighting=False)
        n_hatch = max(2, int((a1 - a0) / thick))
        hatch = []
        for a in np.linspace(a0 + thick, a1, n_hatch):
            hatch += [foot + a * tan + 1.001 * zh * ez,
                      foot + (a - thick) * tan - thick * nrm + 1.001 * zh * ez]
        hatch += [foot + a0 * tan + 1.002 * zh * ez, foot + a1 * tan + 1.002 * zh * ez]
        m = len(hatch) // 2
        lines = np.column_stack([np.full(m, 2), 2 * np.arange(m), 2 * np.arange(m) + 1])
        self.plotter.add_mesh(pv.PolyData(np.array(hatch), lines=lines.ravel()),
                              color="#3e4c61", line_width=2, name="rrp-wall-edge",
                              reset_camera=False, lighting=False)

    def _add_wall(self) -> None:
        if self.planar:
            self._add_planar_wall()
            return
        corners = self._wall_corners()
        self._wall_bounds = corners
        # Opaque, seen from the bodies' side only (its face normal is +n and back faces
        # are culled): a translucent wall costs VTK's order-independent translucency
        # pass, ~40 % of the frame time on llvmpipe.  From behind only its outline shows.
        wall = pv.PolyData(corners, faces=[4, 3, 2, 1, 0])
        self._wall_actor = self.plotter.add_mesh(
            wall, color=WALL_COLOUR, name="rrp-wall", reset_camera=False, lighting=False,
            culling="back")
        edge = pv.PolyData(corners, lines=[5, 0, 1, 2, 3, 0])
        self.plotter.add_mesh(edge, color="#5d6f88", line_width=1.5, name="rrp-wall-edge",
                              reset_camera=False, lighting=False)
        box = self._walls_box()
        if box is not None:  # the other walls (a box): their edges, not to hide the bodies
            self.plotter.add_mesh(pv.Box(bounds=box).outline(), color="#5d6f88",
                                  line_width=1.5, name="rrp-box", reset_camera=False,
                                  lighting=False)

    def _walls_box(self) -> tuple[float, ...] | None:
        """``(x0, x1, y0, y1, z0, z1)`` of the box that axis-aligned walls ``n·x ≥ c``
        (``Model.walls``) enclose, open sides closed at the bodies' extent; ``None``
        for fewer than two walls or any oblique one."""
        walls = getattr(self.model, "walls", None) or []
        if len(walls) < 2:
            return None
        lo = [None, None, None]
        hi = [None, None, None]
        for normal, c in walls:
            n = np.asarray(normal, float) / np.linalg.norm(normal)
            k = int(np.argmax(np.abs(n)))
            if abs(abs(n[k]) - 1.0) > 1e-9:
                return None
            if n[k] > 0:
                lo[k] = float(c)
            else:
                hi[k] = -float(c)
        d = float(self.diameter.max())
        ext_lo = self._centres.min(axis=0) - d
        ext_hi = self._centres.max(axis=0) + d
        out = []
        for k in range(3):
            out += [lo[k] if lo[k] is not None else float(ext_lo[k]),
                    hi[k] if hi[k] is not None else float(ext_hi[k])]
        return tuple(out)

    def _add_pendulum_parts(self) -> None:
        p = self.plotter
        r_piv = (0.3 if self.spring is not None else 0.12) * float(self.diameter[0])
        p.add_mesh(pv.Sphere(radius=r_piv, center=self.pivot, theta_resolution=12,
                             phi_resolution=12), color=ROD_COLOUR, name="rrp-pivot",
                   reset_camera=False)
        if self.spring is not None:
            self._add_spring()
        else:
            self._rod_mesh = pv.PolyData(np.array([self.pivot, self._centres[0]]),
                                         lines=[2, 0, 1])
            p.add_mesh(self._rod_mesh, color=ROD_COLOUR, line_width=4, name="rrp-rod",
                       reset_camera=False, lighting=False)
        self._trail_mesh = pv.PolyData(np.array([self._centres[0], self._centres[0]]),
                                       lines=[2, 0, 1])
        self._trail_actor = p.add_mesh(self._trail_mesh, color=TRAIL_COLOUR, line_width=2,
                                       name="rrp-trail", reset_camera=False, lighting=False)
        self._trail_actor.SetVisibility(self._trail_on)

    def _add_spring(self) -> None:
        """The spring from its pivot to the bob's surface: a coil of fixed radius and
        turns, so that its pitch shows the stretch."""
        k = COIL_TURNS * COIL_POINTS_PER_TURN + 1
        self._coil_s = np.linspace(0.0, 1.0, k)
        self._coil_theta = 2.0 * math.pi * COIL_TURNS * self._coil_s
        # the radius ramps up and down over the first and last half turn (ends on the axis)
        ramp = 2.0 * COIL_TURNS * np.minimum(self._coil_s, 1.0 - self._coil_s)
        rest = self.spring[1]
        self._coil_radius = (max(0.4 * float(self.diameter[0]), 0.03 * rest)
                             * np.minimum(1.0, ramp))
        self._coil_lead = 0.08 * rest
        n = k + 2
        self._coil_mesh = pv.PolyData(np.zeros((n, 3)),
                                      lines=np.concatenate([[n], np.arange(n)]))
        self._coil_points(self._centres[0])
        self._coil_actor = self.plotter.add_mesh(
            self._coil_mesh, color=SPRING_COLOUR, line_width=2.5, name="rrp-spring",
            reset_camera=False, lighting=False)

    def _coil_points(self, bob: np.ndarray) -> None:
        """Rewrite the coil in place for the bob at ``bob``."""
        p0 = self.spring[0]
        d = np.asarray(bob, float) - p0
        length = float(np.linalg.norm(d))
        u = d / length if length > 1e-12 else np.array([0.0, -1.0, 0.0])
        n1 = np.cross(u, [0.0, 0.0, 1.0])
        if np.linalg.norm(n1) < 1e-6:
            n1 = np.cross(u, [1.0, 0.0, 0.0])
        n1 /= np.linalg.norm(n1)
        n2 = np.cross(u, n1)
        end = max(0.0, length - 0.5 * float(self.diameter[0]))
        lead = min(self._coil_lead, 0.25 * end)
        s0, s1 = lead, max(lead, end - lead)
        along = s0 + self._coil_s * (s1 - s0)
        a = self._coil_radius
        pts = self._coil_mesh.points
        pts[0] = p0
        # a helix about the axis (seen from +z: a zig-zag in the plane)
        pts[1:-1] = (p0 + along[:, None] * u + (a * np.sin(self._coil_theta))[:, None] * n1
                     + (a * np.cos(self._coil_theta))[:, None] * n2)
        pts[-1] = p0 + end * u
        self._coil_mesh.GetPoints().Modified()

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

    def _add_rods(self) -> None:
        """Rods joining the points of each multi-sphere body (the dumbbells' bars)."""
        n, k = self.n, self.k
        lines = np.empty((n, k - 1, 3), dtype=np.int64)
        lines[:, :, 0] = 2
        lines[:, :, 1] = (k * np.arange(n))[:, None] + np.arange(k - 1)[None]
        lines[:, :, 2] = lines[:, :, 1] + 1
        self._rods_mesh = pv.PolyData(self._spheres.centres(), lines=lines.ravel())
        self.plotter.add_mesh(self._rods_mesh, color=ROD_COLOUR, line_width=5,
                              name="rrp-rods", reset_camera=False, lighting=False)

    # ------------------------------------------------------------------ per frame
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

    def _bounding_box(self, points: np.ndarray | None = None) -> tuple[np.ndarray, float]:
        """Centre and half-diagonal of the bodies' bounding box (sphere radii included)."""
        pts = self._spheres.centres() if points is None else points
        r = 0.5 * float(self.diameter.max())
        lo, hi = pts.min(axis=0) - r, pts.max(axis=0) + r
        return 0.5 * (lo + hi), 0.5 * float(np.linalg.norm(hi - lo))

    def _follow_bodies(self, points: np.ndarray) -> None:
        """Keep the bodies' bounding box in view: carry the camera with the box's centre
        (so the user's own rotation, zoom and pan stay) and, when the box no longer fits
        (it grows, or it was off-centre), ease the focal point towards it and back away,
        a fraction :data:`FOLLOW_EASE` of the way per frame (smooth)."""
        if not len(points):
            return
        cen, half = self._bounding_box(points)
        if not (np.all(np.isfinite(cen)) and math.isfinite(half)):
            return
        cam = self.plotter.camera
        pos, foc = np.asarray(cam.position, float), np.asarray(cam.focal_point, float)
        first = self._follow_at is None
        if not first:
            delta = cen - self._follow_at
            pos, foc = pos + delta, foc + delta
        self._follow_at = cen
        view = pos - foc
        dist = float(np.linalg.norm(view))
        if dist > 0 and not cam.parallel_projection:
            tan_half = math.tan(math.radians(cam.view_angle) / 2.0)
            try:
                aspect = float(self.plotter.renderer.GetTiledAspectRatio())
            except AttributeError:  # pragma: no cover - older VTK
                aspect = 1.0
            tan_half *= min(1.0, aspect) if aspect > 0 else 1.0
            off = cen - foc
            off -= (off @ view) / dist**2 * view  # the part across the line of sight
            fill = (float(np.linalg.norm(off)) + half) / (dist * tan_half)
            if first:  # the framing it starts from (a fitted camera, the user's) is fine
                self._follow_fill = min(max(FOLLOW_FILL, fill), 1.0)
            if fill > self._follow_fill:
                foc = foc + FOLLOW_EASE * off
                pos = pos + FOLLOW_EASE * off
                need = (float(np.linalg.norm((1.0 - FOLLOW_EASE) * off)) + half) / (
                    self._follow_fill * tan_half)
                if need > dist:
                    pos = foc + view * ((dist + FOLLOW_EASE * (need - dist)) / dist)
        cam.position = pos
        cam.focal_point = foc

    def set_follow(self, on: bool) -> None:
        """View → Follow: keep the bodies' bounding box in view as they move."""
        self.follow = bool(on)
        self._follow_at = None
        if self.follow:
            self._follow_bodies(self._spheres.centres())
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

    def _append_trail(self, p: np.ndarray) -> None:
        if not self._trail_on:
            return
        buf, k = self._trail_buf, self._trail_len
        if k and np.allclose(buf[k - 1], p, rtol=0.0, atol=1e-9):
            return
        if k == TRAIL_CAPACITY:
            buf[:-1] = buf[1:]
            k -= 1
        buf[k] = p
        self._trail_len = k + 1
        self._refresh_trail()

    def extend_trail(self, x: np.ndarray, q: np.ndarray) -> None:
        """Add the bob (body 0) at each of the states ``x`` ``(m, 3)``, ``q`` ``(m, 4)``
        to the trail, oldest first: every recorded row, not only the frames shown (a
        no-op without a pivot or with the trail off)."""
        if self._trail_mesh is None or not self._trail_on:
            return
        if not len(x):
            self._refresh_trail()  # (its head follows the bob)
            return
        p = np.asarray(x, dtype=np.float64)
        if self._has_offset:
            R = quat_to_matrix(np.asarray(q, dtype=np.float64))
            p = p + R @ self.offset
        k = self._trail_len
        if k and np.allclose(self._trail_buf[k - 1], p[0], rtol=0.0, atol=1e-12):
            p = p[1:]  # (the state the scene was built with: row 0)
        p = p[-TRAIL_CAPACITY:]
        buf, m = self._trail_buf, len(p)
        keep = min(k, TRAIL_CAPACITY - m)
        buf[:keep] = buf[k - keep:k]
        buf[keep:keep + m] = p
        self._trail_len = keep + m
        self._refresh_trail()

    def _refresh_trail(self) -> None:
        """The drawn line: the kept positions, then the bob where it is now (between two
        recorded rows, when the trail is fed the rows)."""
        k = self._trail_len
        pts = self._trail_buf[:k]
        head = self._centres[:1]
        if not k or not np.allclose(pts[-1], head[0], rtol=0.0, atol=1e-12):
            pts = np.concatenate([pts, head])
        if len(pts) < 2:
            pts = np.repeat(head, 2, axis=0)
        k = len(pts)
        self._trail_mesh.points = pts.copy()
        self._trail_mesh.lines = np.concatenate([[k], np.arange(k)])

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

    # ------------------------------------------------------------------ options
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

    def set_trail(self, on: bool) -> None:
        """Show or hide the bob trail (models with a pivot; a no-op otherwise)."""
        self._trail_on = bool(on)
        if self._trail_mesh is not None:
            self._trail_actor.SetVisibility(self._trail_on)

    def clear_trail(self) -> None:
        """Forget the trail so far."""
        self._trail_len = 0
        if self._trail_mesh is not None:
            self._refresh_trail()

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

    # ------------------------------------------------------------------ picking
    def pick(self, x: float, y: float) -> int | None:
        """The body under the display point ``(x, y)`` (VTK display coordinates: pixels
        from the bottom left), the nearest along the line of sight; ``None`` if none."""
        ren = self.plotter.renderer
        ren.SetDisplayPoint(float(x), float(y), 0.0)
        ren.DisplayToWorld()
        w = ren.GetWorldPoint()
        near = np.array(w[:3]) / (w[3] or 1.0)
        ren.SetDisplayPoint(float(x), float(y), 1.0)
        ren.DisplayToWorld()
        w = ren.GetWorldPoint()
        far = np.array(w[:3]) / (w[3] or 1.0)
        d = far - near
        length = float(np.linalg.norm(d))
        if not length > 0:
            return None
        d /= length
        c = self._spheres.centres()  # (n·k, 3)
        r = 0.5 * np.repeat(self.diameter, self.k)
        rel = c - near
        s = rel @ d
        miss2 = (rel * rel).sum(axis=1) - s * s
        hit = (miss2 <= r * r) & (s > 0)
        if not np.any(hit):
            return None
        depth = np.where(hit, s - np.sqrt(np.maximum(r * r - miss2, 0.0)), np.inf)
        return int(np.argmin(depth)) // self.k

    def display_position(self, body: int) -> tuple[float, float]:
        """Where body ``body``'s (first) sphere centre is drawn, in VTK display pixels."""
        ren = self.plotter.renderer
        c = self._spheres.centres()[body * self.k]
        ren.SetWorldPoint(*c, 1.0)
        ren.WorldToDisplay()
        x, y, _ = ren.GetDisplayPoint()
        return float(x), float(y)

    def set_highlight(self, body: int | None) -> None:
        """Mark body ``body`` (a wire cage around its spheres); ``None`` clears it."""
        if body is not None and not 0 <= int(body) < self.n:
            body = None
        self.highlighted = None if body is None else int(body)
        self._refresh_axes()  # (the inspected body's axes, for a large model)
        if self.highlighted is None:
            if self._halo_actor is not None:
                self.plotter.remove_actor(self._halo_actor, render=False)
            self._halo = self._halo_actor = None
            return
        if self._halo is None:
            radii = 0.5 * np.full(self.k, 1.0)  # rescaled per body in _move_halo
            self._halo = _SphereSet(radii, 10)
            self._halo_actor = self.plotter.add_mesh(
                self._halo.mesh, color=HIGHLIGHT_COLOUR, style="wireframe", line_width=1.5,
                lighting=False, scalars=None, name="rrp-highlight", reset_camera=False)
            self._halo_actor.mapper.scalar_visibility = False
        r = 0.5 * float(self.diameter[self.highlighted]) * 1.3
        self._halo.scaled[:] = r * self._halo.template[None]
        self._move_halo(self._spheres.centres())

    def _move_halo(self, sphere_centres: np.ndarray) -> None:
        i, k = self.highlighted, self.k
        self._halo.move(sphere_centres[i * k:(i + 1) * k])

    def set_ghosts(self, states: list[tuple[np.ndarray, np.ndarray]]) -> None:
        """Draw translucent copies of other runs' bodies at ``(x, q)``, one colour per
        index; ``[]`` removes them.  Cheap when the count does not change."""
        while len(self._ghosts) > len(states):
            _, actor = self._ghosts.pop()
            self.plotter.remove_actor(actor, render=False)
        for i, (x, q) in enumerate(states):
            if i == len(self._ghosts):
                radii = 0.5 * np.repeat(self.diameter, self.k)
                gs: _SphereSet | _SpriteSet
                R = quat_to_matrix(q)
                if self.sprites:
                    gs = _SpriteSet(radii)
                    gs.move(self._sphere_centres(self._drawn_centres(x, R), R))
                    actor = gs.add_to(self.plotter, f"rrp-ghost-{i}")
                    actor.prop.color = GHOST_COLOURS[i % len(GHOST_COLOURS)]
                    actor.prop.opacity = GHOST_OPACITY
                else:
                    gs = _SphereSet(radii, max(6, self._resolution // 2 + 2))
                    gs.move(self._sphere_centres(self._drawn_centres(x, R), R))
                    actor = self.plotter.add_mesh(
                        gs.mesh, color=GHOST_COLOURS[i % len(GHOST_COLOURS)],
                        opacity=GHOST_OPACITY, scalars=None, name=f"rrp-ghost-{i}",
                        reset_camera=False)
                    actor.mapper.scalar_visibility = False
                self._ghosts.append((gs, actor))
            else:
                gs = self._ghosts[i][0]
                R = (quat_to_matrix(q) if self._has_offset or self.body_points is not None
                     else None)
                gs.move(self._sphere_centres(self._drawn_centres(x, R), R))
        self.plotter.renderer.ResetCameraClippingRange()

    # ------------------------------------------------------------------ read-only views
    @property
    def n_ghosts(self) -> int:
        return len(self._ghosts)

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
    def ghost_meshes(self) -> list[pv.PolyData]:
        return [g.mesh for g, _ in self._ghosts]

    @property
    def centres(self) -> np.ndarray:
        """Drawn sphere centres of the last :meth:`update` (``x + R d``)."""
        return self._centres

    @property
    def trail_points(self) -> np.ndarray:
        """The bob positions in the trail, oldest first (empty without a pivot)."""
        return self._trail_buf[:self._trail_len].copy()

    @property
    def trail_line(self) -> np.ndarray:
        """The points of the drawn trail: :attr:`trail_points`, then the bob where it is
        now (empty without a pivot)."""
        if self._trail_mesh is None:
            return np.zeros((0, 3))
        return np.asarray(self._trail_mesh.points).copy()

    # ------------------------------------------------------------------ camera
    def reset_camera(self, extent: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        """The default view: the torus and the wall from above at an angle; the
        pendulum from the side (−y) with the whole reach of the bob in view.  ``extent``:
        a box ``(lo, hi)`` to keep in view as well (an export's fixed camera frames the
        whole run's: issue #33 item 12)."""
        cam = self.plotter.camera
        c = self._centres
        r = 0.5 * float(self.diameter.max())
        if self.planar:  # a planar model: look at the x–y plane from +z, y up
            lo, hi = self._swing_region()
            if self.model.wall is not None:
                w = self._wall_bounds
                lo, hi = np.minimum(lo, w.min(axis=0)), np.maximum(hi, w.max(axis=0))
            lo, hi = _union(lo, hi, extent)
            focal = 0.5 * (lo + hi)
            cam.focal_point = focal
            cam.position = focal + np.array([0.0, 0.0, 10.0 * float(np.ptp(hi - lo) + 1.0)])
            cam.up = (0.0, 1.0, 0.0)
            self.plotter.renderer.reset_camera(render=False, bounds=(
                lo[0], hi[0], lo[1], hi[1], lo[2], hi[2]))
            cam.zoom(1.35)
            self._follow_at = None
            self.plotter.renderer.camera_set = True
            self.plotter.renderer.ResetCameraClippingRange()
            return
        if self.pivot is not None:
            reach = float(np.linalg.norm(c[0] - self.pivot)) + r
            lo, hi = self.pivot - reach, self.pivot + reach
            direction = np.array([0.15, -1.0, 0.25])
        else:
            lo, hi = c.min(axis=0) - r, c.max(axis=0) + r
            if self.model.wall is not None:
                w = self._wall_bounds
                lo, hi = np.minimum(lo, w.min(axis=0)), np.maximum(hi, w.max(axis=0))
            direction = np.array([0.55, -1.0, 0.75])
        lo, hi = _union(lo, hi, extent)
        focal = 0.5 * (lo + hi)
        direction /= np.linalg.norm(direction)
        cam.focal_point = focal
        cam.position = focal + 10.0 * direction
        cam.up = (0.0, 0.0, 1.0)
        bounds = (lo[0], hi[0], lo[1], hi[1], lo[2], hi[2])
        self.plotter.renderer.reset_camera(render=False, bounds=bounds)
        # reset_camera fits the bounding sphere: generous for flat scenes, but a narrow
        # (portrait) view has no room to spare across
        try:
            aspect = float(self.plotter.renderer.GetTiledAspectRatio())
        except AttributeError:  # pragma: no cover - older VTK
            aspect = 1.3
        if self.pivot is None:  # VTK fits the height: a portrait view needs more room
            cam.zoom(1.3 * min(1.0, aspect))
        else:  # (the pendulum's box, pivot ± reach, is generous already)
            cam.zoom(1.3)
        self._follow_at = None  # Follow carries the camera from this framing on
        self.plotter.renderer.camera_set = True  # pyvista's first render keeps this view
        self.plotter.renderer.ResetCameraClippingRange()
