"""The camera of the 3D scene (issue #34: split out of ``app.scene``): the default view
of each kind of model, Follow (the bodies kept in view as they move) and picking a
body under the mouse.  A mixin of :class:`app.scene.BodyScene`, whose ``__init__`` sets
the attributes it reads."""

from __future__ import annotations

import math

import numpy as np

from .style import FOLLOW_EASE, FOLLOW_FILL

FIT_MARGIN = 0.02
"""Share of the view's half-width kept free around a box that must be in view
(:meth:`SceneCamera.fit_box`)."""


def _corners(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The eight corners of the box ``(lo, hi)``, shape ``(8, 3)``."""
    return np.array([[(lo, hi)[(k >> i) & 1][i] for i in range(3)] for k in range(8)],
                    dtype=np.float64)


def _union(lo: np.ndarray, hi: np.ndarray,
           extent: tuple[np.ndarray, np.ndarray] | None) -> tuple[np.ndarray, np.ndarray]:
    """The box ``(lo, hi)`` grown to hold ``extent`` too (``None``: as it is)."""
    if extent is None:
        return lo, hi
    return np.minimum(lo, extent[0]), np.maximum(hi, extent[1])


class SceneCamera:
    """The camera and picking of :class:`~app.scene.BodyScene` (a mixin)."""

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

    def _with_wall(self, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The box ``(lo, hi)`` grown to hold the drawn wall (as it is without one)."""
        if self.model.wall is None:
            return lo, hi
        w = self._wall_bounds
        return _union(lo, hi, (w.min(axis=0), w.max(axis=0)))

    def _aspect(self) -> float:
        try:
            aspect = float(self.plotter.renderer.GetTiledAspectRatio())
        except AttributeError:  # pragma: no cover - older VTK
            aspect = 1.0
        return aspect if aspect > 0 and math.isfinite(aspect) else 1.0

    def view_transform(self) -> np.ndarray:
        """The 4×4 matrix taking world points (homogeneous) to the 3D view's clip
        coordinates: a point is drawn inside the view where ``|x|, |y| ≤ w`` (the tests
        project every body's bounding sphere with it)."""
        m = self.plotter.camera.GetCompositeProjectionTransformMatrix(self._aspect(), -1, 1)
        return np.array([[m.GetElement(i, j) for j in range(4)] for i in range(4)])

    def fit_box(self, lo: np.ndarray, hi: np.ndarray, margin: float = FIT_MARGIN) -> None:
        """Move the camera back along its line of sight (or widen a parallel view) just
        enough that the whole box ``(lo, hi)`` is in view, ``margin`` of the half-width
        to spare: its eight corners inside the view frustum, and so (the frustum is
        convex) everything in the box — the fixed camera of an export holds every body
        of every frame this way (issue #42 item 3; VTK's ``ResetCamera`` fits the box's
        bounding sphere, and the zoom after it could cut corners off).  Nothing moves
        when the box is in view already."""
        cam = self.plotter.camera
        pos = np.asarray(cam.position, dtype=np.float64)
        foc = np.asarray(cam.focal_point, dtype=np.float64)
        d = foc - pos
        dist = float(np.linalg.norm(d))
        if not (dist > 0 and np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
            return
        d /= dist
        up = np.asarray(cam.up, dtype=np.float64)
        right = np.cross(d, up)
        if not np.linalg.norm(right) > 0:
            return
        right /= np.linalg.norm(right)
        up = np.cross(right, d)
        rel = _corners(np.asarray(lo, float), np.asarray(hi, float)) - pos
        x, y, z = np.abs(rel @ right), np.abs(rel @ up), rel @ d
        aspect = self._aspect()
        keep = 1.0 - margin
        if cam.parallel_projection:
            need = float(max(y.max(), x.max() / aspect)) / keep
            if need > cam.parallel_scale:
                cam.parallel_scale = need
        else:
            tan_v = math.tan(math.radians(cam.view_angle) / 2.0) * keep
            back = float(max((x / (tan_v * aspect) - z).max(), (y / tan_v - z).max()))
            if back > 0:
                cam.position = pos - back * d
        self.plotter.renderer.ResetCameraClippingRange()

    def reset_camera(self, extent: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        """The default view: the torus and the wall from above at an angle; the
        pendulum from the side (−y) with the whole reach of the bob in view.  ``extent``:
        a box ``(lo, hi)`` to keep in view as well (an export's fixed camera frames the
        whole run's: issue #33 item 12), wholly: :meth:`fit_box`."""
        cam = self.plotter.camera
        c = self._centres
        r = 0.5 * float(self.diameter.max())
        if self.planar:  # a planar model: look at the x–y plane from +z, y up
            lo, hi = self._swing_region()
            lo, hi = self._with_wall(lo, hi)
            lo, hi = _union(lo, hi, extent)
            focal = 0.5 * (lo + hi)
            cam.focal_point = focal
            cam.position = focal + np.array([0.0, 0.0, 10.0 * float(np.ptp(hi - lo) + 1.0)])
            cam.up = (0.0, 1.0, 0.0)
            self.plotter.renderer.reset_camera(render=False, bounds=(
                lo[0], hi[0], lo[1], hi[1], lo[2], hi[2]))
            cam.zoom(1.35)
            if extent is not None:
                self.fit_box(*extent)
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
            lo, hi = self._with_wall(lo, hi)
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
        if extent is not None:
            self.fit_box(*extent)
        self._follow_at = None  # Follow carries the camera from this framing on
        self.plotter.renderer.camera_set = True  # pyvista's first render keeps this view
        self.plotter.renderer.ResetCameraClippingRange()
