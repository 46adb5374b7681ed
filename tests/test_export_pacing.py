"""Issue #42 item 9: a scenario's export draws each frame at exactly its time
``t_k = t0 + k · speed / fps`` (the steps bracketing ``t_k`` interpolated, as a run
file's records are), ``--layout view`` and ``view+plots`` alike, without a temporary
file of every step; between records, positions follow the cubic Hermite curve of the
recorded velocities."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from helpers import require_offscreen_render

import app.export  # noqa: F401  (chooses EGL off-screen rendering when there is no X)
from app.cli import main
from app.export.track import RunTrack

pytest.importorskip("pyvista")
pytest.importorskip("imageio_ffmpeg")

TORUS = ["--set", "n_particles=12", "--set", "velocity_noise=0.3"]
"""12 spheres set moving apart: the springs accelerate them from the start (a linear
blend of two steps is then off the Hermite curve by about ``a·h²/8``)."""
H, FPS, T_END = 0.004, 30, 0.2
"""Steps of 0.004 s and frames 1/30 s apart: frame 1 is due at 0.0333…, between the
steps ending at 0.032 and 0.036 (it was drawn at 0.036)."""


@pytest.fixture(scope="module")
def can_render() -> None:
    require_offscreen_render()


def _hermite(x0, v0, x1, v1, dt, s):
    """The cubic Hermite interpolant, written out here (not the code under test)."""
    return ((1 + 2 * s) * (1 - s) ** 2 * x0 + s * (1 - s) ** 2 * dt * v0
            + s * s * (3 - 2 * s) * x1 - s * s * (1 - s) * dt * v1)


def _truth(t_frames: np.ndarray) -> np.ndarray:
    """The torus's centres at each frame time: the two steps of the scheme bracketing
    it, Hermite-interpolated (the step itself when one ends on it)."""
    from engine.drivers import simulation_for
    from engine.scenarios import load_scenario

    sc = load_scenario("torus", {"n_particles": 12, "velocity_noise": 0.3})
    sim = simulation_for(sc.build_model(), sc.run.integrator, H, record_every=10**9,
                         record_frames=False)
    steps = [sim.snapshot()]
    while steps[-1].t < t_frames[-1] - 1e-12:
        assert sim.advance(1).ok
        steps.append(sim.snapshot())
    out = []
    for t in t_frames:
        j = int(np.searchsorted([s.t for s in steps], t - 1e-12))
        b = steps[j]
        if abs(b.t - t) < 1e-12:
            out.append(b.x)
            continue
        a = steps[j - 1]
        out.append(_hermite(a.x, a.v, b.x, b.v, b.t - a.t, (t - a.t) / (b.t - a.t)))
    return np.array(out)


@pytest.mark.parametrize("layout", ["view", "view+plots"])
def test_a_scenario_export_draws_each_frame_at_its_time(can_render, tmp_path, capsys,
                                                        monkeypatch, layout):
    """Every frame's bodies are the scheme's state at ``t_k`` itself: frame 1 at
    0.0333 s, not the step at 0.036 s (``view``), nor a linear blend of the steps
    (``view+plots``, through a temporary run file of every step)."""
    from app.scene import BodyScene

    drawn = []
    update = BodyScene.update

    def spy(self, x, *args, **kw):
        drawn.append(np.array(x, dtype=float))
        return update(self, x, *args, **kw)

    monkeypatch.setattr(BodyScene, "update", spy)
    code = main(["export", "torus", *TORUS, "--h", str(H), "--t-end", str(T_END), "--fps",
                 str(FPS), "--size", "64x48", "--layout", layout, "--out",
                 str(tmp_path / "s.gif")])
    _, err = capsys.readouterr()
    assert code == 0, err
    t_frames = np.arange(7) / FPS
    assert len(drawn) >= 7
    drawn = np.array(drawn[-7:])  # (the frames: after any update the scene made first)
    truth = _truth(t_frames)
    worst = np.abs(drawn - truth).max(axis=(1, 2))
    assert worst.max() < 1e-9, worst


def test_the_frames_are_at_the_rule_times_to_round_off(can_render, tmp_path):
    from app.export import export_animation

    seen = []
    res = export_animation("torus", overrides={"n_particles": 12}, h=H, t0=0.01,
                           t_end=T_END, fps=FPS, size=(64, 48), out=tmp_path / "s.gif",
                           progress=False, layout="view+plots", on_frame=seen.append)
    assert res.frames == len(seen) == 6
    np.testing.assert_allclose([f.t for f in seen], 0.01 + np.arange(6) / FPS, rtol=0,
                               atol=1e-12)
    assert "t = 0.043 s" in seen[1].caption  # (0.0433…: the step after was 0.044)


def test_a_view_plus_plots_scenario_export_records_no_run_file(can_render, tmp_path,
                                                               capsys, monkeypatch):
    """No temporary run file (it held every step when ``speed/fps`` was not a whole
    number of steps), no simulation recording the bodies' frames, nothing written in
    the temporary folder; the video is the only file."""
    import tempfile

    import engine.drivers
    import engine.io
    import engine.io.writer

    writers, sims = [], []
    real_writer = engine.io.writer.RunWriter

    class Spy(real_writer):
        def __init__(self, *a, **kw):
            writers.append(a)
            super().__init__(*a, **kw)

    monkeypatch.setattr(engine.io, "RunWriter", Spy)
    monkeypatch.setattr(engine.io.writer, "RunWriter", Spy)
    real_sim = engine.drivers.simulation_for

    def sim_spy(*a, **kw):
        sims.append(kw)
        return real_sim(*a, **kw)

    monkeypatch.setattr(engine.drivers, "simulation_for", sim_spy)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    out = tmp_path / "out"
    out.mkdir()
    code = main(["export", "torus", *TORUS, "--h", str(H), "--t-end", str(T_END), "--fps",
                 str(FPS), "--size", "96x48", "--layout", "view+plots", "--out",
                 str(out / "s.gif")])
    _, err = capsys.readouterr()
    assert code == 0, err
    assert writers == []
    assert sims and not any(kw.get("record_frames") for kw in sims)
    assert list(tmp.iterdir()) == []
    assert [p.name for p in out.iterdir()] == ["s.gif"]


class _Circle:
    """A run file stand-in: one body on the unit circle at ``ω = 2π`` (a turn a second),
    recorded every ``dt`` seconds with its velocity; ``v=False``: without velocities."""

    def __init__(self, dt: float, n: int, v: bool = True, phase: float = 0.0) -> None:
        self.frame_times = np.arange(n) * dt
        self.n_frames, self.path, self._no_frames = n, "circle.h5", ""
        self.v, self.phase = v, phase

    def at(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        a = 2 * np.pi * t + self.phase
        return (np.array([[np.cos(a), np.sin(a), 0.0]]),
                2 * np.pi * np.array([[-np.sin(a), np.cos(a), 0.0]]))

    def frame(self, k: int):
        t = float(self.frame_times[k])
        x, v = self.at(t)
        return SimpleNamespace(t=t, x=x, v=v if self.v else None,
                               q=np.array([[1.0, 0, 0, 0]]), omega=np.zeros((1, 3)))


def test_hermite_follows_a_circle_that_linear_cuts(tmp_path):
    """Records 0.1 s apart (36° of a turn): half-way between two, linear interpolation
    is 0.049 inside the circle; the Hermite curve of the recorded velocities within
    5e-4 of it (``(ωdt)⁴/384`` of the radius)."""
    rf = _Circle(0.1, 11)
    hermite, linear = RunTrack(rf), RunTrack(_Circle(0.1, 11, v=False))
    for t in (0.05, 0.35, 0.72):
        x_true = rf.at(t)[0]
        err_h = float(np.linalg.norm(hermite.state(t).x - x_true))
        err_l = float(np.linalg.norm(linear.state(t).x - x_true))
        assert err_h < 5e-4 < 0.02 < err_l, (t, err_h, err_l)
    t3 = float(rf.frame_times[3])  # (a record: drawn as it is)
    np.testing.assert_array_equal(hermite.state(t3).x, rf.frame(3).x)


def test_hermite_is_exact_for_ballistic_motion():
    """Constant acceleration: the cubic through the records' positions and velocities
    is the parabola itself."""
    g = np.array([0.0, 0.0, -9.81])
    x0, v0 = np.array([0.1, -0.2, 3.0]), np.array([1.0, 0.5, 4.0])

    class Ballistic(_Circle):
        def at(self, t):
            return (x0 + v0 * t + 0.5 * g * t * t)[None], (v0 + g * t)[None]

    rf = Ballistic(0.25, 5)
    track = RunTrack(rf)
    for t in (0.1, 0.6, 0.99):
        np.testing.assert_allclose(track.state(t).x, rf.at(t)[0], rtol=0, atol=1e-12)
    lin = RunTrack(Ballistic(0.25, 5, v=False)).state(0.125).x
    assert np.abs(lin - rf.at(0.125)[0]).max() > 0.05  # (g dt²/8 = 0.077 off)


def test_the_fixed_cameras_box_holds_the_hermite_curves():
    """The framing's box (issue #42 item 3) grows by the Hermite curves' bulge: records
    at 18° + k·36° never reach x = 1, the curves between them do."""
    from app.export import render

    rf = _Circle(0.1, 11, phase=np.pi / 10)
    x = np.array([rf.frame(k).x for k in range(rf.n_frames)])
    v = np.array([rf.frame(k).v for k in range(rf.n_frames)])
    rf._f = {"bodies/position": x, "bodies/velocity": v}
    track = RunTrack(rf)
    lo, hi = render._extent(track, 0.0, 1.0)
    curve = np.array([track.state(t).x[0] for t in np.linspace(0.0, 1.0, 2001)])
    assert x[:, 0, 0].max() < 0.96 < curve[:, 0].max()  # (the curve leaves the records' box)
    assert np.all(curve >= lo - 1e-12) and np.all(curve <= hi + 1e-12)
    assert hi[0] - curve[:, 0].max() < 0.2  # (and the box is not much larger)
