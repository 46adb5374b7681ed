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
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from .common import (
    MAX_FRAMES,
    SCREENSHOT_RATE,
    ExportError,
    ExportResult,
    _writer,
    check_camera,
    check_fps,
    check_output,
    check_size,
    close_export,
    even_size,
    finish_writer,
    open_output,
)
from .track import frame_count


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
    from ..scene import BodyScene, make_plotter

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


def _reach(scene) -> float:
    """How far a drawn body reaches from its centre of mass (its spheres' offsets and
    radii)."""
    far = float(np.linalg.norm(scene.offset)) if scene.offset.size else 0.0
    if scene.body_points is not None:
        far = max(far, float(np.linalg.norm(scene.body_points, axis=-1).max()))
    return far + 0.5 * float(scene.diameter.max())


def run_extent(sc, model, integrator: str | None, h: float | None, n_frames: int,
               dt_frame: float, check: Callable[[], None] | None = None, t0: float = 0.0
               ) -> tuple[np.ndarray, np.ndarray]:
    """The box ``(lo, hi)`` of the bodies' centres over the frames of an export (a
    simulation of its own, the same bits as the export's), up to a blow-up."""
    sim = _simulation(sc, model, integrator, h)
    if t0 > 0:
        sim.run_until(t0, chunk=10_000)
    x = sim.snapshot().x
    lo, hi = x.min(axis=0), x.max(axis=0)
    for k in range(1, n_frames):
        if check is not None:
            check()
        rep = sim.run_until(t0 + k * dt_frame, chunk=10_000,
                            callback=None if check is None else lambda _s: check())
        x = sim.snapshot().x
        if np.all(np.isfinite(x)):
            lo, hi = np.minimum(lo, x.min(axis=0)), np.maximum(hi, x.max(axis=0))
        if not rep.ok:
            break
    return lo, hi


def _draw(sim, scene, plotter, caption, title: str, line: str = "") -> np.ndarray:
    """Draw the simulation's state with the overlay (``line``: a title line over it)."""
    snap = sim.snapshot()
    scene.update(snap.x, snap.q, snap.v, snap.omega)
    text = f"{title} · {sim.integrator.name} · h = {sim.h:g} · t = {sim.t:.3f} s"
    caption.SetText(2, f"{line}\n{text}" if line else text)
    plotter.render()
    img = plotter.screenshot(return_img=True)
    return np.ascontiguousarray(img[:, :, :3])


def export_animation(scenario: str, *, integrator: str | None = None, h: float | None = None,
                     t0: float = 0.0, t_end: float = 2.0, fps: int = 30, speed: float = 1.0,
                     size: tuple[int, int] = (800, 600), out: Path | str,
                     overrides: dict[str, Any] | None = None, progress: bool = True,
                     colour_by: str = "none", camera: str = "fixed",
                     check: Callable[[], None] | None = None, title: str = "",
                     warn: Callable[[str], None] | None = None) -> ExportResult:
    """Render ``scenario`` from ``t0`` (simulated from ``t = 0``) to ``t_end`` into
    ``out`` (.mp4 or .gif), frame ``k`` at ``t0 + k · speed / fps`` (issue #37 item 2).

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
    size, note = even_size(out, check_size(size))
    if note and warn is not None:
        warn(note)
    check_fps(fps)
    for name, val in (("t_end", t_end), ("speed", speed)):
        if not (isinstance(val, int | float) and math.isfinite(val) and val > 0):
            raise ExportError(f"{name} must be a positive number, got {val!r}")

    check_camera(camera)
    t_wall = time.perf_counter()
    sc = _load(scenario, overrides)
    check_length(t_end, h if h is not None else sc.run.h, fps, speed)
    if not 0 <= t0 < t_end:
        raise ExportError(f"t0 = {t0:g} must lie in [0, t_end = {t_end:g})")
    n_frames = frame_count(t0, t_end, fps, speed)
    follow = camera == "follow"
    sim, plotter, scene, caption = _setup(sc, integrator, h, size, colour_by, follow)
    dt_frame = speed / fps
    t_extent = 0.0
    if not follow:  # the whole run's box, then one framing for every frame
        w0 = time.perf_counter()
        try:
            lo, hi = run_extent(sc, sim.model, integrator, h, n_frames, dt_frame, check, t0)
        except BaseException:
            plotter.close()
            raise
        r = _reach(scene)
        scene.reset_camera(extent=(lo - r, hi + r))
        t_extent = time.perf_counter() - w0
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=n_frames, unit="frame", file=sys.stderr, leave=False,
                   dynamic_ncols=True, desc=f"export {out.name}")
    tmp = open_output(out)  # (stale partials of killed exports removed: issue #46)
    t_sim = t_render = t_encode = 0.0
    frames, failure = 0, None
    gen = None
    try:
        gen = _writer(tmp, size, fps)
        for k in range(n_frames):
            if check is not None:
                check()
            if k or t0 > 0:
                w0 = time.perf_counter()
                rep = sim.run_until(t0 + k * dt_frame, chunk=10_000,
                                    callback=None if check is None else lambda _s: check())
                t_sim += time.perf_counter() - w0
                if not rep.ok:
                    failure = rep.failure.message
                    if k and sim.t <= t0 + (k - 1) * dt_frame + 1e-12:
                        break
                    # one last frame: the last good state, as the engine kept it
            w0 = time.perf_counter()
            img = _draw(sim, scene, plotter, caption, sc.name, title)
            w1 = time.perf_counter()
            gen.send(img)
            t_encode += time.perf_counter() - w1
            t_render += w1 - w0
            frames += 1
            if bar is not None:
                bar.update(1)
            if failure is not None:
                break
        t_encode += finish_writer(gen, tmp, check)
        gen = None
    finally:
        close_export(bar, plotter, gen, tmp)
    return ExportResult(out, frames, sim.t, float(t_end), size, fps,
                        time.perf_counter() - t_wall, t_sim + t_extent, t_render, t_encode,
                        failure, float(t0))


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


def simulate_to_file(scenario: str, path: Path, *, integrator: str | None = None,
                     h: float | None = None, t_end: float = 2.0, dt_frame: float,
                     overrides: dict[str, Any] | None = None,
                     check: Callable[[], None] | None = None) -> tuple[Path, str | None]:
    """Simulate ``scenario`` to ``t_end`` into the run file ``path`` (frames every
    ``dt_frame`` when that is a whole number of steps, else every step), so that a
    ``view+plots`` export of a scenario is drawn as a run file's is (issue #37 item 1:
    one renderer for every source).  Returns the file written and the engine's message
    if the run blew up (the file then holds the frames up to it)."""
    from engine.drivers import simulation_for
    from engine.io import RunWriter
    from engine.run_steps import step_count

    sc = _load(scenario, overrides)
    h = h if h is not None else sc.run.h
    check_length(t_end, h, 1, 1.0)
    n_total = step_count(t_end, h)
    per = dt_frame / h
    every = max(1, int(round(per))) if abs(per - round(per)) < 1e-6 * max(per, 1) else 1
    model = sc.build_model()
    sim = simulation_for(model, integrator or sc.run.integrator, h, record_every=every,
                         record_frames=True, energy_tolerance=sc.run.energy_tolerance,
                         record_state=True)
    sim.warm_up()
    writer = RunWriter(path, sim, scenario=sc.name, keep_frames=False, checkpoint=False,
                       t_end=t_end)
    done, failure, status = 0, None, "complete"
    try:
        while done < n_total:
            if check is not None:
                check()
            rep = sim.advance(min(2000, n_total - done))
            done += rep.steps
            writer.flush_when_due()
            if not rep.ok:
                failure, status = rep.failure.message, "failed"
                break
        writer.flush()
    except BaseException:
        writer.close("interrupted", "export stopped")
        raise
    return writer.close(status, failure or ""), failure
