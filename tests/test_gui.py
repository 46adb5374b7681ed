"""The desktop window, driven through pytest-qt (under Xvfb in CI: pytest-xvfb starts one;
without a display the tests that need one are skipped, never faked)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from gui_needs import skip_without_gui

skip_without_gui()

from PyQt6.QtCore import Qt  # noqa: E402

from app.gui.main_window import MainWindow  # noqa: E402
from app.gui.worker import LoadRequest  # noqa: E402

pytestmark = pytest.mark.gui
ROOT = Path(__file__).resolve().parent.parent
WAIT = 180_000  # ms; the first load may compile the kernels (cold cache, loaded machine)
TORUS = LoadRequest("torus")


def _play_until(qtbot, w: MainWindow, t: float) -> None:
    w.play()
    qtbot.waitUntil(lambda: w.last_frame is not None and w.last_frame.t >= t, timeout=WAIT)
    w.pause()
    qtbot.waitUntil(lambda: w.state == "paused", timeout=WAIT)


def test_window_starts_on_the_torus(make_window):
    w = make_window()
    assert w.loaded.model.n_bodies == 80
    assert w.last_frame.t == 0.0
    assert w.controls.integrator.currentData() == "rrp-newmark"
    assert "torus" in w.windowTitle().lower() or "Particle-binder" in w.windowTitle()
    # the h control shows the engine's stability estimate
    assert "stability limit h ≈" in w.controls.stability.text()


def test_play_advances_time(qtbot, make_window):
    w = make_window()
    _play_until(qtbot, w, 0.05)
    t = w.last_frame.t
    assert t >= 0.05
    assert not w.worker.playing
    # the plots received the rows
    run = next(iter(w.plots.runs.values()))
    assert run.t.n >= 2 and run.t.data[-1] > 0.0
    # and the ring moved towards the wall (v0 along -x)
    x0 = w.loaded.model.initial_state.x
    assert w.last_frame.x[:, 0].mean() < x0[:, 0].mean() - 0.04


def test_switching_integrator_and_h_mid_run_keeps_the_state(qtbot, make_window):
    w = make_window()
    _play_until(qtbot, w, 0.05)
    before = w.last_frame
    w.set_integrator("pfc-verlet")
    qtbot.waitUntil(lambda: w.last_frame.integrator == "pfc-verlet", timeout=WAIT)
    assert w.controls.integrator.currentData() == "pfc-verlet"  # the picker follows
    w.set_h(5e-4)
    qtbot.waitUntil(lambda: w.last_frame.h == 5e-4, timeout=WAIT)
    after = w.last_frame
    # nothing jumped: same instant, same positions and velocities
    assert after.t == before.t and after.step == before.step
    np.testing.assert_array_equal(after.x, before.x)
    np.testing.assert_array_equal(after.v, before.v)
    # a marker per change, in every plot
    assert w.plots.n_markers == 2
    assert len(w.plots.markers) == 2 * len(w.plots.plots)
    labels = [e.label for e in w.plots.events]
    assert labels == ["integrator: rrp-newmark → pfc-verlet", "h: 0.001 → 0.0005"]
    # one step later the bodies moved by about h v, not more
    w.request_step.emit()
    qtbot.waitUntil(lambda: w.last_frame.step == before.step + 1, timeout=WAIT)
    moved = np.linalg.norm(w.last_frame.x - before.x, axis=1)
    speed = np.linalg.norm(before.v, axis=1)
    assert moved.max() > 0
    assert moved.max() <= 2 * 5e-4 * speed.max()  # h|v| plus the force term; a jump ≫ this
    assert w.last_frame.t == pytest.approx(before.t + 5e-4, abs=1e-12)


def test_invalid_h_is_refused_with_a_message(qtbot, make_window):
    w = make_window()
    c = w.controls
    for text, words in (("-1", "positive"), ("abc", "not a number"), ("0", "positive"),
                        ("nan", "positive, finite"),  # as rrp run: a run it can finish
                        ("1e-300", "2.5e+301 steps, more than any run can finish")):
        c.h_edit.setText(text)
        c.h_apply.click()
        assert c.h_message.isVisible() and words in c.h_message.text()
    # beyond what the engine accepts at all: the worker refuses, h stays
    c.h_edit.setText("5")
    c.h_apply.click()
    qtbot.waitUntil(lambda: "too large" in c.h_message.text(), timeout=WAIT)
    assert w.last_frame.h == 1e-3
    assert w.plots.n_markers == 0
    # rrp-exact's own limit (h|w| < 1) is checked on a spinning pendulum
    w.load(LoadRequest("pendulum", {"omega0": [0.0, 0.0, 30.0]}, "rrp-exact", 1e-2))
    qtbot.waitUntil(lambda: w.loaded.model.name == "pendulum" and w.last_frame is not None,
                    timeout=WAIT)
    c.h_edit.setText("0.05")
    c.h_apply.click()
    qtbot.waitUntil(lambda: "rrp-exact" in c.h_message.text(), timeout=WAIT)
    assert "largest admissible h" in c.h_message.text()
    assert w.last_frame.h == 1e-2


def test_a_step_beyond_the_estimate_is_warned_about_before_it_is_taken(make_window):
    w = make_window()
    c = w.controls
    limit = c.h_limit
    assert 1e-3 < limit < 1e-2
    c.h_edit.setText(f"{2 * limit:g}")
    c._check_h_text(c.h_edit.text())  # what typing does
    assert c.h_message.isVisible() and "beyond the stability limit" in c.h_message.text()


def test_a_blow_up_pauses_with_the_last_good_state(qtbot, make_window):
    w = make_window()
    w.set_h(0.05)
    qtbot.waitUntil(lambda: w.last_frame.h == 0.05, timeout=WAIT)
    w.play()
    qtbot.waitUntil(lambda: w.failure is not None, timeout=WAIT)
    assert "stability" in w.failure and "lower h" in w.failure
    assert w.banner.isVisible()
    assert not w.controls.play.isChecked() and not w.worker.playing
    fr = w.last_frame
    assert np.isfinite(fr.x).all() and np.isfinite(fr.v).all()
    assert fr.t > 0
    # nothing non-finite reached the plots
    for run in w.plots.runs.values():
        assert np.isfinite(run.total.data).all()
    # lower h and go on from the kept state
    t_failed = fr.t
    w.set_h(1e-3)
    qtbot.waitUntil(lambda: w.last_frame.h == 1e-3, timeout=WAIT)
    assert not w.banner.isVisible()
    _play_until(qtbot, w, t_failed + 0.01)
    assert w.failure is None


def test_compare_mode_draws_one_energy_curve_per_integrator(qtbot, make_window):
    w = make_window()
    w.controls.compare[0].setCurrentIndex(w.controls.compare[0].findData("campello"))
    w.controls.compare[1].setCurrentIndex(w.controls.compare[1].findData("rk4"))
    w.controls.compare_changed.emit()
    qtbot.waitUntil(lambda: w.loaded.integrators == ["rrp-newmark", "campello", "rk4"]
                    and w.last_frame is not None, timeout=WAIT)
    _play_until(qtbot, w, 0.05)
    labels = w.plots.energy_curve_labels()
    assert labels == ["rrp-newmark", "campello", "rk4"]
    for lab in labels:
        d = w.plots.runs[lab]
        assert d.t.n >= 2
    # the lock-step runs differ (different schemes), but share the time axis
    a, b = w.plots.runs["rrp-newmark"], w.plots.runs["campello"]
    n = min(a.t.n, b.t.n)
    np.testing.assert_array_equal(a.t.data[:n], b.t.data[:n])
    assert np.abs(a.rel.data[:n] - b.rel.data[:n]).max() > 0
    assert len(w.last_frame.ghosts) == 2
    assert len(w.scene._ghosts) == 2


def _non_background_fraction(img: np.ndarray) -> float:
    corner = img[5:15, -15:-5].reshape(-1, 3).mean(axis=0)
    diff = np.abs(img.astype(float) - corner).sum(axis=2)
    return float((diff > 60).mean())


def test_the_3d_view_shows_the_spheres(qtbot, make_window):
    w = make_window()
    qtbot.wait(200)
    img = w.view_image()
    assert img.shape[0] > 100 and img.shape[1] > 100
    frac = _non_background_fraction(img)
    assert frac > 0.01, frac
    # the spheres are grey, the axes red/green/blue: all present
    flat = img.reshape(-1, 3).astype(int)
    reddish = ((flat[:, 0] > 150) & (flat[:, 1] < 90) & (flat[:, 2] < 90)).sum()
    assert reddish > 20


def test_recording_and_exports(qtbot, make_window, tmp_path):
    w = make_window()
    gif = tmp_path / "run.gif"
    assert w.scene.follow and w.controls.follow.isChecked()  # (the torus: followed live)
    w.start_recording(gif, fps=20)
    # issue #33 item 12: a recording's camera is fixed by default, as rrp export's
    assert not w.scene.follow and not w.controls.follow.isChecked()
    assert not w.follow_action.isChecked()
    cam = w.view.camera
    at = (tuple(cam.position), tuple(cam.focal_point))
    x0 = w.last_frame.x.copy()
    _play_until(qtbot, w, 0.3)
    assert np.abs(w.last_frame.x - x0).max() > 0.05  # the ring moved, the camera not
    assert (tuple(cam.position), tuple(cam.focal_point)) == at
    out = w.stop_recording()
    assert out == gif and gif.exists()
    import imageio.v3 as iio

    frames = iio.imread(gif, index=None)
    assert len(frames) >= 2
    assert np.abs(frames[0].astype(int) - frames[-1].astype(int)).max() > 0
    # plots to PNG
    pngs = w.plots.export_png(tmp_path / "plots.png")
    assert [p.name for p in pngs] == ["plots-energy.png", "plots-error.png", "plots-P.png",
                                      "plots-L.png"]
    assert all(p.stat().st_size > 1000 for p in pngs)
    # data to CSV and HDF5 (written by the worker)
    csv = tmp_path / "run.csv"
    w.request_save.emit(str(csv))
    qtbot.waitUntil(csv.exists, timeout=WAIT)
    head = csv.read_text().splitlines()
    assert head[0].startswith("t,E_translational,") and "P_y" in head[0]
    data = np.loadtxt(csv, delimiter=",", skiprows=1)
    assert data[-1, 0] == pytest.approx(w.plots.runs["energy"].t.data[-1])
    h5 = tmp_path / "run.h5"
    w.request_save.emit(str(h5))
    qtbot.waitUntil(h5.exists, timeout=WAIT)
    from engine.io import read_run

    r = read_run(h5)
    assert len(r["time"]) == len(data)
    # a recording to a bad name is refused, the running state untouched
    from app.gui.recorder import RecorderError

    with pytest.raises(RecorderError, match=".mp4 or .gif"):
        w.start_recording(tmp_path / "run.avi")


def test_bad_parameters_and_files_keep_the_running_scenario(qtbot, make_window, tmp_path):
    w = make_window()
    _play_until(qtbot, w, 0.02)
    t = w.last_frame.t
    editor = w.controls.params.editors["v0"][1]
    editor.setText("fast")
    w.controls.apply_params.click()
    assert w.controls.param_error.isVisible() and "v0" in w.controls.param_error.text()
    bad = tmp_path / "bad.toml"
    bad.write_text('model = "torus"\n[parameters]\nk_axial = -3\n')
    w.load(LoadRequest(str(bad)))
    qtbot.waitUntil(w.banner.isVisible, timeout=WAIT)
    assert "k_axial" in w.banner.text()
    assert w.loaded.model.name == "torus" and w.last_frame.t == t


def test_choices_are_remembered(qtbot, make_window, settings):
    w = make_window(LoadRequest("pendulum", {}, "campello", 2e-3))
    w.close()
    settings.sync()
    w2 = make_window(None)
    assert w2.loaded.model.name == "pendulum"
    assert w2.loaded.integrators == ["campello"]
    assert w2.loaded.h == 2e-3


@pytest.mark.slow  # starts the app in a process of its own (docs/testing.md)
def test_rrp_gui_screenshot_command(tmp_path):
    shot = tmp_path / "w.png"
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-m", "app", "gui", "pendulum", "--screenshot",
                          str(shot), "--quit-after", "1", "--size", "1200x800"],
                         cwd=ROOT, capture_output=True, text=True, timeout=600, env=env)
    assert out.returncode == 0, out.stderr
    from PyQt6.QtGui import QImage

    img = QImage(str(shot))
    assert img.width() == 1200 and img.height() >= 700


def test_a_headless_screenshot_shows_a_paused_run(tmp_path):
    """``--quit-after S --screenshot P`` pauses before the shot: the status bar used to
    say ``[running]`` (the worker's answer to the pause came after the shot) or showed a
    passing message instead of the status line."""
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-m", "app", "gui", "pendulum", "--play",
                          "--screenshot", str(tmp_path / "w.png"), "--quit-after", "1"],
                         cwd=ROOT, capture_output=True, text=True, timeout=600, env=env)
    assert out.returncode == 0, out.stderr
    status = out.stderr.split("status:", 1)[1].strip()
    assert status.startswith("t = ") and status.endswith("[paused]"), status


@pytest.mark.parametrize("argv, words", [
    (["--screenshot", "w.jpg", "--quit-after", "1"], ".png"),
    (["--screenshot", "w.png"], "--quit-after"),
    (["--integrator", "nope"], "unknown integrator"),
    (["--h", "-1"], "positive"),
    (["--size", "10x10"], "--size"),
])
def test_rrp_gui_bad_input_is_one_line(tmp_path, argv, words):
    out = subprocess.run([sys.executable, "-m", "app", "gui", "torus", *argv], cwd=tmp_path,
                         capture_output=True, text=True, timeout=600,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], out.stderr
    assert "Traceback" not in out.stderr


def test_keyboard_space_toggles_play(qtbot, make_window):
    w = make_window()
    w.activateWindow()
    w.controls.play.setFocus()
    qtbot.keyClick(w.controls.play, Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: w.worker.playing, timeout=WAIT)
    w.pause()


def test_a_session_that_cannot_be_restored_opens_the_default(qtbot, make_window, settings,
                                                             tmp_path):
    gone = tmp_path / "gone.toml"
    settings.setValue("scenario", str(gone))
    settings.sync()
    w = make_window(None)
    assert w.loaded.model.name == "torus"
    qtbot.waitUntil(w.banner.isVisible, timeout=WAIT)
    assert "gone.toml" in w.banner.text() and "default scenario" in w.banner.text()


def test_rrp_gui_without_a_display_says_so(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY",
                                                             "QT_QPA_PLATFORM")}
    out = subprocess.run([sys.executable, "-m", "app", "gui"], cwd=ROOT, capture_output=True,
                         text=True, timeout=600, env=env)
    assert out.returncode == 2
    assert "needs a desktop session" in out.stderr and "Traceback" not in out.stderr



def test_non_spherical_bodies_offer_only_the_schemes_that_can_drive_them(qtbot, make_window):
    w = make_window(LoadRequest("dumbbells"))
    assert w.loaded.model.shape == "dumbbell"
    cb = w.controls.integrator
    enabled = {cb.itemData(i): cb.model().item(i).isEnabled() for i in range(cb.count())}
    from engine.integrators import INTEGRATORS
    from engine.simulation import usable_integrators

    # exactly what the engine says can drive the model: no spheres-only scheme, and no
    # Moreau-type (hard-contact) scheme on a model without hard contacts
    usable = set(usable_integrators(w.loaded.model))
    assert enabled == {n: n in usable for n in INTEGRATORS}
    assert not any(enabled[n] for n, i in INTEGRATORS.items() if i.spherical_only)
    assert enabled[w.loaded.integrators[0]]
    # asking anyway (e.g. from a script) is refused with a message, the run goes on
    w.set_integrator("rrp-exact")
    qtbot.waitUntil(lambda: "spherical" in w.controls.h_message.text(), timeout=WAIT)
    assert w.last_frame.integrator == w.loaded.integrators[0]
    _play_until(qtbot, w, 0.05)
    assert w.scene.k == 2


def test_missing_x11_libraries_are_named_with_their_package(monkeypatch):
    import ctypes.util

    from app.gui import launch

    monkeypatch.setenv("DISPLAY", ":99")
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    real = ctypes.util.find_library
    monkeypatch.setattr(ctypes.util, "find_library",
                        lambda name: None if name == "xcb-cursor" else real(name))
    assert "libxcb-cursor0" in launch._missing_x11_libraries()
    monkeypatch.setattr(ctypes.util, "find_library", lambda name: "lib" + name + ".so")
    assert launch._missing_x11_libraries() == []


def test_an_inadmissible_first_request_opens_the_scenario_with_its_own_settings(qtbot,
                                                                               make_window):
    w = make_window(LoadRequest("pendulum", {"omega0": [0.0, 0.0, 30.0]}, "rrp-exact", 0.9))
    qtbot.waitUntil(w.banner.isVisible, timeout=WAIT)
    assert "rrp-exact's limit" in w.banner.text() and "its own settings" in w.banner.text()
    assert w.loaded.model.name == "pendulum" and w.loaded.h == 1e-2
    assert w.loaded.params["omega0"] == [0.0, 0.0, 30.0]


CLOSE_WHILE_BUSY = r"""
import sys, tempfile, threading, time
from PyQt6.QtCore import QObject, QSettings, pyqtSignal, pyqtSlot, qInstallMessageHandler
from PyQt6.QtWidgets import QApplication
from app.gui.main_window import MainWindow
from app.gui.worker import LoadRequest

qInstallMessageHandler(lambda _mode, _ctx, msg: print("qt:", msg, file=sys.stderr, flush=True))
app = QApplication(sys.argv[:1])

def spin(until):
    end = time.monotonic() + 600  # a hang guard (a cold cache compiles first)
    while not until() and time.monotonic() < end:
        app.processEvents()
        time.sleep(0.001)

class Blocker(QObject):  # holds the worker's thread until its gate opens
    def __init__(self):
        super().__init__()
        self.gate = {1: threading.Event(), 2: threading.Event()}
        self.inside = {1: threading.Event(), 2: threading.Event()}

    @pyqtSlot(int)
    def hold(self, k):
        self.inside[k].set()
        self.gate[k].wait(60)

class Sender(QObject):
    hold = pyqtSignal(int)

w = MainWindow(LoadRequest("pendulum"), settings=QSettings(
    tempfile.mktemp(suffix=".ini"), QSettings.Format.IniFormat))
w.show()
spin(lambda: w.loaded is not None and w.last_frame is not None)
w.play()
spin(lambda: w.last_frame.step > 0)
b, s = Blocker(), Sender()
b.moveToThread(w.thread)
s.hold.connect(b.hold)
s.hold.emit(1)
b.inside[1].wait(60)
s.hold.emit(2)  # the worker takes these two together once hold 1 ends ...
w.play()
b.gate[1].set()
b.inside[2].wait(60)
threading.Timer(0.5, b.gate[2].set).start()
w.close()  # ... and the shutdown after them
print("closed; the worker's timer running:", bool(w.worker._timer and
      w.worker._timer.isActive()), file=sys.stderr, flush=True)
"""


def test_closing_a_playing_window_stops_the_worker_timer_in_its_own_thread(tmp_path):
    """Qt printed "QObject::killTimer: Timers cannot be stopped from another thread" at
    exit: closing ended the worker thread's event loop from the GUI thread, which could
    end it before the worker had taken ``shutdown`` (queued behind a play), leaving its
    stepping timer running, to be stopped by its destructor in the GUI thread at exit.
    A script (the exit is the point) with a Qt message handler closes the playing window
    while the worker is busy with a play still queued, then exits."""
    res = subprocess.run([sys.executable, "-c", CLOSE_WHILE_BUSY], cwd=tmp_path,
                         capture_output=True, text=True, timeout=600,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert res.returncode == 0, res.stderr
    assert "closed; the worker's timer running: False" in res.stderr, res.stderr
    assert "cannot be stopped from another thread" not in res.stderr, res.stderr


# ------------------------------------------------------------------ energy-stepping (#28)
ES_PENDULUM = LoadRequest("pendulum", {}, "energy-stepping:0.001", 1e-2)


def test_energy_stepping_plays_the_pendulum_with_its_gap_curve_and_event_rate(qtbot,
                                                                               make_window):
    w = make_window(ES_PENDULUM)
    c = w.controls
    assert c.integrator.currentData() == "energy-stepping:0.001"
    props = c.integrator_props.text()
    assert "ε = 0.001 × energy scale" in props and "event-driven" in props
    assert "event-driven: no step limit" in c.stability.text()
    _play_until(qtbot, w, 0.5)
    text = c.stability.text()
    assert "event-driven: no step limit · " in text and "events per unit time" in text
    assert "beyond the stability limit" not in c.h_message.text()
    # the terrace gap V − V_ε, in the error plot's units, for the one run
    assert w.plots.gap_curve_labels() == ["energy"]
    run = w.plots.runs["energy"]
    gap = run.gap.data
    assert len(gap) == run.t.n and np.all(np.isfinite(gap))
    eps_rel = 1e-3
    assert np.abs(gap).max() <= 0.5 * eps_rel * (1 + 1e-9)
    # E − E₀ moves with the gap: T + V_ε is constant
    assert np.abs((run.rel.data - gap) - (run.rel.data[0] - gap[0])).max() < 1e-12
    x, y = w.plots._curves["gap"]["energy"].getData()
    assert x is not None and len(x) > 10
    names = [item.name() for item in w.plots.error_plot.getPlotItem().listDataItems()]
    assert any(n and "terrace gap V − V_ε" in n for n in names)
    # issue #33 item 6: the scheme's own error is drawn above the gap's dashed band, and
    # the speed is per recording interval, with the events a second (not "µs/step")
    err = w.plots._curves["error"]["energy"]
    assert err.zValue() > w.plots._curves["gap"]["energy"].zValue()
    perf = w.perf.text()
    assert "µs per recording interval" in perf and "events/s" in perf, perf
    assert "µs/step" not in perf and "steps/s" not in perf
    assert w.last_frame.events_per_second > 0


def test_switching_to_and_from_energy_stepping_mid_run(qtbot, make_window):
    w = make_window(LoadRequest("pendulum"))
    assert w.plots.gap_curve_labels() == []  # (no terraces: no curve)
    _play_until(qtbot, w, 0.3)
    before = w.last_frame
    w.set_integrator("energy-stepping")
    qtbot.waitUntil(lambda: w.last_frame.integrator == "energy-stepping", timeout=WAIT)
    after = w.last_frame
    assert after.t == before.t and after.step == before.step
    np.testing.assert_array_equal(after.q, before.q)
    np.testing.assert_array_equal(after.omega, before.omega)
    assert w.controls.integrator.currentData() == "energy-stepping"
    _play_until(qtbot, w, after.t + 0.3)
    assert w.plots.gap_curve_labels() == ["energy"]
    before = w.last_frame
    w.set_integrator("rrp-newmark")
    qtbot.waitUntil(lambda: w.last_frame.integrator == "rrp-newmark", timeout=WAIT)
    np.testing.assert_array_equal(w.last_frame.q, before.q)
    np.testing.assert_array_equal(w.last_frame.omega, before.omega)
    _play_until(qtbot, w, before.t + 0.2)
    assert "stability limit h ≈" in w.controls.stability.text()
    first = w.loaded.integrators[0]  # (the scenario's scheme)
    assert [e.label for e in w.plots.events] == [
        f"integrator: {first} → energy-stepping",
        "integrator: energy-stepping → rrp-newmark"]
    gap = w.plots.runs["energy"].gap.data  # NaN outside the energy-stepping stretch
    assert np.isnan(gap[0]) and np.isnan(gap[-1]) and np.isfinite(gap).any()


def test_energy_stepping_is_greyed_with_its_reason_where_it_cannot_run(qtbot, make_window):
    from engine.energy_stepping import unsupported

    w = make_window(LoadRequest("dumbbells"))
    for cb in (w.controls.integrator, *w.controls.compare):
        i = cb.findData("energy-stepping")
        assert i >= 0 and not cb.model().item(i).isEnabled()
        assert cb.itemData(i, Qt.ItemDataRole.ToolTipRole) == unsupported(w.loaded.model)
    w.set_integrator("energy-stepping")  # (a script asks anyway: one line, the run goes on)
    qtbot.waitUntil(lambda: "spherical" in w.controls.h_message.text(), timeout=WAIT)
    assert "Traceback" not in w.controls.h_message.text()
    assert w.last_frame.integrator == w.loaded.integrators[0]


def test_compare_mode_runs_energy_stepping_beside_rrp_newmark(qtbot, make_window):
    w = make_window(LoadRequest("pendulum", {}, "energy-stepping:0.001", 1e-2,
                                ("rrp-newmark",)))
    assert w.loaded.integrators == ["energy-stepping:0.001", "rrp-newmark"]
    assert w.controls.compare[0].currentData() == "rrp-newmark"
    _play_until(qtbot, w, 0.5)
    labels = w.plots.energy_curve_labels()
    assert labels == ["energy-stepping:0.001", "rrp-newmark"]
    assert w.plots.gap_curve_labels() == ["energy-stepping:0.001"]  # its run only
    assert len(w.last_frame.ghosts) == 1
    runs = w.worker._runs
    assert runs[0].sim.t == runs[1].sim.t  # lock-step


def test_the_speed_line_is_per_step_or_per_recording_interval():
    """Issue #33 item 6: "µs/step" and "steps/s" for a stepping scheme; for an
    event-driven one, whose h is only the recording interval, µs per recording interval
    and its events a second."""
    from types import SimpleNamespace

    from app.gui.perf import perf_line

    fr = SimpleNamespace(integrator="rrp-newmark", h=1e-3, us_per_step=12.5,
                         steps_per_second=4000.0, events_per_second=0.0)
    assert perf_line(fr, 1, 30) == ("12.50 µs/step · 4,000 steps/s · ×4.00 real time · "
                                    "30 fps")
    es = SimpleNamespace(integrator="energy-stepping:1e-3", h=1e-2, us_per_step=830.0,
                         steps_per_second=600.0, events_per_second=123456.0)
    assert perf_line(es, 2, 30) == ("830 µs per recording interval · 123,456 events/s · "
                                    "×3.00 real time · 30 fps")
