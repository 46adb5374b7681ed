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

The package (issue #34: one module of 1156 lines before): the look in :mod:`.style`, the
plotter and the sphere sets in :mod:`.meshes`, :class:`BodyScene` (the bodies, their
axes and colours) in :mod:`.bodies`, its wall, pendulum parts, trail, highlight and
ghosts in :mod:`.decorations` and its camera and picking in :mod:`.camera`.  The names
imported from ``app.scene`` elsewhere stay importable from here; the other constants
are in :mod:`.style`, and a test that changes one patches the module that reads it
(``app.scene.bodies.SPRITE_MIN_SPHERES``).
"""

from __future__ import annotations

from .bodies import BodyScene
from .meshes import body_groups, make_plotter, set_lighting
from .style import AXES_ALL_LIMIT, AXES_DETAILS, COLOUR_MODES, GHOST_COLOURS, GROUP_COLOURS

__all__ = [
    "AXES_ALL_LIMIT",
    "AXES_DETAILS",
    "BodyScene",
    "COLOUR_MODES",
    "GHOST_COLOURS",
    "GROUP_COLOURS",
    "body_groups",
    "make_plotter",
    "set_lighting",
]
