"""Headless animation export (``rrp export``, issue #37): a scenario simulated as the
frames ask (:mod:`.scenario`, :mod:`.sim_track`), or a run file drawn from its recorded
frames (:mod:`.track`); both drawn by one renderer (:mod:`.render`), with the plots
beside the view for ``view+plots`` (:mod:`.plots`); both draw with
:class:`app.scene.BodyScene` off screen and encode MP4 or GIF with the ffmpeg bundled in
imageio-ffmpeg.  No Qt and no X server: without ``DISPLAY`` VTK renders through EGL
(set by :mod:`.common`, imported first).

Frame ``k`` shows ``t = t0 + k · speed / fps``, ``k = 0 … floor((t1 − t0) · fps / speed)``
(docs/output.md, "Animations").
"""

from .common import (
    CAMERAS,
    FORMATS,
    LAYOUTS,
    MAX_FPS,
    MAX_FRAMES,
    ExportError,
    ExportResult,
    check_camera,
    check_layout,
    check_output,
    check_size,
    parse_size,
)
from .render import export_run
from .scenario import _draw, check_length, export_animation, screenshot
from .track import frame_count, frame_times

__all__ = ["CAMERAS", "FORMATS", "LAYOUTS", "MAX_FPS", "MAX_FRAMES", "ExportError",
           "ExportResult", "_draw", "check_camera", "check_layout", "check_length", "check_output",
           "check_size", "export_animation", "export_run", "frame_count", "frame_times",
           "parse_size", "screenshot"]
