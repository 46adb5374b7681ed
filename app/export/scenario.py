"""Headless animation export (``rrp export``) of a scenario: simulated as the frames ask
(:class:`app.export.sim_track.SimTrack`: each frame at exactly ``t_k = t0 + k · speed /
fps``, the two steps bracketing it interpolated as a run file's records are) and drawn by
the run files' renderer (:func:`app.export.render._render`, :class:`app.scene.BodyScene`
off screen), ``--layout view`` and ``view+plots`` alike (issue #42 item 9: one path,
nothing written but the video).  No Qt and no X server: without ``DISPLAY`` VTK renders
through EGL (if EGL is missing on a machine, run under ``xvfb-run -a``).

The camera is fixed by default, framing the whole run's extent, so the wall stands still
in the video; with ``camera="follow"`` (``rrp export --camera follow``) it follows the
bodies as the app's View → Follow does (issue #33 item 12).  A fixed camera or the plots
need the whole window first: a first pass simulates it (the same bits) for the box of
the bodies as drawn at every frame and for the recorded series (in memory, at most
:data:`app.export.sim_track.SERIES_ROWS` rows).  The file is written to a temporary
name next to the target and renamed at the end, so a failure never leaves a broken file
and never destroys an existing one.  A blow-up mid-export stops the run, finishes the
file with the frames so far (the last one the last good state) and reports the engine's
message.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from engine.models.field_view import stage_spans

from .common import (
    MAX_FRAMES,
    SCREENSHOT_RATE,
    ExportError,
    ExportResult,
    check_camera,
    check_fps,
    check_layout,
    check_output,
    check_size,
    even_size,
)
from .render import FrameInfo, Source, _render
from .sim_track import SimTrack
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


def _draw(sim, scene, plotter, caption, title: str, line: str = "") -> np.ndarray:
    """Draw the simulation's state with the overlay (``line``: a title line over it)."""
    snap = sim.snapshot()
    scene.update(snap.x, snap.q, snap.v, snap.omega)
    text = f"{title} · {sim.integrator.name} · h = {sim.h:g} · t = {sim.t:.3f} s"
    broken = getattr(sim, "broken_bonds", None)
    if broken is not None:  # (issue #44 item 2)
        scene.set_broken(broken)
        text += f" · broken bonds {len(broken)}"
    caption.SetText(2, f"{line}\n{text}" if line else text)
    plotter.render()
    img = plotter.screenshot(return_img=True)
    return np.ascontiguousarray(img[:, :, :3])


def _first_pass(sc, integrator: str | None, h: float | None, t_end: float, a: float,
                dt: float, n_frames: int, check: Callable[[], None] | None, plots: bool
                ) -> tuple[tuple[np.ndarray, np.ndarray], list | None]:
    """The box of the bodies' centres as drawn at every frame (up to a blow-up) and,
    with ``plots``, the curves of the run's series on the window."""
    from .plots import curves_of

    track = SimTrack(sc, integrator, h, t_end, check)
    lo = hi = None
    for k in range(n_frames):
        st = track.state(a + k * dt)
        if st is None:
            break
        x = np.asarray(st.x).reshape(-1, 3)
        x = x[np.all(np.isfinite(x), axis=1)]
        if len(x):
            lo = x.min(axis=0) if lo is None else np.minimum(lo, x.min(axis=0))
            hi = x.max(axis=0) if hi is None else np.maximum(hi, x.max(axis=0))
        if track.failure is not None:
            break
    if lo is None:
        lo = hi = np.zeros(3)
    b = max(a + (n_frames - 1) * dt, a + dt * 1e-6)
    curves = [curves_of(track.series(), a, b)] if plots else None
    return (lo, hi), curves


def export_animation(scenario: str, *, integrator: str | None = None, h: float | None = None,
                     t0: float = 0.0, t_end: float = 2.0, fps: int = 30, speed: float = 1.0,
                     size: tuple[int, int] = (800, 600), out: Path | str,
                     overrides: dict[str, Any] | None = None, progress: bool = True,
                     colour_by: str = "none", camera: str = "fixed",
                     check: Callable[[], None] | None = None, title: str = "",
                     warn: Callable[[str], None] | None = None, layout: str = "view",
                     on_frame: Callable[[FrameInfo], None] | None = None) -> ExportResult:
    """Render ``scenario`` from ``t0`` (simulated from ``t = 0``) to ``t_end`` into
    ``out`` (.mp4 or .gif), frame ``k`` at exactly ``t0 + k · speed / fps`` (issue #37
    item 2, issue #42 item 9).

    ``fps``: frames per video second; ``speed``: simulation seconds per video second
    (frames are ``speed / fps`` apart in simulation time); ``size``: ``(width, height)``
    in pixels (odd sizes are rounded up to even for MP4); ``layout``: ``"view"`` or
    ``"view+plots"`` (the app's plots beside the view); ``camera``: ``"fixed"`` (frames
    the whole run, found by a first simulation pass) or ``"follow"`` (follows the
    bodies, as the app's View → Follow); ``check``: called before each frame and
    between chunks of steps, it may raise to stop the export (the partial file is
    removed, the target left as it was); ``on_frame``: called with each frame's
    :class:`~app.export.render.FrameInfo`.  Input errors raise :class:`ExportError` (or
    the engine's ``ScenarioError`` / ``SimulationError``) before anything is written.
    """
    out = check_output(out)
    check_layout(layout)
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
    dt = speed / fps
    plots = layout == "view+plots"
    box = curves = None
    w0 = time.perf_counter()
    if camera == "fixed" or plots:  # (the whole window first: the box, the plots' axes)
        box, curves = _first_pass(sc, integrator, h, t_end, t0, dt, n_frames, check, plots)
        if camera != "fixed":
            box = None
    t_first = time.perf_counter() - w0
    track = SimTrack(sc, integrator, h, t_end, check)
    src = Source(track, track.model, sc.name, track.scheme, curves, box, track.stage,
                 stage_spans(track.model, h if h is not None else sc.run.h),
                 track.broken)
    frames, t_last, (t_sim, t_render, t_encode) = _render(
        src, [], out, t0, dt, n_frames, fps, size, title, colour_by, progress, check,
        on_frame)
    t_reached = track.sim.t if track.failure is not None else t_last
    return ExportResult(out, frames, t_reached, float(t_end), size, fps,
                        time.perf_counter() - t_wall, t_sim + t_first, t_render, t_encode,
                        track.failure, float(t0))


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
