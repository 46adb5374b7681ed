"""A run file to video (issue #37 items 1–3): nothing is simulated; each frame draws
the bodies of :class:`~app.export.track.RunTrack` at ``t_k = t0 + k · speed / fps`` with
:class:`app.scene.BodyScene` off screen, the overlay (title, scenario, the integrator
and ``h`` in use at ``t_k``, ``t``) on the view, and with ``layout="view+plots"`` the
app's plots beside it (:class:`app.export.plots.PlotStrip`).  Compare runs are drawn
as ghosts and their error curves added.  Frames are streamed to ffmpeg and the plotted
series read a block at a time and peak-decimated (memory does not grow with the run,
issue #42 item 10); the file is written under a temporary name and renamed at the end.
The renderer (:func:`_render`) draws any :class:`Source`: a scenario's export
(:mod:`app.export.scenario`) goes through it too (issue #42 item 9).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from engine.io import RunFile, RunFileError
from engine.io.text_frames import stem
from engine.models.field_view import dissipation_sources, stage_spans
from engine.simulation.breaking import broken_ids

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
from .track import (
    HERMITE_BULGE,
    ExportInputError,
    RunTrack,
    first_stage,
    fmt_h,
    frame_count,
    scheme_at,
    schemes_at,
    stage_at,
)

VIEW_SHARE = 0.58
"""The 3D view's share of the width in ``view+plots`` (the plots take the rest)."""
EXTENT_BYTES = 64 * 2**20
"""Most bytes of recorded frames read to frame a fixed camera (issue #42 item 3): every
recorded frame of the window while its positions fit (the drawn frames lie between
recorded ones: the box of the records holds the linear ones, grown by the Hermite
curves' bulge it holds the cubic ones), else an even sample of
at least :data:`EXTENT_MIN_SAMPLES` frames' positions and velocities (with the
velocities every frame's, read beside the positions, when the drawn frames are Hermite
curves: they count in the budget)."""
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
    (issue #42 item 3), grown where the drawn frames are Hermite curves between records
    (issue #42 item 9) by the most each curve leaves its ends' box
    (:func:`app.export.track.hermite_margin`: linear interpolation stays inside, a cubic
    does not).  Every one of them while their positions (and velocities) take at most
    :data:`EXTENT_BYTES`; beyond that an even sample of them, the box grown by the way
    the fastest sampled body goes in half the time between two samples, plus the
    curves' bulge at that speed (an estimate: a body that speeds up between samples can
    go further)."""
    i0 = track.index_at(a)
    i1 = min(track.index_at(b) + 1, len(track.times) - 1)
    pos = track.rf._f["bodies/position"]  # (positions only, for the framing: the frames
    # drawn are read, and checked against their digests, by the track)
    vel = track.rf._f.get("bodies/velocity")
    cubic = vel is not None and getattr(track, "interpolate", True)
    frame_bytes = max(1, int(np.prod(pos.shape[1:])) * pos.dtype.itemsize)
    count = i1 - i0 + 1
    lo = hi = None

    def grow(x: np.ndarray, lo_x: np.ndarray | None = None) -> None:
        nonlocal lo, hi
        hi_x = x.reshape(-1, 3)
        lo_x = hi_x if lo_x is None else lo_x.reshape(-1, 3)
        ok = np.all(np.isfinite(hi_x), axis=1) & np.all(np.isfinite(lo_x), axis=1)
        if ok.any():
            lo = (lo_x[ok].min(axis=0) if lo is None
                  else np.minimum(lo, lo_x[ok].min(axis=0)))
            hi = (hi_x[ok].max(axis=0) if hi is None
                  else np.maximum(hi, hi_x[ok].max(axis=0)))

    def bulge(x: np.ndarray, v: np.ndarray, t: np.ndarray) -> None:
        """The Hermite curves between consecutive records (positions ``x``, velocities
        ``v``, times ``t``)."""
        if len(x) < 2:
            return
        dt = np.diff(t)[:, None, None]
        x0, x1, v0, v1 = x[:-1], x[1:], v[:-1], v[1:]
        with np.errstate(invalid="ignore", divide="ignore"):
            c = np.where(dt > 0, (x1 - x0) / np.where(dt > 0, dt, 1.0), 0.0)
            m = HERMITE_BULGE * dt * (np.abs(v0 - c) + np.abs(v1 - c))
        m = np.where(np.isfinite(m), m, 0.0)
        grow(np.maximum(x0, x1) + m, np.minimum(x0, x1) - m)

    margin = 0.0
    if count * frame_bytes * (2 if cubic else 1) <= EXTENT_BYTES:
        last = None  # (the previous block's last record: every pair once, each row read once)
        for s0 in range(i0, i1 + 1, EXTENT_BLOCK):
            s1 = min(s0 + EXTENT_BLOCK, i1 + 1)
            try:
                x = np.asarray(pos[s0:s1], dtype=np.float64)
                grow(x)
                if cubic:
                    v = np.asarray(vel[s0:s1], dtype=np.float64)
                    if last is None:
                        bulge(x, v, track.times[s0:s1])
                    else:
                        bulge(np.concatenate([last[0], x]), np.concatenate([last[1], v]),
                              track.times[s0 - 1:s1])
                    last = (x[-1:], v[-1:])
            except OSError:  # (a damaged chunk: the frames around it one by one; the
                last = None  # track says so when it draws one)
                for k in range(s0, s1):
                    try:
                        grow(np.asarray(pos[k], dtype=np.float64))
                    except OSError:
                        continue
    else:
        n = max(EXTENT_MIN_SAMPLES, EXTENT_BYTES // (2 * frame_bytes))
        idx = np.unique(np.linspace(i0, i1, min(n, count)).astype(int))
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
            if cubic:  # (|v − chord| ≤ 2·fastest at each end)
                rec = float(np.max(np.diff(track.times[i0:i1 + 1])))
                margin += HERMITE_BULGE * rec * 4.0 * fastest
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
    item 2); between recorded frames positions follow the cubic Hermite curve of the
    recorded velocities (linear in files without them) and attitudes are slerped
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
        src = _run_source(track, others, a, a + (n_frames - 1) * dt, dt, layout, camera,
                          list(labels))
        frames, t_last, times = _render(src, others, out, a, dt, n_frames, fps, size, title,
                                        colour_by, progress, check, on_frame)
    return ExportResult(out, frames, t_last, b, size, fps, time.perf_counter() - t_wall,
                        0.0, times[1], times[2], None, a)


def _reach(scene) -> float:
    """How far a drawn body reaches from its centre of mass (its spheres' offsets and
    radii)."""
    far = float(np.linalg.norm(scene.offset)) if scene.offset.size else 0.0
    if scene.body_points is not None:
        far = max(far, float(np.linalg.norm(scene.body_points, axis=-1).max()))
    return far + 0.5 * float(scene.diameter.max())


@dataclass
class Source:
    """What :func:`_render` draws, whatever it comes from (a run file,
    :class:`~app.export.track.RunTrack`, or a scenario simulated as the frames ask,
    :class:`~app.export.sim_track.SimTrack`: one renderer for both, issue #42 item 9):
    ``track.state(t)`` the bodies at ``t`` (``None``: nothing more to draw; a track with
    a ``failure`` stops after the frame it is set at); ``model``; ``name`` (the
    overlay's); ``scheme(t)`` the integrator and ``h`` in use at ``t``; ``curves`` the
    plots' runs (``None``: ``--layout view``); ``box`` the bodies' centres' box over the
    window for a fixed camera (``None``: the camera follows)."""

    track: object
    model: object
    name: str
    scheme: Callable[[float], tuple[str, str]]
    curves: list | None
    box: tuple[np.ndarray, np.ndarray] | None
    stage: Callable[[float], str] = lambda _t: ""  # noqa: E731
    """The stage in use at ``t`` (``""``: none; issue #44 item 5)."""
    spans: list = field(default_factory=list)
    """The stages' ``(k, t₀, t₁)`` (``engine.models.field_view.stage_spans``): the
    view's stage line and field arrow (issue #44 item 7)."""
    broken: Callable[[float], np.ndarray | None] = lambda _t: None  # noqa: E731
    """The model's bonds broken by ``t`` (``None``: its bonds never break; issue #44
    item 2): not drawn, counted in the caption."""


def _run_source(track: RunTrack, others: list[RunTrack], a: float, b: float, dt: float,
                layout: str, camera: str, labels: list[str]) -> Source:
    """The :class:`Source` of a run file (with its compare runs' curves and boxes)."""
    rf = track.rf
    curves = None
    if layout == "view+plots":
        names = list(labels) + [_label(t.rf) for t in (track, *others)][len(labels):]
        b_ = max(b, a + dt * 1e-6)
        try:
            curves = [run_curves(t.rf, a, b_, names[k]) for k, t in
                      enumerate((track, *others))]
        except RunFileError as exc:
            raise ExportError(f"cannot export: {exc}") from None
    box = None
    if camera == "fixed":
        lo, hi = _extent(track, a, b)
        for o in others:
            lo2, hi2 = _extent(o, max(a, o.t_first), min(b, o.t_last))
            lo, hi = np.minimum(lo, lo2), np.maximum(hi, hi2)
        box = (lo, hi)
    start, switches = schemes_at(rf)[:2], schemes_at(rf)[2]
    model = rf.build_model()
    first = first_stage(rf, model)
    breaks = "broken" in getattr(model, "energy_components", ())
    return Source(track, model, rf.scenario, lambda t: scheme_at(start, switches, t),
                  curves, box, lambda t: stage_at(first, switches, t),
                  stage_spans(model, float(rf.h), rf.events),
                  (lambda t: broken_ids(rf.events, t=t)) if breaks else (lambda _t: None))


def _render(src: Source, others: list[RunTrack], out: Path, a: float, dt: float,
            n_frames: int, fps: int, size: tuple[int, int], title: str, colour_by: str,
            progress: bool, check: Callable[[], None] | None,
            on_frame: Callable[[FrameInfo], None] | None
            ) -> tuple[int, float, tuple[float, float, float]]:
    """Draw frame ``k`` at ``a + k · dt`` of ``src`` (``others``: ghosts) into ``out``;
    returns the frames drawn, the last one's time and the seconds spent getting the
    states (a scenario: simulating), rendering and encoding."""
    from ..scene import BodyScene, make_plotter
    from ..scene.dipoles import FieldScene

    b = a + (n_frames - 1) * dt
    w, h = size
    strip = None
    if src.curves is not None:
        wv = max(16, int(round(w * VIEW_SHARE)) // 2 * 2)
        strip = PlotStrip(src.curves, a, max(b, a + dt * 1e-6), (w - wv, h),
                          sources=dissipation_sources(src.model))
    else:
        wv = w
    plotter = make_plotter((wv, h), off_screen=True)
    tmp = open_output(out)  # (stale partials of killed exports removed: issue #46)
    gen = bar = None
    t_state = t_render = t_encode = 0.0
    frames, t_last = 0, a
    try:
        scene = BodyScene(plotter, src.model, colour_by=colour_by, follow=src.box is None)
        if src.box is not None:
            r = _reach(scene)
            scene.reset_camera(extent=(src.box[0] - r, src.box[1] + r))
        font = max(6, min(12, round(h / 55)))
        fields = FieldScene.for_model(plotter, src.model, scene.diameter, src.spans,
                                      font_size=font)
        caption = plotter.add_text(" ", position="upper_left", font_size=font,
                                   color="#333333", name="rrp-caption", render=False)
        if progress:
            from tqdm import tqdm

            bar = tqdm(total=n_frames, unit="frame", file=sys.stderr, leave=False,
                       dynamic_ncols=True, desc=f"export {out.name}")
        gen = _writer(tmp, size, fps)
        for k in range(n_frames):
            if check is not None:
                check()
            t0 = time.perf_counter()
            st = src.track.state(a + k * dt)
            t1 = time.perf_counter()
            t_state += t1 - t0
            if st is None:
                break
            t = st.t
            scene.update(st.x, st.q, st.v, st.omega)
            if fields is not None:  # (dipoles, field, stage: issue #44 item 7)
                fields.update(t, st.x, st.q)
            if others:
                scene.set_ghosts([(s.x, s.q) for s in
                                  (o.state(min(max(t, o.t_first), o.t_last)) for o in others)])
            integ, hh = src.scheme(t)
            text = f"{src.name} · {integ} · h = {fmt_h(hh)} · t = {t:.3f} s"
            stage = src.stage(t)
            if stage:  # (issue #44 item 5)
                text += f" · stage {stage}"
            broken = src.broken(t)
            if broken is not None:  # (issue #44 item 2: gone from the view, counted)
                scene.set_broken(broken)
                text += f" · broken bonds {len(broken)}"
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
            t2 = time.perf_counter()
            gen.send(img)
            t_encode += time.perf_counter() - t2
            t_render += t2 - t1
            frames, t_last = frames + 1, t
            if on_frame is not None:
                on_frame(FrameInfo(k, n_frames, t, scene.centres.copy(), text, integ, hh,
                                   cursor, scene.n_ghosts, scene.view_transform()))
            if bar is not None:
                bar.update(1)
            if getattr(src.track, "failure", None) is not None:
                break  # (a blow-up: its last good state was this frame's)
        t_encode += finish_writer(gen, tmp, check)
        gen = None
    finally:
        close_export(bar, plotter, gen, tmp)
    return frames, t_last, (t_state, t_render, t_encode)


