"""Recorded runs in the window (issue #10 §1–2): replay of run files, the timeline,
*Continue from here* (branch, compare from a frame), old and bad files.  Real window
(under Xvfb), real files written by Simulation + RunWriter — no mocks."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from gui_needs import skip_without_gui

skip_without_gui()
h5py = pytest.importorskip("h5py")

from app.gui.main_window import MainWindow  # noqa: E402
from app.gui.worker import LoadRequest  # noqa: E402
from engine.io import RunFile, RunWriter  # noqa: E402
from engine.scenarios import load_scenario  # noqa: E402
from engine.simulation import Simulation  # noqa: E402

pytestmark = pytest.mark.gui
ROOT = Path(__file__).resolve().parent.parent
WAIT = 180_000  # ms; the first load may compile the kernels


def write_torus_run(path: Path, t_switch: float = 0.1, t_end: float = 0.2) -> Path:
    """The 80-sphere torus 0 → t_end with frames every 10 steps and an h change at
    ``t_switch`` (an event)."""
    model = load_scenario("torus").build_model()
    sim = Simulation(model, "rrp-newmark", 1e-3, record_every=10)
    w = RunWriter(path, sim, scenario="torus")
    sim.run_until(t_switch, callback=lambda s: w.flush())
    sim.set_h(5e-4)
    sim.run_until(t_end, callback=lambda s: w.flush())
    w.close()
    return path


def _pendulum_run(path: Path, integrator: str, t_end: float) -> Path:
    """The pendulum scenario 0 → ``t_end`` with ``h = 0.01``, written to ``path``."""
    sim = Simulation(load_scenario("pendulum").build_model(), integrator, 1e-2)
    w = RunWriter(path, sim, scenario="pendulum")
    sim.run_until(t_end, callback=lambda s: w.flush())
    w.close()
    return path


@pytest.fixture(scope="module")
def torus_run(tmp_path_factory) -> Path:
    return write_torus_run(tmp_path_factory.mktemp("runs") / "torus.h5")


@pytest.fixture
def window(make_window):
    """``make(request=None, run=None)``: conftest's window, a small torus by default."""

    def make(request: LoadRequest | None = None, run=None) -> MainWindow:
        return make_window(request or LoadRequest("torus", {"n_particles": 12}), run=run)

    return make


def _scrub_to(w: MainWindow, run: Path, k: int):
    """Frame ``k`` as ``run`` holds it, with the window's timeline moved to it."""
    with RunFile(run) as rf:
        fr = rf.frame(k)
    w.timeline.slider.setValue(k)
    return fr


def _wait_branch(qtbot, w: MainWindow) -> None:
    qtbot.waitUntil(lambda: w.recording is None and w.loaded is not None
                    and w.loaded.branch and w.last_frame is not None, timeout=WAIT)


def test_replay_of_a_torus_run(qtbot, window, torus_run):
    w = window(run=torus_run)
    assert w.recording is not None and w.timeline.isVisible()
    rf = RunFile(torus_run)
    try:
        n = rf.n_frames
        assert w.timeline.slider.maximum() == n - 1
        # the plots hold the whole recorded series at once, with the h-change marker
        d = w.plots.runs["energy"]
        assert d.t.n == len(rf.times)
        np.testing.assert_array_equal(d.t.data, rf.times)
        np.testing.assert_allclose(d.total.data, rf.energy["total"])
        assert w.plots.n_markers == len(rf.events) == 1
        assert w.plots.events[0].kind == "h"
        assert len(w.plots.markers) == len(w.plots.plots)  # a line in every plot
        # the slider moves the view: the spheres sit where the file's frame puts them
        for k in (n // 2, n - 1, 3):
            w.timeline.slider.setValue(k)
            qtbot.wait(20)
            fr = rf.frame(k)
            np.testing.assert_allclose(w.scene.centres, fr.x, atol=1e-12)
            assert w.replay_index == k
            # the plots' cursor follows (paced: ≤ 1 move per CURSOR_MS while scrubbing)
            qtbot.waitUntil(lambda t=fr.t: w.plots.cursor_t == pytest.approx(t), timeout=60_000)
            text = w.status.text()
            assert "recording" in text and f"frame {k + 1}/{n}" in text
            assert f"t = {fr.t:.4f}" in text and "complete" in text
        assert not np.allclose(rf.frame(3).x, rf.frame(n - 1).x)  # it really moved
        # play the recording (replay speed) and pause it
        w.timeline.speed.setCurrentIndex(w.timeline.speed.findData(0.3))
        w.play()
        qtbot.waitUntil(lambda: w.replay_index > 3, timeout=60_000)
        w.pause()
        assert not w.timeline.playing
    finally:
        rf.close()


def test_partial_file_of_a_killed_run_opens(qtbot, window, tmp_path):
    out = tmp_path / "killed.h5"
    code = textwrap.dedent(f"""
        import os
        from engine.io import RunWriter
        from engine.scenarios import load_scenario
        from engine.simulation import Simulation
        sim = Simulation(load_scenario("torus").build_model(), "rrp-newmark", 1e-3,
                         record_every=10)
        w = RunWriter({str(out)!r}, sim, scenario="torus")
        sim.run_until(0.05, callback=lambda s: w.flush())
        w.flush()
        os._exit(0)  # killed: the file is never closed
    """)
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, timeout=600)
    (partial,) = tmp_path.glob("killed.h5.*.partial")  # (<name>.<pid>.partial)
    assert not out.exists()
    w = window(run=partial)
    assert w.recording is not None
    assert "interrupted" in w.status.text() and "recording" in w.status.text()
    assert w.timeline.branch.isEnabled()


def test_branch_from_a_frame(qtbot, window, torus_run):
    w = window(run=torus_run)
    fr = _scrub_to(w, torus_run, 7)
    w.set_integrator("pfc-verlet")  # the scheme of the branch
    w.set_h(2e-4)
    w.branch_here()
    _wait_branch(qtbot, w)
    lf = w.last_frame
    assert lf.integrator == "pfc-verlet" and lf.h == pytest.approx(2e-4)
    assert lf.t == fr.t and lf.step == fr.step
    np.testing.assert_array_equal(lf.x, fr.x)
    np.testing.assert_array_equal(lf.v, fr.v)
    np.testing.assert_array_equal(lf.q, fr.q)
    np.testing.assert_array_equal(lf.omega, fr.omega)
    assert "continued from frame 8" in w.windowTitle()
    assert not w.timeline.isVisible() and w.plots.cursor_t is None
    # it runs on from there
    w.play()
    qtbot.waitUntil(lambda: w.last_frame.t > fr.t + 0.01, timeout=WAIT)
    w.pause()
    # Reset goes back to the branch frame, not to t = 0
    w.reset()
    qtbot.waitUntil(lambda: w.last_frame is not None and w.last_frame.t == fr.t,
                    timeout=WAIT)
    np.testing.assert_array_equal(w.last_frame.x, fr.x)


def test_compare_from_a_frame(qtbot, window, torus_run):
    w = window(run=torus_run)
    fr = _scrub_to(w, torus_run, 5)
    c = w.controls
    for cb, name in zip(c.compare, ("rk4", "lgvi"), strict=True):
        cb.setCurrentIndex(cb.findData(name))
    w._on_compare_changed()  # (what choosing in the combo does)
    assert w.recording is not None  # compare does not leave the replay
    w.branch_here()
    _wait_branch(qtbot, w)
    assert w.loaded.integrators == ["rrp-newmark", "rk4", "lgvi"]
    assert len(w.last_frame.ghosts) == 2
    for x, q in w.last_frame.ghosts:
        np.testing.assert_array_equal(x, fr.x)
        np.testing.assert_array_equal(q, fr.q)
    w.play()
    qtbot.waitUntil(lambda: w.last_frame.t > fr.t + 0.01, timeout=WAIT)
    w.pause()
    qtbot.waitUntil(lambda: len(w.plots.energy_curve_labels()) == 3, timeout=WAIT)


def test_schema1_like_file_replays_but_cannot_branch(qtbot, window, torus_run, tmp_path):
    old = tmp_path / "old.h5"
    shutil.copy(torus_run, old)
    with h5py.File(old, "r+") as f:
        del f["bodies/velocity"]
        for k in ("layout", "header_digest", "digests"):  # (nor these: issues #36, #46)
            del f.attrs[k]
        f.attrs["schema_version"] = 2
    w = window(run=old)
    assert w.recording is not None
    w.timeline.slider.setValue(4)
    np.testing.assert_allclose(w.scene.centres, RunFile(old).frame(4).x, atol=1e-12)
    assert not w.timeline.branch.isEnabled()
    assert "velocities" in w.timeline.branch.toolTip()
    w.branch_here()  # (the menu's Continue from here): refused with the reason
    assert w.banner.isVisible() and "velocities" in w.banner.text()
    assert w.recording is not None


def test_a_bad_file_leaves_the_window_as_it_was(qtbot, window, tmp_path):
    w = window()
    before = (w.loaded, w.scene, w.windowTitle())
    bad = tmp_path / "notes.h5"
    bad.write_text("not an HDF5 file\n")
    assert w.open_run(bad) is False
    assert w.banner.isVisible() and "not an HDF5 file" in w.banner.text()
    assert "\n" not in w.banner.text()
    assert (w.loaded, w.scene, w.windowTitle()) == before and w.recording is None
    assert not w.timeline.isVisible()


def test_cli_bad_run_file_is_one_line(tmp_path):
    bad = tmp_path / "x.h5"
    bad.write_bytes(b"\0" * 64)
    r = subprocess.run([sys.executable, "-m", "app", "gui", str(bad)], cwd=ROOT,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot open the run" in lines[0]


def test_open_run_from_a_live_window_then_close_it(qtbot, window, torus_run):
    w = window()
    w.play()
    qtbot.wait(200)
    assert w.open_run(torus_run)
    assert w.recording is not None and w.loaded.model.n_bodies == 80
    assert not w.controls.play.isChecked()
    w.close_recording()
    qtbot.waitUntil(lambda: w.recording is None and w.last_frame is not None
                    and w.loaded.model.n_bodies == 12, timeout=WAIT)


def test_continue_from_here_on_a_live_run(qtbot, window):
    w = window()
    w.play()
    qtbot.waitUntil(lambda: w.last_frame.t > 0.02, timeout=WAIT)
    w.pause()
    qtbot.waitUntil(lambda: w.state == "paused", timeout=WAIT)
    qtbot.wait(100)
    at = w.last_frame
    c = w.controls
    c.compare[0].setCurrentIndex(c.compare[0].findData("rk4"))
    w.branch_here()
    qtbot.waitUntil(lambda: w.loaded.branch.startswith("from the live run")
                    and w.last_frame is not None, timeout=WAIT)
    assert w.loaded.integrators == [at.integrator, "rk4"]
    np.testing.assert_array_equal(w.last_frame.x, at.x)
    np.testing.assert_array_equal(w.last_frame.ghosts[0][0], at.x)
    assert w.last_frame.t == at.t


# ------------------------------------------------------------------ opening (issue #27 §3)
def _outside(w: MainWindow, points: np.ndarray) -> int:
    """How many of ``points`` are drawn outside the 3D view."""
    ren = w.view.renderer
    width, height = w.view.ren_win.GetSize()
    out = 0
    for p in points:
        ren.SetWorldPoint(*p, 1.0)
        ren.WorldToDisplay()
        x, y, _ = ren.GetDisplayPoint()
        out += not (0 <= x <= width and 0 <= y <= height)
    return out


def test_a_recording_opens_at_real_time_with_the_whole_scene_in_view(qtbot, window,
                                                                    torus_run):
    """Opened with the window (``rrp gui RUN.h5``: before it is shown), the replay used
    to be framed for a view of no size (the wall cut off on the left in the portrait
    view) and to play at the speed that spreads it over 20 s (×0.01 here)."""
    w = window(run=torus_run)
    assert w.recording is not None
    assert w.timeline.speed.currentData() == 1.0 and w.timeline.speed.currentText() == "×1"
    sc = w.scene

    def framed() -> bool:  # the wall's corners and every sphere
        return _outside(w, sc._wall_bounds) == 0 and _outside(w, sc.centres) == 0

    qtbot.waitUntil(lambda: min(w.view.ren_win.GetSize()) > 1, timeout=10_000)
    qtbot.waitUntil(framed, timeout=5_000)


def test_a_pendulum_recording_plots_p_it_holds_no_invariants(qtbot, window, tmp_path):
    """The live pendulum plots its invariants instead of P (issue #27 §6); a recording
    holds P only: its replay plots P, not an empty invariants plot."""
    win = window(run=_pendulum_run(tmp_path / "p.h5", "rrp-exact", 0.2))
    pi = win.plots.P_plot.getPlotItem()
    assert pi.titleLabel.text == "Linear momentum P"
    assert [c.name() for c in pi.listDataItems()] == ["ΔP_x", "ΔP_y", "ΔP_z"]


def test_an_energy_stepping_recording_replays_and_continues_with_its_scheme(qtbot, window,
                                                                            tmp_path):
    """A run file of ``energy-stepping:REL`` (issue #28): the picker shows the recorded
    scheme with its ε, and Continue from here runs it from the frame (a new stepper)."""
    win = window(run=_pendulum_run(tmp_path / "es.h5", "energy-stepping:0.001", 0.5))
    c = win.controls
    assert c.integrator.currentData() == "energy-stepping:0.001"
    assert "ε = 0.001 × energy scale" in c.integrator_props.text()
    fr = _scrub_to(win, tmp_path / "es.h5", 20)
    win.set_integrator("energy-stepping:0.001")  # (kept: it can drive the pendulum)
    assert "cannot drive" not in c.h_message.text()
    win.branch_here()
    _wait_branch(qtbot, win)
    lf = win.last_frame
    assert lf.integrator == "energy-stepping:0.001" and lf.t == fr.t
    np.testing.assert_array_equal(lf.q, fr.q)
    win.play()
    qtbot.waitUntil(lambda: win.last_frame.t > fr.t + 0.1, timeout=WAIT)
    win.pause()
    assert win.plots.gap_curve_labels() == ["energy"]
    assert "event-driven: no step limit" in c.stability.text()
