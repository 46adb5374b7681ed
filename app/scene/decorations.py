"""What the 3D scene draws besides the bodies (issue #34: split out of ``app.scene``):
the walls (or a planar model's slab, a box's edges), the pendulum's pivot, rod or
spring and the trail of its bob, the rods of multi-sphere bodies, the inspected body's
cage and the ghosts of compared runs.  A mixin of :class:`app.scene.BodyScene`, whose
``__init__`` sets the attributes it reads."""

from __future__ import annotations

import math

import numpy as np
import pyvista as pv

from engine.rotations import quat_to_matrix

from .meshes import _SphereSet, _SpriteSet
from .style import (
    COIL_POINTS_PER_TURN,
    COIL_TURNS,
    GHOST_COLOURS,
    GHOST_OPACITY,
    HIGHLIGHT_COLOUR,
    PLANAR_WALL_COLOUR,
    ROD_COLOUR,
    SPRING_COLOUR,
    SWING_REACH,
    TRAIL_CAPACITY,
    TRAIL_COLOUR,
    WALL_COLOUR,
)


class SceneDecorations:
    """The wall, pendulum parts, rods, trail, highlight and ghosts of
    :class:`~app.scene.BodyScene` (a mixin)."""

    def _wall_corners(self, wall: tuple | None = None) -> np.ndarray:
        """Corners ``(4, 3)`` of the drawn wall (default the model's first): a rectangle
        in the plane ``n·x = x_w``, upright (its second side along the part of e₃ in the
        plane), sized to the bodies."""
        normal, x_w = self.model.wall if wall is None else wall
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
            return
        # any other walls (an assembly's, issue #35): each its own plane, as the first
        bounds = [corners]
        for k, wall in enumerate((getattr(self.model, "walls", None) or [])[1:], start=1):
            c = self._wall_corners(wall)
            bounds.append(c)
            self.plotter.add_mesh(pv.PolyData(c, faces=[4, 3, 2, 1, 0]), color=WALL_COLOUR,
                                  name=f"rrp-wall-{k}", reset_camera=False, lighting=False,
                                  culling="back")
            self.plotter.add_mesh(pv.PolyData(c, lines=[5, 0, 1, 2, 3, 0]), color="#5d6f88",
                                  line_width=1.5, name=f"rrp-wall-edge-{k}",
                                  reset_camera=False, lighting=False)
        self._wall_bounds = np.concatenate(bounds)

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
                gs: _SphereSet | _SpriteSet = (
                    _SpriteSet(radii) if self.sprites
                    else _SphereSet(radii, max(6, self._resolution // 2 + 2)))
                R = quat_to_matrix(q)
                gs.move(self._sphere_centres(self._drawn_centres(x, R), R))
                if self.sprites:
                    actor = gs.add_to(self.plotter, f"rrp-ghost-{i}")
                    actor.prop.color = GHOST_COLOURS[i % len(GHOST_COLOURS)]
                    actor.prop.opacity = GHOST_OPACITY
                else:
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

    @property
    def n_ghosts(self) -> int:
        return len(self._ghosts)

    @property
    def ghost_meshes(self) -> list[pv.PolyData]:
        return [g.mesh for g, _ in self._ghosts]
