"""The drawing primitives of the 3D scene (issue #34: split out of ``app.scene``): the
plotter and its lights, many spheres as one mesh (:class:`_SphereSet`) or as point
impostors (:class:`_SpriteSet`), rewritten in place each frame; the spheres' "body
group"s are the engine's (:func:`engine.models.base.body_groups`, re-exported here)."""

from __future__ import annotations

import numpy as np
import pyvista as pv
from vtkmodules.vtkRenderingOpenGL2 import vtkOpenGLPointGaussianMapper

from engine.models.base import body_groups  # noqa: F401  (re-exported: app.scene)

from .style import SPHERE_SPLAT


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
