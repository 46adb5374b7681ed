"""What every export shares (issue #37): the checks of its input, the result, the
ffmpeg writer and its clean-up (whole or absent: issue #46 item 2).  Imported first by
:mod:`app.export`: without ``DISPLAY`` it makes VTK render through EGL."""

from __future__ import annotations

import errno
import os
import re
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from engine.io.atomic import AtomicOutput

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
SECONDS_PER_MEGAPIXEL = 0.07
"""Wall seconds an export takes to render and encode a frame, per million pixels
(BENCHMARKS.md, "Export": view+plots at 1280x720 renders and encodes 15 frames/s on the
2-core box): what :func:`estimate_seconds` says before an export starts."""


def estimate_seconds(n_frames: int, size: tuple[int, int]) -> float:
    """About how long an export of ``n_frames`` frames of ``size`` takes to render and
    encode (issue #47 item 7: an 882 000-frame export started without a word); a
    scenario's simulation comes on top."""
    return float(n_frames) * SECONDS_PER_MEGAPIXEL * size[0] * size[1] / 1e6


def duration(seconds: float) -> str:
    """``seconds`` as a person says it: 40 s, 12 min, 3.5 h, 2.9 days."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"
"""Exports of more frames are refused (over nine hours of video at 30 fps)."""
SCREENSHOT_RATE = 60.0
"""Scene updates per simulated second on the way to a screenshot (for the trail)."""


class ExportError(ValueError):
    """Bad export input (extension, size, fps, speed, target directory); one line."""


def check_fps(fps: int) -> int:
    """``fps`` if it is an integer in ``[1, MAX_FPS]``; else :class:`ExportError`, the one
    range every route says (``--fps 0`` and ``--fps 100000`` named two: issue #42 item
    11)."""
    if isinstance(fps, bool) or not isinstance(fps, int) or not 1 <= fps <= MAX_FPS:
        raise ExportError(f"fps must be an integer in [1, {MAX_FPS}], got {fps!r}")
    return fps


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


def open_output(out: Path) -> AtomicOutput:
    """The temporary of an export's ``out`` (stale ones of killed exports removed first:
    issue #46 item 8), to be passed to :func:`_writer`, :func:`finish_writer` and
    :func:`close_export`."""
    return AtomicOutput(out).__enter__()


def _writer(out: AtomicOutput, size: tuple[int, int], fps: int) -> _Encoder:
    """A started ffmpeg writing ``out.tmp`` (MP4 or GIF, by the target's extension)."""
    if out.path.suffix.lower() == ".gif":
        # one palette for the whole clip (palettegen), no dithering noise between frames
        params = ["-vcodec", "gif", "-pix_fmt", "pal8", "-v", "error",
                  "-filter_complex", "split[a][b];[a]palettegen=stats_mode=diff[p];"
                  "[b][p]paletteuse=dither=bayer:bayer_scale=3", "-loop", "0", "-f", "gif"]
    else:
        params = ["-vcodec", "libx264", "-pix_fmt", "yuv420p", "-v", "error",
                  "-crf", "20", "-preset", "veryfast", "-movflags", "+faststart",
                  "-f", "mp4"]
    return _Encoder(out, size, fps, params)


_FFMPEG_PREFIX = re.compile(r"^(\[[^]]*\]\s*)+")


class _Encoder:
    """ffmpeg fed raw RGB frames on its stdin, writing the temporary of ``out``; its
    messages go to a file (not to the terminal), for the one line of a failure (issue #46
    item 2: a full disk printed ffmpeg's lines and exited 0 with a broken MP4).  In its
    own session: a Ctrl-C at the terminal reaches this process alone, which stops it."""

    def __init__(self, out: AtomicOutput, size: tuple[int, int], fps: int,
                 params: list[str]) -> None:
        import imageio_ffmpeg

        self.out = out
        self.log = tempfile.TemporaryFile()
        rate = str(Fraction(fps).limit_denominator())
        cmd = [imageio_ffmpeg.get_ffmpeg_exe(), "-y", "-f", "rawvideo", "-vcodec", "rawvideo",
               "-s", f"{size[0]}x{size[1]}", "-pix_fmt", "rgb24", "-r", rate, "-i", "-",
               "-an", *params, str(out.tmp)]
        try:
            self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                      stderr=self.log, start_new_session=True)
        except BaseException:
            self.log.close()
            raise

    def why(self, default: str) -> str:
        """ffmpeg's last message line (its ``[muxer @ 0x…]`` prefixes left out)."""
        try:
            self.log.seek(0)
            lines = [ln.strip() for ln in
                     self.log.read()[-4096:].decode(errors="replace").splitlines()]
        except (OSError, ValueError):
            lines = []
        lines = [_FFMPEG_PREFIX.sub("", ln) for ln in lines if ln]
        errors = [os.strerror(e) for e in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG,
                                           errno.EIO, errno.EROFS, errno.EACCES)]
        lines = [ln for ln in lines if any(e in ln for e in errors)] or lines
        return f"ffmpeg: {lines[0]}" if lines else default  # (the first cause)

    def send(self, img) -> None:
        try:
            self.p.stdin.write(memoryview(img).cast("B"))
        except OSError:  # (a broken pipe: ffmpeg is gone)
            rc = self.p.wait()
            raise self.out.error(OSError(errno.EIO, self.why(
                f"ffmpeg stopped (exit status {rc})"))) from None

    def close(self) -> None:
        """Let ffmpeg finish the file; its exit status checked."""
        try:
            self.p.stdin.close()
        except OSError:
            pass
        rc = self.p.wait()
        if rc != 0:
            raise self.out.error(OSError(errno.EIO, self.why(
                f"ffmpeg failed (exit status {rc})")))
        self.log.close()

    def kill(self) -> None:
        """Stop ffmpeg at once, without finishing the file."""
        try:
            if self.p.poll() is None:
                self.p.kill()
            try:
                self.p.stdin.close()
            except OSError:
                pass
            self.p.wait()
        finally:
            self.log.close()


def check_video(path: Path) -> None:
    """Raise ``OSError`` unless ``path`` is a finished MP4 (top-level boxes that fill
    the file, ``ftyp``, ``moov`` and ``mdat`` among them: an MP4 cut short lacks its
    ``moov``) or GIF (its header and its trailer byte)."""
    size = path.stat().st_size
    with open(path, "rb") as fh:
        head = fh.read(6)
        if head in (b"GIF89a", b"GIF87a"):
            fh.seek(-1, os.SEEK_END)
            if size > 13 and fh.read(1) == b"\x3b":
                return
            raise OSError(errno.EIO, "the encoder left an unfinished GIF")
        seen, pos = set(), 0
        while pos < size:
            fh.seek(pos)
            box = fh.read(16)
            if len(box) < 8:
                break
            n, kind = struct.unpack(">I4s", box[:8])
            if n == 1 and len(box) == 16:
                n = struct.unpack(">Q", box[8:])[0]
            elif n == 0:
                n = size - pos
            if n < 8 or pos + n > size:
                break
            seen.add(kind)  # (a box that the file holds whole)
            pos += n
        if pos != size or not {b"ftyp", b"moov", b"mdat"} <= seen:
            raise OSError(errno.EIO, "the encoder left an unfinished MP4 (no moov atom)"
                          if b"moov" not in seen else "the encoder left a damaged MP4")


def finish_writer(gen: _Encoder, out: AtomicOutput,
                  before: Callable[[], None] | None = None) -> float:
    """Let ffmpeg finish the file (its exit status checked), check the file
    (:func:`check_video`), then ``before()`` (a signal check: it may raise, nothing is
    then written), then rename it to the target; returns the seconds the closing took."""
    w0 = time.perf_counter()
    gen.close()
    dt = time.perf_counter() - w0
    out.commit(check_video, before)
    return dt


def close_export(bar, plotter, gen: _Encoder | None, out: AtomicOutput) -> None:
    """The end of an export, however it ends: the progress bar and the off-screen
    plotter closed; ffmpeg stopped (``gen`` is ``None`` once the file is done) and the
    temporary removed unless the file was renamed into place."""
    try:
        if bar is not None:
            bar.close()
        plotter.close()
    finally:
        try:
            if gen is not None:
                gen.kill()
        finally:
            if not out.done:
                out.discard()
