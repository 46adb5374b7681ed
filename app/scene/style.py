"""The look of the 3D scene (issue #34: split out of ``app.scene``): its colours, sizes,
the level-of-detail limits of large models and the sphere impostors' shader."""

from __future__ import annotations

import numpy as np

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
GROUP_BASE = ("#1f77b4", "#17becf", "#7b4173", "#dcd300", "#e41a1c", "#008856", "#fdae6b",
              "#8c6d31", "#de9ed6", "#969696")
"""The first ten "body group" colours (blue, cyan, plum, yellow, red, green, light orange,
ochre, pink, grey): picked for their pairwise CIEDE2000 distance, at least 24 between
any two (issue #42 item 7: ``tab20`` gave groups 2 and 3 its orange and light orange,
15 apart, hardly told apart on shaded spheres); groups 1 and 2 (an assembly's usual
two) in colours far from the body axes' red, green and blue and from the inspected
body's amber halo (:data:`HIGHLIGHT_COLOUR`)."""


def _lighter(hex_colour: str, white: float = 0.5) -> str:
    rgb = [int(hex_colour[k:k + 2], 16) for k in (1, 3, 5)]
    return "#" + "".join(f"{round(c + (255 - c) * white):02x}" for c in rgb)


GROUP_PALETTE = (*GROUP_BASE, *(_lighter(c) for c in GROUP_BASE))
"""The "body group" colours: group ``k`` gets ``GROUP_PALETTE[k % GROUP_COLOURS]``; the
ten of :data:`GROUP_BASE`, then the same mixed half with white (groups 10–19: a pile of
many rings)."""
GROUP_COLOURS = len(GROUP_PALETTE)
""""body group" colours: group index modulo this many, in :data:`GROUP_PALETTE`."""
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
