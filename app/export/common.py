"""What every export shares (issue #37): the checks of its input, the result, the
ffmpeg writer and its clean-up.  Imported first by :mod:`app.export`: without
``DISPLAY`` it makes VTK render through EGL."""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

if not os.environ.get("DISPLAY") and sys.platform.startswith("linux"):
    os.environ.setdefault("VTK_DEFAULT_OPENGL_WINDOW", "vtkEGLRenderWindow")

CAMERAS = ("fixed", "follow")
"""``rrp export --camera``: fixed (the default: framing the whole run) or following."""
LAYOUTS = ("view", "view+plots")
"""``rrp export --layout``: the 3D view alone, or with the app's plots beside it."""
FORMATS = (".mp4", ".gif")
"""Output formats, chosen by the file extension."""
MIN_SIZE, MAX_SIZE = 16, 4096
MAX_FPS = 120
MAX_FRAMES = 10**6
"""Exports of more frames are refused (over nine hours of video at 30 fps)."""
SCREENSHOT_RATE = 60.0
"""Scene updates per simulated second on the way to a screenshot (for the trail)."""


class ExportError(ValueError):
    """Bad export input (extension, size, fps, speed, target directory); one line."""


def check_layout(layout: str) -> str:
    """``layout`` if it is one of :data:`LAYOUTS`; :class:`ExportError` (one line) else."""
    if layout not in LAYOUTS:
        raise ExportError(f"unknown layout {layout!r}: use {' or '.join(LAYOUTS)}")
    return layout


def even_size(out: Path, size: tuple[int, int]) -> tuple[tuple[int, int], str | None]:
    """The frame size for ``out``: an MP4 (H.264, 4:2:0) needs even sides, so odd ones
    are rounded up; with the note saying so (``None`` when nothing changed)."""
    if out.suffix.lower() != ".mp4" or not (size[0] % 2 or size[1] % 2):
        return size, None
    even = (size[0] + size[0] % 2, size[1] + size[1] % 2)
    return even, (f"an MP4 needs even sides: the size {size[0]}x{size[1]} was rounded up "
                  f"to {even[0]}x{even[1]}")


@dataclass(frozen=True)
class ExportResult:
    """What an export produced.  ``failure``: the engine's message if the run blew up
    (the file then holds the frames up to ``t_reached``)."""

    path: Path
    frames: int
    t_reached: float
    t_end: float
    size: tuple[int, int]
    fps: int
    wall_seconds: float
    sim_seconds: float
    render_seconds: float
    encode_seconds: float
    failure: str | None = None
    t_first: float = 0.0
    """The first frame's time (``--t0``)."""

    @property
    def ok(self) -> bool:
        return self.failure is None

    @property
    def seconds_per_frame(self) -> float:
        return self.wall_seconds / max(1, self.frames)


def check_output(out: Path | str) -> Path:
    """The target path, checked: a known extension and an existing directory."""
    out = Path(out)
    ext = out.suffix.lower()
    if ext not in FORMATS:
        raise ExportError(f"cannot write {out.name!r}: the output must end in "
                          f"{' or '.join(FORMATS)} (got {ext or 'no extension'!r})")
    if not out.parent.is_dir():
        raise ExportError(f"the directory of {str(out)!r} does not exist")
    if out.is_dir():
        raise ExportError(f"{str(out)!r} is a directory")
    return out


def check_size(size: tuple[int, int]) -> tuple[int, int]:
    """A frame size ``(width, height)`` within [16, 4096] pixels."""
    try:
        w, h = (int(s) for s in size)
    except (TypeError, ValueError):
        raise ExportError(f"size must be two integers (width, height), got {size!r}") from None
    if not (MIN_SIZE <= w <= MAX_SIZE and MIN_SIZE <= h <= MAX_SIZE):
        raise ExportError(f"size {w}x{h} is out of range: width and height must lie in "
                          f"[{MIN_SIZE}, {MAX_SIZE}] pixels")
    return w, h


def parse_size(text: str) -> tuple[int, int]:
    """``"800x600"`` → ``(800, 600)``; :class:`ExportError` otherwise."""
    parts = text.lower().replace("×", "x").split("x")
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
        raise ExportError(f"size must be WIDTHxHEIGHT, e.g. 800x600, got {text!r}")
    return check_size((int(parts[0]), int(parts[1])))


def check_camera(camera: str) -> str:
    """``camera`` if it is one of :data:`CAMERAS`; :class:`ExportError` (one line) else."""
    if camera not in CAMERAS:
        raise ExportError(f"unknown camera {camera!r}: use {' or '.join(CAMERAS)} (fixed, "
                          "the default, frames the whole run; follow follows the bodies)")
    return camera


def _writer(path: Path, size: tuple[int, int], fps: int):
    """A started imageio-ffmpeg frame generator for ``path`` (MP4 or GIF)."""
    import imageio_ffmpeg

    if path.suffix.lower() == ".gif":
        # one palette for the whole clip (palettegen), no dithering noise between frames
        params = ["-filter_complex", "split[a][b];[a]palettegen=stats_mode=diff[p];"
                  "[b][p]paletteuse=dither=bayer:bayer_scale=3", "-loop", "0", "-f", "gif"]
        gen = imageio_ffmpeg.write_frames(str(path), size, fps=fps, codec="gif",
                                          pix_fmt_out="pal8", quality=None,
                                          macro_block_size=1, ffmpeg_log_level="error",
                                          output_params=params)
    else:
        gen = imageio_ffmpeg.write_frames(str(path), size, fps=fps, codec="libx264",
                                          pix_fmt_out="yuv420p", quality=None,
                                          macro_block_size=2, ffmpeg_log_level="error",
                                          output_params=["-crf", "20", "-preset", "veryfast",
                                                         "-movflags", "+faststart",
                                                         "-f", "mp4"])
    gen.send(None)
    return gen


class _Discard(BaseException):
    """Thrown into the ffmpeg writer to kill ffmpeg at once (not Exception: imageio-ffmpeg
    waits for ffmpeg to finish the file on those)."""


def _discard(gen, tmp: Path) -> None:
    """After a failure or an interruption (``gen`` still open): stop ffmpeg without
    finishing the file, then remove the temporary file, whatever happens on the way."""
    try:
        if gen is not None:
            try:
                gen.throw(_Discard())
            except BaseException:  # noqa: S110 - _Discard itself, or ffmpeg already gone
                pass
    finally:
        tmp.unlink(missing_ok=True)



def finish_writer(gen, tmp: Path, out: Path) -> float:
    """Close the ffmpeg writer (it finishes the file) and rename the temporary file to
    ``out``; returns the seconds the closing took."""
    w0 = time.perf_counter()
    gen.close()
    dt = time.perf_counter() - w0
    os.replace(tmp, out)
    return dt


def close_export(bar, plotter, gen, tmp: Path) -> None:
    """The end of an export, however it ends: the progress bar and the off-screen
    plotter closed, then :func:`_discard` (``gen`` is ``None`` once the file is done)."""
    try:
        if bar is not None:
            bar.close()
        plotter.close()
    finally:
        _discard(gen, tmp)
