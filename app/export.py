"""Headless animation export (``rrp export``): simulate, draw each frame with
:class:`app.scene.BodyScene` on an off-screen plotter, encode MP4 or GIF with the ffmpeg
bundled in imageio-ffmpeg.  No Qt and no X server: without ``DISPLAY`` VTK renders
through EGL (if EGL is missing on a machine, run under ``xvfb-run -a``).

Frames are ``speed / fps`` simulation seconds apart.  The camera is fixed by default,
framing the whole run's extent (a first pass simulates the run to find it: the bodies'
box over every frame, with the wall), so the wall stands still in the video; with
``camera="follow"`` (``rrp export --camera follow``) it follows the bodies as the app's
View → Follow does (issue #33 item 12).  The file is written to a
temporary name next to the target and renamed at the end, so a failure never leaves a
broken file and never destroys an existing one.  A blow-up mid-export stops the run,
finishes the file with the frames so far and reports the engine's message.
"""

from __future__ import annotations

import math
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

if not os.environ.get("DISPLAY") and sys.platform.startswith("linux"):
    os.environ.setdefault("VTK_DEFAULT_OPENGL_WINDOW", "vtkEGLRenderWindow")

CAMERAS = ("fixed", "follow")
"""``rrp export --camera``: fixed (the default: framing the whole run) or following."""
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


def _load(scenario: str, overrides: dict[str, Any] | None):
    from engine.scenarios import load_scenario

    return load_scenario(scenario, overrides or {})


def _simulation(sc, model, integrator: str | None, h: float | None):
    from engine.drivers import simulation_for

    sim = simulation_for(model, integrator or sc.run.integrator,
                     h if h is not None else sc.run.h, record_every=10**9,
                     record_frames=False, energy_tolerance=sc.run.energy_tolerance)
    sim.warm_up()
    return sim


def _setup(sc, integrator: str | None, h: float | None, size: tuple[int, int],
           colour_by: str, follow: bool | None = None):
    """Simulation, plotter, scene and the caption text actor of the loaded scenario
    (``follow``: the scene's camera follows the bodies; ``None``: the scene's default)."""
    from .scene import BodyScene, make_plotter

    model = sc.build_model()
    sim = _simulation(sc, model, integrator, h)
    plotter = make_plotter(size, off_screen=True)
    scene = BodyScene(plotter, model, colour_by=colour_by, follow=follow)
    font = max(6, min(12, round(size[1] / 55)))
    caption = plotter.add_text(" ", position="upper_left", font_size=font, color="#333333",
                               name="rrp-caption", render=False)
    return sim, plotter, scene, caption


def check_length(t_end: float, h: float, fps: int, speed: float) -> int:
    """The frames of an export to ``t_end`` (``speed / fps`` apart); :class:`ExportError`
    (one line) when its steps at ``h`` are more than any run can finish (``rrp run``'s
    guard, :func:`engine.run_steps.step_count`) or its frames more than
    :data:`MAX_FRAMES`.  A bad ``h`` itself is the engine's ``SimulationError``."""
    from engine.run_steps import step_count
    from engine.simulation import SimulationError, check_step

    h = check_step(h)
    try:
        step_count(t_end, h)
    except SimulationError as exc:
        raise ExportError(str(exc)) from None
    n = t_end * fps / speed
    if not n <= MAX_FRAMES:
        raise ExportError(f"t_end = {t_end:g} at {fps} fps and speed {speed:g} means "
                          f"{n:.3g} frames, more than an export can hold (the limit is "
                          f"{MAX_FRAMES:.0e}); lower t_end or fps, or raise --speed")
    return int(math.floor(t_end / (speed / fps) + 1e-9)) + 1


def check_camera(camera: str) -> str:
    """``camera`` if it is one of :data:`CAMERAS`; :class:`ExportError` (one line) else."""
    if camera not in CAMERAS:
        raise ExportError(f"unknown camera {camera!r}: use {' or '.join(CAMERAS)} (fixed, "
                          "the default, frames the whole run; follow follows the bodies)")
    return camera


def _reach(scene) -> float:
    """How far a drawn body reaches from its centre of mass (its spheres' offsets and
    radii)."""
    far = float(np.linalg.norm(scene.offset)) if scene.offset.size else 0.0
    if scene.body_points is not None:
        far = max(far, float(np.linalg.norm(scene.body_points, axis=-1).max()))
    return far + 0.5 * float(scene.diameter.max())


def run_extent(sc, model, integrator: str | None, h: float | None, n_frames: int,
               dt_frame: float, check: Callable[[], None] | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
    """The box ``(lo, hi)`` of the bodies' centres over the frames of an export (a
    simulation of its own, the same bits as the export's), up to a blow-up."""
    sim = _simulation(sc, model, integrator, h)
    x = sim.snapshot().x
    lo, hi = x.min(axis=0), x.max(axis=0)
    for k in range(1, n_frames):
        if check is not None:
            check()
        rep = sim.run_until(k * dt_frame, chunk=10_000,
                            callback=None if check is None else lambda _s: check())
        x = sim.snapshot().x
        if np.all(np.isfinite(x)):
            lo, hi = np.minimum(lo, x.min(axis=0)), np.maximum(hi, x.max(axis=0))
        if not rep.ok:
            break
    return lo, hi


def _draw(sim, scene, plotter, caption, title: str) -> np.ndarray:
    snap = sim.snapshot()
    scene.update(snap.x, snap.q, snap.v, snap.omega)
    caption.SetText(2, f"{title} · {sim.integrator.name} · h = {sim.h:g} · t = {sim.t:.3f} s")
    plotter.render()
    img = plotter.screenshot(return_img=True)
    return np.ascontiguousarray(img[:, :, :3])


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
                                          output_params=["-crf", "20", "-preset", "fast",
                                                         "-movflags", "+faststart",
                                                         "-f", "mp4"])
    gen.send(None)
    return gen


def export_animation(scenario: str, *, integrator: str | None = None, h: float | None = None,
                     t_end: float = 2.0, fps: int = 30, speed: float = 1.0,
                     size: tuple[int, int] = (800, 600), out: Path | str,
                     overrides: dict[str, Any] | None = None, progress: bool = True,
                     colour_by: str = "none", camera: str = "fixed",
                     check: Callable[[], None] | None = None) -> ExportResult:
    """Render ``scenario`` from ``t = 0`` to ``t_end`` into ``out`` (.mp4 or .gif).

    ``fps``: frames per video second; ``speed``: simulation seconds per video second
    (frames are ``speed / fps`` apart in simulation time); ``size``: ``(width, height)``
    in pixels (odd sizes are rounded up to even for MP4); ``camera``: ``"fixed"`` (frames
    the whole run, found by a first simulation pass) or ``"follow"`` (follows the
    bodies, as the app's View → Follow); ``check``: called before each
    frame, it may raise to stop the export (the partial file is removed, the target left
    as it was).  Input errors raise
    :class:`ExportError` (or the engine's ``ScenarioError`` / ``SimulationError``)
    before anything is written.
    """
    out = check_output(out)
    size = check_size(size)
    if out.suffix.lower() == ".mp4":
        size = (size[0] + size[0] % 2, size[1] + size[1] % 2)
    if isinstance(fps, bool) or not isinstance(fps, int) or not 1 <= fps <= MAX_FPS:
        raise ExportError(f"fps must be an integer in [1, {MAX_FPS}], got {fps!r}")
    for name, val in (("t_end", t_end), ("speed", speed)):
        if not (isinstance(val, int | float) and math.isfinite(val) and val > 0):
            raise ExportError(f"{name} must be a positive number, got {val!r}")

    check_camera(camera)
    t_wall = time.perf_counter()
    sc = _load(scenario, overrides)
    n_frames = check_length(t_end, h if h is not None else sc.run.h, fps, speed)
    follow = camera == "follow"
    sim, plotter, scene, caption = _setup(sc, integrator, h, size, colour_by, follow)
    dt_frame = speed / fps
    t_extent = 0.0
    if not follow:  # the whole run's box, then one framing for every frame
        t0 = time.perf_counter()
        try:
            lo, hi = run_extent(sc, sim.model, integrator, h, n_frames, dt_frame, check)
        except BaseException:
            plotter.close()
            raise
        r = _reach(scene)
        scene.reset_camera(extent=(lo - r, hi + r))
        t_extent = time.perf_counter() - t0
    tmp = out.with_name(f".{out.stem}.part-{os.getpid()}{out.suffix}")
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=n_frames, unit="frame", file=sys.stderr, leave=False,
                   dynamic_ncols=True, desc=f"export {out.name}")
    t_sim = t_render = t_encode = 0.0
    frames, failure = 0, None
    gen = None
    try:
        gen = _writer(tmp, size, fps)
        for k in range(n_frames):
            if check is not None:
                check()
            if k:
                t0 = time.perf_counter()
                rep = sim.run_until(k * dt_frame, chunk=10_000,
                                    callback=None if check is None else lambda _s: check())
                t_sim += time.perf_counter() - t0
                if not rep.ok:
                    failure = rep.failure.message
                    if sim.t <= (k - 1) * dt_frame + 1e-12:
                        break
                    # one last frame: the last good state, as the engine kept it
            t0 = time.perf_counter()
            img = _draw(sim, scene, plotter, caption, sc.name)
            t1 = time.perf_counter()
            gen.send(img)
            t_encode += time.perf_counter() - t1
            t_render += t1 - t0
            frames += 1
            if bar is not None:
                bar.update(1)
            if failure is not None:
                break
        t0 = time.perf_counter()
        gen.close()
        t_encode += time.perf_counter() - t0
        gen = None
        os.replace(tmp, out)
    finally:
        try:
            if bar is not None:
                bar.close()
            plotter.close()
        finally:
            _discard(gen, tmp)
    return ExportResult(out, frames, sim.t, float(t_end), size, fps,
                        time.perf_counter() - t_wall, t_sim + t_extent, t_render, t_encode,
                        failure)


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


def screenshot(scenario: str, *, t: float = 0.0, integrator: str | None = None,
               h: float | None = None, size: tuple[int, int] = (800, 600), out: Path | str,
               overrides: dict[str, Any] | None = None, colour_by: str = "none") -> Path:
    """Save one PNG of ``scenario`` at simulation time ``t`` (the scene as exported);
    raises the engine's ``SimulationError`` text as :class:`ExportError` on a blow-up."""
    out = Path(out)
    if out.suffix.lower() != ".png":
        raise ExportError(f"a screenshot must end in .png, got {out.name!r}")
    if not out.parent.is_dir():
        raise ExportError(f"the directory of {str(out)!r} does not exist")
    size = check_size(size)
    sc = _load(scenario, overrides)
    sim, plotter, scene, caption = _setup(sc, integrator, h, size, colour_by)
    try:
        n_draw = int(math.ceil(t * SCREENSHOT_RATE))
        for k in range(1, n_draw + 1):  # intermediate updates: the trail builds up
            rep = sim.run_until(min(t, k / SCREENSHOT_RATE), chunk=10_000)
            if not rep.ok:
                raise ExportError(rep.failure.message)
            snap = sim.snapshot()
            scene.update(snap.x, snap.q, snap.v, snap.omega)
        img = _draw(sim, scene, plotter, caption, sc.name)
    finally:
        plotter.close()
    import imageio.v3 as iio

    iio.imwrite(out, img)
    return out
