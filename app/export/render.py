"""A run file to video (issue #37 items 1–3): nothing is simulated; each frame draws
the bodies of :class:`~app.export.track.RunTrack` at ``t_k = t0 + k · speed / fps`` with
:class:`app.scene.BodyScene` off screen, the overlay (title, scenario, the integrator
and ``h`` in use at ``t_k``, ``t``) on the view, and with ``layout="view+plots"`` the
app's plots beside it (:class:`app.export.plots.PlotStrip`).  Compare runs are drawn
as ghosts and their error curves added.  Frames are streamed to ffmpeg and the plotted
series read a block at a time and peak-decimated (memory does not grow with the run,
issue #42 item 10); the file is written under a temporary name and renamed at the end.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.io import RunFile, RunFileError
from engine.io.text_frames import stem

from .common import (
    MAX_FRAMES,
    ExportError,
    ExportResult,
    _writer,
    check_camera,
    check_fps,
    check_layout,
    check_output,
    check_size,
    close_export,
    even_size,
    finish_writer,
    open_output,
)
from .plots import PlotStrip, run_curves
from .track import ExportInputError, RunTrack, fmt_h, frame_count, scheme_at, schemes_at

VIEW_SHARE = 0.58
"""The 3D view's share of the width in ``view+plots`` (the plots take the rest)."""
EXTENT_BYTES = 64 * 2**20
"""Most bytes of recorded frames read to frame a fixed camera (issue #42 item 3): every
recorded frame of the window while its positions fit (the drawn frames lie between
recorded ones, interpolated linearly: the box holds them all), else an even sample of
at least :data:`EXTENT_MIN_SAMPLES` frames' positions and velocities."""
EXTENT_MIN_SAMPLES = 16
EXTENT_BLOCK = 256
"""Recorded frames read at once while framing."""


@dataclass
class FrameInfo:
    """What frame ``k`` drew (for tests and progress): its time, the bodies' drawn
    centres (the scene's), the overlay text, the scheme and ``h`` shown, the plots'
    cursor column (``None`` without plots), the ghosts drawn, the 3D view's world-to-clip
    matrix (:meth:`app.scene.BodyScene.view_transform`)."""

    k: int
    n: int
    t: float
    centres: np.ndarray
    caption: str
    integrator: str
    h: str
    cursor: int | None
    ghosts: int = 0
    view: np.ndarray | None = None


def _window(track: RunTrack, t0: float | None, t1: float | None) -> tuple[float, float]:
    lo, hi = track.t_first, track.t_last
    a = lo if t0 is None else float(t0)
    b = hi if t1 is None else float(t1)
    if not (np.isfinite(a) and np.isfinite(b)):
        raise ExportError(f"--t0 and --t1 must be finite numbers, got {a!r} and {b!r}")
    if a >= b and not (t0 is None and t1 is None):
        raise ExportError(f"--t0 = {a:g} must be less than --t1 = {b:g}")
    if a < lo - 1e-12 or b > hi + 1e-12:
        raise ExportError(f"the window t = {a:g} … {b:g} lies outside the run's frames "
                          f"(t = {lo:g} … {hi:g}): choose --t0/--t1 within them")
    return a, b


def sparse_note(track: RunTrack, dt_frame: float, interpolate: bool) -> str | None:
    """One line when the file's frames are further apart than the video's (issue #37
    item 1), suggesting ``rrp run --every``; ``None`` otherwise."""
    gap = track.spacing()
    if not gap > dt_frame * (1 + 1e-9):
        return None
    every = track.rf.record_every
    fix = max(1, int(every * dt_frame / gap))
    how = ("interpolated between them" if interpolate
           else "each shown until the next (--no-interpolate)")
    return (f"the run file holds a frame every {gap:g} s but the video shows one every "
            f"{dt_frame:g} s: the motion is {how}; for every frame from the run, write it "
            f"with 'rrp run --every {fix}' (it was --every {every}) or lower --fps")


def _extent(track: RunTrack, a: float, b: float) -> tuple[np.ndarray, np.ndarray]:
    """The box of the bodies' centres over the recorded frames that bracket ``[a, b]``
    (issue #42 item 3).  Every one of them while their positions take at most
    :data:`EXTENT_BYTES`; beyond that an even sample of them, the box grown by the way
    the fastest sampled body goes in half the time between two samples (an estimate:
    a body that speeds up between samples can go further)."""
    i0 = track.index_at(a)
    i1 = min(track.index_at(b) + 1, len(track.times) - 1)
    pos = track.rf._f["bodies/position"]  # (positions only, for the framing: the frames
    # drawn are read, and checked against their digests, by the track)
    frame_bytes = max(1, int(np.prod(pos.shape[1:])) * pos.dtype.itemsize)
    count = i1 - i0 + 1
    lo = hi = None

    def grow(x: np.ndarray) -> None:
        nonlocal lo, hi
        x = x.reshape(-1, 3)
        x = x[np.all(np.isfinite(x), axis=1)]
        if len(x):
            lo = x.min(axis=0) if lo is None else np.minimum(lo, x.min(axis=0))
            hi = x.max(axis=0) if hi is None else np.maximum(hi, x.max(axis=0))

    margin = 0.0
    if count * frame_bytes <= EXTENT_BYTES:
        for s0 in range(i0, i1 + 1, EXTENT_BLOCK):
            s1 = min(s0 + EXTENT_BLOCK, i1 + 1)
            try:
                grow(np.asarray(pos[s0:s1], dtype=np.float64))
            except OSError:  # (a damaged chunk: the frames around it one by one; the
                for k in range(s0, s1):  # track says so when it draws one)
                    try:
                        grow(np.asarray(pos[k], dtype=np.float64))
                    except OSError:
                        continue
    else:
        n = max(EXTENT_MIN_SAMPLES, EXTENT_BYTES // (2 * frame_bytes))
        idx = np.unique(np.linspace(i0, i1, min(n, count)).astype(int))
        vel = track.rf._f.get("bodies/velocity")
        fastest = 0.0
        for k in idx:
            try:
                grow(np.asarray(pos[int(k)], dtype=np.float64))
                if vel is not None:
                    v = np.asarray(vel[int(k)], dtype=np.float64).reshape(-1, 3)
                    sp = np.linalg.norm(v, axis=1)
                    sp = sp[np.isfinite(sp)]
                    fastest = max(fastest, float(sp.max()) if len(sp) else 0.0)
            except OSError:
                continue
        if len(idx) > 1:
            gap = float(np.max(np.diff(track.times[idx])))
            margin = 0.5 * gap * fastest
    if lo is None:
        x = track.state(a).x
        lo, hi = x.min(axis=0), x.max(axis=0)
    return lo - margin, hi + margin


def _label(rf: RunFile) -> str:
    """A run's name in the plots' legend: its file, scheme and step."""
    return f"{stem(rf.path)} ({rf.integrator}, h = {rf.h:g})"


def _open(path: str | Path) -> RunFile:
    # (frames only: the plots read the series a block at a time, never whole, issue #42
    # item 10; :func:`app.export.plots.run_curves` checks them against their digests)
    try:
        return RunFile(path, series=False)
    except FileNotFoundError:
        raise ExportError(f"no such run file: {path}") from None
    except RunFileError as exc:
        raise ExportError(f"cannot export: {exc}") from None
    except OSError as exc:
        raise ExportError(f"cannot export {path}: not a readable run file "
                          f"({exc.strerror or exc})") from None


def export_run(run_file: str | Path, *, out: Path | str, t0: float | None = None,
               t1: float | None = None, fps: int = 30, speed: float = 1.0,
               size: tuple[int, int] = (1280, 720), layout: str = "view+plots",
               interpolate: bool = True, title: str = "", colour_by: str = "none",
               camera: str = "fixed", compare: Sequence[str | Path] = (),
               labels: Sequence[str] = (), progress: bool = False,
               check: Callable[[], None] | None = None,
               on_frame: Callable[[FrameInfo], None] | None = None,
               warn: Callable[[str], None] | None = None,
               before: Callable[[int], None] | None = None) -> ExportResult:
    """Render the run file ``run_file`` (complete, failed, interrupted or ``.partial``)
    into ``out`` (.mp4 or .gif), frame ``k`` at ``t0 + k · speed / fps`` (issue #37
    item 2); between recorded frames positions are interpolated and attitudes slerped
    (``interpolate=False``: the nearest earlier frame).  ``compare``: run files drawn as
    ghosts, their error curves beside the primary's (``labels``: the runs' names in the
    plots); ``before``: called with the number of frames once it is known, before
    anything is written (may raise :class:`ExportError`: ``rrp export``'s long-export
    check); ``check``: called before each frame, may raise to stop (nothing is left);
    ``on_frame``: called with each frame's :class:`FrameInfo`; ``warn``: one-line
    notes (a rounded size, sparse frames).  Bad input raises :class:`ExportError`
    before anything is written."""
    out = check_output(out)
    check_layout(layout)
    check_camera(camera)
    size = check_size(size)
    check_fps(fps)
    if not (isinstance(speed, int | float) and np.isfinite(speed) and speed > 0):
        raise ExportError(f"speed must be a positive number, got {speed!r}")
    size, note = even_size(out, size)
    say = warn or (lambda _m: None)
    t_wall = time.perf_counter()
    with ExitStack() as stack:
        rf = _open(run_file)
        stack.callback(rf.close)
        try:
            track = RunTrack(rf, interpolate=interpolate)
        except ExportInputError as exc:
            raise ExportError(str(exc)) from None
        others = []
        for p in compare:
            o = _open(p)
            stack.callback(o.close)
            try:
                others.append(RunTrack(o, interpolate=interpolate))
            except ExportInputError as exc:
                raise ExportError(str(exc)) from None
        a, b = _window(track, t0, t1)
        n = (b - a) * fps / speed
        if not n <= MAX_FRAMES:
            raise ExportError(f"the window of {b - a:g} s at {fps} fps and speed {speed:g} "
                              f"means {n:.3g} frames, more than an export can hold (the limit "
                              f"is {MAX_FRAMES:.0e}); choose --t0/--t1, lower --fps or raise "
                              "--speed")
        n_frames = frame_count(a, b, fps, speed)
        if before is not None:
            before(n_frames)
        dt = speed / fps
        for line in (note, sparse_note(track, dt, interpolate)):
            if line:
                say(line)
        result = _render(track, others, out, a, dt, n_frames, fps, size, layout, title,
                         colour_by, camera, list(labels), progress, check, on_frame)
    frames, t_last, times = result
    return ExportResult(out, frames, t_last, b, size, fps, time.perf_counter() - t_wall,
                        0.0, times[0], times[1], None, a)


def _render(track: RunTrack, others: list[RunTrack], out: Path, a: float, dt: float,
            n_frames: int, fps: int, size: tuple[int, int], layout: str, title: str,
            colour_by: str, camera: str, labels: list[str], progress: bool,
            check: Callable[[], None] | None,
            on_frame: Callable[[FrameInfo], None] | None
            ) -> tuple[int, float, tuple[float, float]]:
    from ..scene import BodyScene, make_plotter
    from .scenario import _reach

    rf = track.rf
    b = a + (n_frames - 1) * dt
    w, h = size
    strip = None
    if layout == "view+plots":
        wv = max(16, int(round(w * VIEW_SHARE)) // 2 * 2)
        names = list(labels) + [_label(t.rf) for t in (track, *others)][len(labels):]
        b_ = max(b, a + dt * 1e-6)
        try:
            runs = [run_curves(t.rf, a, b_, names[k]) for k, t in enumerate((track, *others))]
        except RunFileError as exc:
            raise ExportError(f"cannot export: {exc}") from None
        strip = PlotStrip(runs, a, b_, (w - wv, h))
    else:
        wv = w
    model = rf.build_model()
    plotter = make_plotter((wv, h), off_screen=True)
    tmp = open_output(out)  # (stale partials of killed exports removed: issue #46)
    gen = bar = None
    t_render = t_encode = 0.0
    frames, t_last = 0, a
    try:
        scene = BodyScene(plotter, model, colour_by=colour_by, follow=camera == "follow")
        if camera == "fixed":
            lo, hi = _extent(track, a, b)
            for o in others:
                lo2, hi2 = _extent(o, max(a, o.t_first), min(b, o.t_last))
                lo, hi = np.minimum(lo, lo2), np.maximum(hi, hi2)
            r = _reach(scene)
            scene.reset_camera(extent=(lo - r, hi + r))
        font = max(6, min(12, round(h / 55)))
        caption = plotter.add_text(" ", position="upper_left", font_size=font,
                                   color="#333333", name="rrp-caption", render=False)
        start, switches = schemes_at(rf)[:2], schemes_at(rf)[2]
        if progress:
            from tqdm import tqdm

            bar = tqdm(total=n_frames, unit="frame", file=sys.stderr, leave=False,
                       dynamic_ncols=True, desc=f"export {out.name}")
        gen = _writer(tmp, size, fps)
        for k in range(n_frames):
            if check is not None:
                check()
            t0 = time.perf_counter()
            t = a + k * dt
            st = track.state(t)
            scene.update(st.x, st.q, st.v, st.omega)
            if others:
                scene.set_ghosts([(s.x, s.q) for s in
                                  (o.state(min(max(t, o.t_first), o.t_last)) for o in others)])
            integ, hh = scheme_at(start, switches, t)
            text = f"{rf.scenario} · {integ} · h = {fmt_h(hh)} · t = {t:.3f} s"
            if title:
                text = f"{title}\n{text}"
            caption.SetText(2, text)
            plotter.render()
            img = np.asarray(plotter.screenshot(return_img=True))[:, :, :3]
            cursor = None
            if strip is not None:
                cursor = strip.column(t)
                img = np.concatenate([img, strip.image(t)], axis=1)
            img = np.ascontiguousarray(img)
            t1 = time.perf_counter()
            gen.send(img)
            t_encode += time.perf_counter() - t1
            t_render += t1 - t0
            frames, t_last = frames + 1, t
            if on_frame is not None:
                on_frame(FrameInfo(k, n_frames, t, scene.centres.copy(), text, integ, hh,
                                   cursor, scene.n_ghosts, scene.view_transform()))
            if bar is not None:
                bar.update(1)
        t_encode += finish_writer(gen, tmp, check)
        gen = None
    finally:
        close_export(bar, plotter, gen, tmp)
    return frames, t_last, (t_render, t_encode)
