"""``rrp export`` of run files (issue #37 items 1–3, 6): frames paced by simulated time
(count and times by the rule), the recorded state drawn exactly at a recorded frame's
time and unit quaternions between frames, a run file and the re-simulated scenario
drawing the same bodies, the overlay's scheme and the plots' marker at a switch, compare
ghosts, and bad input as one line with nothing left behind.  Drawn positions are read
from the scene (``FrameInfo.centres``), not from pixels."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import require_offscreen_render

import app.export  # noqa: F401  (chooses EGL off-screen rendering when there is no X)
from app.cli import main
from engine.io import RunFile, RunWriter
from engine.scenarios import load_scenario
from engine.simulation import Simulation

pv = pytest.importorskip("pyvista")
pytest.importorskip("imageio_ffmpeg")
pytest.importorskip("matplotlib")

from app.export import export_animation, export_run, frame_count, frame_times  # noqa: E402
from app.export.plots import PlotStrip, run_series  # noqa: E402
from app.export.track import RunTrack, slerp  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TORUS = {"n_particles": 12}


@pytest.fixture(scope="module")
def can_render() -> None:
    """Skip when neither EGL nor an X server can give VTK an OpenGL context."""
    require_offscreen_render()


def _write(path: Path, scenario: str, overrides: dict, integrator: str, h: float,
           every: int, pieces: list[tuple[int, str | None]], frames: bool = True) -> Path:
    sc = load_scenario(scenario, overrides)
    sim = Simulation(sc.build_model(), integrator, h, record_every=every,
                     record_frames=frames, record_state=frames)
    with RunWriter(path, sim, scenario=scenario, frames=frames, checkpoint=False) as w:
        for steps, switch in pieces:
            if switch is not None:
                sim.set_integrator(switch)
            assert sim.advance(steps).ok
            w.flush()
    return path


@pytest.fixture(scope="module")
def torus_run(tmp_path_factory) -> Path:
    """Torus, 12 spheres, h = 1e-3 to t = 0.5, a frame every 10 steps (0.01 s)."""
    return _write(tmp_path_factory.mktemp("runs") / "torus.h5", "torus", TORUS,
                  "rrp-newmark", 1e-3, 10, [(500, None)])


@pytest.fixture(scope="module")
def switch_run(tmp_path_factory) -> Path:
    """Pendulum, h = 1e-2 to t = 2, the integrator switched at t = 1, frames 0.05 apart."""
    return _write(tmp_path_factory.mktemp("runs") / "pend.h5", "pendulum", {}, "rrp-exact",
                  1e-2, 5, [(100, None), (100, "rrp-newmark")])


def _export(run, tmp_path, name="x.gif", **kw):
    seen = []
    kw.setdefault("size", (160, 120))
    res = export_run(run, out=tmp_path / name, on_frame=seen.append, **kw)
    return res, seen


# ------------------------------------------------------------------ item 2
@pytest.mark.parametrize("t0, t1, fps, speed, n", [
    (0.0, 2.0, 30, 1.0, 61), (0.0, 1.0, 10, 0.5, 21), (0.2, 1.5, 10, 1.0, 14),
    (0.0, 0.1, 30, 1.0, 4), (1.0, 1.05, 5, 1.0, 1),
])
def test_the_frame_rule(t0, t1, fps, speed, n):
    assert frame_count(t0, t1, fps, speed) == n
    t = frame_times(t0, t1, fps, speed)
    assert len(t) == n and t[0] == t0 and t[-1] <= t1
    np.testing.assert_allclose(np.diff(t), speed / fps, rtol=1e-12)


@pytest.mark.parametrize("layout", ["view", "view+plots"])
def test_a_run_file_export_has_the_frames_of_the_rule(can_render, tmp_path, switch_run,
                                                      layout):
    res, seen = _export(switch_run, tmp_path, fps=10, t0=0.2, t1=1.5, layout=layout)
    assert res.frames == len(seen) == math.floor(1.3 * 10 + 1e-9) + 1 == 14
    np.testing.assert_allclose([s.t for s in seen], 0.2 + 0.1 * np.arange(14), atol=1e-12)
    assert (seen[0].cursor is None) == (layout == "view")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.gif"]


# ------------------------------------------------------------------ item 1
def test_interpolation_is_exact_at_recorded_frames_and_unit_between(torus_run):
    with RunFile(torus_run) as rf:
        track = RunTrack(rf)
        near = RunTrack(rf, interpolate=False)
        for i in range(0, rf.n_frames, 7):
            fr = rf.frame(i)
            st = track.state(float(rf.frame_times[i]))
            assert st.exact and st.frame == i
            np.testing.assert_array_equal(st.x, fr.x)
            np.testing.assert_array_equal(st.q, fr.q)
            np.testing.assert_array_equal(st.omega, fr.omega)
        for t in np.linspace(0.0, 0.5, 97)[1:-1] + 0.0031:
            st = track.state(float(t))
            np.testing.assert_allclose(np.linalg.norm(st.q, axis=1), 1.0, atol=1e-14)
            i = st.frame
            a, b = rf.frame(i), rf.frame(i + 1)
            # within the records' box grown by the Hermite curve's bulge (issue #42 item 9)
            dt = b.t - a.t
            c = (b.x - a.x) / dt
            bulge = 4 / 27 * dt * (np.abs(a.v - c) + np.abs(b.v - c)) + 1e-14
            lo, hi = np.minimum(a.x, b.x), np.maximum(a.x, b.x)
            assert np.all((st.x >= lo - bulge) & (st.x <= hi + bulge))
            np.testing.assert_array_equal(near.state(float(t)).x, a.x)  # nearest earlier


def test_slerp_takes_the_short_arc_and_ends_at_both_ends():
    rng = np.random.default_rng(3)
    q0 = rng.normal(size=(20, 4))
    q0 /= np.linalg.norm(q0, axis=1, keepdims=True)
    q1 = rng.normal(size=(20, 4))
    q1 /= np.linalg.norm(q1, axis=1, keepdims=True)
    np.testing.assert_array_equal(slerp(q0, q1, 0.0), q0)
    end = slerp(q0, q1, 1.0)
    sign = np.sign(np.einsum("ij,ij->i", q0, q1))[:, None]
    np.testing.assert_allclose(end, sign * q1, atol=1e-12)
    np.testing.assert_allclose(slerp(q0, -q0, 0.5), q0, atol=1e-12)  # q and −q: no turn


def test_the_drawn_bodies_are_the_recorded_ones_at_recorded_times(can_render, tmp_path,
                                                                  torus_run):
    with RunFile(torus_run) as rf:
        t_rec = np.asarray(rf.frame_times)
        x0 = rf.frame(10).x
    res, seen = _export(torus_run, tmp_path, fps=50, t0=float(t_rec[10]), t1=0.4,
                        layout="view")
    assert res.frames == frame_count(float(t_rec[10]), 0.4, 50, 1.0) == len(seen)
    np.testing.assert_array_equal(seen[0].centres, x0)  # exactly the recorded frame
    with RunFile(torus_run) as rf:
        for s in seen[1:]:  # 0.02 s apart: every other recorded frame, up to rounding
            i = int(round(s.t / 0.01))
            np.testing.assert_allclose(s.centres, rf.frame(i).x, rtol=0, atol=1e-12)


def test_a_run_file_and_the_resimulated_scenario_draw_the_same_bodies(can_render, tmp_path,
                                                                      torus_run):
    sim_frames = []
    res = export_animation("torus", overrides=TORUS, integrator="rrp-newmark", h=1e-3,
                           t_end=0.5, fps=20, size=(160, 120), out=tmp_path / "s.gif",
                           progress=False, on_frame=sim_frames.append)
    _, seen = _export(torus_run, tmp_path, fps=20, t1=0.5, layout="view")
    assert res.frames == len(sim_frames) == len(seen) == 11
    for f, s in zip(sim_frames, seen, strict=True):
        assert f.t == pytest.approx(s.t, abs=1e-12)
        np.testing.assert_allclose(s.centres, f.centres, rtol=0, atol=1e-12)


# ------------------------------------------------------------------ item 3
def test_a_switch_shows_in_the_overlay_at_its_frame_and_as_a_marker(can_render, tmp_path,
                                                                    switch_run):
    res, seen = _export(switch_run, tmp_path, fps=10, layout="view+plots",
                        size=(400, 240), title="Talk")
    assert res.frames == 21
    schemes = [s.integrator for s in seen]
    assert schemes[:10] == ["rrp-exact"] * 10 and schemes[10:] == ["rrp-newmark"] * 11
    assert seen[10].t == pytest.approx(1.0) and "rrp-newmark" in seen[10].caption
    assert seen[0].caption.startswith("Talk\npendulum · rrp-exact · h = 0.01 · t = 0.000 s")
    cursors = [s.cursor for s in seen]
    assert cursors == sorted(cursors) and cursors[0] < cursors[-1]  # the cursor moves
    with RunFile(switch_run) as rf:
        strip = PlotStrip([run_series(rf)], 0.0, 2.0, (300, 400))
    assert strip.marker_times == [pytest.approx(1.0)]
    img = strip.image(0.0)
    x = strip.column(1.0)
    # the marker's dashed grey is in every plot's column at t = 1 (and nowhere at t = 0.5)
    for r0, r1, _c0, _c1 in strip._boxes:
        grey = (np.abs(img[r0:r1, x - 1:x + 2].astype(int) - 0x55).sum(axis=2) < 60)
        assert grey.sum() > 3
        half = strip.column(0.5)
        assert not (np.abs(img[r0 + 5:r1 - 5, half - 1:half + 2].astype(int) - 0x55
                           ).sum(axis=2) < 60).any()


def test_the_plots_draw_the_curves_up_to_the_cursor(switch_run):
    with RunFile(switch_run) as rf:
        strip = PlotStrip([run_series(rf)], 0.0, 2.0, (300, 400))
    early, late = strip.image(0.3), strip.image(1.8)
    r0, r1, c0, c1 = strip._boxes[1]  # the energy error
    right = slice(strip.column(1.0), strip.column(1.7))
    assert (early[r0:r1, right] == strip._empty[r0:r1, right]).all()
    assert (late[r0:r1, right] != strip._empty[r0:r1, right]).any()


def test_the_plots_use_the_apps_colours_labels_and_order():
    pytest.importorskip("pyqtgraph")
    import app.export.plots as ours
    import app.gui.plots as app_plots
    from app import plot_style

    assert ours.style is plot_style  # one table for both (issue #34 item 4)
    for name in ("RUN_COLOURS", "AXIS_COLOURS", "GAP_COLOUR", "GAP_LABEL", "legend_name",
                 "DISSIPATED", "energy_colour", "stack_bands"):
        assert getattr(app_plots, name) is getattr(plot_style, name), name


def test_compare_runs_are_ghosts_with_their_error_curves(can_render, tmp_path, torus_run):
    other = _write(tmp_path / "other.h5", "torus", TORUS, "rrp-newmark", 2e-3, 5,
                   [(250, None)])
    res, seen = _export(torus_run, tmp_path, fps=10, compare=[other],
                        labels=["h = 1e-3", "h = 2e-3"], size=(400, 240))
    assert res.frames == 6 and all(s.ghosts == 1 for s in seen)
    with RunFile(torus_run) as a, RunFile(other) as b:
        strip = PlotStrip([run_series(a, "h = 1e-3"), run_series(b, "h = 2e-3")], 0, 0.5,
                          (300, 400))
    assert strip.legends[1] == ["h = 1e-3", "h = 2e-3"]


# ------------------------------------------------------------------ item 6
def _rrp(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return subprocess.run([sys.executable, "-m", "app", "export", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("args, message", [
    (["--t0", "0.3", "--t1", "0.2"], "--t0 = 0.3 must be less than --t1 = 0.2"),
    (["--t1", "9"], "lies outside the run's frames (t = 0 … 0.5)"),
    (["--layout", "grid"], "unknown layout 'grid': use view or view+plots"),
    (["--h", "0.1"], "--h applies to a scenario"),
    (["--out", "nodir/x.mp4"], "does not exist"),
    (["--compare", "missing.h5"], "no such run file: missing.h5"),
])
def test_bad_input_is_one_line_and_leaves_nothing(tmp_path, capsys, torus_run, args,
                                                  message):
    keep = tmp_path / "x.mp4"
    keep.write_bytes(b"precious")
    if "--out" not in args:
        args = [*args, "--out", str(keep)]
    else:
        args = [a if a != "nodir/x.mp4" else str(tmp_path / a) for a in args]
    code = main(["export", str(torus_run), *args])
    _, err = capsys.readouterr()
    assert code == 2 and len(err.strip().splitlines()) == 1 and message in err, err
    assert keep.read_bytes() == b"precious"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.mp4"]


def test_a_run_without_frames_and_a_damaged_file_are_refused(tmp_path, capsys):
    bare = _write(tmp_path / "bare.h5", "pendulum", {}, "rrp-exact", 1e-2, 5, [(20, None)],
                  frames=False)
    junk = tmp_path / "junk.h5"
    junk.write_bytes(b"not an hdf5 file at all" * 10)
    for src, what in ((bare, "holds no frames"), (junk, "cannot export")):
        code = main(["export", str(src), "--out", str(tmp_path / "x.gif")])
        _, err = capsys.readouterr()
        assert code == 2 and len(err.strip().splitlines()) == 1 and what in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bare.h5", "junk.h5"]


def test_a_target_being_written_by_another_process_is_refused(tmp_path, capsys, torus_run):
    from engine.io import OutputLock

    out = tmp_path / "busy.mp4"
    held = OutputLock(out, "rrp export").acquire()
    try:
        res = _rrp(tmp_path, str(torus_run), "--out", str(out))
    finally:
        held.release()
    assert res.returncode == 2, res.stderr
    assert len(res.stderr.splitlines()) == 1 and "Traceback" not in res.stderr
    assert not out.exists()


def test_odd_mp4_sizes_are_rounded_up_and_sparse_frames_are_said(can_render, tmp_path,
                                                                 capsys, torus_run):
    code = main(["export", str(torus_run), "--out", str(tmp_path / "x.mp4"), "--size",
                 "161x121", "--fps", "100", "--speed", "0.5", "--t1", "0.05", "--layout", "view"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "rounded up to 162x122" in err and "162x122" in out and "11 frames" in out
    sparse = [ln for ln in err.splitlines() if "--every" in ln]
    assert len(sparse) == 1 and "a frame every 0.01 s" in sparse[0]


@pytest.mark.parametrize("layout", ["view", "view+plots"])
def test_a_scenario_export_has_the_frames_of_the_rule(can_render, tmp_path, capsys, layout):
    """A scenario, simulated as the frames ask (either layout, issue #42 item 9): the
    same count, the window from ``--t0``."""
    out = tmp_path / "s.gif"
    code = main(["export", "torus", "--set", "n_particles=12", "--t0", "0.1", "--t-end",
                 "0.4", "--fps", "10", "--size", "200x150", "--layout", layout, "--out",
                 str(out)])
    stdout, err = capsys.readouterr()
    assert code == 0, err
    assert f"{frame_count(0.1, 0.4, 10, 1.0)} frames" in stdout and "t = 0.1 → 0.4" in stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.gif"]


def test_an_energy_stepping_run_shows_its_terrace_gap(tmp_path):
    """The error plot of an energy-stepping run has the dashed terrace gap
    ``(V − V_ε)/|E₀|`` beside ``ΔE/|E₀|`` (as the app's, issue #33 item 6)."""
    path = _write(tmp_path / "es.h5", "pendulum", {}, "energy-stepping:1e-3", 0.01, 1,
                  [(40, None)])
    with RunFile(path) as rf:
        s = run_series(rf)
        strip = PlotStrip([s], 0.0, float(rf.times[-1]), (300, 400))
    assert s.gap is not None and np.isfinite(s.gap).all()
    assert strip.legends[1] == ["ΔE/|E₀|", "terrace gap V − V_ε/|E₀|"]


def test_the_plots_keep_their_layout_whatever_rcparams_say(switch_run):
    """The figures' style (``engine.studies.figures``) turns on matplotlib's constrained
    layout for the whole process; the export's strip keeps its own margins and says
    nothing (it warned twice a frame strip before: "not calling subplots_adjust")."""
    import warnings

    import matplotlib

    with RunFile(switch_run) as rf, matplotlib.rc_context(
            {"figure.constrained_layout.use": True}), warnings.catch_warnings():
        warnings.simplefilter("error")
        strip = PlotStrip([run_series(rf)], 0.0, 2.0, (300, 400))
    assert strip.image(1.0).shape == (400, 300, 3)


# ------------------------------------------------------------------ issue #42 item 3
def _outside(f, radius: np.ndarray) -> float:
    """How far the worst body's bounding sphere sticks out of frame ``f``'s view (≤ 0:
    every sphere wholly inside), from the view's world-to-clip matrix."""
    m = f.view
    worst = -np.inf
    for plane in (m[3] + m[0], m[3] - m[0], m[3] + m[1], m[3] - m[1]):
        dist = (f.centres @ plane[:3] + plane[3]) / np.linalg.norm(plane[:3])
        worst = max(worst, float(np.max(radius - dist)))
    return worst


@pytest.fixture(scope="module")
def torus_switch_run(tmp_path_factory) -> Path:
    """The torus (80 spheres) to t = 3, switched to rk4 at t = 1.5, a frame every 0.01."""
    return _write(tmp_path_factory.mktemp("runs") / "torus3.h5", "torus", {}, "rrp-newmark",
                  1e-3, 10, [(1500, None), (1500, "rk4")])


def test_a_fixed_camera_holds_every_body_of_every_frame(can_render, tmp_path,
                                                         torus_switch_run):
    """Every body's bounding sphere lies inside the view in every frame of a fixed
    camera: the torus run t = 0…3 with a switch had 38–41 of its 91 frames cutting
    spheres off (frames 43–59 as the torus bounces off the wall: issue #42 item 3)."""
    with RunFile(torus_switch_run) as rf:
        model = rf.build_model()
    radius = 0.5 * np.asarray(model.bodies.D, dtype=np.float64)
    res, seen = _export(torus_switch_run, tmp_path, "x.mp4", size=(320, 180),
                        layout="view+plots")
    assert res.frames == len(seen) == 91
    worst = [(f.k, _outside(f, radius)) for f in seen]
    assert max(w for _, w in worst) <= 0, [kw for kw in worst if kw[1] > 0]


class _CountingRows:
    """An array that counts the rows read through it (a run file's dataset stand-in)."""

    def __init__(self, a: np.ndarray) -> None:
        self.a, self.rows = a, 0
        self.shape, self.dtype = a.shape, a.dtype

    def __getitem__(self, key):
        out = self.a[key]
        self.rows += len(out) if isinstance(key, slice) else 1
        return out


def test_the_framing_reads_a_bounded_sample_of_a_large_run(monkeypatch):
    """The fixed camera's framing reads every recorded frame while their positions fit
    in ``EXTENT_BYTES`` (the box then holds every drawn frame), and an even sample of at
    most the budget's worth beyond it, grown by the way the fastest body goes between
    two samples (it read up to 4000 whole frames: issue #42 item 3)."""
    from types import SimpleNamespace

    from app.export import render

    n, bodies = 5000, 10
    t = np.linspace(0.0, 5.0, n)
    x = np.zeros((n, bodies, 3))
    x[:, 0, 0] = t  # (one body moves along x at speed 1, reaching 5)
    v = np.zeros_like(x)
    v[:, 0, 0] = 1.0
    pos, vel = _CountingRows(x), _CountingRows(v)
    track = SimpleNamespace(times=t, index_at=lambda s: int(np.searchsorted(t, s, "right") - 1),
                            rf=SimpleNamespace(_f={"bodies/position": pos,
                                                   "bodies/velocity": vel}))
    lo, hi = render._extent(track, 0.0, 5.0)
    # (every frame's positions, and its velocities: the drawn frames are Hermite
    # curves, whose bulge beyond the records' box is 0 here, v being the chord's)
    assert pos.rows == vel.rows == n and lo[0] == 0.0
    assert hi[0] == pytest.approx(5.0, abs=1e-12)
    pos.rows = vel.rows = 0
    monkeypatch.setattr(render, "EXTENT_BYTES", 40 * x[0].nbytes)
    lo, hi = render._extent(track, 0.0, 5.0)
    assert pos.rows == vel.rows == 20  # (the budget holds 20 frames of x and v)
    assert hi[0] >= 5.0 and lo[0] <= 0.0
    # (half a gap, about 5/19, at speed 1, and the curves' bulge at that speed)
    assert hi[0] - 5.0 <= 0.5 * 1.01 * 5.0 / 19 + 16 / 27 * 5.0 / (n - 1)


# ------------------------------------------------------------------ issue #42 item 7
def _signed_series(gravity: float, n: int = 400, event_at: float = 0.9) -> object:
    """A chain's series on t ∈ [0, 1] with gravity (``gravity`` plus a swing), a
    dissipated energy (hard contacts: nine components, a long legend) and a switch of
    integrator at ``event_at`` of the window."""
    from app.export.plots import RunSeries

    t = np.linspace(0.0, 1.0, n)
    names = ("translational", "rotational", "gravity", "bending", "axial", "shear",
             "contact", "wall", "dissipated")
    energy = {c: np.full(n, 0.5 + 0.1 * k) + 0.2 * np.sin(7 * t + k)
              for k, c in enumerate(names)}
    energy["gravity"] = gravity + 3.0 * np.cos(2 * t)
    total = np.sum(list(energy.values()), axis=0)
    zeros = np.zeros((n, 3))
    return RunSeries("drop", t, energy, total, 1e-6 * np.sin(t), zeros, zeros,
                     events=[(event_at, "integrator: rrp-newmark → pfc-verlet")])


@pytest.fixture
def kept_figure(monkeypatch):
    """The strip's figure kept after it is drawn (it is cleared once the two pictures
    are taken), so that its boxes can be measured."""
    from matplotlib.figure import Figure

    clear = Figure.clear
    monkeypatch.setattr(Figure, "clear", lambda self, keep_observers=False: None
                        if getattr(self, "_localaxes", None) else clear(self, keep_observers))


def _box(artist, renderer):
    return artist.get_window_extent(renderer)


@pytest.mark.parametrize("size", [(300, 400), (537, 720)])
@pytest.mark.parametrize("at", [0.9, 0.99])
def test_a_late_switchs_label_stays_inside_the_energy_plot(kept_figure, size, at):
    """The marker's label was drawn right of its line: a switch past ~60 % of the window
    had it cut off at the figure's edge."""
    strip = PlotStrip([_signed_series(-20.0, event_at=at)], 0.0, 1.0, size)
    ax = strip.axes[0]
    r = ax.figure.canvas.get_renderer()
    notes = [tx for tx in ax.texts if "pfc-verlet" in tx.get_text()]
    assert len(notes) == 1
    box, inside = _box(notes[0], r), _box(ax, r)
    assert inside.x0 <= box.x0 and box.x1 <= inside.x1, (box, inside)
    assert inside.y0 <= box.y0 and box.y1 <= inside.y1, (box, inside)
    assert box.width > 20  # (legible: not shrunk to nothing)


@pytest.mark.parametrize("size", [(300, 400), (400, 600), (537, 720)])
def test_no_legend_row_reaches_the_next_plots_title(kept_figure, size):
    """With gravity (and D) the energy legend has a third row at four columns: it was
    drawn over the error plot's title.  Every legend lies between its axes and the next
    title, inside the figure."""
    strip = PlotStrip([_signed_series(-20.0)], 0.0, 1.0, size)
    axes = strip.axes
    fig = axes[0].figure
    r = fig.canvas.get_renderer()
    for k, ax in enumerate(axes):
        leg = _box(ax.get_legend(), r)
        assert 0 <= leg.x0 and leg.x1 <= fig.bbox.width and leg.y0 >= 0, (k, leg)
        assert leg.y1 <= _box(ax, r).y0, (k, "over its own axes")
        if k + 1 < len(axes):
            title = _box(axes[k + 1].title, r)
            assert leg.y0 >= title.y1, (k, leg, title)
            assert title.y0 >= _box(axes[k + 1], r).y1 - 1
    # the energy legend names every component and the total
    assert len(strip.legends[0]) == 10 and strip.legends[0][-1] == "total E + D"


@pytest.mark.parametrize("gravity", [-20.0, 15.0])
def test_each_band_is_its_components_value_on_its_side_of_zero(kept_figure, gravity):
    """Gravity was a line beside the stacked areas (issue #42 item 7), then the band
    under the others; a negative band under the others lies about both (issue #44 item
    7: the field's −μ·B).  Each band is now as thick as its value on its side of 0:
    gravity's from 0 to U_g, the others from 0 up, D last; the total its own line (the
    top where nothing is negative)."""
    s = _signed_series(gravity)
    strip = PlotStrip([s], 0.0, 1.0, (400, 600))
    ax = strip.axes[0]
    lines = {ln.get_label(): np.asarray(ln.get_ydata(), float) for ln in ax.get_lines()
             if not ln.get_label().startswith("_")}
    total = lines.pop("total E + D")
    np.testing.assert_allclose(total, s.total)
    comps = np.array([lines[n] for n in lines])
    g = s.energy["gravity"]
    top = s.total - np.minimum(g, 0.0)
    np.testing.assert_allclose(comps[-1], top, rtol=1e-12)  # (D: the last band)
    np.testing.assert_allclose(comps.max(axis=0), top, rtol=1e-12)
    np.testing.assert_allclose(lines["gravity"], g)
    c = strip.curves[0]
    order = list(lines)
    np.testing.assert_allclose(c.stack - c.base, np.array(
        [s.energy[n.split(" ")[0] if n.startswith("dissipated") else n] for n in order]).T,
        atol=1e-12)
    assert (np.diff(comps[1:], axis=0) >= -1e-12).all() and (c.base[:, 1:] >= 0).all()


# ------------------------------------------------------------------ issue #42 item 10
@pytest.fixture(scope="module")
def long_run(tmp_path_factory) -> Path:
    """Pendulum, h = 1e-2 to t = 300: 30 001 records and frames (every step)."""
    sc = load_scenario("pendulum", {})
    sim = Simulation(sc.build_model(), "rrp-exact", 1e-2, record_every=1)
    path = tmp_path_factory.mktemp("runs") / "long.h5"
    with RunWriter(path, sim, scenario="pendulum", checkpoint=False) as w:
        assert sim.advance(30_000).ok
        w.flush()
    return path


class _Drawn(Exception):
    """Raised by the capturing strip: what the export hands the plots is all we need."""


def test_the_export_hands_the_plots_bounded_curves_with_their_peaks(monkeypatch, tmp_path,
                                                                     long_run):
    """``rrp export --layout view+plots`` of a long run held every series whole (the
    reader's and then a copy), ~0.2 GB at 10⁶ records: the plots get each run's rows
    peak-decimated to at most ``2 · BUCKETS`` per curve, the series read a block at a
    time (never whole), and each curve's extremes are the series' own."""
    from app.export import render
    from app.export.plots import BUCKETS
    from engine.io import read_run

    seen = {}

    def strip(runs, t0, t1, size, **_kw):
        seen["runs"], seen["window"] = runs, (t0, t1)
        raise _Drawn

    monkeypatch.setattr(render, "PlotStrip", strip)
    opened = []
    real = render.RunFile
    monkeypatch.setattr(render, "RunFile",
                        lambda *a, **k: opened.append(real(*a, **k)) or opened[-1])
    with pytest.raises(_Drawn):
        export_run(long_run, out=tmp_path / "x.mp4", fps=1, speed=100.0, size=(64, 48),
                   compare=[long_run])
    assert len(seen["runs"]) == 2 and all(len(rf.times) == 0 for rf in opened)
    full = read_run(long_run)
    assert len(full["time"]) == 30_001
    for r in seen["runs"]:
        for name in ("t", "rel", "total", "stack", "dL"):
            assert len(getattr(r, name)) <= 2 * BUCKETS, name
        assert r.rows == 30_001
        rel = full["energy"]["relative_error"]
        assert r.rel.max() == rel.max() and r.rel.min() == rel.min()
        dL = full["momentum"]["angular"] - full["momentum"]["angular"][0]
        np.testing.assert_array_equal(r.dL.max(axis=0), dL.max(axis=0))
        np.testing.assert_array_equal(r.dL.min(axis=0), dL.min(axis=0))


@pytest.mark.parametrize("window", [(0.0, 2.0), (0.37, 1.52), (1.9, 2.0)])
def test_the_curves_read_in_blocks_are_the_series_decimated(switch_run, window):
    """:func:`run_curves` (blocks of 7 rows, 10 buckets) gives what decimating the
    series held whole gives (:func:`curves_of`), on the whole run and inside it."""
    from app.export.plots import curves_of, run_curves

    with RunFile(switch_run) as whole, RunFile(switch_run, series=False) as rf:
        want = curves_of(run_series(whole), *window, buckets=10)
        got = run_curves(rf, *window, buckets=10, block=7)
    assert got.rows == want.rows > 0 and got.names == want.names
    for name in ("t", "stack", "total", "rel", "dP", "dL"):
        np.testing.assert_array_equal(getattr(got, name), getattr(want, name), name)
    assert got.events == want.events and got.scale == want.scale and got.gap is None


def test_the_blockwise_decimation_keeps_a_one_row_spike():
    """The reduction fed in blocks is :func:`app.plot_style.peak_decimate` of the whole
    (bucket edges across blocks, NaN gaps), and a spike one row wide survives it."""
    from app.export.plots import _Peaks
    from app.plot_style import peak_decimate

    n = 100_003
    t = np.linspace(0.0, 1.0, n)
    y = np.stack([np.sin(40 * t), np.cos(3 * t)], axis=1)
    y[54_321, 0] = 50.0
    y[1000:1500, 1] = np.nan
    peaks = _Peaks(n, 2, 300)
    for a in range(0, n, 4093):
        peaks.add(t[a:a + 4093], y[a:a + 4093])
    td, yd = peaks.result(2)
    wt, wy = peak_decimate(t, y, 300)
    np.testing.assert_array_equal(td, wt)
    np.testing.assert_array_equal(yd, wy)
    assert len(td) == 600 and yd[:, 0].max() == 50.0


def test_the_terrace_gap_read_in_blocks_is_the_one_held_whole(tmp_path):
    from app.export.plots import curves_of, run_curves

    path = _write(tmp_path / "es.h5", "pendulum", {}, "energy-stepping:1e-3", 0.01, 1,
                  [(40, None)])
    with RunFile(path) as whole, RunFile(path, series=False) as rf:
        want = curves_of(run_series(whole), 0.05, 0.3, buckets=4)
        got = run_curves(rf, 0.05, 0.3, buckets=4, block=3)
    assert want.gap is not None and len(want.gap) == 8
    np.testing.assert_array_equal(got.gap, want.gap)
    np.testing.assert_array_equal(got.t, want.t)
